"""Position classes as GNU Backgammon defines them (eval.c, `ClassifyPosition`), batched.

Each class picks the evaluator of a position: a finished game, an exact bear-off database,
a race network, or one of the contact networks. The codes are GNU Backgammon's own order
(as the `gnubg_nn` package numbers them):

- `OVER` (0): a side has no checker left on the board (it has borne them all off).
- `BEAROFF2` (1): no contact, and each side has at most 6 checkers, all on its home
  board: the two-sided bear-off database covers it exactly.
- `BEAROFF1` (2): no contact, each side's checkers all on its home board (up to 15): the
  one-sided database covers each side.
- `RACE` (3): no contact, some checker still outside its home board.
- `CRASHED` (4): contact, and one side has crashed: its checkers on the board (bar
  included), not counting those buried deep, number at most 6. With `tot` on the board and
  `p1`, `p2` on its 1- and 2-points: `tot <= 6`; or, when `p1 > 1`, `tot - p1 <= 6` or
  (when also `p2 > 1`) `tot - p1 - p2 + 1 <= 6`; or, when `p1 <= 1`, `tot - p2 + 1 <= 6`.
- `CONTACT` (5): any other position where a checker must still pass an opposing one.

"Contact" is GNU Backgammon's test: the rearmost checkers' indices (bar 24) add to more
than 22, i.e. some checker still has to pass an opposing one. Boards are int (..., 2, 25)
in GNU Backgammon's layout (each row from its own side's view, index 24 the bar); every
test is symmetric in the two rows, so it does not matter which side is on roll.
"""

from __future__ import annotations

import numpy as np

OVER, BEAROFF2, BEAROFF1, RACE, CRASHED, CONTACT = range(6)

#: Class names by code, as `engine.Position.classify` spells them (both bear-off classes
#: are "bearoff" there).
NAMES = ("over", "bearoff", "bearoff", "race", "crashed", "contact")

#: Checkers and points the two-sided database covers (per side).
TWO_SIDED_CHECKERS = 6
HOME_POINTS = 6

#: GNU Backgammon's crashed threshold: checkers that still count as a playable position.
_CRASH_N = 6


def _back(rows: np.ndarray) -> np.ndarray:
    """Index of each row's rearmost checker (the highest occupied index), -1 if none."""
    occupied = rows > 0
    last = rows.shape[-1] - 1 - np.argmax(occupied[..., ::-1], axis=-1)
    return np.where(occupied.any(axis=-1), last, -1)


def _crashed(rows: np.ndarray) -> np.ndarray:
    """Whether each side's checkers (..., 25) form a crashed position (see the module)."""
    tot = rows.sum(axis=-1)
    b0, b1 = rows[..., 0], rows[..., 1]
    deep = (b0 > 1) & ((tot <= _CRASH_N + b0) | ((b1 > 1) & (1 + tot - (b0 + b1) <= _CRASH_N)))
    shallow = (b0 <= 1) & (tot <= _CRASH_N + b1 - 1)
    return (tot <= _CRASH_N) | deep | shallow


def classify_boards(boards: np.ndarray) -> np.ndarray:
    """GNU Backgammon's class code (int8, one per board) of int boards (..., 2, 25).

    >>> import engine
    >>> int(classify_boards(engine.Position.start().board)) == CONTACT
    True
    """
    b = np.asarray(boards).astype(np.int64)
    if b.shape[-2:] != (2, 25):
        raise ValueError(f"boards must have shape (..., 2, 25), got {b.shape}")
    back = _back(b)  # (..., 2)
    over = (back < 0).any(axis=-1)
    contact = back.sum(axis=-1) > 22
    crashed = _crashed(b).any(axis=-1)
    home = (back < HOME_POINTS).all(axis=-1)
    small = (b.sum(axis=-1) <= TWO_SIDED_CHECKERS).all(axis=-1)
    out = np.select(
        [over, contact & crashed, contact, home & small, home],
        [OVER, CRASHED, CONTACT, BEAROFF2, BEAROFF1],
        RACE,
    )
    return out.astype(np.int8)
