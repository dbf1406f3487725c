"""`vrhcaby show`: the board of a position drawn in the terminal."""

from __future__ import annotations

import argparse

from engine.formats import parse_position
from vrhcaby.board_text import draw


def run(args: argparse.Namespace) -> int:
    board, state = parse_position(args.position)
    print(draw(board, state))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="draw a position",
        description="Draw the board of a Position ID, ID:MatchID or XGID, the side on roll "
        "(X) at the bottom, with pip counts and the IDs.",
    )
    p.add_argument("position", metavar="POSITION")
    p.set_defaults(func=run)
