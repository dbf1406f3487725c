"""Every roll at once: the best play of each of the 21 rolls and their average over the dice.

One step of expectimax for a batch of pre-roll boards, shared by the rollouts' luck
adjustment (the value of the roll that came minus the average) and self-play training on
expected backups (the average is the one-ply value of the position before the roll). The
boards are deduplicated first: rollouts and self-play batches repeat positions (the opening
above all), and each distinct board costs 21 move generations and one network pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numba import njit

import engine
from vrhcaby.nn.net import outcome

#: The 21 distinct rolls and how many of the 36 ordered rolls each stands for.
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int64)
COUNTS = np.array([1.0 if a == b else 2.0 for a, b in ROLLS])
#: `ROLL_INDEX[a, b]`: the row of ROLLS of the roll a-b, in either order.
ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
for _k, (_a, _b) in enumerate(ROLLS):
    ROLL_INDEX[_a, _b] = ROLL_INDEX[_b, _a] = _k


class Evaluator(Protocol):
    """A network's outcome probabilities; `probabilities_from(roots, after, parent)`, where
    present, is used for its incremental first layer."""

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """float (N, 5) outcome probabilities for the mover (row 1) of each afterstate."""
        ...


def game_value(after: np.ndarray) -> np.ndarray:
    """`engine.game_value`, checking only afterstates where the mover has no checker left."""
    value = np.zeros(len(after), dtype=np.int8)
    over = _mover_off(after)
    if over.any():
        value[over] = engine.game_value(after[over])
    return value


@njit(cache=True)
def _mover_off(after):  # pragma: no cover - numba
    """Whether the mover (row 1) of each afterstate has borne off every checker."""
    out = np.ones(len(after), np.bool_)
    for r in range(len(after)):
        for i in range(after.shape[2]):
            if after[r, 1, i]:
                out[r] = False
                break
    return out


def afterstate_probabilities(
    evaluator: Evaluator, roots: np.ndarray, after: np.ndarray, parent: np.ndarray
) -> np.ndarray:
    """Mover's probabilities of afterstates played from `roots[parent]`: a finished game's
    outcome, else the evaluator's (in the evaluator's float type)."""
    value = game_value(after)
    live = value == 0
    fast = getattr(evaluator, "probabilities_from", None)
    if live.all():
        p = fast(roots, after, parent) if fast is not None else evaluator.probabilities(after)
        return np.asarray(p)
    p = outcome(value)
    if live.any():
        if fast is not None:
            q = np.asarray(fast(roots, after[live], parent[live]))
        else:
            q = np.asarray(evaluator.probabilities(after[live]))
        p = p.astype(np.result_type(p, q))
        p[live] = q
    return p


@njit(cache=True)
def best_rows(p, parent, n):  # pragma: no cover - numba
    """Per parent 0..n-1, the row of the highest cubeless equity of probabilities `p` (the
    first on ties; -1 if none), each equity summed in float64 in `net.equity`'s order."""
    rows = np.full(n, -1, np.int64)
    best = np.full(n, -np.inf)
    for r in range(len(parent)):
        k = parent[r]
        e = (
            2.0 * np.float64(p[r, 0]) - 1.0 + np.float64(p[r, 1]) - np.float64(p[r, 3])
            + np.float64(p[r, 2]) - np.float64(p[r, 4])
        )  # fmt: skip
        if e > best[k]:
            best[k] = e
            rows[k] = r
    return rows


@dataclass(frozen=True)
class EveryRoll:
    """The best play of each roll for each of B pre-roll boards (the side on roll in row 1),
    held once per distinct board."""

    best: np.ndarray
    """float64 (U, 21, 5): the mover's probabilities after its best play of each roll of
    ROLLS (a finished game's certain outcome; the board itself when no play is legal)."""
    plays: np.ndarray
    """int8 (U, 21, 2, 25): the afterstate of that play."""
    inverse: np.ndarray
    """int (B,): the row of `best` and `plays` of each board."""
    evaluated: int
    """Afterstates the evaluator was asked about (over the distinct boards)."""

    @property
    def mean(self) -> np.ndarray:
        """float64 (B, 5): the average over the 36 rolls, the mover's probabilities before
        it rolls when it plays each roll greedily (exact when all rolls agree)."""
        return (np.einsum("r,urk->uk", COUNTS, self.best) / 36)[self.inverse]

    def for_dice(self, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each board's roll (B, 2): the probabilities after its best play and that
        play's afterstate."""
        r = ROLL_INDEX[dice[:, 0], dice[:, 1]]
        return self.best[self.inverse, r], self.plays[self.inverse, r]


def every_roll(evaluator: Evaluator, boards: np.ndarray) -> EveryRoll:
    """The evaluator's greedy (0-ply) play of every roll from each pre-roll board (B, 2, 25)."""
    keys = np.ascontiguousarray(boards).reshape(len(boards), -1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    u = unique.reshape(-1, 2, 25).astype(np.int8)
    reps = np.repeat(u, len(ROLLS), axis=0)
    after, parent = engine.batch_afterstates(reps, np.tile(ROLLS, (len(u), 1)))
    passes = np.flatnonzero(np.bincount(parent, minlength=len(reps)) == 0)
    if len(passes):  # the board itself stands for the play of a roll that has none
        after = np.concatenate([after, reps[passes]])
        parent = np.concatenate([parent, passes])
    p = afterstate_probabilities(evaluator, u, after, parent // len(ROLLS))
    rows = best_rows(p, parent, len(reps))
    best = p[rows].astype(np.float64).reshape(len(u), len(ROLLS), 5)
    plays = after[rows].reshape(len(u), len(ROLLS), 2, 25)
    return EveryRoll(best, plays, inverse.reshape(-1), len(after))
