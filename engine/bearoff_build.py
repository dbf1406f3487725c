"""The bear-off databases' dynamic programs (numba): see `engine.bearoff` for the tables.

Every move is the project's own batched move generator's (`engine.batch_afterstates`, a
side alone on the board), so the databases follow exactly the rules the games are played
by. In a bear-off every play lowers the pip count, so each table is filled in order of
pips (of the pair, for the two-sided one), every value read already final. A few seconds
in all, plus numba's compile on the first build.
"""

from __future__ import annotations

import numpy as np

from engine.bearoff import N_POSITIONS, N_SMALL, PIPS, POINTS, POSITIONS, index
from engine.dice import ROLLS, WEIGHTS
from engine.jit import kernel
from engine.movegen import batch_afterstates

MAX_ROLLS = 32
"""Length of the one-sided distributions: 0..31 rolls (15 checkers need at most 30)."""

_CHUNK = 1024  # positions whose plays are generated at once (about 100 MB of boards)


def successors(n_positions: int = N_POSITIONS) -> tuple[np.ndarray, np.ndarray]:
    """Every position each roll can reach from each of the first `n_positions`:
    `starts` int64 (n * 21 + 1,) and `succ` int32, the plays of position i with roll r
    being ``succ[starts[21 * i + r]:starts[21 * i + r + 1]]``."""
    parts, counts = [], []
    for lo in range(0, n_positions, _CHUNK):
        hi = min(n_positions, lo + _CHUNK)
        boards = np.zeros(((hi - lo) * len(ROLLS), 2, 25), np.int8)
        boards[:, 1, :POINTS] = np.repeat(POSITIONS[lo:hi], len(ROLLS), axis=0)
        dice = np.tile(ROLLS, (hi - lo, 1))
        after, parent = batch_afterstates(boards, dice)
        parts.append(index(after[:, 1, :POINTS]).astype(np.int32))
        counts.append(np.bincount(parent, minlength=len(boards)))
    starts = np.concatenate([[0], np.cumsum(np.concatenate(counts))]).astype(np.int64)
    return starts, np.concatenate(parts)


@kernel
def _one_sided(  # pragma: no cover - numba
    order: np.ndarray,
    checkers: np.ndarray,
    starts: np.ndarray,
    succ: np.ndarray,
    weights: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    n = checkers.shape[0]
    rolls = np.zeros((n, k))
    first = np.zeros((n, k))
    mean_rolls = np.zeros(n)
    mean_first = np.zeros(n)
    for i in order:
        if checkers[i] == 0:
            rolls[i, 0] = 1.0
        if checkers[i] < 15:
            first[i, 0] = 1.0  # a checker is already off
        if checkers[i] == 0:
            continue
        for r in range(weights.shape[0]):
            w = weights[r]
            lo, hi = starts[21 * i + r], starts[21 * i + r + 1]
            best, best_first = succ[lo], succ[lo]
            for q in range(lo + 1, hi):
                s = succ[q]
                if mean_rolls[s] < mean_rolls[best]:
                    best = s
                if mean_first[s] < mean_first[best_first]:
                    best_first = s
            for m in range(k - 1):
                rolls[i, m + 1] += w * rolls[best, m]
            mean_rolls[i] += w * (1.0 + mean_rolls[best])
            if checkers[i] == 15:
                for m in range(k - 1):
                    first[i, m + 1] += w * first[best_first, m]
                mean_first[i] += w * (1.0 + mean_first[best_first])
    return rolls, first


def build_one_sided() -> tuple[np.ndarray, np.ndarray]:
    """`rolls`, `first` float64 (54264, MAX_ROLLS): see `engine.bearoff`."""
    starts, succ = successors()
    checkers = POSITIONS.sum(axis=1).astype(np.int64)
    order = np.argsort(PIPS, kind="stable")
    rolls, first = _one_sided(order, checkers, starts, succ, WEIGHTS, MAX_ROLLS)
    if rolls[:, -1].any() or first[:, -1].any():
        raise AssertionError("one-sided bear-off distributions need more than MAX_ROLLS")
    return rolls, first


@kernel
def _two_sided(  # pragma: no cover - numba
    pairs: np.ndarray, n: int, starts: np.ndarray, succ: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    win = np.zeros((n, n))
    centred = np.zeros((n, n))
    owned = np.zeros((n, n))
    theirs = np.zeros((n, n))
    for t in range(pairs.shape[0]):
        i, j = pairs[t] // n, pairs[t] % n
        if i == 0 or j == 0:
            continue  # a finished game: never read
        p = nd_centred = nd_owned = nd_theirs = 0.0
        for r in range(weights.shape[0]):
            w = weights[r]
            bp = bc = bo = bt = -2.0
            for q in range(starts[21 * i + r], starts[21 * i + r + 1]):
                s = succ[q]
                if s == 0:  # borne off: won, one cube
                    v = c = o = x = 1.0
                else:  # the opponent on roll, the cube's owner seen from its side
                    v = 1.0 - win[j, s]
                    c = -centred[j, s]
                    o = -theirs[j, s]
                    x = -owned[j, s]
                bp, bc, bo, bt = max(bp, v), max(bc, c), max(bo, o), max(bt, x)
            p += w * bp
            nd_centred += w * bc
            nd_owned += w * bo
            nd_theirs += w * bt
        win[i, j] = p
        theirs[i, j] = nd_theirs  # the side on roll cannot double
        take = 2.0 * nd_theirs  # doubled, taken: the opponent owns the cube
        centred[i, j] = max(nd_centred, min(take, 1.0))
        owned[i, j] = max(nd_owned, min(take, 1.0))
    return win, centred, owned, theirs


def build_two_sided() -> dict[str, np.ndarray]:
    """`win`, `centred`, `owned`, `theirs` float64 (924, 924), indexed [on roll, not on
    roll]: see `engine.bearoff`."""
    starts, succ = successors(N_SMALL)
    pips = PIPS[:N_SMALL]
    pairs = np.argsort((pips[:, None] + pips[None, :]).ravel(), kind="stable")
    win, centred, owned, theirs = _two_sided(pairs, N_SMALL, starts, succ, WEIGHTS)
    return {"win": win, "centred": centred, "owned": owned, "theirs": theirs}
