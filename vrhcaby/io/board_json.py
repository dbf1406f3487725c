"""The answers of `moves` and `show` as JSON documents, and the play `show` draws.

One home for what the command line's `moves --json` and `show --json` print and what
`vrhcaby serve` answers (`/moves`, `/show`); the engine alone, so that `vrhcaby moves` and
`show` load no network code. The analysis answers are `vrhcaby.io.answers`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

import engine
from engine.dice import ROLLS
from engine.formats import MatchState, match_id, position_id, position_ids, xgid_or_none
from engine.play import format_steps, parse_dice
from engine.waiting import read_position as read_waiting_position
from engine.waiting import waiting_id

# --- moves -------------------------------------------------------------------------------


def read_dice(args: Any, state: MatchState | None) -> tuple[int, int]:
    """The roll of `moves`, `hint` and `rollout`: DICE (`args.dice`), else the roll a
    Match ID or XGID holds; ValueError when neither has one, or when the position has a
    double or resignation to answer instead."""
    if state is not None and (state.doubled or state.resign):
        pending = "a double" if state.doubled else "a resignation"
        raise ValueError(f"the position has {pending} pending, not a roll: answer it first")
    if args.dice:
        return parse_dice(args.dice)
    if state is not None and state.dice != (0, 0):
        return state.dice
    raise ValueError("give the dice (e.g. 31): the position does not hold a roll")


def read_playable_position(text: str, variant: str = "standard") -> engine.Position:
    """The position a POSITION argument names (Position ID, ID:MatchID, XGID, `start`;
    acey-deucey: with `@X,O` waiting checkers, `engine.waiting`); ValueError if the game
    in it is over (a side has borne off every checker: nobody is on roll)."""
    position, _ = read_waiting_position(text, variant)
    on_roll, other = position.borne_off()
    if engine.CHECKERS in (on_roll, other):
        who = "the side on roll" if on_roll == engine.CHECKERS else "the side not on roll"
        raise ValueError(f"the game is over: {who} has borne off all its checkers")
    return position


def moves_json_ad(position: engine.Position, dice: tuple[int, int]) -> dict:
    """Acey-deucey plays of a position; each move says whether it earns the extra roll.
    Positions are written `PositionID@X,O` (X waiting on roll, O not)."""
    from engine.acey_deucey import legal_plays_ad  # numba: loaded on first use

    plays = legal_plays_ad(position, dice)
    return {
        "position_id": waiting_id(position),
        "dice": list(dice),
        "moves": [
            {
                "play": str(p),
                "position_id": waiting_id(p.position),
                "next_position_id": waiting_id(p.position.flip()),
                "extra_turn": p.extra_turn,
            }
            for p in plays
        ],
    }


@lru_cache(maxsize=1 << 16)
def _notation(path: tuple[tuple[int, int, int], ...]) -> str:
    return format_steps(tuple((a, b) for a, b, _ in path), tuple(bool(h) for *_, h in path))


def moves_json(boards: np.ndarray, dice: np.ndarray) -> list[dict]:
    """The `moves --json` document of each board and roll (a batch through the generator):
    every distinct legal play with `position_id` (the mover still on roll, as GNU
    Backgammon lists moves) and `next_position_id` (the opponent on roll)."""
    from engine.movegen import batch_afterstates_with_steps  # numba: loaded on first use

    after, parent, steps = batch_afterstates_with_steps(boards, dice)
    out = [
        {"position_id": pid, "dice": [int(d[0]), int(d[1])], "moves": []}
        for pid, d in zip(position_ids(boards), dice, strict=True)
    ]
    rows = zip(
        position_ids(after),
        position_ids(after[:, ::-1]),
        parent.tolist(),
        steps.tolist(),
        strict=True,
    )
    for pid, next_pid, p, path in rows:
        play = _notation(tuple(tuple(step) for step in path if step[0]))
        out[p]["moves"].append({"play": play, "position_id": pid, "next_position_id": next_pid})
    return out


# --- show ----------------------------------------------------------------------------------


def show_json(board: np.ndarray, state: MatchState | None) -> dict:
    """The `show --json` document: each side's checkers from its own view (points 1..24,
    then the bar), pips, borne off, the IDs and the state with players named X and O."""
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


#: The 21 rolls as `--play` tries them: higher die first, from 6-6 down to 1-1.
_SHOWN_ROLLS = sorted(((b, a) for a, b in ROLLS.tolist()), reverse=True)


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
