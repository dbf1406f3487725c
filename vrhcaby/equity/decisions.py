"""Cube decisions, resignations and cubeful play equities from the five cubeless
probabilities of a position, in its `GameContext`.

What the ``td`` and ``gnubg`` agents decide with and what `vrhcaby.analysis` shows, from one
source: probabilities (`p = [W, Wg, Wbg, Lg, Lbg]` for the side on roll) turned into
cubeful equities with Janowski's model (`vrhcaby.equity.cube`) and match winning chances
(`vrhcaby.equity.met`). Equities are per unit of the current cube: money points in money
play, EMG (gnubg's normalised equity) in match play. The cube efficiency comes from the
position class of the board the decision is taken on (`cube.Efficiency`, gnubg's eval.c
values by default: 0.68 in contact, a pip-count-dependent value in races).

A candidate play is valued as gnubg's cubeful 0-ply does: the mover's equity after the
play is minus the opponent's equity with the opponent on roll and holding its own cube
options (no double, or double and the mover's best answer); `play_equities` does it for a
whole batch. Pass ``cubeful=False`` for cubeless values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import engine
from vrhcaby.equity import cube, met
from vrhcaby.equity.context import GameContext
from vrhcaby.equity.outcomes import equity, invert


def _owner(context: GameContext) -> cube.CubeOwner:
    return context.cube_owner if context.cube_enabled else "dead"


def efficiency(board: np.ndarray, params: cube.Efficiency = cube.GNUBG_EFFICIENCY) -> float:
    """Cube efficiency of the position class of `board` (side on roll in row 1)."""
    position = engine.Position(board)
    kind = position.classify()
    if kind == "race":
        return cube.cube_efficiency("race", position.pips()[0], params=params)
    return cube.cube_efficiency("bearoff" if kind == "bearoff" else "contact", params=params)


# --- cube decisions and resignations -------------------------------------------------


def cube_decision(
    p: np.ndarray,
    board: np.ndarray,
    context: GameContext,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    beavers: bool = False,
) -> cube.CubeDecision:
    """The cube decision of the side on roll of `board`, whose probabilities are `p`.

    `x` fixes the cube efficiency; otherwise it comes from the position class (`params`).
    """
    eff = efficiency(board, params) if x is None else x
    owner = _owner(context)
    if not context.match_to:
        return cube.money_cube_decision(
            p,
            x=eff,
            cube_value=context.cube_value,
            cube_owner=owner,
            jacoby=context.jacoby,
            beavers=beavers,
            max_cube=context.max_cube,
        )
    away_me, away_opp = context.away()
    return cube.match_cube_decision(
        p,
        away_me=away_me,
        away_opp=away_opp,
        cube_value=context.cube_value,
        cube_owner=owner,
        crawford=context.crawford,
        x=eff,
        max_cube=context.max_cube,
    )


def _resign_args(context: GameContext) -> dict:
    args: dict = {"cube_owner": _owner(context), "jacoby": context.jacoby}
    if context.match_to:
        away_me, away_opp = context.away()
        args.update(away_me=away_me, away_opp=away_opp, crawford=context.crawford)
    return args


def resignation_offer(p: np.ndarray, context: GameContext) -> int:
    """0, or the resignation (1, 2, 3) the side on roll with probabilities `p` should offer."""
    return cube.resignation_offer(p, context.cube_value, **_resign_args(context))


def accept_resignation(p: np.ndarray, value: int, context: GameContext) -> bool:
    """Whether to accept a resignation of `value` from the side whose probabilities and
    context (its own view) are `p` and `context`."""
    return cube.accept_resignation(p, value, context.cube_value, **_resign_args(context))


# --- how close a decision is ---------------------------------------------------------

#: The questions a cube decision answers: whether to double, whether the opponent takes,
#: whether it beavers.
CUBE_QUESTIONS = ("double", "take", "beaver")


def cube_gap(d: cube.CubeDecision, question: str | None = None, *, beavers: bool = False) -> float:
    """How far the equities of cube decision `d` are from the nearest threshold that
    decides `question` (one of `CUBE_QUESTIONS`; None: any of them), per unit of the
    cube (EMG in a match): whether to double turns on min(DT, DP) - ND, the take on
    DP - DT, a beaver (with `beavers`) on DT against 0 and -2, and a double that may be
    beavered also on 2 DT - ND (`cube.decision_from_equities`). Infinite where the side
    may not double: its answer, no double, is no decision. A cubeful search changes an
    answer only where it moves that gap across zero (`agents.td`'s cube window)."""
    if question is not None and question not in CUBE_QUESTIONS:
        raise ValueError(f"a cube question is one of {', '.join(CUBE_QUESTIONS)}, got {question!r}")
    if not d.available:
        return np.inf
    beaver = [d.dt, d.dt + 2.0] if beavers else []
    gaps = {
        "double": [min(d.dt, d.dp) - d.nd, *([2.0 * d.dt - d.nd] if beavers else []), *beaver],
        "take": [d.dp - d.dt],
        "beaver": [d.dp - d.dt, *beaver],
    }
    asked = gaps.values() if question is None else [gaps[question]]
    return float(min(abs(g) for values in asked for g in values))


def resignation_gap(p: np.ndarray, context: GameContext, value: int | None = None) -> float:
    """How far playing on is from resigning `value` points a cube (1, 2, 3; None: the
    nearest of the three) for the side whose probabilities and context (its own view) are
    `p` and `context`, in the units of `cube_gap` (money points a cube, EMG in a match):
    `resignation_offer` and `accept_resignation` turn on the sign of that difference."""
    args = _resign_args(context)
    play, resign = cube.resignation_values(np.asarray(p, np.float64), context.cube_value, **args)
    gaps = np.asarray(resign, np.float64) - play
    if context.match_to:  # MWC to EMG, an affine map: differences scale by its slope
        away_me, away_opp = context.away()
        one = met.mwc_to_emg(1.0, away_me, away_opp, context.cube_value, crawford=context.crawford)
        zero = met.mwc_to_emg(0.0, away_me, away_opp, context.cube_value, crawford=context.crawford)
        gaps = gaps * (float(one) - float(zero))
    return float(np.min(np.abs(gaps)) if value is None else abs(gaps[value - 1]))


# --- candidate plays -----------------------------------------------------------------


def mover_equity(
    p: np.ndarray,
    afterstate: np.ndarray,
    context: GameContext,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    cubeful: bool = True,
) -> tuple[float, float | None]:
    """(equity, MWC or None) of the mover after a play, from its probabilities `p`.

    `context` is the mover's. Cubeful: minus the opponent's equity on roll with its cube
    options (gnubg's cubeful 0-ply); cubeless: the money equity, or in a match the EMG of
    the cubeless MWC.
    """
    if context.match_to:
        away_me, away_opp = context.away()
        crawford = context.crawford
        if cubeful:
            opp = cube_decision(invert(p), afterstate[::-1], context.flip(), params=params, x=x)
            assert opp.optimal_mwc is not None  # a match context's decision has MWCs
            mwc = 1.0 - float(opp.optimal_mwc)
        else:
            mwc = float(
                met.mwc_from_probabilities(
                    p, away_me, away_opp, context.cube_value, crawford=crawford
                )
            )
        emg = met.mwc_to_emg(mwc, away_me, away_opp, context.cube_value, crawford=crawford)
        return float(emg), mwc
    if cubeful:
        opp = cube_decision(invert(p), afterstate[::-1], context.flip(), params=params, x=x)
        return -opp.optimal, None
    return float(equity(p)), None


def efficiencies(boards: np.ndarray, params: cube.Efficiency = cube.GNUBG_EFFICIENCY) -> np.ndarray:
    """`efficiency` of each board of a batch (B, 2, 25), side on roll in row 1; a finished
    game counts as contact, as there."""
    b = np.asarray(boards)
    on = b.sum(axis=2)
    over = (on == 0).any(axis=1)
    contact = over | np.asarray(engine.has_contact(b), dtype=bool)
    home = b[:, :, 6:].sum(axis=(1, 2)) == 0
    race = params.race_coefficient + params.race_factor * engine.pips(b)[:, 1]
    race = np.minimum(params.race_max, np.maximum(params.race_min, race))
    return np.where(contact, params.contact, np.where(home, params.bearoff, race))


def _janowski(x: np.ndarray, dead: Any, f: Callable[..., Any], **args: Any) -> np.ndarray:
    """``(1 - x) * dead + x * live`` with per-row `x`, for a cube function `f` that mixes
    the two itself for one scalar `x` (its value at x = 1 is the live part, or the dead one
    where the cube is dead)."""
    return (1.0 - x) * np.asarray(dead) + x * np.asarray(f(x=1.0, **args))


def play_equities(
    p: np.ndarray,
    afterstates: np.ndarray,
    context: GameContext,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: np.ndarray | None = None,
) -> np.ndarray:
    """`mover_equity` (cubeful) of many plays in one context, batched: (N,) equities of the
    movers after `afterstates` (N, 2, 25) with probabilities `p` (N, 5); `x`, if given, the
    cube efficiencies of the positions the opponent rolls from (`efficiencies`).

    The opponent, on roll next, holds its cube options: its equity is its no-double equity,
    or, where it may double and doubling is right, the lower of double/take and
    double/pass; the mover's is minus that (money points, or the EMG of one minus the
    opponent's MWC in a match).
    """
    q = invert(np.asarray(p, dtype=np.float64))
    theirs = context.flip()
    if x is None:
        x = efficiencies(np.asarray(afterstates)[:, ::-1], params)
    nd = no_double_values(q, x, theirs)
    dt = no_double_values(q, x, theirs.doubled()) if theirs.may_double() else None
    value = optimal_values(nd, dt, theirs)
    if not theirs.match_to:
        return -value / theirs.cube_value
    away_them, away_me = theirs.away()
    return np.asarray(
        met.mwc_to_emg(1.0 - value, away_me, away_them, theirs.cube_value, crawford=theirs.crawford)
    )


# --- values of cube states, for the cubeful search ------------------------------------


def no_double_values(q: np.ndarray, x: np.ndarray, context: GameContext) -> np.ndarray:
    """Cubeful values (N,) of pre-roll positions for the side on roll, whose probabilities
    are `q` (N, 5) and cube efficiencies `x` (N,), when it keeps the cube as `context` has
    it this turn (Janowski, gnubg's Cl2CfMoney/Cl2CfMatch): money points of the game (the
    cube's value included), or MWC in a match. The cubeful search's leaves."""
    q = np.asarray(q, dtype=np.float64)
    owner = _owner(context)
    if not context.match_to:
        jacoby = context.jacoby and owner == "centre"
        dead = cube.cubeful_equity(q, "centre" if jacoby else "dead", 0.0, jacoby=jacoby)
        per_cube = _janowski(x, dead, cube.cubeful_equity, p=q, cube_owner=owner, jacoby=jacoby)
        return context.cube_value * per_cube
    away_me, away_opp = context.away()
    value, crawford = context.cube_value, context.crawford
    dead = met.mwc_from_probabilities(q, away_me, away_opp, value, crawford=crawford)
    score = {"away_me": away_me, "away_opp": away_opp, "crawford": crawford}
    return _janowski(
        x, dead, cube.match_cubeful_mwc, p=q, cube_value=value, cube_owner=owner, **score
    )


def cash_value(context: GameContext) -> float:
    """What the side asked wins when its double is passed: the cube's value in points, or
    that MWC in a match."""
    if not context.match_to:
        return float(context.cube_value)
    away_me, away_opp = context.away()
    return met.KAZAROSS_XG2.outcome(
        away_me, away_opp, context.cube_value, True, crawford=context.crawford
    )


def optimal_values(nd: np.ndarray, dt: np.ndarray | None, context: GameContext) -> np.ndarray:
    """The value of the side on roll with its cube option (gnubg's GetECF3): no double
    `nd`, or where it may double (`context.may_double()`) and doubling is right, the lower
    of double/take `dt` (the values in `context.doubled()`) and double/pass."""
    if dt is None or not context.may_double():
        return nd
    return np.maximum(nd, np.minimum(dt, cash_value(context)))


def searched_decision(
    p: np.ndarray, nd: float, dt: float, context: GameContext, *, beavers: bool = False
) -> cube.CubeDecision:
    """The cube decision of the side on roll from the values a cubeful search found for
    no double (`nd`) and double/take (`dt`, ignored where it may not double): money points
    of the game, or MWC in a match (as `no_double_values`); `p` its cubeless probabilities.
    Equities per unit of the current cube (EMG in a match), as `cube_decision`'s."""
    owner = _owner(context)
    available = context.may_double()
    if not context.match_to:
        c = context.cube_value
        return cube.decision_from_equities(
            nd / c,
            dt / c,
            1.0,
            float(equity(p)),
            cube_owner=owner,
            available=available,
            beavers=beavers,
        )
    away_me, away_opp = context.away()
    value, crawford = context.cube_value, context.crawford

    def emg(mwc: float) -> float:
        return float(met.mwc_to_emg(mwc, away_me, away_opp, value, crawford=crawford))

    cubeless_mwc = float(met.mwc_from_probabilities(p, away_me, away_opp, value, crawford=crawford))
    dp = cash_value(context)
    return cube.decision_from_equities(
        emg(nd),
        emg(dt),
        emg(dp),
        emg(cubeless_mwc),
        cube_owner=owner,
        available=available,
        mwc=(nd, dt, dp, cubeless_mwc),
    )
