"""What the command-line verbs share: the parser and its errors, common options, signals
(`StopSignals` and `cpu_count`, the base floor's, re-exported)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from engine.text import ascii_float, ascii_int

# The CPUs and the stop signals are the base floor's (the training floor's stages use them
# too), the money rules' home is the game context; the verbs import them from here too.
from vrhcaby.base.process import StopSignals as StopSignals
from vrhcaby.base.process import cpu_count as cpu_count
from vrhcaby.equity.context import MoneyRules as MoneyRules
from vrhcaby.equity.context import money_rules as money_rules


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """The argument parser of every verb and entry script.

    A bad command line is one line, ``PROG: error: MESSAGE``, exit status 2, like every
    other bad input (argparse alone prints the usage lines first). And an optional
    positional (``nargs="?"``, such as the dice of `hint`) may follow options:
    argparse gives it its default as soon as an option follows the positional before it,
    so ``hint POS --plies 0 31`` would leave 31 unrecognized; it is handed the leftover.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `type=int` and `type=float` read ASCII only: int() and float() alone also take
        # full-width and other Unicode digits, and '_' separators.
        self.register("type", int, ascii_int)
        self.register("type", float, ascii_float)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse's, but an unknown argument is reported by the parser of the verb it
        was given to (`vrhcaby hint: error: unrecognized arguments: --bogus`), not by
        the top one."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.verb_parser(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def verb_parser(self, parsed: argparse.Namespace) -> Parser:
        """The deepest parser of the verbs `parsed` chose (`vrhcaby dice hint`'s)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(str(getattr(parsed, action.dest, "")))
                if isinstance(chosen, Parser):
                    return chosen.verb_parser(parsed)
        return self

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        for action in self._actions:
            if not extras or extras[0].startswith("-"):
                break
            if action.option_strings or action.nargs != "?":
                continue
            if getattr(parsed, action.dest, None) is action.default:
                setattr(parsed, action.dest, self._get_values(action, [extras.pop(0)]))
        return parsed, extras


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


def check_parallel(args: argparse.Namespace) -> None:
    """`--jobs`, `--workers`, `--backend` and `--address` checked together (a ValueError,
    one line naming what is wrong); for ray, that Ray can be imported."""
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    if args.jobs > 4 * cpu_count():  # each is a process with its own networks and tables
        raise ValueError(
            f"--jobs must be at most 4 per CPU ({4 * cpu_count()} here), got {args.jobs:,}"
        )
    if args.workers < 0:
        raise ValueError(f"--workers must be 0 or more, got {args.workers}")
    if args.backend == "local" and (args.address or args.workers):
        raise ValueError("--address and --workers are for --backend ray (else use --jobs)")
    if args.backend == "ray":
        from vrhcaby.play.ray import check_backend

        check_backend(args.backend)


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
