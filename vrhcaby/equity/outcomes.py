"""The five outcome probabilities: their cubeless money equity, the other side's view of
them, and those of a finished game.

Five probabilities (..., 5) belong to one side: P(win), P(win gammon), P(win backgammon),
P(lose gammon), P(lose backgammon), gammons including backgammons, as GNU Backgammon's
nets give them. This is the one place for the money-equity and change-of-view formulas;
`equity` and `invert` are plain arithmetic on the last axis, so they work alike on numpy
arrays (any float type, kept) and torch tensors (the trainer's), and inside every batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OUTCOMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
"""The five probabilities' names, in their order: a network's outputs, and the field names
of the JSON that reports them one by one (calibration's events, the cube judge's errors)."""
WIN, WIN_GAMMON, WIN_BACKGAMMON, LOSE_GAMMON, LOSE_BACKGAMMON = range(len(OUTCOMES))
SHORT_NAMES = ("W", "W(g)", "W(bg)", "L(g)", "L(bg)")
"""Their labels in the tables of `hint`, `eval` and `cube`, as GNU Backgammon heads them."""


def equity(p: Any) -> Any:
    """Cubeless money equity of five probabilities (..., 5) for the side they belong to.

    Each game won scores 1, each gammon one more, each backgammon one more again, and the
    same for losses: 2 P(win) - 1 + P(wg) - P(lg) + P(wbg) - P(lbg), summed in that order
    (the order fixes the last bit, which ties between plays are broken on). numpy and torch
    keep the array's float type; numba, which compiles this for `agents.search`, sums
    float32 probabilities in float64 (the float literals are float64 there).

    >>> round(float(equity(np.array([0.6, 0.2, 0.01, 0.1, 0.002]))), 12)
    0.308
    """
    return 2.0 * p[..., 0] - 1.0 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


def invert(p: Any) -> Any:
    """The same outcome distribution seen from the other side: (..., 5) -> (..., 5).

    A win for one side is a loss for the other, so win -> 1 - win and the gammon and
    backgammon pairs swap. Affine, so it commutes with averaging (used by the λ-return).

    >>> invert(np.array([0.6, 0.2, 0.01, 0.1, 0.002])).tolist()
    [0.4, 0.1, 0.002, 0.2, 0.01]
    """
    out = p[..., [0, 3, 4, 1, 2]]  # fancy indexing copies, in numpy and torch alike
    out[..., 0] = 1 - p[..., 0]
    return out


def consistent(p: Any) -> np.ndarray:
    """The five probabilities (..., 5) moved, each as little as it takes, into what a
    position can have: 0 <= P(win) <= 1, 0 <= P(wbg) <= P(wg) <= P(win), and
    0 <= P(lbg) <= P(lg) <= 1 - P(win); float64.

    A luck-adjusted rollout averages each trial's result minus its luck: unbiased, but its
    noise can carry a probability near 0 below it (a rollout once printed -0.0020).

    >>> consistent([0.49, 0.15, 0.007, 0.12, -0.0012]).tolist()
    [0.49, 0.15, 0.007, 0.12, 0.0]
    >>> consistent([1.002, 0.3, 0.31, 0.01, 0.0]).tolist()
    [1.0, 0.3, 0.3, 0.0, 0.0]
    """
    q = np.array(p, dtype=np.float64)
    q[..., 0] = np.clip(q[..., 0], 0.0, 1.0)
    q[..., 1] = np.clip(q[..., 1], 0.0, q[..., 0])
    q[..., 2] = np.clip(q[..., 2], 0.0, q[..., 1])
    q[..., 3] = np.clip(q[..., 3], 0.0, 1.0 - q[..., 0])
    q[..., 4] = np.clip(q[..., 4], 0.0, q[..., 3])
    return q


def outcome(value: Any) -> np.ndarray:
    """The five probabilities, float32 (..., 5), of a finished game won by `value` points
    (1, 2 or 3), from the winner's view.

    >>> outcome([1, 3]).tolist()
    [[1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0]]
    """
    value = np.asarray(value)
    out = np.zeros((*value.shape, 5), dtype=np.float32)
    out[..., 0] = 1.0
    out[..., 1] = value >= 2
    out[..., 2] = value >= 3
    return out
