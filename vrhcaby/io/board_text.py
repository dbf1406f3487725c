"""The board drawn as text, in the manner of GNU Backgammon's text board.

The side on roll is X at the bottom, moving from its 24-point (top right) to its home board
(bottom right); O is the other side. Stacks taller than five show their count.
"""

from __future__ import annotations

import numpy as np

import engine
from engine.formats import MatchState, match_id, position_id, xgid_or_none

_TOP = "+13-14-15-16-17-18------19-20-21-22-23-24-+"
_BOTTOM = "+12-11-10--9--8--7-------6--5--4--3--2--1-+"


def _cell(mine: int, theirs: int, row: int) -> str:
    count, mark = (mine, "X") if mine else (theirs, "O")
    if count <= row:
        return "   "
    if row == 4 and count > 5:
        return f"{count:>2} "
    return f" {mark} "


def _half(board: np.ndarray, points: list[int], rows: range) -> list[str]:
    """Rows of one half of the board; `points` are X's points from left to right."""
    lines = []
    for row in rows:
        cells = []
        for p in points:
            cells.append(_cell(int(board[1, p - 1]), int(board[0, 24 - p]), row))
        left, right = "".join(cells[:6]), "".join(cells[6:])
        lines.append(f"|{left}|   |{right}|")
    return lines


def draw(
    board: np.ndarray, state: MatchState | None = None, waiting: tuple[int, int] | None = None
) -> str:
    """A text drawing of a (2, 25) board, with pip counts, bar, borne-off and the IDs.

    `waiting` (acey-deucey: checkers not yet entered, `Position.waiting`'s order, the side
    not on roll first) adds each side's waiting checkers beside the board and the position
    string with its `@X,O` suffix (`engine.waiting`); they count 25 pips each.

    >>> print(draw(engine.Position.start().board).splitlines()[0])
     Position ID: 4HPwATDgc/ABMA
    """
    b = np.asarray(board)
    pos = engine.Position(b, waiting or (0, 0))
    pip_x, pip_o = pos.pips()
    off_x, off_o = pos.borne_off()
    header = [f" Position ID: {position_id(b)}"]
    if waiting is not None:
        header.append(f" Position   : {position_id(b)}@{waiting[1]},{waiting[0]}  (acey-deucey)")
    if state is not None:
        header.append(f" Match ID   : {match_id(state)}")
    xg = xgid_or_none(b, state)
    if xg is not None:
        header.append(f" XGID       : {xg}")
    top = _half(b, list(range(13, 25)), range(5))
    bottom = _half(b, list(range(12, 0, -1)), range(4, -1, -1))
    bars = f"  O bar: {int(b[0, 24])}  X bar: {int(b[1, 24])}"
    bar = f"|                  |BAR|                  |{bars}"
    side = [
        f"  O  pips {pip_o:3d}  off {off_o:2d}",
        "" if waiting is None else f"  O  waiting {waiting[0]:2d}",
        "",
        "",
        "",
    ]
    side_bottom = [
        "",
        "",
        "",
        "" if waiting is None else f"  X  waiting {waiting[1]:2d}",
        f"  X  pips {pip_x:3d}  off {off_x:2d}  (on roll)",
    ]
    lines = [*header, " " + _TOP]
    lines += [f" {row}{extra}" for row, extra in zip(top, side, strict=True)]
    lines.append(" " + bar)
    lines += [f" {row}{extra}" for row, extra in zip(bottom, side_bottom, strict=True)]
    lines.append(" " + _BOTTOM)
    if state is not None:
        lines.append(f" {state.describe()}")
    lines.append(f" Pip count  X: {pip_x}  O: {pip_o}  X-O: {pip_x - pip_o}")
    return "\n".join(lines)
