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

from typing import Literal

import numpy as np

from engine import jit

OVER, BEAROFF2, BEAROFF1, RACE, CRASHED, CONTACT = range(6)

PositionClass = Literal["over", "bearoff", "race", "crashed", "contact"]

#: Class names by code, as `engine.Position.classify` spells them (both bear-off classes
#: are "bearoff" there).
NAMES: tuple[PositionClass, ...] = ("over", "bearoff", "bearoff", "race", "crashed", "contact")

#: Checkers and points the two-sided database covers (per side).
TWO_SIDED_CHECKERS = 6
HOME_POINTS = 6

#: GNU Backgammon's crashed threshold: checkers that still count as a playable position.
_CRASH_N = 6

#: Batches up to this size are classified in numpy while no compiled kernel is loaded (as
#: `vrhcaby.base.jit.SMALL_BATCH`), so that a one-off question does not pay for loading one.
_SMALL_BATCH = 256


def _back(rows: np.ndarray) -> np.ndarray:
    """Index of each row's rearmost checker (the highest occupied index), -1 if none."""
    occupied = rows > 0
    last = rows.shape[-1] - 1 - np.argmax(occupied[..., ::-1], axis=-1)
    return np.where(occupied.any(axis=-1), last, -1)


def _crashed(rows: np.ndarray) -> np.ndarray:
    """Whether each side's checkers (..., 25) form a crashed position (see the module)."""
    tot: np.ndarray = rows.sum(axis=-1)
    b0, b1 = rows[..., 0], rows[..., 1]
    deep = (b0 > 1) & ((tot <= _CRASH_N + b0) | ((b1 > 1) & (1 + tot - (b0 + b1) <= _CRASH_N)))
    shallow = (b0 <= 1) & (tot <= _CRASH_N + b1 - 1)
    crashed: np.ndarray = (tot <= _CRASH_N) | deep | shallow
    return crashed


def classify_boards(boards: np.ndarray) -> np.ndarray:
    """GNU Backgammon's class code (int8, one per board) of int boards (..., 2, 25).

    Large batches go through a numba kernel (`_classify_loop`), small ones through numpy
    (`classify_numpy`); both give the same codes.

    >>> import engine
    >>> int(classify_boards(engine.Position.start().board)) == CONTACT
    True
    """
    b = np.asarray(boards)
    if b.shape[-2:] != (2, 25):
        raise ValueError(f"boards must have shape (..., 2, 25), got {b.shape}")
    if b.ndim == 3 and (len(b) > _SMALL_BATCH or jit.compiled()):
        return _classify_loop(np.ascontiguousarray(b, dtype=np.int8))
    return classify_numpy(b)


def classify_numpy(boards: np.ndarray) -> np.ndarray:
    """`classify_boards` in numpy, over any leading axes."""
    b = np.asarray(boards).astype(np.int64)
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


@jit.kernel
def _classify_loop(boards: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """`classify_numpy` board by board, for numba: int8 (N, 2, 25) -> int8 (N,)."""
    out = np.empty(boards.shape[0], np.int8)
    for n in range(boards.shape[0]):
        back0, back1 = -1, -1
        crashed = False
        small = True
        for side in range(2):
            row = boards[n, side]
            back = -1
            tot = 0
            for i in range(25):
                tot += row[i]
                if row[i] > 0:
                    back = i
            if side == 0:
                back0 = back
            else:
                back1 = back
            b0, b1 = np.int64(row[0]), np.int64(row[1])
            crashed |= bool(
                tot <= _CRASH_N
                or (b0 > 1 and (tot <= _CRASH_N + b0 or (b1 > 1 and 1 + tot - b0 - b1 <= _CRASH_N)))
                or (b0 <= 1 and tot <= _CRASH_N + b1 - 1)
            )
            small &= tot <= TWO_SIDED_CHECKERS
        if back0 < 0 or back1 < 0:
            out[n] = OVER
        elif back0 + back1 > 22:
            out[n] = CRASHED if crashed else CONTACT
        elif back0 < HOME_POINTS and back1 < HOME_POINTS:
            out[n] = BEAROFF2 if small else BEAROFF1
        else:
            out[n] = RACE
    return out
