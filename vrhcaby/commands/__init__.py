"""Command-line verbs; see `vrhcaby.cli`."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from engine.formats import MatchState


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


@dataclass(frozen=True)
class MoneyRules:
    """The rules of money play in force: GNU Backgammon's defaults, both on."""

    #: Gammons and backgammons count single while the cube has not been turned.
    jacoby: bool = True
    #: A side doubled may beaver: take and redouble at once, keeping the cube.
    beavers: bool = True

    def describe(self) -> str:
        """The rules in words, for each output's header line."""
        return ", ".join(
            (
                "Jacoby rule" if self.jacoby else "no Jacoby rule",
                "beavers allowed" if self.beavers else "no beavers",
            )
        )


def add_money_rules_arguments(parser: argparse.ArgumentParser, *, beavers: bool = True) -> None:
    """`--jacoby/--no-jacoby` (and `--beavers/--no-beavers` where the verb plays them),
    on by default as in GNU Backgammon; the old `--jacoby` and `--beavers` still work."""
    parser.add_argument(
        "--jacoby",
        action=argparse.BooleanOptionalAction,
        help="money play: the Jacoby rule (default on, as in GNU Backgammon; a Match ID or "
        "XGID has its own)",
    )
    if beavers:
        parser.add_argument(
            "--beavers",
            action=argparse.BooleanOptionalAction,
            help="money play: beavers allowed (default on, as in GNU Backgammon; an XGID has "
            "its own)",
        )


def money_rules(
    args: argparse.Namespace, state: MatchState | None = None, *, from_xgid: bool = False
) -> MoneyRules:
    """The money rules of a command: its flags where given, else the position's (a Match
    ID's Jacoby bit; an XGID's Jacoby and beaver bits), else GNU Backgammon's defaults."""
    jacoby = getattr(args, "jacoby", None)
    beavers = getattr(args, "beavers", None)
    if jacoby is None:
        jacoby = state.jacoby if state is not None else True
    if beavers is None:
        beavers = state.beavers if state is not None and from_xgid else True
    return MoneyRules(jacoby=jacoby, beavers=beavers)
