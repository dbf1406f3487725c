"""The one-ply search of acey-deucey, for the labels of the expert-iteration pipeline.

An acey-deucey afterstate (2, 26) comes with a flag: whether its mover rolls again (a
1-2 whose chosen double went all four times). Its one-ply value for its mover is the
average over the 21 rolls (weights 1/36 and 2/36) of the 0-ply value of the turn the
side that rolls next plays for that roll: the opponent when the flag is off (its value
seen from the other side), the mover itself when it is on. The turn of each roll is the
agent's own choice (`AfterstateAgent.choose_turns_ad`: a 1-2 in two stages, the 1 and the
2, then the double), valued with whether it earns another roll; a roll with no legal turn
leaves the board as it is and the turn passes; a finished game is its certain result.
This is `agents.search.ply_probabilities` at one ply, with the variant's move generation
and extra rolls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from agents.search import mean_over_rolls
from engine.dice import ROLLS
from vrhcaby.equity.outcomes import invert, outcome

if TYPE_CHECKING:
    from agents.td import TDAgent


def one_ply_ad(agent: TDAgent, afterstates: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """The one-ply five probabilities, float64 (N, 5), of each acey-deucey afterstate
    (N, 2, 26) for its mover, `extra` (N,) bool marking those whose mover rolls again;
    `agent` is a td agent with an acey-deucey network. Distinct (board, flag) pairs are
    searched once."""
    from engine.acey_deucey import game_value_ad

    a = np.asarray(afterstates, dtype=np.int8)
    flags = np.asarray(extra, dtype=bool)
    points = game_value_ad(a)
    p = outcome(points).astype(np.float64)
    live = np.flatnonzero(points == 0)
    if not len(live):
        return p
    keys = np.concatenate([a[live].reshape(len(live), -1), flags[live, None]], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    boards = unique[:, :-1].reshape(-1, 2, 26).astype(np.int8)
    again = unique[:, -1].astype(bool)
    # The side that rolls next in row 1: the mover itself when it rolls again.
    roller = np.where(again[:, None, None], boards, boards[:, ::-1])
    reps = np.repeat(roller, len(ROLLS), axis=0)
    chosen, extra_turn = agent.choose_turns_ad(reps, np.tile(ROLLS, (len(boards), 1)))
    q = agent.probabilities_ad(chosen, extra_turn).reshape(len(boards), len(ROLLS), 5)
    mean = mean_over_rolls(q)
    p[live] = np.where(again[:, None], mean, invert(mean))[inverse.reshape(-1)]
    return p
