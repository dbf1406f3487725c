"""Rollouts: judge a position or a close play by playing it to the end many times.

A rollout plays a position out `trials` times with an agent and averages the results:
the five outcome probabilities P(win), P(win gammon), P(win backgammon), P(lose gammon),
P(lose backgammon) of the side it is judged for (the *root* side), and their money
equity, each with a standard error. All trials of a chunk advance in lockstep: every ply
asks the agent once (`choose_boards`) for all of them, and every evaluation of a ply goes
through the evaluator in one call.

Variance reduction, as GNU Backgammon does it, both on by default:

* **Quasi-random dice.** The first rolls are stratified: trial `i` gets, at turn `t`
  (for the first `S` turns, with `36**S >= trials`), roll number
  `(d_0 + ... + d_t) mod 36` of a random ordering of the 36 ordered rolls, where `d_k` is
  the `k`-th base-36 digit of `i`. So any 36 consecutive trials see every first roll
  once, and 1,296 trials every pair of first two rolls once. Later rolls are random.
  The standard error is then estimated within first-roll strata (conservative: it
  ignores the later strata).
* **Luck adjustment.** Before each roll, the evaluator's best play is found for each of
  the 21 rolls; the luck of the roll that came is the value of its best play minus the
  average over all rolls (weights 1/36 and 2/36). A trial's result minus its summed luck
  has the same expectation (the luck terms average zero whatever the evaluator) and,
  with a good evaluator, a much smaller variance.

`RolloutResult.se_cut` says how much each cut the standard error, from the trials
themselves: the plain estimate against the stratified one, and the raw results against
the luck-adjusted ones.

Trials can stop early: after `truncate` plies, or (`race_cutoff`) at the first ply
after the first roll where there is no contact left; either way the trial's result is
the evaluator's estimate of the position it reached (plus the luck adjustment, if on).

Dice depend only on `(seed, trial, ply)`, so the same trial number plays the same dice
whatever the position, the chunking, the number of processes or Ray workers (`backend`
"ray": chunks of trials as Ray tasks, `vrhcaby.play.ray.run_ray`): the
candidate plays of `rollout_plays` are rolled out with the same dice streams, and their
differences are sharper than their values.

The cube in the trials (`cube=CubeSetting(...)`, as GNU Backgammon's cubeful rollouts):
before each roll the side on roll doubles, and its opponent takes or passes, by the
evaluator's 0-ply Janowski decision (`vrhcaby.equity.cube`, money with no Jacoby rule, or match
play through the MET, Crawford and dead cubes respected); a trial's cubeful result is
the game's points times the cube (a pass: the cube before the double), in match play
its EMG. A position rolls out "no double" and "double, take" side by side in the same
trials (`cube_rollout` reads the decision); the checker play is the agent's own. Luck
adjusts money results by each roll's cubeless luck times the cube at that turn (still a
zero-mean term); in match play the cubeful results are not luck-adjusted.

Example (for researchers: rollout targets for a set of positions)::

    from agents import load_agent
    from vrhcaby.play.rollout import Settings, rollout_position

    agent = load_agent("td:checkpoints/td-best.pt")
    result = rollout_position(board, agent, settings=Settings(trials=1296, seed=1))
    result.estimate().mean        # the five probabilities, luck-adjusted
    result.estimate().equity, result.estimate().equity_se
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

import engine
from agents.search import ValueFunction as Evaluator
from agents.search import afterstate_probabilities, every_roll, game_value
from engine.dice import ROLLS
from engine.formats import GameState, MatchState
from vrhcaby.equity import cube
from vrhcaby.equity.met import KAZAROSS_XG2, mwc_to_emg
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.play.pool import SHARED, WorkerPool, caused_by_interrupt
from vrhcaby.play.stats import nan_to_none

__all__ = [
    "ROLLS",
    "CubeAnalysis",
    "CubeRollout",
    "CubeSetting",
    "Estimate",
    "Evaluator",
    "PlayRollout",
    "RolloutResult",
    "Settings",
    "add_cubeful",
    "cube_analysis",
    "cube_rollout",
    "default_evaluator",
    "estimate",
    "play_cubeful_equity",
    "rank_plays",
    "rollout_afterstates",
    "rollout_plays",
    "rollout_position",
]

#: The 36 ordered rolls (quasi-random strata) and the 30 opening rolls (no doubles):
#: `(die of the side in row 1, die of the side in row 0)` for the opening.
_PAIRS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int64)
_OPENING = _PAIRS[_PAIRS[:, 0] != _PAIRS[:, 1]]
#: Equity of the five probabilities, as a linear form.
_EQUITY = np.array([2.0, 1.0, 1.0, -1.0, -1.0])
#: A difference of probability vectors seen from the other side (`invert` without the 1).
_SWAP = np.array([[-1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 1, 0, 0, 0],
                  [0, 0, 1, 0, 0]], dtype=np.float64)  # fmt: skip
MAX_PLIES = 2_000


@dataclass(frozen=True)
class Settings:
    """How a rollout is played."""

    #: Trials per rolled-out position.
    trials: int = 1296
    #: Stop each trial after this many plies and use the evaluator; None plays to the end.
    truncate: int | None = None
    #: Stop a trial at the first ply (after the first roll) with no contact left.
    race_cutoff: bool = False
    #: Stratify the first rolls (quasi-random dice).
    quasi_random: bool = True
    #: Subtract each roll's luck, as the evaluator judges it.
    luck: bool = True
    #: Dice seed (0 or more).
    seed: int = 0
    #: Trials per unit of work: a process's task, a progress step, what Ctrl-C keeps.
    chunk: int = 216

    def check(self) -> None:
        """ValueError naming the first bad setting."""
        if self.trials < 1:
            raise ValueError(f"--trials must be at least 1, got {self.trials}")
        if self.truncate is not None and self.truncate < 1:
            raise ValueError(
                f"--truncate must be at least 1 ply (or absent for none), got {self.truncate}"
            )
        if self.seed < 0:
            raise ValueError(f"--seed must be 0 or more, got {self.seed}")
        if self.chunk < 1:
            raise ValueError(f"the chunk size must be at least 1, got {self.chunk}")


# --- statistics ----------------------------------------------------------------------


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
        return float(_EQUITY @ self.mean) if self.difference else float(equity(self.mean))

    def se(self, form: np.ndarray) -> float:
        """Standard error of a linear form of the five outcomes."""
        return float(math.sqrt(max(float(form @ self.cov @ form), 0.0)))

    @property
    def equity_se(self) -> float:
        return self.se(_EQUITY)

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
            return Estimate(means.mean(axis=0), cov / n_strata**2, n, True)
    if n < 2:
        return Estimate(x.mean(axis=0) if n else np.full(5, np.nan), np.full((5, 5), np.nan),
                        n, False)  # fmt: skip
    return Estimate(x.mean(axis=0), np.cov(x, rowvar=False, ddof=1) / n, n, False)


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
        """The estimate (luck-adjusted and stratified where the rollout used them)."""
        values = self.values if luck else self.raw
        strata = self.stratum if stratified and self.n_strata else None
        return estimate(values, strata, self.n_strata)

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


# --- dice ----------------------------------------------------------------------------


def _stratified_turns(trials: int, bases: list[int]) -> int:
    """The number of leading turns whose joint combinations the trials can cover."""
    s, cover = 1, bases[0]
    while cover < trials and s < 4:
        cover *= 36
        s += 1
    return s


class _Dice:
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
        self.bases = [len(_OPENING) if opening else 36, 36, 36, 36]
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
            table = _OPENING if self.opening and ply == 0 else _PAIRS
            return table[self._index(rows, ply)]
        if self.opening and ply == 0:
            return _OPENING[[int(self.rngs[r].integers(len(_OPENING))) for r in rows]]
        while ply >= self.random.shape[1]:
            more = np.stack([r.integers(1, 7, size=(64, 2)) for r in self.rngs])
            self.random = np.concatenate([self.random, more], axis=1)
        return self.random[rows, ply]


# --- playing trials out --------------------------------------------------------------


def _to_root(p: np.ndarray, root: np.ndarray) -> np.ndarray:
    """Probabilities of the side they belong to, seen from the root side."""
    p = np.asarray(p, dtype=np.float64)
    return np.where(root[:, None], p, invert(p))


def _pre_roll(evaluator: Evaluator, boards: np.ndarray) -> np.ndarray:
    """The evaluator's probabilities for the side on roll (row 1) of pre-roll boards."""
    after = np.ascontiguousarray(boards[:, ::-1])
    return invert(np.asarray(evaluator.probabilities(after), dtype=np.float64))


