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

import numpy as np

import engine
from engine.dice import ROLLS
from engine.formats import MatchState, match_id, position_id, xgid_or_none
from engine.svg import board_svg
from engine.variants import get_variant
from engine.waiting import read_position
from vrhcaby.cli.common import UsageError
from vrhcaby.io.board_text import draw
from vrhcaby.nn import checkpoint

#: The 21 rolls as `--play` tries them: higher die first, from 6-6 down to 1-1.
_SHOWN_ROLLS = sorted(((b, a) for a, b in ROLLS.tolist()), reverse=True)


def show_json(board: np.ndarray, state: MatchState | None) -> dict:
    """The `--json` document: each side's checkers from its own view (points 1..24, then
    the bar), pips, borne off, the IDs and the state with players named X and O."""
    pos = engine.Position(board)
    pip_x, pip_o = pos.pips()
    off_x, off_o = pos.borne_off()
    out: dict = {
        "position_id": position_id(board),
        "match_id": None if state is None else match_id(state),
        "xgid": xgid_or_none(board, state),
        "board": {"X": board[1].tolist(), "O": board[0].tolist()},
        "pips": {"X": pip_x, "O": pip_o},
        "off": {"X": off_x, "O": off_o},
        "on_roll": "X",
        "state": None,
    }
    if state is not None:
        name = state.player_name
        assert state.turn is not None
        out["state"] = {
            "description": state.describe(),
            "players": {"X": state.dice_owner, "O": 1 - state.dice_owner},
            "game_state": state.game_state.name.lower(),
            "match_length": state.match_length,
            "score": {
                "X": state.score[state.dice_owner],
                "O": state.score[1 - state.dice_owner],
            },
            "crawford": state.crawford,
            "cube_value": state.cube_value,
            "cube_owner": "centre" if state.cube_owner < 0 else name(state.cube_owner),
            "dice": None if state.dice == (0, 0) else list(state.dice),
            "turn": name(state.turn),
            "doubled": state.doubled,
            "resign": state.resign,
            "jacoby": state.jacoby,
            "beavers": state.beavers,
        }
    return out


def parse_shown_play(text: str, board: np.ndarray, state: MatchState | None) -> engine.Play:
    """The play `--play` names, for the position's roll or, with none rolled, for the roll
    the play itself needs (the first of the 21, higher die first, that makes it)."""
    pos = engine.Position(board)
    if state is not None and state.dice != (0, 0):
        return engine.Play.parse(text, pos, state.dice)
    first_error: ValueError | None = None
    for dice in _SHOWN_ROLLS:
        try:
            return engine.Play.parse(text, pos, dice)
        except engine.IllegalPlayError as exc:
            first_error = first_error or exc
    raise ValueError(f"--play {text!r} is not a legal play of any roll here") from first_error


def write_svg(path: Path, svg: str) -> None:
    """Write the picture atomically (`checkpoint.write_atomic`) into a folder that exists."""
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
