"""A hand-written strategy that follows the rule documents' advice (spec `heuristic`).

Each afterstate gets a linear score from the terms below, all from the mover's view
(my point p, 1..24; the opponent's checkers seen on my points). Shots are the number of
the opponent's 36 rolls that hit at least one of my blots by a single die, both dice
together, or a double's multiples; blocked intermediate points and the need to enter
from the bar first are ignored.

| term (my view) | weight | advice it follows |
|---|---|---|
| point made (2+) on my 5 / 4 / 7 / 6 | 2.0 / 1.6 / 1.5 / 1.4 | make the key points |
| point made on my 3 / 8 / 2 / 9 / 1 | 0.9 / 0.8 / 0.5 / 0.5 / 0.2 | deep points are weak |
| anchor on my 20 / 21 / 18, others | 1.2 / 1.0 / 0.8, 0.3 | a safe landing spot |
| shots at my blots (of 36) | -3.0 x (1 + their home points / 3) | avoid hittable blots |
| my blot on points 1..12 | -0.3 each | loose checkers are liabilities |
| their checker on the bar | +1.5 x (1 + my home points / 3) | hit when it pays |
| longest run of made points L >= 3 | +0.4 x (L - 2)^2 | prime the opponent |
| pip lead while in contact | +0.03 per pip | race when ahead |
| checkers borne off | +2.0 each | bear off efficiently |
| no contact: checkers outside home | -1.0 each | race home first |
| no contact: 4th+ checker on a point; empty home point | -0.2 / -0.4 each | no wastage |

Acey-deucey (`heuristic_scores_ad`): the same table on the board with each side's
waiting checkers counted as checkers on its bar (they enter the same way: they count 25
pips, keep the game in contact, threaten blots in the entering side's home board and are
not borne off), except that only hit checkers earn the "their checker on the bar" term;
plus +3.0 when the turn earns another roll (the 1-2 bonus double played all four times).
The agent scores whole turns, the 1-2 part, the chosen double and its play together.
"""

from __future__ import annotations

import numpy as np

from agents.base import AfterstateAgent
from engine.dice import COUNTS, ROLLS
from engine.position import has_contact

_MADE = np.zeros(24)
_MADE[:] = 0.3
_MADE[[4, 3, 6, 5, 2, 7, 1, 8, 0]] = [2.0, 1.6, 1.5, 1.4, 0.9, 0.8, 0.5, 0.5, 0.2]
_MADE[[19, 20, 17]] = [1.2, 1.0, 0.8]

# Which distances each of the 21 rolls can hit.
_REACH = np.zeros((24, len(ROLLS)), dtype=bool)
for _r, (_a, _b) in enumerate(ROLLS.tolist()):
    for _d in {_a, 2 * _a, 3 * _a, 4 * _a} if _a == _b else {_a, _b, _a + _b}:
        _REACH[_d - 1, _r] = True


def shots(boards: np.ndarray) -> np.ndarray:
    """How many of the opponent's 36 rolls hit a blot of the mover (row 1), per board."""
    b = np.asarray(boards)
    blot = b[:, 1, :24] == 1  # index p - 1: my blot on point p
    theirs = b[:, 0, :] > 0  # index q - 1: their checker on their point q (25 the bar)
    # A checker on their point q hits my point p from distance d = q - (25 - p) = q + p - 25.
    near = np.zeros((len(b), 24), dtype=bool)
    for d in range(1, 25):
        near[:, d - 1] = (blot[:, d - 1 :] & theirs[:, d:][:, ::-1]).any(axis=1)
    hit = (near.astype(np.float64) @ _REACH) > 0
    return hit @ COUNTS


def _longest_run(made: np.ndarray) -> np.ndarray:
    run = np.zeros(len(made), dtype=np.int64)
    best = np.zeros(len(made), dtype=np.int64)
    for i in range(made.shape[1]):
        run = np.where(made[:, i], run + 1, 0)
        best = np.maximum(best, run)
    return best


def heuristic_scores(afterstates: np.ndarray) -> np.ndarray:
    """The table's score of each afterstate, float (N,), higher is better for the mover."""
    a = np.asarray(afterstates).astype(np.int64)
    me, them = a[:, 1], a[:, 0]
    made = me[:, :24] >= 2
    their_made_home = (them[:, :6] >= 2).sum(axis=1)
    my_made_home = made[:, :6].sum(axis=1)
    off = 15 - me.sum(axis=1)
    pips = np.arange(1, 26)
    pip_lead = them @ pips - me @ pips
    contact = np.asarray(has_contact(afterstates), dtype=bool)

    fight = (
        made @ _MADE
        - 3.0 * shots(afterstates) / 36 * (1 + their_made_home / 3)
        - 0.3 * (me[:, :12] == 1).sum(axis=1)
        + 1.5 * them[:, 24] * (1 + my_made_home / 3)
        + 0.4 * np.maximum(_longest_run(made) - 2, 0) ** 2
        + 0.03 * pip_lead
    )
    race = (
        -1.0 * me[:, 6:].sum(axis=1)
        - 0.2 * np.maximum(me[:, :6] - 3, 0).sum(axis=1)
        - 0.4 * (me[:, :6] == 0).sum(axis=1)
    )
    return np.where(contact, fight, race) + 2.0 * off + np.where(off == 15, 1e6, 0.0)


#: The acey-deucey term for a turn that earns another roll.
EXTRA_ROLL = 3.0


def heuristic_scores_ad(afterstates: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """The table's score of each acey-deucey afterstate (N, 2, 26), float (N,); `extra`
    (N,) bool marks those whose mover rolls again."""
    from vrhcaby.nn.encode import WAITING, waiting_on_bar

    a = np.asarray(afterstates)
    plain = waiting_on_bar(a)
    # Waiting checkers of the opponent sit on its bar here, but were never hit.
    bar_bonus = 1.5 * a[:, 0, WAITING] * (1 + (plain[:, 1, :6] >= 2).sum(axis=1) / 3)
    contact = np.asarray(has_contact(plain), dtype=bool)
    scores = heuristic_scores(plain) - np.where(contact, bar_bonus, 0.0)
    return scores + EXTRA_ROLL * np.asarray(extra, bool)


class HeuristicAgent(AfterstateAgent):
    """Plays the afterstate the hand-written table scores highest (spec `heuristic`)."""

    name = "heuristic"
    acey_deucey = True

    def score(self, afterstates: np.ndarray, parent: np.ndarray, boards: np.ndarray) -> np.ndarray:
        return heuristic_scores(afterstates)

    def score_ad(
        self, afterstates: np.ndarray, extra: np.ndarray, parent: np.ndarray, boards: np.ndarray
    ) -> np.ndarray:
        return heuristic_scores_ad(afterstates, extra)