def _luck(
    evaluator: Evaluator, boards: np.ndarray, dice: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For pre-roll boards and the rolls that came: the luck of each roll for the mover,
    (n, 5) value of the best play minus the average over the 21 rolls, and the evaluator's
    best afterstate for that roll (the board itself when no play is legal)."""
    table = every_roll(evaluator, boards)
    best, chosen = table.for_dice(dice)
    return best - table.mean, chosen


def _reuses_luck(agent, evaluator: Evaluator | None) -> bool:
    """Whether the agent plays exactly the evaluator's 0-ply best play (a 0-ply td agent
    on the same network), so the luck step's choice is its choice."""
    return (
        evaluator is not None
        and getattr(agent, "evaluator", None) is evaluator
        and getattr(agent, "plies", None) == 0
    )


@dataclass(frozen=True)
class _CubeLines:
    """Cube states played side by side in the same trials (a cubeful rollout's lines).

    Each trial plays its checkers once; each line keeps its own cube, and at every turn
    from `first_ply` on, the side on roll doubles where the evaluator's probabilities
    say so by Janowski's 0-ply cube decision (`vrhcaby.equity.cube`, as `cube_analysis`), its
    opponent taking or passing the same way. A pass settles the line at the cube before
    the double; the trial plays on for the other lines and the cubeless result.
    """

    #: The score and the root's cube, from the root side's view.
    setting: CubeSetting
    #: Each line's cube value and owner at the start (0 centre, 1 the root side, 2 the other).
    values: tuple[int, ...]
    owners: tuple[int, ...]
    first_ply: int

    def mover_setting(self, value: int, owner: int, mover_is_root: bool) -> CubeSetting:
        """The cube, score and money rules from the view of the side on roll."""
        s = self.setting
        mine = 1 if mover_is_root else 2
        name = "centre" if owner == 0 else "me" if owner == mine else "opponent"
        away = s.away if mover_is_root else s.away[::-1]
        return CubeSetting(value, name, s.match_to, away, s.crawford,  # type: ignore[arg-type]
                           s.jacoby, s.beavers)  # fmt: skip

    def points(self, won: int, value: int, owner: int) -> int:
        """What a game won by `won` (1, 2 or 3) scores on a line's cube: with the Jacoby
        rule in money play, a single game while the cube has not been turned (centred)."""
        s = self.setting
        counted = 1 if s.jacoby and not s.match_to and owner == 0 else won
        return counted * value

    def settle(self, points: int, root_wins: bool) -> float:
        """A finished game's result for the root side, per unit of its starting cube."""
        s = self.setting
        if not s.match_to:
            return (points if root_wins else -points) / s.cube_value
        mwc = KAZAROSS_XG2.outcome(s.away[0], s.away[1], points, root_wins, crawford=s.crawford)
        return self.emg(mwc)

    def emg(self, root_mwc: float) -> float:
        s = self.setting
        return float(mwc_to_emg(root_mwc, s.away[0], s.away[1], s.cube_value, crawford=s.crawford))

    def stopped(self, p: np.ndarray, board: np.ndarray, value: int, owner: int,
                mover_is_root: bool) -> float:  # fmt: skip
        """A truncated trial's line: the side on roll's Janowski cubeful value of `p`."""
        d = _decision(p, board, self.mover_setting(value, owner, mover_is_root))
        if self.setting.match_to:
            assert d.optimal_mwc is not None
            return self.emg(d.optimal_mwc if mover_is_root else 1.0 - d.optimal_mwc)
        eq = d.optimal * value / self.setting.cube_value
        return eq if mover_is_root else -eq


