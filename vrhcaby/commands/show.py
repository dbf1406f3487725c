"""`vrhcaby show`: the board of a position drawn in the terminal."""

from __future__ import annotations

import argparse

from engine.variants import get_variant
from engine.waiting import read_position
from vrhcaby.board_text import draw


def run(args: argparse.Namespace) -> int:
    position, state = read_position(args.position, args.variant)
    acey_deucey = get_variant(args.variant).enter_from_start
    print(draw(position.board, state, position.waiting if acey_deucey else None))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="draw a position",
        description="Draw the board of a Position ID, ID:MatchID, XGID or 'start', the side "
        "on roll (X) at the bottom, with pip counts and the IDs.",
    )
    p.add_argument("position", metavar="POSITION")
    p.add_argument(
        "--variant",
        default="standard",
        help="rule variant (default: standard); acey-deucey draws the checkers waiting to "
        "enter (POSITION@X,O, or start)",
    )
    p.set_defaults(func=run)
