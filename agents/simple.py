"""The random agent: uniform over the distinct legal plays (spec `random[?seed=N]`).

In acey-deucey a 1-2 is chosen in two uniform stages, as `engine.random_selfplay_ad`
does: the play of the 1 and the 2, then one of the outcomes of the six doubles (a whole
1-2 turn can have tens of thousands of outcomes)."""

from __future__ import annotations

import numpy as np

import engine
from agents.base import CubelessAgent


class RandomAgent(CubelessAgent):
    """Picks uniformly among the distinct resulting positions of a roll."""

    name = "random"
    acey_deucey = True

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Restart the agent's own random stream (the runner does so per batch of games)."""
        self.rng = np.random.default_rng(seed)

    def choose_boards(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        after, parent = engine.batch_afterstates(boards, dice)
        counts = np.bincount(parent, minlength=len(boards))
        moved = counts > 0
        first = np.cumsum(counts) - counts
        pick = first[moved] + (self.rng.random(int(moved.sum())) * counts[moved]).astype(np.int64)
        chosen = boards.copy()
        chosen[moved] = after[pick]
        return chosen

    def _uniform(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which groups have rows, and a row drawn uniformly from each of them."""
        moved = counts > 0
        first = np.cumsum(counts) - counts
        pick = first[moved] + (self.rng.random(int(moved.sum())) * counts[moved]).astype(np.int64)
        return moved, pick

    def choose_turns_ad(
        self, boards: np.ndarray, dice: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Acey-deucey: a random turn of each board (B, 2, 26) and whether it rolls again."""
        from engine.acey_deucey import batch_afterstates_ad, batch_bonus_ad

        boards = np.ascontiguousarray(boards, dtype=np.int8)
        after, parent, due = batch_afterstates_ad(boards, dice, bonus=False)
        moved, pick = self._uniform(np.bincount(parent, minlength=len(boards)))
        chosen, again = boards.copy(), np.zeros(len(boards), bool)
        chosen[moved] = after[pick]
        owed = np.flatnonzero(moved)[due[pick]]
        if owed.size:
            after, parent, extra = batch_bonus_ad(chosen[owed])
            _, pick = self._uniform(np.bincount(parent, minlength=owed.size))
            chosen[owed], again[owed] = after[pick], extra[pick]
        return chosen, again

    def choose_play(self, position: engine.Position, dice: tuple[int, int]) -> engine.Play:
        plays = engine.legal_plays(position, dice)
        if not plays:
            raise ValueError(f"no legal play for {dice[0]}-{dice[1]}")
        return plays[int(self.rng.integers(len(plays)))]