def _cube_turn(
    lines: _CubeLines, evaluator: Evaluator, board: np.ndarray, root: np.ndarray,
    value: np.ndarray, owner: np.ndarray, settled: np.ndarray, cubeful: np.ndarray,
) -> None:  # fmt: skip
    """The cube actions before the roll of pre-roll boards (side on roll in row 1), for
    every line not settled: doubles, takes (the cube doubles and changes hands) and passes
    (the line is settled), in place."""
    may = ~settled & ((owner == 0) | (owner == np.where(root, 1, 2)[:, None]))
    rows = np.flatnonzero(may.any(axis=1))
    if not len(rows):
        return
    p = _pre_roll(evaluator, board[rows])
    for k, r in enumerate(rows):
        for line in np.flatnonzero(may[r]):
            v, o, mover = int(value[r, line]), int(owner[r, line]), bool(root[r])
            d = _decision(p[k], board[r], lines.mover_setting(v, o, mover))
            if not d.double:
                continue
            if d.take:  # a beaver takes and redoubles at once, the taker keeping the cube
                value[r, line] = 4 * v if d.beaver else 2 * v
                owner[r, line] = 2 if mover else 1
            else:
                settled[r, line] = True
                cubeful[r, line] = lines.settle(v, mover)


def _play_out(
    agent,
    evaluator: Evaluator | None,
    settings: Settings,
    starts: np.ndarray,
    root: np.ndarray,
    dice: _Dice,
    rows: np.ndarray,
    opening: bool,
    lines: _CubeLines | None = None,
) -> tuple[np.ndarray, ...]:
    """Play pre-roll boards `starts` (side on roll in row 1; `root` says whether that is
    the root side) to the end; `rows` is each one's row in `dice`. Returns the results
    (R, 5) and summed luck (R, 5) from the root's view, the plies played (R,), and the
    cube `lines`' cubeful results and luck (R, L) (L = 0 without)."""
    n = len(starts)
    board = np.array(starts, dtype=np.int8)
    root = np.array(root, dtype=bool)
    raw = np.zeros((n, 5))
    luck = np.zeros((n, 5))
    plies = np.zeros(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    use_luck = settings.luck and evaluator is not None
    reuse = use_luck and _reuses_luck(agent, evaluator)
    n_lines = len(lines.values) if lines is not None else 0
    value = np.tile(np.array(lines.values if lines else (), np.int64), (n, 1))
    owner = np.tile(np.array(lines.owners if lines else (), np.int64), (n, 1))
    settled = np.zeros((n, n_lines), dtype=bool)
    cubeful = np.zeros((n, n_lines))
    cube_luck = np.zeros((n, n_lines))
    # Luck in points times the cube keeps its zero mean; in match play (MWC) it is off.
    cube_luck_on = use_luck and lines is not None and not lines.setting.match_to
    for ply in range(MAX_PLIES):
        idx = np.flatnonzero(active)
        if not len(idx):
            return raw, luck, plies, cubeful, cube_luck
        stop = np.zeros(len(idx), dtype=bool)
        if settings.truncate is not None and ply >= settings.truncate:
            stop[:] = True
        elif settings.race_cutoff and ply > 0:
            stop = ~np.asarray(engine.has_contact(board[idx]), dtype=bool).reshape(-1)
        if stop.any():
            assert evaluator is not None  # checked by _check_evaluator
            s = idx[stop]
            mover_p = _pre_roll(evaluator, board[s])
            raw[s] = _to_root(mover_p, root[s])
            plies[s] = ply
            active[s] = False
            if lines is not None:
                for k, r in enumerate(s):
                    for line in np.flatnonzero(~settled[r]):
                        cubeful[r, line] = lines.stopped(
                            mover_p[k], board[r], int(value[r, line]), int(owner[r, line]),
                            bool(root[r]),
                        )  # fmt: skip
            idx = idx[~stop]
            if not len(idx):
                continue
        if lines is not None and ply >= lines.first_ply and not (opening and ply == 0):
            assert evaluator is not None  # checked by _check_evaluator
            # A view of the active rows' state, written back below.
            v, o, st, cf = value[idx], owner[idx], settled[idx], cubeful[idx]
            _cube_turn(lines, evaluator, board[idx], root[idx], v, o, st, cf)
            value[idx], owner[idx], settled[idx], cubeful[idx] = v, o, st, cf
        d = dice.roll(rows[idx], ply)
        if opening and ply == 0:
            # The side with the higher die starts, playing both numbers.
            other = d[:, 1] > d[:, 0]
            board[idx[other]] = board[idx[other]][:, ::-1]
            root[idx[other]] = ~root[idx[other]]
            d = np.sort(d, axis=1)[:, ::-1]
        b = board[idx]
        chosen = None
        if use_luck and not (opening and ply == 0):
            assert evaluator is not None
            diff, best = _luck(evaluator, b, d)
            turn_luck = np.where(root[idx, None], diff, diff @ _SWAP.T)
            luck[idx] += turn_luck
            if cube_luck_on:
                assert lines is not None
                points = (turn_luck @ _EQUITY)[:, None] * value[idx] / lines.setting.cube_value
                cube_luck[idx] += np.where(settled[idx], 0.0, points)
            if reuse:
                chosen = best
        if chosen is None:
            chosen = np.asarray(agent.choose_boards(b, d), dtype=np.int8)
        points = game_value(chosen)
        done = points > 0
        f = idx[done]
        raw[f] = _to_root(outcome(points[done]), root[f])
        plies[f] = ply + 1
        active[f] = False
        if lines is not None:
            for r, won in zip(f, points[done], strict=True):
                for line in np.flatnonzero(~settled[r]):
                    scored = lines.points(int(won), int(value[r, line]), int(owner[r, line]))
                    cubeful[r, line] = lines.settle(scored, bool(root[r]))
        go = idx[~done]
        board[go] = chosen[~done][:, ::-1]
        root[go] = ~root[go]
    raise RuntimeError(f"trials did not end within {MAX_PLIES} plies")


@dataclass
class _Job:
    """A rollout of several roots with shared dice: what a worker process needs."""

    agent: object
    evaluator: Evaluator | None
    settings: Settings
    starts: np.ndarray  # (C, 2, 25) pre-roll boards, side on roll in row 1
    root: np.ndarray  # (C,) whether the side on roll is the root side
    opening: bool
    lines: _CubeLines | None = None

    def run(self, trials: range) -> tuple[np.ndarray, ...]:
        """Results, luck (C, T, 5), plies (C, T), strata (T,), and the cube lines'
        cubeful results and luck (C, T, L) of a chunk of trials."""
        s = self.settings
        dice = _Dice(s.seed, np.arange(trials.start, trials.stop), s.trials, s.quasi_random,
                     self.opening)  # fmt: skip
        c, t = len(self.starts), len(trials)
        starts = np.repeat(self.starts, t, axis=0)
        root = np.repeat(self.root, t)
        rows = np.tile(np.arange(t), c)
        raw, luck, plies, cubeful, cube_luck = _play_out(
            self.agent, self.evaluator, s, starts, root, dice, rows, self.opening, self.lines
        )
        n_lines = cubeful.shape[1]
        return (
            raw.reshape(c, t, 5), luck.reshape(c, t, 5), plies.reshape(c, t), dice.strata(),
            cubeful.reshape(c, t, n_lines), cube_luck.reshape(c, t, n_lines),
        )  # fmt: skip


def _worker_chunk(trials: range):
    return trials, SHARED["job"].run(trials)


def _chunks(trials: int, size: int) -> Iterator[range]:
    for lo in range(0, trials, size):
        yield range(lo, min(lo + size, trials))


#: Called after each finished chunk with the results so far (one per root).
Progress = Callable[[list[RolloutResult]], None]


def _run(
    job: _Job,
    jobs: int,
    progress: Progress | None,
    backend: str = "local",
    address: str | None = None,
) -> list[RolloutResult]:
    """All chunks of a job: in this process, in `jobs` processes, or as Ray tasks (at most
    `jobs` at a time, 0 for the cluster's CPUs); Ctrl-C keeps the finished chunks."""
    if backend not in ("local", "ray"):
        raise ValueError(f"unknown backend {backend!r} (known: local, ray)")
    s = job.settings
    c = len(job.starts)
    done: dict[int, tuple] = {}

    def results(interrupted: bool) -> list[RolloutResult]:
        parts = [done[k] for k in sorted(done)]
        raw = np.concatenate([p[0] for p in parts], axis=1) if parts else np.zeros((c, 0, 5))
        luck = np.concatenate([p[1] for p in parts], axis=1) if parts else np.zeros((c, 0, 5))
        plies = np.concatenate([p[2] for p in parts], axis=1) if parts else np.zeros((c, 0))
        strata = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0, np.int64)
        n_lines = len(job.lines.values) if job.lines is not None else 0
        cubeful, cube_luck = (
            np.concatenate([p[i] for p in parts], axis=1) if parts else np.zeros((c, 0, n_lines))
            for i in (4, 5)
        )
        n_strata = (len(_OPENING) if job.opening else 36) if s.quasi_random else 0
        adjusted = s.luck and job.evaluator is not None
        return [
            RolloutResult(
                raw[k],
                luck[k],
                strata,
                n_strata,
                plies[k],
                adjusted,
                interrupted,
                cubeful[k] if n_lines else None,
                cube_luck[k] if n_lines else None,
            )
            for k in range(c)
        ]

    def keep(trials: range, part: tuple) -> None:
        done[trials.start] = part
        if progress is not None:
            progress(results(False))

    try:
        if backend == "ray":
            from vrhcaby.play.ray import connect, run_ray

            connect(address)
            if run_ray(job, list(_chunks(s.trials, s.chunk)), workers=jobs, on_result=keep):
                return results(True)
        elif jobs <= 1 or s.trials <= s.chunk:
            for trials in _chunks(s.trials, s.chunk):
                keep(trials, job.run(trials))
        else:
            processes = min(jobs, -(-s.trials // s.chunk))
            with WorkerPool(processes, _worker_chunk, job=job) as pool:
                for trials, part in pool.imap_unordered(_chunks(s.trials, s.chunk)):
                    keep(trials, part)
    except KeyboardInterrupt:
        return results(True)
    except SystemError as exc:  # an interrupt inside numba's unpickling (pool.caused_by_interrupt)
        if not caused_by_interrupt(exc):
            raise
        return results(True)
    return results(False)


# --- the public entry points ---------------------------------------------------------


def _check_evaluator(agent, evaluator: Evaluator | None, settings: Settings) -> None:
    settings.check()
    if not hasattr(agent, "choose_boards"):
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} cannot play in batches")
    if evaluator is None and (settings.truncate is not None or settings.race_cutoff):
        what = "truncation" if settings.truncate is not None else "the race cut-off"
        raise ValueError(
            f"{what} needs a network evaluator; agent {getattr(agent, 'name', agent)!r} "
            "has none (give one, e.g. --evaluator PATH)"
        )


def default_evaluator(agent) -> Evaluator | None:
    """The agent's own network, if it has one (a td agent), else None."""
    ev = getattr(agent, "evaluator", None)
    return ev if ev is not None and hasattr(ev, "probabilities") else None


def _check_board(board: np.ndarray) -> np.ndarray:
    b = np.array(board, dtype=np.int8)
    engine.validate_board(b)
    if engine.game_value(b[None])[0] or engine.game_value(b[None, ::-1])[0]:
        raise ValueError("the game in this position is over: no side is on roll")
    return b


def rollout_position(
    board: np.ndarray,
    agent,
    *,
    evaluator: Evaluator | None = None,
    settings: Settings = Settings(),
    jobs: int = 1,
    opening: bool = False,
    progress: Progress | None = None,
    backend: str = "local",
    address: str | None = None,
    cube: CubeSetting | None = None,
) -> RolloutResult:
    """Roll out a position before the roll, for the side on roll (row 1 of `board`).

    `agent` plays both sides (`choose_boards`); `evaluator` (default: the agent's own
    network) judges luck and truncated trials; without one, luck adjustment is off and
    truncation is an error. With `opening`, the first roll is an opening roll: each side
    rolls one die, the higher starts with both numbers (the start position then rolls
    out to 0 by symmetry). `jobs` processes share the trials, or with `backend` "ray"
    Ray tasks at most `jobs` at a time (0: the cluster's CPUs) on the cluster at
    `address` (None: the one this process is connected to, or a new local one); the
    results are the same whatever the backend and the number of jobs.

    With `cube` (the cube and score from the side on roll's view), the cube is played in
    the trials (`_CubeLines`) and `RolloutResult.cubeful` holds two lines: 0 "no double"
    (the cube as it is) and, where the side on roll may double, 1 "double, take" (twice
    the cube, its opponent's); `cube_rollout` reads the decision from them.
    """
    b = _check_board(board)
    evaluator = evaluator if evaluator is not None else default_evaluator(agent)
    _check_evaluator(agent, evaluator, settings)
    lines = None
    if cube is not None:
        _check_cube_evaluator(agent, evaluator)
        values, owners = [cube.cube_value], [_OWNER_CODE[cube.cube_owner]]
        if _may_double(cube) and not opening:
            values.append(2 * cube.cube_value)
            owners.append(2)
        lines = _CubeLines(cube, tuple(values), tuple(owners), first_ply=1)
    job = _Job(agent, evaluator, settings, b[None], np.array([True]), opening, lines)
    return _run(job, jobs, progress, backend, address)[0]


_OWNER_CODE = {"centre": 0, "me": 1, "opponent": 2}


def _may_double(setting: CubeSetting) -> bool:
    """Whether the side on roll may double now, by the rules (and a 64 cube at most)."""
    if setting.cube_owner not in ("centre", "me") or 2 * setting.cube_value > 64:
        return False
    return not setting.match_to or (not setting.crawford and setting.away[0] > setting.cube_value)


def _check_cube_evaluator(agent, evaluator: Evaluator | None) -> None:
    if evaluator is None:
        raise ValueError(
            "cubeful trials need a network evaluator for the cube decisions; agent "
            f"{getattr(agent, 'name', agent)!r} has none (give one, e.g. --evaluator PATH)"
        )


def rollout_afterstates(
    afterstates: np.ndarray,
    agent,
    *,
    evaluator: Evaluator | None = None,
    settings: Settings = Settings(),
    jobs: int = 1,
    progress: Progress | None = None,
    backend: str = "local",
    address: str | None = None,
    cube: CubeSetting | None = None,
) -> list[RolloutResult]:
    """Roll out afterstates (the mover in row 1, the opponent to roll) with the same dice
    streams, each for its mover; results in the order given. `jobs`, `backend` and
    `address` as for `rollout_position`; with `cube` (the cube and score from the mover's
    view), the cube is played in the trials from the opponent's first turn on, one line
    in `RolloutResult.cubeful`."""
    after = np.array(afterstates, dtype=np.int8)
    if after.ndim != 3 or after.shape[1:] != (2, 25) or not len(after):
        raise ValueError(f"afterstates must have shape (N, 2, 25), N >= 1, got {after.shape}")
    evaluator = evaluator if evaluator is not None else default_evaluator(agent)
    _check_evaluator(agent, evaluator, settings)
    lines = None
    if cube is not None:
        _check_cube_evaluator(agent, evaluator)
        lines = _CubeLines(cube, (cube.cube_value,), (_OWNER_CODE[cube.cube_owner],), 0)
    finished = engine.game_value(after)
    live = np.flatnonzero(finished == 0)
    results: list[RolloutResult | None] = [None] * len(after)
    if len(live):
        starts = np.ascontiguousarray(after[live, ::-1])
        root = np.zeros(len(live), dtype=bool)
        job = _Job(agent, evaluator, settings, starts, root, False, lines)
        for k, r in zip(live, _run(job, jobs, progress, backend, address), strict=True):
            results[k] = r
    template = next((r for r in results if r is not None), None)
    for k in np.flatnonzero(finished):
        # A play that ends the game: its result is certain, every trial the same.
        n = template.trials if template is not None else settings.trials
        stratum = template.stratum if template is not None else np.zeros(n, dtype=np.int64)
        n_strata = template.n_strata if template is not None else 0
        raw = np.tile(outcome(finished[k : k + 1]).astype(np.float64), (n, 1))
        cubeful = None
        if lines is not None:
            scored = lines.points(int(finished[k]), lines.values[0], lines.owners[0])
            won = lines.settle(scored, True)
            cubeful = np.full((n, 1), won)
        results[k] = RolloutResult(
            raw, np.zeros((n, 5)), stratum, n_strata, np.zeros(n, dtype=np.int64),
            settings.luck and evaluator is not None,
            template.interrupted if template is not None else False,
            cubeful, None if cubeful is None else np.zeros((n, 1)),
        )  # fmt: skip
    return [r for r in results if r is not None]


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


def rank_plays(
    board: np.ndarray, dice: tuple[int, int], agent, evaluator: Evaluator | None
) -> list[tuple[engine.Play, float]]:
    """Every legal play with its fast (0-ply) value, best first: the evaluator's cubeless
    equity, or else the agent's own score."""
    position = engine.Position(board)
    plays = engine.legal_plays(position, dice)
    if not plays:
        raise ValueError(f"no legal play for {dice[0]}-{dice[1]}: nothing to roll out")
    after = np.stack([p.position.board for p in plays])
    if evaluator is not None:
        parent = np.zeros(len(after), dtype=np.int64)
        p = afterstate_probabilities(evaluator, board[None], after, parent)
        scores = equity(np.asarray(p, dtype=np.float64))
    elif hasattr(agent, "score"):
        scores = np.asarray(agent.score(after, np.zeros(len(after), np.int64), board[None]))
    else:
        scores = np.zeros(len(after))
    order = np.argsort(-scores, kind="stable")
    return [(plays[i], float(scores[i])) for i in order]


def rollout_plays(
    board: np.ndarray,
    dice: tuple[int, int],
    agent,
    *,
    candidates: int = 5,
    evaluator: Evaluator | None = None,
    settings: Settings = Settings(),
    jobs: int = 1,
    progress: Progress | None = None,
    backend: str = "local",
    address: str | None = None,
    cube: CubeSetting | None = None,
) -> list[PlayRollout]:
    """Roll out the best `candidates` plays of the side on roll for `dice`, picked by the
    fast search of `rank_plays`, with the same dice streams; best rolled-out first, each
    with its equity difference from the best (paired by trial)."""
    if candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {candidates}")
    b = _check_board(board)
    roll = engine.check_dice(dice)
    evaluator = evaluator if evaluator is not None else default_evaluator(agent)
    ranked = rank_plays(b, roll, agent, evaluator)[:candidates]
    after = np.stack([p.position.board for p, _ in ranked])
    results = rollout_afterstates(
        after, agent, evaluator=evaluator, settings=settings, jobs=jobs, progress=progress,
        backend=backend, address=address, cube=cube,
    )  # fmt: skip
    out = [PlayRollout(p, r, prior) for (p, prior), r in zip(ranked, results, strict=True)]
    out.sort(key=lambda x: -x.result.estimate().equity)
    best = out[0].result
    for x in out:
        r = x.result
        diff = RolloutResult(
            r.raw - best.raw, r.luck - best.luck, r.stratum, r.n_strata, r.plies,
            r.luck_adjusted,
        )  # fmt: skip
        x.diff = replace(diff.estimate(), difference=True)
    return out


# --- the cube ------------------------------------------------------------------------


@dataclass(frozen=True)
class CubeSetting:
    """The cube and score from the view of the side on roll (money when `match_to` is 0)."""

    cube_value: int = 1
    cube_owner: Literal["centre", "me", "opponent"] = "centre"
    match_to: int = 0
    #: Points still needed: (side on roll, its opponent); match play only.
    away: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False

    @classmethod
    def from_state(cls, state: MatchState | None) -> CubeSetting:
        """From a Match ID's state (row 1 of the board is its `dice_owner`); money if None."""
        if state is None:
            return cls()
        if state.game_state != GameState.PLAYING:
            raise ValueError("the match state says the game is not being played")
        if state.doubled or state.resign:
            raise ValueError("a double or resignation is pending: no side is on roll")
        me = state.dice_owner
        owner = "centre" if state.cube_owner < 0 else "me" if state.cube_owner == me else "opponent"
        away = (0, 0)
        if state.match_length:
            away = (state.match_length - state.score[me], state.match_length - state.score[1 - me])
        return cls(state.cube_value, owner, state.match_length, away, state.crawford,
                   state.jacoby, state.beavers)  # fmt: skip

    def flip(self) -> CubeSetting:
        owner = {"centre": "centre", "me": "opponent", "opponent": "me"}[self.cube_owner]
        return CubeSetting(self.cube_value, owner, self.match_to, self.away[::-1],  # type: ignore[arg-type]
                           self.crawford, self.jacoby, self.beavers)  # fmt: skip


def _efficiency(board: np.ndarray) -> float:
    cls = engine.Position(board).classify()
    pips = int(engine.pips(board)[1])
    return cube.cube_efficiency("contact" if cls == "over" else cls, pips)


def _decision(p: np.ndarray, board: np.ndarray, setting: CubeSetting) -> cube.CubeDecision:
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    x = _efficiency(board)
    if setting.match_to:
        return cube.match_cube_decision(
            p, away_me=setting.away[0], away_opp=setting.away[1], cube_value=setting.cube_value,
            cube_owner=setting.cube_owner, crawford=setting.crawford, x=x,
        )  # fmt: skip
    return cube.money_cube_decision(
        p, x=x, cube_value=setting.cube_value, cube_owner=setting.cube_owner,
        jacoby=setting.jacoby, beavers=setting.beavers,
    )  # fmt: skip


@dataclass(frozen=True)
class CubeAnalysis:
    """The cube decision of the side on roll from rolled-out probabilities (Janowski)."""

    decision: cube.CubeDecision
    #: Standard errors (delta method) of no double, double/take and the optimal equity.
    nd_se: float
    dt_se: float
    optimal_se: float

    def to_json(self) -> dict:
        d = self.decision
        return nan_to_none(
            {
                "action": d.action,
                "detail": d.detail,
                "no_double": d.nd,
                "double_take": d.dt,
                "double_pass": d.dp,
                "cubeful": d.optimal,
                "no_double_se": self.nd_se,
                "double_take_se": self.dt_se,
                "cubeful_se": self.optimal_se,
            }
        )


def cube_analysis(est: Estimate, board: np.ndarray, setting: CubeSetting) -> CubeAnalysis:
    """The cube decision at the root of a position rollout (rolled-out cubeless
    probabilities through Janowski's cubeful formulas, as GNU Backgammon's 0-ply cube)."""
    d = _decision(est.mean, board, setting)

    def se(attr: str) -> float:
        if not math.isfinite(getattr(d, attr)):
            return math.nan
        return est.delta_se(lambda p: float(getattr(_decision(p, board, setting), attr)))

    return CubeAnalysis(d, se("nd"), se("dt"), se("optimal"))


def play_cubeful_equity(p: np.ndarray, afterstate: np.ndarray, setting: CubeSetting) -> float:
    """Cubeful equity, per unit of the current cube, of a play for its mover: minus the
    opponent's optimal cubeful equity on roll after it (EMG in match play)."""
    opponent = setting.flip()
    board = np.ascontiguousarray(np.asarray(afterstate)[::-1])
    d = _decision(invert(np.asarray(p, dtype=np.float64)), board, opponent)
    if not setting.match_to:
        return -d.optimal
    assert d.optimal_mwc is not None
    return float(
        mwc_to_emg(1.0 - d.optimal_mwc, setting.away[0], setting.away[1], setting.cube_value,
                   crawford=setting.crawford)
    )  # fmt: skip


def add_cubeful(plays: list[PlayRollout], setting: CubeSetting) -> None:
    """Fill in each candidate's cubeful equity and its standard error (delta method)."""
    for x in plays:
        est = x.result.estimate()
        after = x.play.position.board
        x.cubeful = play_cubeful_equity(est.mean, after, setting)
        x.cubeful_se = est.delta_se(lambda p, a=after: play_cubeful_equity(p, a, setting))


@dataclass(frozen=True)
class CubeRollout:
    """The cube decision of the side on roll from the cube played in the trials: the
    rolled-out "no double" and "double, take" lines (same dice), "double, pass" from the
    rules, each per unit of the current cube (EMG in match play)."""

    action: str
    detail: str
    nd: float
    nd_se: float
    dt: float
    dt_se: float
    dp: float
    optimal: float
    #: Each choice's equity minus the optimal one (GNU Backgammon's figure in brackets)
    #: with its standard error (paired by trial between the two rolled-out lines), by
    #: name: "no double", "double, take", "double, pass".
    versus_optimal: dict[str, tuple[float, float]]

    def to_json(self) -> dict:
        return nan_to_none(
            {
                "action": self.action,
                "detail": self.detail,
                "no_double": self.nd,
                "no_double_se": self.nd_se,
                "double_take": self.dt,
                "double_take_se": self.dt_se,
                "double_pass": self.dp,
                "cubeful": self.optimal,
                "versus_optimal": {
                    k: {"difference": d, "se": se} for k, (d, se) in self.versus_optimal.items()
                },
            }
        )


def cube_rollout(result: RolloutResult, setting: CubeSetting) -> CubeRollout:
    """The cube decision from a position rollout with `cube=setting` (its two lines); the
    choice between them by GNU Backgammon's rules (`vrhcaby.equity.cube`), beavers as `setting`
    allows them."""
    if result.cubeful is None:
        raise ValueError("this rollout did not play the cube in its trials")
    nd, nd_se = result.cubeful_estimate(0)
    if result.cubeful.shape[1] < 2:
        return CubeRollout("no double", "Cube not available", nd, nd_se, math.nan, math.nan,
                           math.nan, nd, {"no double": (0.0, 0.0)})  # fmt: skip
    dt, dt_se = result.cubeful_estimate(1)
    if setting.match_to:
        s = setting
        mwc = KAZAROSS_XG2.outcome(s.away[0], s.away[1], s.cube_value, True, crawford=s.crawford)
        dp = float(mwc_to_emg(mwc, s.away[0], s.away[1], s.cube_value, crawford=s.crawford))
    else:
        dp = 1.0
    action, detail, _, _, _, optimal = cube._decide(
        nd, dt, dp, beavers=setting.beavers and not setting.match_to,
        redouble=setting.cube_owner == "me",
    )  # fmt: skip
    nd_dt = result.cubeful_estimate(0, minus=1)[1]  # the paired difference's error
    se = {("nd", "dt"): nd_dt, ("nd", "dp"): nd_se, ("dt", "dp"): dt_se}
    values = {"nd": nd, "dt": dt, "dp": dp}
    best = {nd: "nd", dt: "dt", dp: "dp"}[optimal]
    names = {"nd": "no double", "dt": "double, take", "dp": "double, pass"}
    versus = {}
    for key, name in names.items():
        pair = tuple(sorted((key, best), key=list(names).index))
        versus[name] = (values[key] - optimal, 0.0 if key == best else se[pair])
    return CubeRollout(action, detail, nd, nd_se, dt, dt_se, dp, optimal, versus)
