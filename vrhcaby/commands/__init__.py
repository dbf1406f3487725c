"""Command-line verbs; see `vrhcaby.cli`."""

from __future__ import annotations

import argparse


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
