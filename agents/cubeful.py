"""Cube decisions by look-ahead: GNU Backgammon's cubeful n-ply evaluation, batched.

At 0 plies a cube decision is Janowski's cubeful formula on the evaluator's probabilities
(`vrhcaby.equity.decisions.cube_decision`). At n plies (gnubg's eval.c,
``EvaluatePositionCubeful4``) the side on roll's no double (ND) and double/take (DT) are
each the average over its 21 rolls (weights 1/36 and 2/36) of minus the opponent's cubeful
value at n-1 plies after the side's play of that roll, in the cube state that answer
leaves: the cube as it is for ND; twice the cube, owned by the opponent, for DT. Below the
root every side on roll holds its own cube option in each cube state it can be in: its
value is no double, or, where it may double and doubling is right, the lower of
double/take (the cube doubled and turned, valued one level down the same way) and
double/pass (`decisions.optimal_values`, gnubg's GetECF3); the cube states multiply by
two a level (money: the cube at 2^k with its owner; match: the cube's value, the score
fixed). At the leaves (0 plies) each state is valued by Janowski's formula on the
evaluator's probabilities and the leaf's cube efficiency (`decisions.no_double_values`);
a game that ends in the tree is its result on the cube of each state.

The play of each roll is the evaluator's 0-ply choice by the cubeful equity of the game's
actual cube (`decisions.play_equities`), as gnubg chooses it inside its cubeful search
(one play per roll for every cube state); with a `agents.search.Pruner`, among the
replies its ranker puts first (gnubg's pruning). The result is gnubg's n-ply cube
analysis number for number given the same probabilities, except where gnubg reads its
exact two-sided bear-off database (money bear-offs of up to six checkers a side).

Batched as `agents.search` is: every node of one ply, for all boards, is one
`agents.search.every_roll` call (21 move generations and one network pass a distinct
board), so a 1-ply cube decision costs about what a 1-ply checker play does.

Values are money points of the game (the cube's value included) or MWC in a match, for
the side on roll of each node; `decisions.searched_decision` turns the root's ND and DT into
the `CubeDecision` that `vrhcaby cube` shows and the ``td`` agent decides by.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents import search
from agents.search import Pruner, ValueFunction
from vrhcaby.equity import cube, decisions
from vrhcaby.equity.context import GameContext
from vrhcaby.equity.outcomes import equity, invert

__all__ = ["CubefulValues", "cube_decision", "cube_states", "cubeful_values"]


@dataclass(frozen=True)
class CubefulValues:
    """The cubeful n-ply values of B pre-roll positions for their side on roll."""

    probabilities: np.ndarray
    """float64 (B, 5): the n-ply cubeless probabilities, averaged over the same tree."""
    nd: np.ndarray
    """float64 (B,): no double, in points of the game (money) or MWC (match)."""
    dt: np.ndarray
    """float64 (B,): double/take, the same way; NaN where the side may not double."""
    evaluated: int
    """Afterstates the evaluator was asked about."""


def cube_states(context: GameContext, plies: int) -> list[list[GameContext]]:
    """The cube states (each a `GameContext` from the view of that level's side on roll)
    whose no-double values each level 0..plies of the tree needs: the root's own and its
    doubled one; below, the flip of each state of the level above, and its doubled one
    where its side may double (gnubg's MakeCubePos). Distinct states, in a fixed order."""
    levels = [[context, context.doubled()] if context.may_double() else [context]]
    for _ in range(plies):
        above = [s.flip() for s in levels[-1]]
        below = above + [s.doubled() for s in above if s.may_double()]
        levels.append(list(dict.fromkeys(below)))
    return levels


#: The weight of the cubeless equity that breaks ties of the cubeful one in the choice of a
#: play: far below the resolution of gnubg's float32 scores, which cannot tell apart what
#: it would reorder.
TIE_BREAK = 1e-9


def _move_ranking(context: GameContext, params: cube.Efficiency, x: float | None):
    """How the side on roll in `context` picks its play of a roll: by the cubeful 0-ply
    equity of the game's cube, ties (every play loses the cube's value when the other side
    will cash) broken by the cubeless equity as gnubg's CompareMoves does (None: by
    cubeless equity alone, a money game without the cube)."""
    if not context.match_to and not context.cube_enabled:
        return None

    def rank(p: np.ndarray, after: np.ndarray) -> np.ndarray:
        fixed = None if x is None else np.full(len(after), x)
        cubeful = decisions.play_equities(p, after, context, params=params, x=fixed)
        return cubeful + TIE_BREAK * equity(p)

    return rank


def _values(
    states: list[GameContext], below: list[GameContext], no_double: np.ndarray
) -> np.ndarray:
    """The values (M, len(states)) of the nodes of a level in each state of `states`,
    with their cube options, from their no-double values (M, len(below)) in the states
    `below` (which hold every state of `states` and each one's doubled one, if any)."""
    column = {s: i for i, s in enumerate(below)}
    out = np.empty((len(no_double), len(states)))
    for j, s in enumerate(states):
        dt = no_double[:, column[s.doubled()]] if s.may_double() else None
        out[:, j] = decisions.optimal_values(no_double[:, column[s]], dt, s)
    return out


def cubeful_values(
    evaluator: ValueFunction,
    boards: np.ndarray,
    context: GameContext,
    plies: int,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    prune: Pruner | None = None,
) -> CubefulValues:
    """No double and double/take at `plies` for the side on roll (row 1) of each pre-roll
    board (B, 2, 25), all in `context` (its view), as gnubg's cubeful n-ply cube analysis.

    `params` gives each leaf's cube efficiency by its position class (`x` fixes it);
    `prune` prunes each roll's replies as `agents.search.every_roll` does.
    """
    if plies < 0:
        raise ValueError(f"plies must be at least 0, got {plies}")
    b = np.ascontiguousarray(boards, dtype=np.int8)
    states = cube_states(context, plies)
    match = bool(context.match_to)
    # Down: the nodes of each level (the side on roll in row 1), whether each is a finished
    # game, the probabilities of those whose parent valued them (every level below the root;
    # the root itself at 0 plies), and how each level's live nodes reach their 21 children.
    nodes = [b]
    ended = [np.zeros(len(b), dtype=bool)]
    if plies == 0:
        after = np.ascontiguousarray(b[:, ::-1])
        known = [invert(search.afterstate_probabilities(evaluator, None, after, None))]
        evaluated = len(b)
    else:
        known, evaluated = [np.empty((len(b), 5))], 0
    chance: list[tuple[np.ndarray, np.ndarray, int]] = []  # (live rows, inverse, distinct)
    for depth in range(plies):
        live = np.flatnonzero(~ended[-1])
        if not len(live):  # every game of this level is over: nothing below it
            empty = np.empty(0, dtype=np.int64)
            chance.append((live, empty, 0))
            nodes.append(np.empty((0, 2, 25), dtype=np.int8))
            ended.append(np.empty(0, dtype=bool))
            known.append(np.empty((0, 5)))
            continue
        mover = context if depth % 2 == 0 else context.flip()
        table = search.every_roll(
            evaluator, nodes[-1][live], prune, rank=_move_ranking(mover, params, x)
        )
        evaluated += table.evaluated
        plays = table.plays.reshape(-1, 2, 25)
        chance.append((live, table.inverse, len(table.plays)))
        nodes.append(np.ascontiguousarray(plays[:, ::-1]))
        ended.append(search.game_value(plays) != 0)
        known.append(invert(table.best.reshape(-1, 5)))
    # Up: each level's probabilities and no-double values in its states, from the leaves
    # (and the finished games, leaves wherever they are) to the root.
    probabilities: np.ndarray = np.empty((0, 5))
    no_double: np.ndarray = np.empty((0, 0))
    for depth in range(plies, -1, -1):
        level_p = np.asarray(known[depth], dtype=np.float64).copy()
        level_nd = np.empty((len(level_p), len(states[depth])))
        leaf = np.ones(len(level_p), dtype=bool) if depth == plies else ended[depth]
        if depth < plies and chance[depth][2]:
            live, inverse, distinct = chance[depth]
            children = _values([s.flip() for s in states[depth]], states[depth + 1], no_double)
            mean = search.mean_over_rolls(children.reshape(distinct, 21, -1))
            level_nd[live] = ((1.0 - mean) if match else -mean)[inverse]
            mean_p = search.mean_over_rolls(probabilities.reshape(distinct, 21, 5))
            level_p[live] = invert(mean_p)[inverse]
        rows = np.flatnonzero(leaf)
        if len(rows):
            board = nodes[depth][rows]
            eff = decisions.efficiencies(board, params) if x is None else np.full(len(rows), x)
            for j, s in enumerate(states[depth]):
                level_nd[rows, j] = decisions.no_double_values(level_p[rows], eff, s)
        probabilities, no_double = level_p, level_nd
    column = {s: i for i, s in enumerate(states[0])}
    dt = (
        no_double[:, column[context.doubled()]] if context.may_double() else np.full(len(b), np.nan)
    )
    return CubefulValues(probabilities, no_double[:, column[context]], dt, evaluated)


def cube_decision(
    evaluator: ValueFunction,
    board: np.ndarray,
    context: GameContext,
    plies: int,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    prune: Pruner | None = None,
    beavers: bool = False,
) -> tuple[cube.CubeDecision, np.ndarray]:
    """The cube decision of the side on roll (row 1) of `board` in `context` at `plies`
    (`cubeful_values`), and its n-ply cubeless probabilities."""
    v = cubeful_values(
        evaluator, np.asarray(board)[None], context, plies, params=params, x=x, prune=prune
    )
    p = v.probabilities[0]
    return decisions.searched_decision(p, v.nd[0], v.dt[0], context, beavers=beavers), p
