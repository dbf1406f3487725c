"""Variance reduction of rollouts, as GNU Backgammon does it, both on by default.

* **Quasi-random dice** (`Dice`). The first rolls are stratified: trial `i` gets, at
  turn `t` (for the first `S` turns, with `36**S >= trials`), roll number
  `(d_0 + ... + d_t) mod 36` of a random ordering of the 36 ordered rolls, where `d_k` is
  the `k`-th base-36 digit of `i`. So any 36 consecutive trials see every first roll
  once, and 1,296 trials every pair of first two rolls once. Later rolls are random.
  The standard error is then estimated within first-roll strata (conservative: it
  ignores the later strata).
* **Luck adjustment** (`roll_luck`). Before each roll, the evaluator's best play is found
  for each of the 21 rolls; the luck of the roll that came is the value of its best play
  minus the average over all rolls (weights 1/36 and 2/36). A trial's result minus its
  summed luck has the same expectation (the luck terms average zero whatever the
  evaluator) and, with a good evaluator, a much smaller variance.

Dice depend only on `(seed, trial, ply)`, so the same trial number plays the same dice
whatever the position, the chunking, the number of processes or Ray workers.
"""

from __future__ import annotations

import math

import numpy as np

from agents.search import ValueFunction as Evaluator
from agents.search import every_roll
from vrhcaby.equity.outcomes import invert

#: The 36 ordered rolls (quasi-random strata) and the 30 opening rolls (no doubles):
#: `(die of the side in row 1, die of the side in row 0)` for the opening.
_PAIRS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int64)
OPENING = _PAIRS[_PAIRS[:, 0] != _PAIRS[:, 1]]
#: A difference of probability vectors seen from the other side (`invert` without the 1).
SWAP = invert(np.eye(5)) - invert(np.zeros(5))


def _stratified_turns(trials: int, bases: list[int]) -> int:
    """The number of leading turns whose joint combinations the trials can cover."""
    s, cover = 1, bases[0]
    while cover < trials and s < 4:
        cover *= 36
        s += 1
    return s


class Dice:
    """The rolls of trials (global trial numbers), by ply; a function of (seed, trial, ply).

    Ply 0 of an opening is an opening roll (no doubles): `(die of the side in row 1, die
    of the side in row 0)`; every other roll is an ordered pair of dice.
    """

    def __init__(
        self, seed: int, trials: np.ndarray, total: int, quasi_random: bool, opening: bool
    ) -> None:
        self.seed = seed
        self.trials = np.asarray(trials, dtype=np.int64)
        self.quasi_random = quasi_random
        self.opening = opening
        self.bases = [len(OPENING) if opening else 36, 36, 36, 36]
        self.turns = _stratified_turns(total, self.bases) if quasi_random else 0
        self.block = math.prod(self.bases[: self.turns]) if quasi_random else 1
        self.rngs = [np.random.default_rng([seed, int(t)]) for t in self.trials]
        self.random = np.zeros((len(self.trials), 0, 2), dtype=np.int64)
        self._perms: dict[tuple[int, int], np.ndarray] = {}

    def _perm(self, block: int, turn: int) -> np.ndarray:
        key = (block, turn)
        if key not in self._perms:
            rng = np.random.default_rng([self.seed, block, turn, 36])
            self._perms[key] = rng.permutation(self.bases[turn])
        return self._perms[key]

    def strata(self) -> np.ndarray:
        """Each trial's first-roll index (its stratum); zeros without quasi-random dice."""
        if not self.quasi_random:
            return np.zeros(len(self.trials), dtype=np.int64)
        return self._index(np.arange(len(self.trials)), 0)

    def _index(self, rows: np.ndarray, turn: int) -> np.ndarray:
        i = self.trials[rows]
        total = np.zeros(len(i), dtype=np.int64)
        radix = 1
        for k in range(turn + 1):
            total += (i // radix) % self.bases[k]
            radix *= self.bases[k]
        block = i // self.block
        index = total % self.bases[turn]
        out = np.empty(len(i), dtype=np.int64)
        for b in np.unique(block):
            sel = block == b
            out[sel] = self._perm(int(b), turn)[index[sel]]
        return out

    def roll(self, rows: np.ndarray, ply: int) -> np.ndarray:
        """int64 (n, 2) rolls of the trials at positions `rows` of this chunk, at `ply`."""
        if ply < self.turns:
            table = OPENING if self.opening and ply == 0 else _PAIRS
            return table[self._index(rows, ply)]
        if self.opening and ply == 0:
            return OPENING[[int(self.rngs[r].integers(len(OPENING))) for r in rows]]
        while ply >= self.random.shape[1]:
            more = np.stack([r.integers(1, 7, size=(64, 2)) for r in self.rngs])
            self.random = np.concatenate([self.random, more], axis=1)
        return self.random[rows, ply]


def roll_luck(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For pre-roll boards and the rolls that came: the luck of each roll for the mover,
    (n, 5) value of the best play minus the average over the 21 rolls, and the evaluator's
    best afterstate for that roll (the board itself when no play is legal)."""
    table = every_roll(evaluator, boards)
    best, chosen = table.for_dice(dice)
    return best - table.mean, chosen


def reuses_luck(agent, evaluator: Evaluator | None) -> bool:
    """Whether the agent plays exactly the evaluator's 0-ply best play (a 0-ply td agent
    on the same network), so the luck step's choice is its choice."""
    return (
        evaluator is not None
        and getattr(agent, "evaluator", None) is evaluator
        and getattr(agent, "plies", None) == 0
    )
