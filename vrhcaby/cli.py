"""The `vrhcaby` command: one verb per module under `vrhcaby.commands`.

Each command module exposes `register(subparsers)`, which adds its parser and sets
`func=run` where `run(args) -> int` is the exit status. Errors meant for the user are
raised as `UsageError` (or `ValueError` from the engine's parsers) and printed as one line
on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

COMMANDS = (
    "moves",
    "show",
    "hint",
    "cube",
    "eval",
    "play",
    "external",
    "rollout",
    "tournament",
    "train",
    "dice",
)


#: An XGID without its `XGID=` prefix: 26 board characters (the first, the top player's
#: bar, is often '-'), then nine fields.
_BARE_XGID = re.compile(r"[-a-oA-O]{26}(:[^:\s]*){9}")


def _protect_xgid(arg: str) -> str:
    """An XGID that starts with '-' written as `XGID=...`, so that argparse reads it as
    the POSITION it is instead of an unknown option (no `--` needed)."""
    return "XGID=" + arg if arg.startswith("-") and _BARE_XGID.fullmatch(arg) else arg


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

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        namespace, extras = super().parse_known_args(args, namespace)
        for action in self._actions:
            if not extras or extras[0].startswith("-"):
                break
            if action.option_strings or action.nargs != "?":
                continue
            if getattr(namespace, action.dest, None) is action.default:
                setattr(namespace, action.dest, self._get_values(action, [extras.pop(0)]))
        return namespace, extras


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every verb, or with `only` that one (so that a command imports
    nothing the others need: the command line answers faster)."""
    parser = Parser(
        prog="vrhcaby", description="Train and judge backgammon bots the TD-Gammon way."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"vrhcaby.commands.{name}").register(sub)
    return parser


#: The longest error message printed: the parsers quote only a prefix of what they were
#: given (`engine.text.quoted`), and this bounds any message that still echoes an input.
MAX_ERROR = 300


def _one_line(exc: BaseException) -> str:
    """An error's message on one line of at most `MAX_ERROR` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    argv = [_protect_xgid(a) for a in (sys.argv[1:] if argv is None else argv)]
    verb = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(verb if verb in COMMANDS else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError, FileNotFoundError) as exc:
        print(f"vrhcaby {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except ChildProcessError as exc:  # a worker process died (vrhcaby.pool.WorkerDied)
        print(f"vrhcaby {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
