"""Confidence intervals and ratings for tournament results."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def mean_ci95(samples: np.ndarray) -> tuple[float, float, float]:
    """Mean and normal-approximation 95% interval; the interval is NaN for fewer than 2."""
    x = np.asarray(samples, dtype=np.float64)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, math.nan, math.nan
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(len(x))
    return m, m - half, m + half


def wilson_ci95(wins: float, n: int) -> tuple[float, float]:
    """Wilson score 95% interval of a success rate: `wins` of `n` (a shared win, a tie,
    counts as its share), kept within [0, 1]; NaN for no trials."""
    if n == 0:
        return math.nan, math.nan
    p = wins / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def bradley_terry_elo(wins: np.ndarray, iterations: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Elo ratings (mean 0) and their standard errors from a Bradley–Terry fit.

    `wins[i, j]` counts games player i won against player j. The fit is the classic
    minorise-maximise iteration; errors come from the inverse Fisher information under
    the mean-zero constraint. A player who never lost (or never won) has no finite rating.
    """
    w = np.asarray(wins, dtype=np.float64)
    k = len(w)
    n = w + w.T
    strength = np.ones(k)
    for _ in range(iterations):
        denom = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = w.sum(axis=1) / np.where(denom > 0, denom, 1)
        new = np.maximum(new, 1e-300)
        new /= np.exp(np.log(new).mean())
        if np.allclose(new, strength, rtol=1e-12, atol=0):
            strength = new
            break
        strength = new
    scale = 400 / math.log(10)
    elo = scale * np.log(strength)
    elo -= elo.mean()
    p = strength[:, None] / (strength[:, None] + strength[None, :])
    info = -(n * p * p.T)
    np.fill_diagonal(info, 0)
    np.fill_diagonal(info, -info.sum(axis=1))
    centring = np.eye(k) - 1 / k
    cov = centring @ np.linalg.pinv(info) @ centring
    return elo, scale * np.sqrt(np.maximum(np.diag(cov), 0))


def nan_to_none(x):
    """`x` with every non-finite float, in nested dicts, lists and tuples, made None, so
    that it can be written as strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: nan_to_none(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [nan_to_none(v) for v in x]
    return x
