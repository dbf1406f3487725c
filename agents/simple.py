"""The random agent: uniform over the distinct legal plays (spec `random[?seed=N]`)."""

from __future__ import annotations

import numpy as np

import engine
from agents.base import CubelessAgent


class RandomAgent(CubelessAgent):
    """Picks uniformly among the distinct resulting positions of a roll."""

    name = "random"

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

    def choose_play(self, position: engine.Position, dice: tuple[int, int]) -> engine.Play:
        plays = engine.legal_plays(position, dice)
        if not plays:
            raise ValueError(f"no legal play for {dice[0]}-{dice[1]}")
        return plays[int(self.rng.integers(len(plays)))]
