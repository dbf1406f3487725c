"""Command-line verbs; see `vrhcaby.cli`."""

from __future__ import annotations

import argparse
import os


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity, where the system tells it): the
    default number of local processes of the verbs that spread their work."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def add_jobs_argument(parser: argparse.ArgumentParser) -> None:
    """`--jobs`, local processes, by default one per CPU (results do not depend on it)."""
    parser.add_argument(
        "--jobs",
        type=int,
        default=cpu_count(),
        help="local processes (default: this machine's CPUs, %(default)s)",
    )


def add_ray_arguments(
    parser: argparse.ArgumentParser, backend_help: str, workers_help: str
) -> None:
    """`--backend local|ray`, `--address` and `--workers`, as the verbs that can run on a
    Ray cluster spell them."""
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help=backend_help)
    parser.add_argument(
        "--address", help="Ray cluster to join (auto, HOST:PORT); default: start one here"
    )
    parser.add_argument("--workers", type=int, default=0, help=workers_help)
