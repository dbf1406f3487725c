"""`vrhcaby show`: the board of a position drawn in the terminal, as JSON or as a picture.

Players are named X (the side on roll, at the bottom) and O. With a Match ID or XGID the
state is told in those names: the score, the cube's owner, the roll, a pending double or
resignation. `--json` prints the board, pip counts, IDs and state; `--svg FILE` writes the
board as an SVG picture (`engine.svg`), with `--play` drawing a play as arrows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.svg import board_svg
from engine.variants import get_variant
from engine.waiting import read_position
from vrhcaby.base.files import check_output_file
from vrhcaby.cli.common import UsageError
from vrhcaby.io.board_json import parse_shown_play, show_json
from vrhcaby.io.board_text import draw
from vrhcaby.nn import checkpoint


def write_svg(path: Path, svg: str) -> None:
    """Write the picture atomically (`checkpoint.write_atomic`) into a folder that exists
    (a missing folder is more likely a mistyped path than a wish for a new one)."""
    check_output_file(path, "--svg")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--svg {path}: folder {str(folder)!r} does not exist")
    checkpoint.write_atomic(path, svg)


def run(args: argparse.Namespace) -> int:
    position, state = read_position(args.position, args.variant)
    board = position.board
    if args.play and not args.svg:
        raise UsageError("--play draws arrows on the picture: give --svg FILE")
    if args.svg:
        steps = parse_shown_play(args.play, board, state).steps if args.play else ()
        write_svg(Path(args.svg), board_svg(board, state, steps) + "\n")
    if args.json:
        print(json.dumps(show_json(board, state)))
    elif not args.svg:
        acey_deucey = get_variant(args.variant).enter_from_start
        print(draw(board, state, position.waiting if acey_deucey else None))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="draw a position",
        description="Draw the board of a Position ID, ID:MatchID, XGID or 'start', the side "
        "on roll (X) at the bottom, with pip counts, the IDs and the match state.",
    )
    p.add_argument("position", metavar="POSITION")
    p.add_argument(
        "--variant",
        default="standard",
        help="rule variant (default: standard); acey-deucey draws the checkers waiting to "
        "enter (POSITION@X,O, or start)",
    )
    p.add_argument("--json", action="store_true", help="print the board, IDs and state as JSON")
    p.add_argument("--svg", metavar="FILE", help="write the board as an SVG picture to FILE")
    p.add_argument("--play", metavar="PLAY", help="with --svg: draw this play as arrows")
    p.set_defaults(func=run)
