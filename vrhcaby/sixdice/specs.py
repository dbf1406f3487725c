"""Six-dice agents by name: the spec strings of `vrhcaby dice` and the benchmarks."""

from __future__ import annotations

import numpy as np

from vrhcaby.sixdice.learner import load_td_agent
from vrhcaby.sixdice.players import DiceAgent, GreedyAgent, RandomAgent, optimal_agent


def load_dice_agent(spec: str, harsh: bool = False, seed: int | None = None) -> DiceAgent:
    """An agent from its spec: `random`, `greedy`, `optimal` or `td:PATH` (a six-dice
    training checkpoint, `vrhcaby train --config configs/recipes/sixdice.toml`)."""
    if spec == "random":
        return RandomAgent(np.random.default_rng(seed))
    if spec == "greedy":
        return GreedyAgent()
    if spec == "optimal":
        return optimal_agent(harsh)
    if spec.startswith("td:"):
        agent = load_td_agent(spec[3:], harsh)
        agent.name = spec
        return agent
    raise ValueError(f"unknown dice agent {spec!r} (random, greedy, optimal, td:PATH)")
