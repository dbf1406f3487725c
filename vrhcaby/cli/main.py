"""The `vrhcaby` command: one verb per module of `vrhcaby.cli`.

Each command module exposes `register(subparsers)`, which adds its parser and sets
`func=run` where `run(args) -> int` is the exit status. Errors meant for the user are
raised as `UsageError` (or `ValueError` from the engine's parsers) and printed as one line
on stderr with exit status 2.
"""

from __future__ import annotations

import gc
import importlib
import re
import sys

from engine import aot
from vrhcaby.cli.common import Parser, UsageError

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
    "analyse",
    "train",
    "label",
    "pipeline",
    "dice",
    "netset",
    "serve",
)


#: An XGID without its `XGID=` prefix, as far as an argument that starts with '-' (the
#: top player's bar, often empty) can be one: board characters, then more than one ':'.
#: It need not be a sound XGID: one with nine or eleven fields, a board of 25 or 27
#: characters or a letter out of the alphabet is still an XGID, and the XGID parser says
#: what is wrong with it. No option has this form (`--address=HOST:PORT` has '=').
_BARE_XGID = re.compile(r"-[^:=\s]*(:[^:]*){2,}")


def _protect_xgid(arg: str) -> str:
    """An XGID that starts with '-' written as `XGID=...`, so that argparse reads it as
    the POSITION it is instead of an unknown option (no `--` needed)."""
    return "XGID=" + arg if _BARE_XGID.fullmatch(arg) else arg


def build_parser(only: str | None = None) -> Parser:
    """The parser with every verb, or with `only` that one (so that a command imports
    nothing the others need: the command line answers faster)."""
    parser = Parser(
        prog="vrhcaby", description="Train and judge backgammon bots the TD-Gammon way."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"vrhcaby.cli.{name}").register(sub)
    return parser


#: The longest error message printed: the parsers quote only a prefix of what they were
#: given (`engine.text.quoted`), and this bounds any message that still echoes an input.
MAX_ERROR = 300


def _one_line(exc: BaseException) -> str:
    """An error's message on one line of at most `MAX_ERROR` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv` (default: the program's, `sys.argv`); the exit status.

    Run as the program (no `argv`), it exempts every object alive once the verb's
    modules are imported from the cyclic garbage collector (`gc.freeze`): they live
    until the process ends anyway, and the collector's walks over them, in full
    collections and above all in the interpreter's own at exit, cost a cold `vrhcaby
    hint` some 30 ms, a tenth of its time. A caller in the same process (a test) keeps
    its collector as it was.
    """
    program = argv is None
    argv = [_protect_xgid(a) for a in (sys.argv[1:] if argv is None else argv)]
    verb = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(verb if verb in COMMANDS else None)
    if not argv:  # `vrhcaby` alone: what it can do, as a mistake (exit status 2)
        parser.print_help(sys.stderr)
        return 2
    if program:
        gc.freeze()
        aot.on_problem = _note
    args = parser.parse_args(argv)
    prog = parser.verb_parser(args).prog  # `vrhcaby hint`, `vrhcaby dice hint`
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError, FileNotFoundError) as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except ChildProcessError as exc:  # a worker process died (vrhcaby.play.pool.WorkerDied)
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        sys.stderr.close()
        return 0


def _note(line: str) -> None:
    """`engine.aot.on_problem` of the program: the ahead-of-time module is stale or broken,
    one line on stderr saying why the command waits on numba and what rebuilds it."""
    print(f"vrhcaby: note: {line}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
