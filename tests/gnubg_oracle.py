"""GNU Backgammon's 0-ply network (through `gnubg_nn`) as an afterstate evaluator, the
oracle the agent, analysis and external-protocol tests put inside the `td` agent.

With it, our cubeless probabilities are gnubg's own, so what a test compares against
gnubg (its moves, its cubeful equities) checks our wiring, not any network's skill.
"""

from __future__ import annotations

import gnubg_nn
import numpy as np


def invert(p) -> np.ndarray:
    """The same five probabilities from the other side's view."""
    p = np.asarray(p, dtype=np.float64)
    return np.array([1 - p[0], p[3], p[4], p[1], p[2]])


class GnubgEvaluator:
    """gnubg's 0-ply network: the mover (row 1) has just played, the opponent is to roll.

    gnubg evaluates the side on roll, so each afterstate is seen from the opponent
    (`a[::-1]`) and the result inverted."""

    variant = "standard"

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        return np.array(
            [invert(gnubg_nn.probabilities(a[::-1].tolist(), 0)) for a in afterstates]
        ).reshape(-1, 5)
