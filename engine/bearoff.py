"""Bear-off positions: their indices, and the race outcome read from the databases' tables.

A side's *bear-off position* is its checkers on its six home points, (n1, ..., n6) with at
most 15 in all: 54,264 of them. They are numbered fewest checkers first (then by the
counts read as base-16 digits, point 1 lowest), so the 924 with at most 6 checkers, the
ones the two-sided database pairs, come first and take the same indices in both tables.

The tables themselves are built by `engine.bearoff_build` (numba) and cached on disk
above the engine (`vrhcaby.nn.bearoff_db`); this module only reads them, in numpy:

- one-sided, for each position: `rolls[i, n]`, the probability that bearing off all its
  checkers takes exactly n rolls (the move each roll chosen to minimise the expected
  number), and `first[i, n]`, the same for bearing off its first checker (the moves chosen
  to minimise that; 0 rolls when one is already off), which decides gammons;
- two-sided, exact, for each pair (on roll, not on roll) of positions with at most 6
  checkers: the cubeless probability that the side on roll wins, and its cubeful money
  equities (cube 1, no Jacoby rule, no beavers) with the cube centred, its own, or the
  opponent's, every play and cube action optimal. No gammon is possible there: each side
  has borne off at least 9 checkers.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

POINTS = 6
CHECKERS = 15
SMALL = 6
"""Checkers per side in the two-sided database."""
N_POSITIONS = math.comb(CHECKERS + POINTS, POINTS)
"""54264: the bear-off positions (at most 15 checkers on 6 points)."""
N_SMALL = math.comb(SMALL + POINTS, POINTS)
"""924: the positions with at most 6 checkers, indices 0..923."""

if TYPE_CHECKING:  # computed on first use (`__getattr__`)
    POSITIONS: np.ndarray
    """int8 (54264, 6): every bear-off position's counts on points 1..6, in index order."""
    PIPS: np.ndarray
    """int64 (54264,): each position's pip count."""


def _enumerate() -> np.ndarray:
    arr = np.zeros((1, 0), np.int64)
    for _ in range(POINTS):  # each position extended by every count the next point can take
        reps = CHECKERS + 1 - arr.sum(axis=1)
        count = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        arr = np.column_stack([np.repeat(arr, reps, axis=0), count])
    order = np.lexsort((_keys(arr), arr.sum(axis=1)))
    ordered: np.ndarray = arr[order]
    return ordered.astype(np.int8)


def _keys(counts: np.ndarray) -> np.ndarray:
    keys: np.ndarray = (np.asarray(counts, np.int64) << (4 * np.arange(POINTS))).sum(axis=-1)
    return keys


@functools.cache
def _positions() -> np.ndarray:
    return _enumerate()


@functools.cache
def _pips() -> np.ndarray:
    pips: np.ndarray = (_positions().astype(np.int64) * np.arange(1, POINTS + 1)).sum(axis=1)
    return pips


def __getattr__(name: str) -> np.ndarray:
    """`POSITIONS` and `PIPS`, enumerated on first use: that costs tens of milliseconds,
    which reading the tables (`index` counts, it does not search) does not need."""
    if name == "POSITIONS":
        return _positions()
    if name == "PIPS":
        return _pips()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: `_BINOM[a, k]`: the binomial coefficient C(a, k), for every a and k that `index` reads.
_BINOM = np.array(
    [[math.comb(a, k) for k in range(POINTS + 1)] for a in range(CHECKERS + POINTS)], np.int64
)


def index(counts: np.ndarray) -> np.ndarray:
    """The index of each bear-off position (..., 6) (points 1..6), int64 (...).

    >>> int(index(np.zeros(6, np.int8))), int(index([0, 0, 0, 0, 0, 15]))
    (0, 54263)
    """
    counts = np.asarray(counts)
    if counts.shape[-1] != POINTS or counts.min(initial=0) < 0 or (counts.sum(-1) > 15).any():
        raise ValueError("a bear-off position is 6 counts (points 1..6), 15 checkers at most")
    # Counted, not looked up: the C(n + 5, 6) positions with fewer checkers come first;
    # then, point 6 down to 2, those with the points above equal and fewer checkers here,
    # v < c of the `left` still to place, each with the C(left - v + j - 2, j - 2) ways to
    # put the rest on the j - 1 points below (summed in closed form).
    c = counts.astype(np.int64)
    left = c.sum(axis=-1)
    rank: np.ndarray = _BINOM[left + POINTS - 1, POINTS]
    for j in range(POINTS, 1, -1):
        here = c[..., j - 1]
        rank = rank + _BINOM[left + j - 1, j - 1] - _BINOM[left - here + j - 1, j - 1]
        left = left - here
    return rank


