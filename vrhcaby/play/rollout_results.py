"""What a rollout found: each trial's result and luck (`RolloutResult`), the estimate they
give with its standard error (`Estimate`), and a rolled-out candidate play (`PlayRollout`).

`RolloutResult.se_cut` says how much each variance reduction cut the standard error,
from the trials themselves: the plain estimate against the stratified one, and the raw
results against the luck-adjusted ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

import engine
from vrhcaby.equity.outcomes import consistent, equity
from vrhcaby.play.stats import nan_to_none

#: Equity of the five probabilities, as a linear form.
#: The linear form of `equity` (its gradient): the equity of a difference of probabilities.
EQUITY = equity(np.eye(5)) - equity(np.zeros(5))


@dataclass(frozen=True)
class Estimate:
    """The mean of per-trial vectors of five outcomes and the covariance of that mean."""

    mean: np.ndarray
    cov: np.ndarray
    trials: int
    stratified: bool
    #: Whether the vectors are differences of two outcomes (their equity has no -1 term).
    difference: bool = False

    @property
    def equity(self) -> float:
        """Cubeless money equity of the mean (or the equity difference it stands for)."""
        return float(EQUITY @ self.mean) if self.difference else float(equity(self.mean))

    def se(self, form: np.ndarray) -> float:
        """Standard error of a linear form of the five outcomes."""
        return float(math.sqrt(max(float(form @ self.cov @ form), 0.0)))

    @property
    def equity_se(self) -> float:
        return self.se(EQUITY)

    @property
    def probability_se(self) -> np.ndarray:
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))

    def ci95(self) -> tuple[float, float]:
        """Normal 95% interval of the equity."""
        half = 1.959963984540054 * self.equity_se
        return self.equity - half, self.equity + half

    def delta_se(self, f: Callable[[np.ndarray], float], step: float = 1e-5) -> float:
        """Standard error of a smooth function of the mean (delta method)."""
        grad = np.zeros(5)
        for k in range(5):
            e = np.zeros(5)
            e[k] = step
            grad[k] = (f(self.mean + e) - f(self.mean - e)) / (2 * step)
        return self.se(grad)


def estimate(values: np.ndarray, strata: np.ndarray | None, n_strata: int) -> Estimate:
    """Mean and covariance of the mean of per-trial (T, 5) values.

    With `strata` (each trial's first-roll index of `n_strata` equally likely ones) and
    at least two trials in every stratum, the stratified estimator: the average of the
    stratum means, with variance sum(S_h / n_h) / H**2. Otherwise the plain mean and
    covariance / T (NaN with fewer than two trials).
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if strata is not None and n_strata:
        counts = np.bincount(strata, minlength=n_strata)
        if counts.min() >= 2:
            means = np.zeros((n_strata, 5))
            cov = np.zeros((5, 5))
            for h in range(n_strata):
                xs = x[strata == h]
                means[h] = xs.mean(axis=0)
                cov += np.cov(xs, rowvar=False, ddof=1) / len(xs)
            return Estimate(
                mean=means.mean(axis=0), cov=cov / n_strata**2, trials=n, stratified=True
            )
    if n < 2:
        return Estimate(
            mean=x.mean(axis=0) if n else np.full(5, np.nan),
            cov=np.full((5, 5), np.nan),
            trials=n,
            stratified=False,
        )
    cov = np.cov(x, rowvar=False, ddof=1) / n
    return Estimate(mean=x.mean(axis=0), cov=cov, trials=n, stratified=False)


@dataclass
class RolloutResult:
    """The trials of one rolled-out position or play, from the root side's view."""

    #: Each trial's result (outcome, or the evaluator's estimate where it stopped), (T, 5).
    raw: np.ndarray
    #: Each trial's summed luck, (T, 5) (zeros without luck adjustment).
    luck: np.ndarray
    #: Each trial's first-roll stratum, (T,).
    stratum: np.ndarray
    #: The number of strata (36, 30 for an opening), 0 without quasi-random dice.
    n_strata: int
    #: Plies each trial played.
    plies: np.ndarray
    #: Whether luck adjustment was applied.
    luck_adjusted: bool
    #: Whether Ctrl-C cut the rollout short (the trials are the complete chunks).
    interrupted: bool = False
    #: With the cube played in the trials: each trial's cubeful result for each cube line
    #: (T, L), from the root side's view per unit of the root's cube (money equity, or
    #: EMG in match play), and its summed cubeful luck (T, L); None without.
    cubeful: np.ndarray | None = None
    cubeful_luck: np.ndarray | None = None

    @property
    def trials(self) -> int:
        return len(self.raw)

    def cubeful_estimate(self, line: int = 0, minus: int | None = None) -> tuple[float, float]:
        """Mean and standard error of a cube line's luck-adjusted cubeful results, or of its
        difference from line `minus`, paired by trial (stratified as `estimate`)."""
        if self.cubeful is None or self.cubeful_luck is None:
            raise ValueError("this rollout did not play the cube in its trials")
        v = self.cubeful[:, line] - self.cubeful_luck[:, line]
        if minus is not None:
            v = v - (self.cubeful[:, minus] - self.cubeful_luck[:, minus])
        x = np.zeros((len(v), 5))
        x[:, 0] = v
        e = estimate(x, self.stratum if self.n_strata else None, self.n_strata)
        return float(e.mean[0]), float(math.sqrt(max(float(e.cov[0, 0]), 0.0)))

    @property
    def values(self) -> np.ndarray:
        """Per-trial values the estimate averages: raw minus luck."""
        return self.raw - self.luck

    def estimate(self, *, luck: bool = True, stratified: bool = True) -> Estimate:
        """The estimate (luck-adjusted and stratified where the rollout used them), its
        mean moved into what a position's probabilities can be (`outcomes.consistent`:
        luck adjustment can carry a probability near 0 below it; the equity is that of
        the probabilities shown)."""
        values = self.values if luck else self.raw
        strata = self.stratum if stratified and self.n_strata else None
        e = estimate(values, strata, self.n_strata)
        return replace(e, mean=consistent(e.mean)) if self.trials else e

    def se_cut(self) -> dict[str, float]:
        """How many times each variance reduction cut the equity's standard error.

        `luck`: raw against luck-adjusted results; `quasi_random`: plain against
        stratified error; `total`: a plain rollout's error against this one's. Only those
        that were on are present; NaN when an error is (numerically) zero or unknown.
        """
        best = self.estimate().equity_se
        plain = self.estimate(luck=False, stratified=False).equity_se

        def ratio(a: float, b: float) -> float:
            return a / b if b > 1e-12 and math.isfinite(a) else math.nan

        out = {}
        if self.luck_adjusted:
            out["luck"] = ratio(self.estimate(luck=False).equity_se, best)
        if self.n_strata:
            out["quasi_random"] = ratio(self.estimate(stratified=False).equity_se, best)
        if out:
            out["total"] = ratio(plain, best)
        return out

    def to_json(self) -> dict:
        """Figures for `--json`: probabilities, equity, errors, intervals, cuts."""
        e = self.estimate()
        lo, hi = e.ci95()
        return nan_to_none(
            {
                "trials": self.trials,
                "probabilities": [float(v) for v in e.mean],
                "probabilities_se": [float(v) for v in e.probability_se],
                "equity": e.equity,
                "equity_se": e.equity_se,
                "equity_ci95": [lo, hi],
                "se_cut": self.se_cut(),
                "mean_plies": float(self.plies.mean()) if self.trials else None,
                "interrupted": self.interrupted,
            }
        )


@dataclass
class PlayRollout:
    """One candidate play and its rollout, for the side that plays it."""

    play: engine.Play
    result: RolloutResult
    #: The fast search's value that picked it (cubeless equity, or the agent's score).
    prior: float
    #: Cubeless equity difference from the best candidate, per trial paired.
    diff: Estimate | None = None
    cubeful: float = math.nan
    cubeful_se: float = math.nan
