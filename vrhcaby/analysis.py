"""Position analysis with a neural agent: candidate plays, cube decisions, evaluations.

What the ``hint``, ``cube``, ``eval``, ``play`` and ``external`` commands show, and what the
``td`` agent decides with, from one source: the five cubeless probabilities of a position
(from `agents.td.TDAgent`, at any number of plies) turned into cubeful equities with
Janowski's model (`vrhcaby.equity.cube`) and match winning chances (`vrhcaby.equity.met`).

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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import engine
from agents import cubeful, search
from agents.base import GameContext
from vrhcaby.equity import cube, decisions, met
from vrhcaby.nn.encode import waiting_on_bar

if TYPE_CHECKING:
    from agents.td import TDAgent

__all__ = ["CUBE_PLIES", "Candidate", "PositionEvaluation", "candidate_plays", "evaluate"]

#: The look-ahead of the cube analysis users get when they name none (`vrhcaby cube`,
#: `eval`, `analyse --judge td`, `vrhcaby serve` and its web board): GNU Backgammon's
#: cubeful 2-ply, the best depth measured on the cube yardstick with the default network
#: (docs/benchmarks.md, "Cube decisions by look-ahead": generation 5 gives away 4.82
#: millipoints a decision at 2 plies against 6.39 at 1 and 10.09 at 0; GNU Backgammon 0-ply
#: 5.14), for about 40 ms of CPU more than 1 ply in a warm decision. The td agent's own
#: default in games is 1 ply (`agents.td.CUBE_PLIES`), windowed and pruned for speed: a
#: cube decision is asked before every roll there.
CUBE_PLIES = 2


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


def candidate_plays(
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
    for the next (`agent.filter`, `agents.search.filtered_search`), up to `plies` (default
    the agent's). Candidates evaluated deeper come first, each group by equity. Empty when
    no play is legal.
    """
    depth = agent.plies if plies is None else plies
    if depth not in (0, 1, 2):
        raise ValueError(f"plies must be 0, 1 or 2, got {depth}")
    position = engine.Position(board)
    plays = engine.legal_plays(position, dice)
    if not plays:
        return []
    after = np.stack([pl.position.board for pl in plays])
    values: list[tuple[float, float, float | None]] = [(0.0, 0.0, None)] * len(plays)

    def rank(p: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The ranking equity of candidates `rows`; their cubeless one and MWC kept aside."""
        for q, i in zip(p, rows, strict=True):
            cl, cl_mwc = decisions.mover_equity(q, after[i], context, cubeful=False)
            if not cubeful:
                values[i] = (cl, cl, cl_mwc)
            else:
                eq, mwc = decisions.mover_equity(q, after[i], context, params=params, x=x)
                values[i] = (eq, cl, mwc)
        return np.array([values[i][0] for i in rows], dtype=np.float64)

    parent = np.zeros(len(plays), dtype=np.int64)
    found = search.filtered_search(
        agent.evaluator,
        after,
        parent,
        position.board[None],
        depth,
        agent.filter,
        rank,
        prune=agent.prune,
    )
    reached = found.plies
    order = sorted(range(len(plays)), key=lambda i: (-reached[i], -values[i][0]))
    return [
        Candidate(plays[i], found.probabilities[i].copy(), *values[i], int(reached[i]))
        for i in order
    ]


# --- whole-position evaluation -------------------------------------------------------


@dataclass(frozen=True)
class PositionEvaluation:
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
    #: The look-ahead of the cube analysis: 0 (Janowski on the 0-ply probabilities) or the
    #: plies of the cubeful search.
    plies: int
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
) -> PositionEvaluation:
    """Probabilities, cubeless and cubeful equity and the cube decision before the roll,
    at `plies` (default the agent's `cube_plies`): 0-ply, Janowski's formula on the 0-ply
    probabilities; deeper, GNU Backgammon's cubeful look-ahead (`agents.cubeful`, pruned as
    the agent prunes), the probabilities those of the same search.

    An acey-deucey board (2, 26) is valued as it is, at 0 plies whatever `plies` says (its
    networks have no look-ahead); its cube efficiency counts the checkers still waiting to
    enter as on the bar."""
    depth = agent.cube_plies if plies is None else plies
    if depth not in (0, 1, 2):
        raise ValueError(f"plies must be 0, 1 or 2, got {depth}")
    board = np.asarray(board, dtype=np.int8)
    if board.shape[-1] != 25:
        depth = 0
    if depth:
        decision, p = cubeful.cube_decision(
            agent.evaluator,
            board,
            context,
            depth,
            params=params,
            x=x,
            prune=agent.prune,
            beavers=beavers,
        )
        eff = decisions.efficiency(board, params) if x is None else x
    else:
        p = agent.before_roll(board[None], 0)[0]
        if board.shape[-1] == 26:
            board = waiting_on_bar(board[None])[0]
        eff = decisions.efficiency(board, params) if x is None else x
        decision = decisions.cube_decision(p, board, context, x=eff, beavers=beavers)
    take_points = gv = None
    if context.match_to:
        away_me, away_opp = context.away()
        c = context.crawford
        take_points = (
            _take_point(away_me, away_opp, context.cube_value, c),
            _take_point(away_opp, away_me, context.cube_value, c),
        )
        gv = met.gammon_values(away_me, away_opp, context.cube_value, crawford=c)
    return PositionEvaluation(
        p,
        decision.cubeless,
        decision.nd,
        decision.optimal,
        decision,
        decision.cubeless_mwc,
        decision.optimal_mwc,
        eff,
        depth,
        take_points,
        gv,
    )


def _take_point(away_taker: int, away_doubler: int, cube_value: int, crawford: bool) -> float:
    """The taker's dead-cube take point, NaN where the doubler cannot double."""
    if crawford or away_doubler <= cube_value:
        return math.nan
    return met.dead_take_point(away_taker, away_doubler, cube_value)