def row_index(rows: np.ndarray) -> np.ndarray:
    """The bear-off index of each side's row (..., 25) whose checkers are all home."""
    rows = np.asarray(rows)
    if (rows[..., POINTS:] != 0).any():
        raise ValueError("a bear-off position has every checker on its home board")
    return index(rows[..., :POINTS])


def _at_least(dist: np.ndarray) -> np.ndarray:
    """P(rolls >= n) for each n of distributions (..., K), as 1 - P(rolls < n): exactly 1
    where no fewer rolls are possible and never below 0, whatever the tables' rounding."""
    at_least: np.ndarray = np.clip(1.0 - (np.cumsum(dist, axis=-1) - dist), 0.0, 1.0)
    return at_least


def side_tables(
    rolls: np.ndarray, first: np.ndarray, clear: np.ndarray | None = None
) -> np.ndarray:
    """What `race_outcome` reads of a side (..., 4, K), from its one-sided distributions
    (..., K) of rolls to bear off all, the first checker and (optionally) to clear the
    opponent's home board: P(all take exactly n), P(all take n or more), P(first takes
    n or more), P(clear takes n or more; 0 without `clear`: no backgammon). Made once per
    side, read by every race it is in."""
    rolls = np.asarray(rolls)
    out = np.zeros((*rolls.shape[:-1], 4, rolls.shape[-1]), rolls.dtype)
    out[..., 0, :] = rolls
    out[..., 1, :] = _at_least(rolls)
    out[..., 2, :] = _at_least(np.asarray(first, rolls.dtype))
    if clear is not None:
        out[..., 3, :] = _at_least(np.asarray(clear, rolls.dtype))
    return out


def race_outcome(on_roll: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The five probabilities (N, 5) of the side *not* on roll, from both sides' tables
    (N, 4, K) (`side_tables`).

    The two races are taken as independent, as GNU Backgammon does with its one-sided
    database: the side on roll wins when it needs no more rolls than the other, a side is
    gammoned when it has not borne a checker off by the time the other finishes, and
    backgammoned when a checker of it is still in the winner's home board then.
    """
    # The side on roll finishes on its n-th roll, before the other's n-th: it wins when
    # the other needs n or more, and the other, having had n - 1 rolls, is gammoned when
    # its first checker needs n or more.
    lose = (on_roll[..., 0, :] * other[..., 1, :]).sum(axis=-1)
    lose_gammon = (on_roll[..., 0, :] * other[..., 2, :]).sum(axis=-1)
    lose_backgammon = (on_roll[..., 0, :] * other[..., 3, :]).sum(axis=-1)
    # The other finishes on its m-th roll: the side on roll has had m rolls and is
    # gammoned when its first checker needs more than m (m + 1 or more).
    win_gammon = (other[..., 0, :-1] * on_roll[..., 2, 1:]).sum(axis=-1)
    win_backgammon = (other[..., 0, :-1] * on_roll[..., 3, 1:]).sum(axis=-1)
    out = np.zeros((*lose.shape, 5), on_roll.dtype)
    out[..., 0] = np.clip(1.0 - lose, 0.0, 1.0)
    out[..., 1] = win_gammon
    out[..., 2] = np.minimum(win_backgammon, win_gammon)
    out[..., 3] = lose_gammon
    out[..., 4] = np.minimum(lose_backgammon, lose_gammon)
    return out


def one_sided_outcome(
    on_roll_rolls: np.ndarray,
    on_roll_first: np.ndarray,
    other_rolls: np.ndarray,
    other_first: np.ndarray,
    on_roll_clear: np.ndarray | None = None,
    other_clear: np.ndarray | None = None,
) -> np.ndarray:
    """The five probabilities (N, 5) float64 of the side *not* on roll (`race_outcome`),
    from each side's one-sided distributions (N, K) of rolls to bear off all and the
    first checker and, for races with checkers still outside (`vrhcaby.nn.onesided`), to
    clear the opponent's home board (without them, no backgammons: both sides are home)."""
    on_roll = side_tables(np.asarray(on_roll_rolls, np.float64), on_roll_first, on_roll_clear)
    other = side_tables(np.asarray(other_rolls, np.float64), other_first, other_clear)
    return race_outcome(on_roll, other)
