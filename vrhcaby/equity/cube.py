"""Cube decisions and resignations from the five cubeless probabilities.

Every function takes ``p = [W, Wg, Wbg, Lg, Lbg]`` for the side on roll:
P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose backgammon),
cumulative (a gammon count includes backgammons), with a trailing axis of 5.

Cubeful equity follows R. Janowski, "Cubeful equities with the doubling cube"
(1993), as implemented in GNU Backgammon's ``eval.c`` (``Cl2CfMoney``,
``Cl2CfMatch*``, ``FindBestCubeDecision``): the cubeful equity is
``(1 - x) * E_dead + x * E_live``, where ``E_dead`` is the cubeless equity,
``E_live`` the equity with a fully live cube (piecewise linear in P(win)
between the take, cash and too-good points, with W and L the average values of
games won and lost) and ``x`` the cube efficiency. In match play the same
interpolation runs in MWC space with live-cube cash points from the match
equity table (J. Thyssen's generalisation, :func:`vrhcaby.equity.met.cash_points`),
and equities are reported as EMG like gnubg.

This reproduces gnubg's 0-ply cube analysis for positions evaluated by its
neural nets; gnubg's exact two-sided bear-off tables are not modelled. The
default efficiencies are eval.c's; the installed ``gnubg`` package (1.1.0a16)
was measured to use others (``GNUBG_PYPI_EFFICIENCY``), which its tests use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vrhcaby.equity.met import (
    KAZAROSS_XG2,
    MatchEquityTable,
    as_probabilities,
    cash_points,
    gammon_ratios,
    mwc_from_probabilities,
    mwc_to_emg,
)
from vrhcaby.equity.outcomes import equity

__all__ = [
    "ACTIONS",
    "CONTACT_EFFICIENCY",
    "GNUBG_EFFICIENCY",
    "GNUBG_PYPI_EFFICIENCY",
    "CubeAction",
    "CubeChoice",
    "CubeDecision",
    "CubeOwner",
    "Efficiency",
    "accept_resignation",
    "cube_efficiency",
    "cubeful_equity",
    "decision_from_equities",
    "match_cube_decision",
    "match_cubeful_mwc",
    "money_cube_decision",
    "resignation_offer",
    "resignation_values",
]

CubeOwner = Literal["centre", "me", "opponent", "dead"]
"""Who may double next: either side ("centre"), only the side on roll ("me"),
only its opponent ("opponent"), or nobody ("dead": cubeful = cubeless)."""

ACTIONS = ("no double", "double, take", "double, pass", "too good")


@dataclass(frozen=True)
class Efficiency:
    """Cube efficiency parameters by position class (gnubg's EvalEfficiency).

    Contact and crashed positions get ``contact``, bear-offs ``bearoff`` and
    races ``race_coefficient + race_factor * pips_on_roll`` clamped to
    ``[race_min, race_max]``.
    """

    contact: float
    bearoff: float
    race_factor: float
    race_coefficient: float
    race_min: float
    race_max: float


GNUBG_EFFICIENCY = Efficiency(0.68, 0.6, 0.00125, 0.55, 0.6, 0.7)
"""GNU Backgammon's eval.c (rContactX = rCrashedX = 0.68, rOSCubeX = 0.6,
rRaceFactorX = 0.00125, rRaceCoefficientX = 0.55, rRaceMin = 0.6, rRaceMax = 0.7)."""

GNUBG_PYPI_EFFICIENCY = Efficiency(0.76, 0.6, 0.0025, 0.6, 0.6, 0.8)
"""The values the ``gnubg`` Python package (1.1.0a16) uses for money cube
decisions, measured from its cubeful evaluations (they differ from eval.c's) at 0
and 1 ply; its 2-ply cubeful evaluations use eval.c's (`GNUBG_EFFICIENCY`) at the
leaves, while choosing the plays inside the search with these (tests/test_cubeful.py)."""

CONTACT_EFFICIENCY = GNUBG_EFFICIENCY.contact

_EPS = 1e-7  # gnubg's Cl2CfMoney: (nearly) certain results are a dead cube
_OWNERS = ("centre", "me", "opponent", "dead")


def _check_owner(cube_owner: str) -> None:
    if cube_owner not in _OWNERS:
        raise ValueError(f"cube_owner must be one of {_OWNERS}, got {cube_owner!r}")


def _check_cube(cube_value: int, max_cube: int) -> None:
    if not isinstance(cube_value, int | np.integer) or cube_value < 1:
        raise ValueError(f"cube_value must be a positive power of two, got {cube_value!r}")
    if cube_value & (cube_value - 1) or cube_value > max_cube:
        raise ValueError(f"cube_value must be a power of two up to {max_cube}, got {cube_value}")


def _out(value: NDArray[np.float64]) -> NDArray[np.float64] | float:
    return float(value) if value.ndim == 0 else value


def cube_efficiency(
    position_class: str, pips_on_roll: int | None = None, *, params: Efficiency = GNUBG_EFFICIENCY
) -> float:
    """Cube efficiency ``x`` as in GNU Backgammon's ``EvalEfficiency`` (eval.c).

    With the default (eval.c's) parameters: ``"contact"`` (and ``"crashed"``)
    0.68, ``"bearoff"`` 0.6, ``"race"`` ``0.55 + 0.00125 * pips_on_roll``
    clamped to [0.6, 0.7], where ``pips_on_roll`` is the pip count of the side
    on roll (eval.c: ``rEff = anPips[1] * rRaceFactorX + rRaceCoefficientX``).

    >>> cube_efficiency("race", 100)
    0.675
    """
    if position_class in ("contact", "crashed"):
        return params.contact
    if position_class == "bearoff":
        return params.bearoff
    if position_class == "race":
        if pips_on_roll is None or pips_on_roll < 0:
            raise ValueError(
                f"a race needs the pip count of the side on roll, got {pips_on_roll!r}"
            )
        x = params.race_coefficient + params.race_factor * pips_on_roll
        return min(params.race_max, max(params.race_min, x))
    raise ValueError(
        f"position_class must be 'contact', 'crashed', 'race' or 'bearoff', got {position_class!r}"
    )


def _money_live(
    win: NDArray[np.float64],
    w_avg: NDArray[np.float64],
    l_avg: NDArray[np.float64],
    cube_owner: str,
    jacoby: bool,
) -> NDArray[np.float64]:
    """Janowski's fully live cube equity (gnubg's MoneyLive): linear between the cube points."""
    take = (l_avg - 0.5) / (w_avg + l_avg + 0.5)
    cash = (l_avg + 1.0) / (w_avg + l_avg + 0.5)
    lose_all = -l_avg + (l_avg - 1.0) * win / take  # (0, -L) to (take, -1)
    win_all = 1.0 + (w_avg - 1.0) * (win - cash) / (1.0 - cash)  # (cash, +1) to (1, W)
    if cube_owner == "centre":
        low = np.full_like(win, -1.0) if jacoby else lose_all
        high = np.ones_like(win) if jacoby else win_all
        mid = -1.0 + 2.0 * (win - take) / (cash - take)
        return np.where(win < take, low, np.where(win < cash, mid, high))
    if cube_owner == "me":
        return np.where(win < cash, -l_avg + (1.0 + l_avg) * win / cash, win_all)
    return np.where(win < take, lose_all, -1.0 + (w_avg + 1.0) * (win - take) / (1.0 - take))


def cubeful_equity(
    p: ArrayLike,
    cube_owner: CubeOwner = "centre",
    x: float = CONTACT_EFFICIENCY,
    *,
    jacoby: bool = False,
) -> NDArray[np.float64] | float:
    """Janowski's cubeful money equity per unit cube, ``(1 - x) * dead + x * live``.

    With ``jacoby`` and a centred cube, gammons count for nothing in the dead
    part and the live part is flat at -1 below the take point and +1 above the
    cash point, as in GNU Backgammon. ``"dead"`` gives the cubeless equity.
    """
    _check_owner(cube_owner)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"cube efficiency x must be in [0, 1], got {x}")
    arr = as_probabilities(p)
    win, wg, wbg, lg, lbg = np.moveaxis(arr, -1, 0)
    gammon_price = 0.0 if (jacoby and cube_owner == "centre") else 1.0
    dead = 2.0 * win - 1.0 + gammon_price * ((wg - lg) + (wbg - lbg))
    if cube_owner == "dead":
        return _out(dead)
    sure = (win <= _EPS) | (win >= 1.0 - _EPS)
    safe_win = np.where(sure, 0.5, win)
    w_avg = 1.0 + (wg + wbg) / safe_win
    l_avg = 1.0 + (lg + lbg) / (1.0 - safe_win)
    live = _money_live(safe_win, w_avg, l_avg, cube_owner, jacoby)
    return _out(np.where(sure, dead, (1.0 - x) * dead + x * live))


@dataclass(frozen=True)
class CubeDecision:
    """A cube decision for the side on roll, with the equity of each choice.

    ``nd``, ``dt``, ``dp``: equity after no double, double/take and
    double/pass, per unit of the current cube (match play: EMG normalised to the
    current cube, as gnubg). ``dt`` and ``dp`` are NaN when the side may not
    double. ``optimal`` is the equity with correct play by both sides,
    ``cubeless`` the cubeless equity. ``doubler_error``: equity lost by the wrong
    doubling choice (the opponent answering correctly); ``taker_error``: equity
    the opponent loses by the wrong answer. The ``*_mwc`` fields are the
    match-play MWCs (``None`` for money).
    """

    action: CubeAction
    detail: str
    double: bool
    take: bool
    beaver: bool
    available: bool
    nd: float
    dt: float
    dp: float
    optimal: float
    cubeless: float
    doubler_error: float
    taker_error: float
    nd_mwc: float | None = None
    dt_mwc: float | None = None
    dp_mwc: float | None = None
    optimal_mwc: float | None = None
    cubeless_mwc: float | None = None


CubeAction = Literal["no double", "double, take", "double, pass", "too good"]


@dataclass(frozen=True)
class CubeChoice:
    """The best cube action given the equities of no double, double/take, double/pass."""

    action: CubeAction
    detail: str
    """GNU Backgammon's wording, e.g. "Redouble, take"."""
    double: bool
    take: bool
    beaver: bool
    optimal: float
    """The equity of the best choices of both sides."""


def _decide(nd: float, dt: float, dp: float, *, beavers: bool, redouble: bool) -> CubeChoice:
    """GNU Backgammon's FindBestCubeDecision."""
    re = "re" if redouble else ""
    take = dt < dp
    beaver = beavers and -2.0 <= dt <= 0.0

    def choice(
        action: CubeAction, detail: str, double: bool, take: bool, beaver: bool, optimal: float
    ) -> CubeChoice:
        return CubeChoice(
            action=action,
            detail=detail.capitalize(),
            double=double,
            take=take,
            beaver=beaver,
            optimal=optimal,
        )

    if dt >= nd and dp >= nd:
        if not take:
            return choice("double, pass", f"{re}double, pass", True, False, False, dp)
        if beaver:
            if 2.0 * dt < nd:
                return choice("no double", f"no {re}double, beaver", False, True, True, nd)
            return choice("double, take", f"{re}double, beaver", True, True, True, dt)
        return choice("double, take", f"{re}double, take", True, True, False, dt)
    if nd > dt and dt <= dp < nd:
        return choice("too good", f"too good to {re}double, take", False, True, False, nd)
    if dp < nd and dp < dt:
        return choice("too good", f"too good to {re}double, pass", False, False, False, nd)
    kind = "beaver" if beaver else "take"
    return choice("no double", f"no {re}double, {kind}", False, True, beaver, nd)


def _errors(nd: float, dt: float, dp: float, beaver: bool) -> tuple[float, float]:
    doubled = 2.0 * dt if beaver else min(dt, dp)
    return abs(doubled - nd), abs(dt - dp)


def _scalaras_probabilities(p: ArrayLike) -> NDArray[np.float64]:
    arr = as_probabilities(p)
    if arr.shape != (5,):
        raise ValueError(f"a cube decision takes one set of 5 probabilities, got shape {arr.shape}")
    return arr


def money_cube_decision(
    p: ArrayLike,
    *,
    x: float,
    cube_value: int = 1,
    cube_owner: CubeOwner = "centre",
    jacoby: bool = True,
    beavers: bool = False,
    max_cube: int = 64,
) -> CubeDecision:
    """Money cube decision for the side on roll (Janowski, gnubg's 0-ply cube analysis).

    ``nd`` is the cubeful equity keeping the cube, ``dt`` twice the cubeful
    equity with the opponent owning the doubled cube, ``dp`` is +1. The side
    may double with the cube centred or its own and while the doubled cube
    stays within ``max_cube``. With ``beavers``, a taker whose equity after the
    double is not negative beavers, and a double is only right if it is worth it
    at twice that stake. With ``jacoby``, gammons don't count while the cube is
    centred.
    """
    arr = _scalaras_probabilities(p)
    _check_owner(cube_owner)
    _check_cube(cube_value, max_cube)
    nd = float(cubeful_equity(arr, cube_owner, x, jacoby=jacoby))
    cubeless = float(equity(arr))
    if cube_owner not in ("centre", "me") or 2 * cube_value > max_cube:
        return _unavailable(nd, cubeless, cube_owner)
    dt = 2.0 * float(cubeful_equity(arr, "opponent", x))
    return decision_from_equities(nd, dt, 1.0, cubeless, cube_owner=cube_owner, beavers=beavers)


def decision_from_equities(
    nd: float,
    dt: float,
    dp: float,
    cubeless: float,
    *,
    cube_owner: CubeOwner = "centre",
    available: bool = True,
    beavers: bool = False,
    mwc: tuple[float, float, float, float] | None = None,
) -> CubeDecision:
    """The cube decision (GNU Backgammon's FindBestCubeDecision) from the equities of no
    double, double/take and double/pass and the cubeless equity, per unit of the current
    cube (EMG in a match), however they were found: Janowski's formula here, or a cubeful
    search (`agents.cubeful`). ``mwc``: in a match, the MWCs of the same four. Where the side
    on roll may not double (``available`` false), the decision is no double, its equity
    ``nd``; ``cube_owner`` "me" words a double as a redouble, "dead" says the cube is dead.
    """
    nd_mwc, dt_mwc, dp_mwc, cubeless_mwc = (None,) * 4 if mwc is None else mwc
    if not available:
        return _unavailable(nd, cubeless, cube_owner, nd_mwc=nd_mwc, cubeless_mwc=cubeless_mwc)
    best = _decide(nd, dt, dp, beavers=beavers, redouble=cube_owner == "me")
    doubler_error, taker_error = _errors(nd, dt, dp, best.beaver)
    return CubeDecision(
        action=best.action,
        detail=best.detail,
        double=best.double,
        take=best.take,
        beaver=best.beaver,
        available=True,
        nd=nd,
        dt=dt,
        dp=dp,
        optimal=best.optimal,
        cubeless=cubeless,
        doubler_error=doubler_error,
        taker_error=taker_error,
        nd_mwc=nd_mwc,
        dt_mwc=dt_mwc,
        dp_mwc=dp_mwc,
        optimal_mwc=None if mwc is None else {nd: nd_mwc, dt: dt_mwc, dp: dp_mwc}[best.optimal],
        cubeless_mwc=cubeless_mwc,
    )


def _unavailable(
    nd: float,
    cubeless: float,
    cube_owner: str,
    *,
    nd_mwc: float | None = None,
    cubeless_mwc: float | None = None,
) -> CubeDecision:
    """The decision when the side on roll may not double: no double (match play: its MWCs)."""
    return CubeDecision(
        action="no double",
        detail="Cube dead" if cube_owner == "dead" else "Cube not available",
        double=False,
        take=False,
        beaver=False,
        available=False,
        nd=nd,
        dt=math.nan,
        dp=math.nan,
        optimal=nd,
        cubeless=cubeless,
        doubler_error=0.0,
        taker_error=0.0,
        nd_mwc=nd_mwc,
        optimal_mwc=nd_mwc,
        cubeless_mwc=cubeless_mwc,
    )


def _match_args(away_me: int, away_opp: int, crawford: bool, met: MatchEquityTable) -> None:
    met.equity(away_me, away_opp, crawford=crawford)  # validates the score


def _cube_alive(away_me: int, away_opp: int, cube_value: int, crawford: bool) -> bool:
    """gnubg's fDoCubeful: the cube still matters at this score."""
    if away_me <= cube_value and away_opp <= cube_value:
        return False
    return not (crawford or (away_me == 2 and away_opp == 2))


def match_cubeful_mwc(
    p: ArrayLike,
    *,
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    cube_owner: CubeOwner = "centre",
    crawford: bool = False,
    x: float = CONTACT_EFFICIENCY,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> NDArray[np.float64] | float:
    """Cubeful MWC of the side on roll, without its doubling option this turn (gnubg's Cl2CfMatch).

    ``(1 - x) * cubeless + x * live``, the live MWC interpolated linearly in
    P(win) between losing (with the opponent's gammon rate), the opponent's cash,
    our cash and winning (with our gammon rate), using the live-cube cash points
    at the score. Where the cube is dead (both sides need no more than the cube,
    the Crawford game, or 2-away/2-away as in gnubg) this is the cubeless MWC.
    """
    _check_owner(cube_owner)
    _match_args(away_me, away_opp, crawford, met)
    arr = as_probabilities(p)
    dead = np.asarray(
        mwc_from_probabilities(arr, away_me, away_opp, cube_value, crawford=crawford, met=met)
    )
    if cube_owner == "dead" or not _cube_alive(away_me, away_opp, cube_value, crawford):
        return _out(dead)

    def me(points: int, i_win: bool) -> float:
        return met.outcome(away_me, away_opp, points, i_win, crawford=crawford)

    win = arr[..., 0]
    g0, bg0, g1, bg1 = gammon_ratios(arr)
    cash, opp_cash = me(cube_value, True), me(cube_value, False)
    lose_all = (
        (1 - g1 - bg1) * opp_cash + g1 * me(2 * cube_value, False) + bg1 * me(3 * cube_value, False)
    )
    win_all = (1 - g0 - bg0) * cash + g0 * me(2 * cube_value, True) + bg0 * me(3 * cube_value, True)
    cp_me, cp_opp = cash_points(arr, away_me, away_opp, cube_value, crawford=crawford, met=met)
    too_good, opp_too_good = cp_me, 1.0 - cp_opp
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.where(
            opp_too_good > 0.0, lose_all + (opp_cash - lose_all) * win / opp_too_good, lose_all
        )
        above = np.where(
            too_good < 1.0, cash + (win_all - cash) * (win - too_good) / (1.0 - too_good), win_all
        )
        if cube_owner == "centre":
            window = opp_cash + (cash - opp_cash) * (win - opp_too_good) / (too_good - opp_too_good)
            live = np.where(win <= opp_too_good, below, np.where(win < too_good, window, above))
        elif cube_owner == "me":
            mine = np.where(too_good > 0.0, lose_all + (cash - lose_all) * win / too_good, lose_all)
            live = np.where(win <= too_good, mine, above)
        else:
            theirs = opp_cash + (win_all - opp_cash) * (win - opp_too_good) / (1.0 - opp_too_good)
            live = np.where(win <= opp_too_good, below, theirs)
    return _out((1.0 - x) * dead + x * live)


def match_cube_decision(
    p: ArrayLike,
    *,
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    cube_owner: CubeOwner = "centre",
    crawford: bool = False,
    x: float = CONTACT_EFFICIENCY,
    max_cube: int = 64,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> CubeDecision:
    """Match cube decision for the side on roll, as gnubg's 0-ply cube analysis.

    No double is the cubeful MWC keeping the cube, double/take the cubeful MWC
    with the opponent owning twice the cube, double/pass the MWC of winning the
    current cube. Equities are EMG normalised to the current cube. The cube is
    unavailable in the Crawford game, when the side on roll already wins the
    match with the current cube (this includes the post-Crawford leader), when
    the opponent owns it, and beyond ``max_cube``. Post-Crawford, the trailer's
    double comes out of the same arithmetic (the leader's free drop is in the
    post-Crawford table).
    """
    arr = _scalaras_probabilities(p)
    _check_owner(cube_owner)
    _check_cube(cube_value, max_cube)
    _match_args(away_me, away_opp, crawford, met)

    def emg(mwc: float) -> float:
        return float(mwc_to_emg(mwc, away_me, away_opp, cube_value, crawford=crawford, met=met))

    def cubeful_mwc(value: int, owner: CubeOwner) -> float:
        return float(
            match_cubeful_mwc(
                arr,
                away_me=away_me,
                away_opp=away_opp,
                cube_value=value,
                cube_owner=owner,
                crawford=crawford,
                x=x,
                met=met,
            )
        )

    cubeless_mwc = float(
        mwc_from_probabilities(arr, away_me, away_opp, cube_value, crawford=crawford, met=met)
    )
    nd_mwc = cubeful_mwc(cube_value, cube_owner)
    can_double = (
        cube_owner in ("centre", "me")
        and not crawford
        and away_me > cube_value
        and 2 * cube_value <= max_cube
    )
    if not can_double:
        return _unavailable(
            emg(nd_mwc), emg(cubeless_mwc), cube_owner, nd_mwc=nd_mwc, cubeless_mwc=cubeless_mwc
        )
    dt_mwc = cubeful_mwc(2 * cube_value, "opponent")
    dp_mwc = met.outcome(away_me, away_opp, cube_value, True, crawford=crawford)
    return decision_from_equities(
        emg(nd_mwc),
        emg(dt_mwc),
        emg(dp_mwc),
        emg(cubeless_mwc),
        cube_owner=cube_owner,
        mwc=(nd_mwc, dt_mwc, dp_mwc, cubeless_mwc),
    )


_RESIGN_TOL = 1e-9


def resignation_values(
    p: NDArray[np.float64],
    cube_value: int = 1,
    *,
    cube_owner: str = "centre",
    jacoby: bool = True,
    away_me: int | None = None,
    away_opp: int | None = None,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> tuple[float, list[float]]:
    """Value of playing on and of resigning 1, 2 or 3 points per cube, for the resigning side.

    Money: cubeless equity per unit cube (gammons void under the Jacoby rule
    with a centred cube); match: MWC. Bigger is better for the resigning side.
    """
    if (away_me is None) != (away_opp is None):
        raise ValueError("match play needs both away_me and away_opp")
    if away_me is None or away_opp is None:
        win, wg, wbg, lg, lbg = p
        if jacoby and cube_owner == "centre":
            return 2.0 * win - 1.0, [-1.0, -1.0, -1.0]
        return 2.0 * win - 1.0 + (wg - lg) + (wbg - lbg), [-1.0, -2.0, -3.0]
    play = float(
        mwc_from_probabilities(p, away_me, away_opp, cube_value, crawford=crawford, met=met)
    )
    resign = [
        met.outcome(away_me, away_opp, v * cube_value, False, crawford=crawford) for v in (1, 2, 3)
    ]
    return play, resign


def resignation_offer(
    p: ArrayLike,
    cube_value: int = 1,
    *,
    cube_owner: CubeOwner = "centre",
    jacoby: bool = True,
    away_me: int | None = None,
    away_opp: int | None = None,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> int:
    """Resignation (0 none, 1 single, 2 gammon, 3 backgammon) the side with ``p`` should offer.

    Offers the largest value whose loss is no worse than the expected result
    of playing on (cubeless, as gnubg's resignation analysis): money compares
    per-cube points, match play (``away_me``/``away_opp`` given) compares MWC.
    A bigger value that costs no more than a smaller one (a gammon under the
    Jacoby rule, or any loss once a single loss ends the match) is not offered.
    """
    arr = _scalaras_probabilities(p)
    _check_owner(cube_owner)
    play, resign = resignation_values(
        arr,
        cube_value,
        cube_owner=cube_owner,
        jacoby=jacoby,
        away_me=away_me,
        away_opp=away_opp,
        crawford=crawford,
        met=met,
    )
    offer, previous = 0, math.inf
    for value, after in zip((1, 2, 3), resign, strict=True):
        if after >= play - _RESIGN_TOL and after < previous - _RESIGN_TOL:
            offer = value
        previous = after
    return offer


def accept_resignation(
    p: ArrayLike,
    value: int,
    cube_value: int = 1,
    *,
    cube_owner: CubeOwner = "centre",
    jacoby: bool = True,
    away_me: int | None = None,
    away_opp: int | None = None,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> bool:
    """Whether the opponent should accept a resignation of ``value`` (1, 2 or 3) per cube.

    ``p`` is from the view of the side that resigns (the same ``p`` as for
    :func:`resignation_offer`). Accept when winning ``value`` now is no worse
    for the opponent than playing on.
    """
    if value not in (1, 2, 3):
        raise ValueError(f"a resignation is worth 1, 2 or 3 points per cube, got {value!r}")
    arr = _scalaras_probabilities(p)
    _check_owner(cube_owner)
    play, resign = resignation_values(
        arr,
        cube_value,
        cube_owner=cube_owner,
        jacoby=jacoby,
        away_me=away_me,
        away_opp=away_opp,
        crawford=crawford,
        met=met,
    )
    return resign[value - 1] <= play + _RESIGN_TOL
