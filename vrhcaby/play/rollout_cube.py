"""The cube of a rollout: the cube and score it is played at (`CubeSetting`), the 0-ply
Janowski decision of the side on roll (`mover_decision`, `vrhcaby.equity.cube`), the
decision at the root from rolled-out probabilities (`cube_analysis`) or from the cube
played in the trials (`cube_rollout`), and the cubeful equity of candidate plays.

The cube in the trials (`cube=CubeSetting(...)`, as GNU Backgammon's cubeful rollouts;
`vrhcaby.play.rollout_trials.CubeLines`): before each roll the side on roll doubles, and
its opponent takes or passes, by the evaluator's 0-ply Janowski decision (money with no
Jacoby rule, or match play through the MET, Crawford and dead cubes respected); a
trial's cubeful result is the game's points times the cube (a pass: the cube before the
double), in match play its EMG. A position rolls out "no double" and "double, take" side
by side in the same trials (`cube_rollout` reads the decision); the checker play is the
agent's own. Luck adjusts money results by each roll's cubeless luck times the cube at
that turn (still a zero-mean term); in match play the cubeful results are not
luck-adjusted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from engine.formats import GameState, MatchState
from vrhcaby.equity import cube, decisions
from vrhcaby.equity.context import CubeOwner, GameContext, money_rule
from vrhcaby.equity.met import KAZAROSS_XG2, mwc_to_emg
from vrhcaby.equity.outcomes import invert
from vrhcaby.play.rollout_results import Estimate, PlayRollout, RolloutResult
from vrhcaby.play.stats import nan_to_none


@dataclass(frozen=True)
class CubeSetting:
    """The cube and score from the view of the side on roll (money when `match_to` is 0)."""

    cube_value: int = 1
    cube_owner: CubeOwner = "centre"
    match_to: int = 0
    #: Points still needed: (side on roll, its opponent); match play only.
    away: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False

    @classmethod
    def from_context(cls, context: GameContext) -> CubeSetting:
        """The rollout's cube setting of a game context."""
        return cls(
            cube_value=context.cube_value,
            cube_owner=context.cube_owner,
            match_to=context.match_to,
            away=context.away() if context.match_to else (0, 0),
            crawford=context.crawford,
            jacoby=context.jacoby,
            beavers=context.beavers,
        )

    @classmethod
    def from_state(cls, state: MatchState | None) -> CubeSetting:
        """From a Match ID's state (row 1 of the board is its `dice_owner`); money if None."""
        if state is None:
            return cls()
        if state.game_state != GameState.PLAYING:
            raise ValueError("the match state says the game is not being played")
        if state.doubled or state.resign:
            raise ValueError("a double or resignation is pending: no side is on roll")
        return cls.from_context(
            GameContext.of_side(
                state.dice_owner,
                cube_value=state.cube_value,
                cube_owner=state.cube_owner,
                score=state.score,
                match_to=state.match_length,
                crawford=state.crawford,
                jacoby=state.jacoby,
                beavers=state.beavers,
            )
        )

    def context(self) -> GameContext:
        """The game context of the side on roll (`vrhcaby.equity.context`), in which its
        cube decisions are taken; the Jacoby rule and beavers only in money play."""
        score = (self.match_to - self.away[0], self.match_to - self.away[1])
        return GameContext(
            cube_value=self.cube_value,
            cube_owner=self.cube_owner,
            match_to=self.match_to,
            score=score if self.match_to else (0, 0),
            crawford=self.crawford,
            jacoby=money_rule(self.jacoby, match_to=self.match_to),
            beavers=money_rule(self.beavers, match_to=self.match_to),
        )

    def flip(self) -> CubeSetting:
        """The same cube and score from the other side's view."""
        return CubeSetting.from_context(self.context().flip())


def mover_decision(p: np.ndarray, board: np.ndarray, setting: CubeSetting) -> cube.CubeDecision:
    """The 0-ply Janowski cube decision of the side on roll of `board` with probabilities
    `p` (clipped to [0, 1]), the cube's efficiency that of the position's class."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    context = setting.context()
    return decisions.cube_decision(p, board, context, beavers=context.beavers)


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
    d = mover_decision(est.mean, board, setting)

    def se(attr: str) -> float:
        if not math.isfinite(getattr(d, attr)):
            return math.nan
        return est.delta_se(lambda p: float(getattr(mover_decision(p, board, setting), attr)))

    return CubeAnalysis(decision=d, nd_se=se("nd"), dt_se=se("dt"), optimal_se=se("optimal"))


def play_cubeful_equity(p: np.ndarray, afterstate: np.ndarray, setting: CubeSetting) -> float:
    """Cubeful equity, per unit of the current cube, of a play for its mover: minus the
    opponent's optimal cubeful equity on roll after it (EMG in match play)."""
    opponent = setting.flip()
    board = np.ascontiguousarray(np.asarray(afterstate)[::-1])
    d = mover_decision(invert(np.asarray(p, dtype=np.float64)), board, opponent)
    if not setting.match_to:
        return -d.optimal
    assert d.optimal_mwc is not None
    return float(
        mwc_to_emg(
            1.0 - d.optimal_mwc,
            setting.away[0],
            setting.away[1],
            setting.cube_value,
            crawford=setting.crawford,
        )
    )


def add_cubeful(plays: list[PlayRollout], setting: CubeSetting) -> None:
    """Fill in each candidate's cubeful equity and its standard error (delta method)."""
    for x in plays:
        est = x.result.estimate()
        after = x.play.position.board
        x.cubeful = play_cubeful_equity(est.mean, after, setting)
        x.cubeful_se = est.delta_se(partial(play_cubeful_equity, afterstate=after, setting=setting))


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
        return CubeRollout(
            action="no double",
            detail="Cube not available",
            nd=nd,
            nd_se=nd_se,
            dt=math.nan,
            dt_se=math.nan,
            dp=math.nan,
            optimal=nd,
            versus_optimal={"no double": (0.0, 0.0)},
        )
    dt, dt_se = result.cubeful_estimate(1)
    if setting.match_to:
        s = setting
        mwc = KAZAROSS_XG2.outcome(s.away[0], s.away[1], s.cube_value, True, crawford=s.crawford)
        dp = float(mwc_to_emg(mwc, s.away[0], s.away[1], s.cube_value, crawford=s.crawford))
    else:
        dp = 1.0
    choice = cube._decide(
        nd,
        dt,
        dp,
        beavers=setting.context().beavers,
        redouble=setting.cube_owner == "me",
    )
    optimal = choice.optimal
    nd_dt = result.cubeful_estimate(0, minus=1)[1]  # the paired difference's error
    se = {("nd", "dt"): nd_dt, ("nd", "dp"): nd_se, ("dt", "dp"): dt_se}
    values = {"nd": nd, "dt": dt, "dp": dp}
    best = {nd: "nd", dt: "dt", dp: "dp"}[optimal]
    names = {"nd": "no double", "dt": "double, take", "dp": "double, pass"}
    versus = {}
    order = list(names)
    for key, name in names.items():
        first, second = sorted((key, best), key=order.index)
        versus[name] = (values[key] - optimal, 0.0 if key == best else se[first, second])
    return CubeRollout(
        action=choice.action,
        detail=choice.detail,
        nd=nd,
        nd_se=nd_se,
        dt=dt,
        dt_se=dt_se,
        dp=dp,
        optimal=optimal,
        versus_optimal=versus,
    )
