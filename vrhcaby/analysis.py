"""Position analysis with a neural agent: candidate plays, cube decisions, evaluations.

What the ``hint``, ``cube``, ``eval``, ``play`` and ``external`` commands show, and what the
``td`` agent decides with, from one source: the five cubeless probabilities of a position
(from `agents.td.TDAgent`, at any number of plies) turned into cubeful equities with
Janowski's model (`vrhcaby.cube`) and match winning chances (`vrhcaby.met`).

Conventions. Boards are int8 (2, 25) with the side on roll in row 1. A `GameContext`
(`agents.base`) carries the cube and the match from the view of that side. Equities are
per unit of the current cube: money points in money play, EMG (gnubg's normalised equity)
in match play, where MWCs are reported too. The cube efficiency comes from the position
class of the board the decision is taken on (`Efficiency`, gnubg's eval.c values by
default: 0.68 in contact, a pip-count-dependent value in races).

A candidate play is valued as gnubg's cubeful 0-ply does: the mover's equity after the play
is minus the opponent's equity with the opponent on roll and holding its own cube options
(no double, or double and the mover's best answer), from the candidate's n-ply
probabilities; `play_equities` is the same for a whole batch, what the ``td`` agent plays by
when it knows the cube. Pass ``cubeful=False`` for cubeless ranking.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import engine
from agents.base import GameContext
from vrhcaby import cube, met

if TYPE_CHECKING:
    from agents.td import TDAgent

__all__ = [
    "Candidate",
    "Evaluation",
    "accept_resignation",
    "context_for",
    "cube_decision",
    "efficiencies",
    "efficiency",
    "evaluate",
    "mover_equity",
    "parse_score",
    "play_equities",
    "rank_plays",
    "resignation_offer",
]

# --- the context ---------------------------------------------------------------------


def parse_score(text: str) -> tuple[int, int]:
    """``A-B`` -> (A, B): points won by the side on roll and by its opponent."""
    parts = text.strip().split("-")
    try:
        a, b = (int(x) for x in parts)
    except ValueError:
        raise ValueError(f"a score is two numbers like 2-4, got {text!r}") from None
    if a < 0 or b < 0:
        raise ValueError(f"scores cannot be negative, got {text!r}")
    return a, b


def _check_match(match_to: int, score: tuple[int, int], crawford: bool) -> None:
    if match_to < 1:
        raise ValueError(f"the match length must be at least 1 point, got {match_to}")
    if max(score) >= match_to:
        raise ValueError(
            f"impossible score {score[0]}-{score[1]} in a {match_to}-point match "
            "(each score is below the match length)"
        )
    if match_to > met.KAZAROSS_XG2.length:
        raise ValueError(
            f"matches up to {met.KAZAROSS_XG2.length} points are covered by the "
            f"match equity table, got {match_to}"
        )
    if crawford and match_to - 1 not in score:
        raise ValueError(
            f"the Crawford game needs a side at {match_to - 1} points, got score "
            f"{score[0]}-{score[1]}"
        )


def context_for(
    board: np.ndarray,
    state: engine.MatchState | None = None,
    *,
    match_to: int | None = None,
    score: tuple[int, int] | None = None,
    crawford: bool = False,
    jacoby: bool = False,
    max_cube: int = 64,
) -> GameContext:
    """The context of the side on roll (row 1 of `board`) from a Match ID/XGID state, or
    from a match length and score (the side on roll's first), or money play.

    ValueError (one line) for an impossible score, a zero-point match, a state the board
    contradicts (a finished game, a game not being played), or both sources at once.
    """
    if state is not None and (match_to is not None or score is not None):
        raise ValueError(
            "give the match either in the position (Match ID/XGID) or as "
            "--match-to/--score, not both"
        )
    off = engine.CHECKERS - np.asarray(board).sum(axis=1)
    if off.max() >= engine.CHECKERS:
        raise ValueError("the position is a finished game (a side has borne off all checkers)")
    if state is None:
        if match_to is None and score is not None:
            raise ValueError("--score needs --match-to")
        if match_to is None:
            if crawford:
                raise ValueError("the Crawford rule is for match play (give --match-to)")
            return GameContext(jacoby=jacoby, max_cube=max_cube)
        score = score or (0, 0)
        _check_match(match_to, score, crawford)
        return GameContext(match_to=match_to, score=score, crawford=crawford, max_cube=max_cube)
    if state.game_state != engine.GameState.PLAYING:
        raise ValueError(
            f"the Match ID says the game is {state.game_state.name.lower()}, not being played"
        )
    me = state.dice_owner
    owner = "centre" if state.cube_owner < 0 else "me" if state.cube_owner == me else "opponent"
    mine, theirs = state.score[me], state.score[1 - me]
    if state.match_length:
        _check_match(state.match_length, (mine, theirs), state.crawford)
        if state.cube_value > max_cube:
            raise ValueError(f"the cube {state.cube_value} is beyond the limit {max_cube}")
    return GameContext(
        cube_value=state.cube_value,
        cube_owner=owner,
        max_cube=max(max_cube, state.cube_value),
        match_to=state.match_length,
        score=(mine, theirs),
        crawford=state.crawford,
        jacoby=state.jacoby and not state.match_length,
    )


def _away(context: GameContext) -> tuple[int, int]:
    return context.match_to - context.score[0], context.match_to - context.score[1]


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
    away_me, away_opp = _away(context)
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
        away_me, away_opp = _away(context)
        args.update(away_me=away_me, away_opp=away_opp, crawford=context.crawford)
    return args


def resignation_offer(p: np.ndarray, context: GameContext) -> int:
    """0, or the resignation (1, 2, 3) the side on roll with probabilities `p` should offer."""
    return cube.resignation_offer(p, context.cube_value, **_resign_args(context))


def accept_resignation(p: np.ndarray, value: int, context: GameContext) -> bool:
    """Whether to accept a resignation of `value` from the side whose probabilities and
    context (its own view) are `p` and `context`."""
    return cube.accept_resignation(p, value, context.cube_value, **_resign_args(context))


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
        away_me, away_opp = _away(context)
        score = {"crawford": context.crawford}
        if cubeful:
            opp = cube_decision(
                cube.invert(p), afterstate[::-1], context.flip(), params=params, x=x
            )
            mwc = 1.0 - float(opp.optimal_mwc)  # type: ignore[arg-type]
        else:
            mwc = float(
                met.mwc_from_probabilities(p, away_me, away_opp, context.cube_value, **score)
            )
        emg = met.mwc_to_emg(mwc, away_me, away_opp, context.cube_value, **score)
        return float(emg), mwc
    if cubeful:
        opp = cube_decision(cube.invert(p), afterstate[::-1], context.flip(), params=params, x=x)
        return -opp.optimal, None
    return float(cube.cubeless_equity(p)), None


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
    q = cube.invert(np.asarray(p, dtype=np.float64))
    theirs = context.flip()
    owner = _owner(theirs)
    value = theirs.cube_value
    if theirs.match_to:
        away_them, away_me = _away(theirs)
        if owner == "dead" or theirs.crawford or max(away_them, away_me) <= value:
            # A dead cube: the cubeless MWC, all the rest below would come to.
            dead = met.mwc_from_probabilities(
                q, away_them, away_me, value, crawford=theirs.crawford
            )
            return np.asarray(
                met.mwc_to_emg(1.0 - dead, away_me, away_them, value, crawford=theirs.crawford)
            )
    if x is None:
        x = efficiencies(np.asarray(afterstates)[:, ::-1], params)
    may_double = owner in ("centre", "me") and 2 * value <= theirs.max_cube
    if not theirs.match_to:
        dead = cube.cubeful_equity(q, "dead", 0.0)
        jacoby = theirs.jacoby and owner == "centre"
        nd_dead = cube.cubeful_equity(q, owner, 0.0, jacoby=jacoby) if jacoby else dead
        nd = _janowski(x, nd_dead, cube.cubeful_equity, p=q, cube_owner=owner, jacoby=jacoby)
        if not may_double:
            return -nd
        dt = 2.0 * _janowski(x, dead, cube.cubeful_equity, p=q, cube_owner="opponent")
        return -np.maximum(nd, np.minimum(dt, 1.0))
    crawford = theirs.crawford
    score = {"away_me": away_them, "away_opp": away_me, "crawford": crawford}

    def mwc(value: int, owner: cube.CubeOwner) -> np.ndarray:
        dead = met.mwc_from_probabilities(q, away_them, away_me, value, crawford=crawford)
        return _janowski(
            x, dead, cube.match_cubeful_mwc, p=q, cube_value=value, cube_owner=owner, **score
        )

    theirs_mwc = mwc(value, owner)
    if may_double and not crawford and away_them > value:
        dp = met.KAZAROSS_XG2.outcome(away_them, away_me, value, True, crawford=crawford)
        theirs_mwc = np.maximum(theirs_mwc, np.minimum(mwc(2 * value, "opponent"), dp))
    return np.asarray(
        met.mwc_to_emg(1.0 - theirs_mwc, away_me, away_them, value, crawford=crawford)
    )


@dataclass(frozen=True)
class Candidate:
    """One legal play with its evaluation, from the mover's view."""

    play: engine.Play
    #: P(win), P(win gammon), P(win bg), P(lose gammon), P(lose bg) after the play.
    probabilities: np.ndarray
    #: The ranking equity (cubeful unless asked otherwise), per unit of the current cube.
    equity: float
    #: Cubeless money equity (money play) or EMG of the cubeless MWC (match play).
    cubeless: float
    #: Match winning chance that goes with `equity` (None in money play).
    mwc: float | None
    #: How many plies deep this candidate was evaluated.
    plies: int

    @property
    def position_id(self) -> str:
        """Position ID of the resulting position with the mover still on roll, as
        `vrhcaby moves` and GNU Backgammon's move list give it."""
        return self.play.position.position_id()

    @property
    def next_position_id(self) -> str:
        """Position ID of the resulting position with the opponent on roll (next)."""
        return self.play.position.flip().position_id()


def rank_plays(
    agent: TDAgent,
    board: np.ndarray,
    dice: tuple[int, int],
    context: GameContext,
    *,
    plies: int | None = None,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    cubeful: bool = True,
) -> list[Candidate]:
    """Every legal play of the side on roll, best first, as GNU Backgammon's ``hint``.

    All plays are evaluated at 0-ply; the agent's move filters keep the best of each ply
    for the next (`agent.filter`), up to `plies` (default the agent's). Candidates
    evaluated deeper come first, each group by equity. Empty when no play is legal.
    """
    depth = agent.plies if plies is None else plies
    if depth not in (0, 1, 2):
        raise ValueError(f"plies must be 0, 1 or 2, got {depth}")
    position = engine.Position(board)
    plays = engine.legal_plays(position, dice)
    if not plays:
        return []
    after = np.stack([pl.position.board for pl in plays])
    parent = np.zeros(len(plays), dtype=np.int64)
    probs = agent.probabilities(after, 0, position.board[None], parent)
    reached = np.zeros(len(plays), dtype=np.int64)

    def score(i: int) -> tuple[float, float, float | None]:
        cl, cl_mwc = mover_equity(probs[i], after[i], context, cubeful=False)
        if not cubeful:
            return cl, cl, cl_mwc
        eq, mwc = mover_equity(probs[i], after[i], context, params=params, x=x)
        return eq, cl, mwc

    values = [score(i) for i in range(len(plays))]
    for d in range(1, depth + 1):
        alive = np.flatnonzero(reached == d - 1)
        best = sorted(alive, key=lambda i: -values[i][0])[: agent.filter[d - 1]]
        rows = np.array(best, dtype=np.int64)
        probs[rows] = agent.probabilities(after[rows], d)
        reached[rows] = d
        for i in rows:
            values[i] = score(i)
    order = sorted(range(len(plays)), key=lambda i: (-reached[i], -values[i][0]))
    return [
        Candidate(
            plays[i], probs[i].copy(), values[i][0], values[i][1], values[i][2], int(reached[i])
        )
        for i in order
    ]


# --- whole-position evaluation -------------------------------------------------------


@dataclass(frozen=True)
class Evaluation:
    """A position before the roll, for the side on roll."""

    probabilities: np.ndarray
    #: Cubeless money equity, or in a match the EMG of the cubeless MWC.
    cubeless: float
    #: Cubeful equity keeping the cube (no double) and with correct cube play.
    cubeful_nd: float
    cubeful: float
    decision: cube.CubeDecision
    #: Match play: cubeless and cubeful (correct cube play) MWC; None for money.
    mwc_cubeless: float | None
    mwc_cubeful: float | None
    #: The cube efficiency used.
    x: float
    #: Match play: the side on roll's dead-cube take point if doubled now, the
    #: opponent's if the side on roll doubles, and the gammon values at the score.
    take_points: tuple[float, float] | None
    gammon_values: met.GammonValues | None


def evaluate(
    agent: TDAgent,
    board: np.ndarray,
    context: GameContext,
    *,
    plies: int | None = None,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    beavers: bool = False,
) -> Evaluation:
    """Probabilities, cubeless and cubeful equity and the cube decision before the roll."""
    depth = agent.plies if plies is None else plies
    if depth not in (0, 1, 2):
        raise ValueError(f"plies must be 0, 1 or 2, got {depth}")
    p = agent.before_roll(np.asarray(board, dtype=np.int8)[None], depth)[0]
    eff = efficiency(board, params) if x is None else x
    decision = cube_decision(p, board, context, x=eff, beavers=beavers)
    take_points = gv = None
    if context.match_to:
        away_me, away_opp = _away(context)
        c = context.crawford
        take_points = (
            _take_point(away_me, away_opp, context.cube_value, c),
            _take_point(away_opp, away_me, context.cube_value, c),
        )
        gv = met.gammon_values(away_me, away_opp, context.cube_value, crawford=c)
    return Evaluation(
        p,
        decision.cubeless,
        decision.nd,
        decision.optimal,
        decision,
        decision.cubeless_mwc,
        decision.optimal_mwc,
        eff,
        take_points,
        gv,
    )


def _take_point(away_taker: int, away_doubler: int, cube_value: int, crawford: bool) -> float:
    """The taker's dead-cube take point, NaN where the doubler cannot double."""
    if crawford or away_doubler <= cube_value:
        return math.nan
    return met.dead_take_point(away_taker, away_doubler, cube_value)
