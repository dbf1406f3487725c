"""Tesauro's pubeval: the public linear benchmark evaluator of backgammon programs.

The weights and the input encoding are those of Gerald Tesauro's published `pubeval.c`
(as kept in GNU Backgammon's `pub_eval.c`). For each of the 24 points, from the mover's
24-point down to its 1-point, five inputs: an opposing blot; one own checker; two or more;
exactly three; and (n - 3) / 2 for n >= 4. Then the opponent's checkers on the bar / 2 and
the mover's checkers borne off / 15. Separate race and contact weight vectors are chosen by
whether the position *before* the move is a race; an afterstate with all 15 off scores
99999999. Opposing points of two or more checkers are not inputs at all: that, and the
`n == 3` / `n >= 4` split, are where re-implementations usually go wrong.
"""

from __future__ import annotations

import numpy as np

from agents.base import AfterstateAgent
from engine.position import has_contact

_RACE = (
    ".00000 -.17160 .27010 .29906 -.08471 .00000 -1.40375 -1.05121 .07217 -.01351 .00000 "
    "-1.29506 -2.16183 .13246 -1.03508 .00000 -2.29847 -2.34631 .17253 .08302 .00000 "
    "-1.27266 -2.87401 -.07456 -.34240 .00000 -1.34640 -2.46556 -.13022 -.01591 .00000 "
    ".27448 .60015 .48302 .25236 .00000 .39521 .68178 .05281 .09266 .00000 .24855 -.06844 "
    "-.37646 .05685 .00000 .17405 .00430 .74427 .00576 .00000 .12392 .31202 -.91035 -.16270 "
    ".00000 .01418 -.10839 -.02781 -.88035 .00000 1.07274 2.00366 1.16242 .22520 .00000 "
    ".85631 1.06349 1.49549 .18966 .00000 .37183 -.50352 -.14818 .12039 .00000 .13681 "
    ".13978 1.11245 -.12707 .00000 -.22082 .20178 -.06285 -.52728 .00000 -.13597 -.19412 "
    "-.09308 -1.26062 .00000 3.05454 5.16874 1.50680 5.35000 .00000 2.19605 3.85390 .88296 "
    "2.30052 .00000 .92321 1.08744 -.11696 -.78560 .00000 -.09795 -.83050 -1.09167 -4.94251 "
    ".00000 -1.00316 -3.66465 -2.56906 -9.67677 .00000 -2.77982 -7.26713 -3.40177 -12.32252 "
    ".00000 3.42040"
)
_CONTACT = (
    ".25696 -.66937 -1.66135 -2.02487 -2.53398 -.16092 -1.11725 -1.06654 -.92830 -1.99558 "
    "-1.10388 -.80802 .09856 -.62086 -1.27999 -.59220 -.73667 .89032 -.38933 -1.59847 "
    "-1.50197 -.60966 1.56166 -.47389 -1.80390 -.83425 -.97741 -1.41371 .24500 .10970 "
    "-1.36476 -1.05572 1.15420 .11069 -.38319 -.74816 -.59244 .81116 -.39511 .11424 -.73169 "
    "-.56074 1.09792 .15977 .13786 -1.18435 -.43363 1.06169 -.21329 .04798 -.94373 -.22982 "
    "1.22737 -.13099 -.06295 -.75882 -.13658 1.78389 .30416 .36797 -.69851 .13003 1.23070 "
    ".40868 -.21081 -.64073 .31061 1.59554 .65718 .25429 -.80789 .08240 1.78964 .54304 "
    ".41174 -1.06161 .07851 2.01451 .49786 .91936 -.90750 .05941 1.83120 .58722 1.28777 "
    "-.83711 -.33248 2.64983 .52698 .82132 -.58897 -1.18223 3.35809 .62017 .57353 -.07276 "
    "-.36214 4.37655 .45481 .21746 .10504 -.61977 3.54001 .04612 -.18108 .63211 -.87046 "
    "2.47673 -.48016 -1.27157 .86505 -1.11342 1.24612 -.82385 -2.77082 1.23606 -1.59529 "
    ".10438 -1.30206 -4.11520 5.62596 -2.75800"
)
#: The race and contact weight vectors, 122 each, as published.
WEIGHTS_RACE = np.array(_RACE.split(), dtype=np.float32)
WEIGHTS_CONTACT = np.array(_CONTACT.split(), dtype=np.float32)
#: The score of an afterstate that has borne off all 15 checkers.
WIN_SCORE = 99999999.0


def pubeval_inputs(afterstates: np.ndarray) -> np.ndarray:
    """Tesauro's 122 inputs, float32 (N, 122), for afterstates int8 (N, 2, 25) (mover in row 1)."""
    a = np.asarray(afterstates)
    mine = a[:, 1, 23::-1].astype(np.float32)  # block k: the mover's point 24 - k
    theirs = a[:, 0, :24]  # the opponent's index k is the mover's point 24 - k
    x = np.zeros((len(a), 24, 5), dtype=np.float32)
    x[:, :, 0] = theirs == 1
    x[:, :, 1] = mine == 1
    x[:, :, 2] = mine >= 2
    x[:, :, 3] = mine == 3
    x[:, :, 4] = np.maximum(mine - 3, 0) / 2
    off = 15 - a[:, 1, :].sum(axis=1, dtype=np.int64)
    return np.concatenate(
        [x.reshape(len(a), 120), a[:, 0, 24:25] / np.float32(2), (off / 15)[:, None]],
        axis=1,
        dtype=np.float32,
    )


def pubeval_scores(afterstates: np.ndarray, race: np.ndarray) -> np.ndarray:
    """Pubeval's score of each afterstate (higher is better for the mover, row 1).

    `race` is bool (N,): whether the position before the move was a race (no contact).
    """
    a = np.asarray(afterstates)
    x = pubeval_inputs(a)
    scores = np.where(np.asarray(race, dtype=bool), x @ WEIGHTS_RACE, x @ WEIGHTS_CONTACT)
    scores = scores.astype(np.float64)
    scores[a[:, 1, :].sum(axis=1) == 0] = WIN_SCORE
    return scores


class PubevalAgent(AfterstateAgent):
    """Plays the afterstate pubeval scores highest (spec `pubeval`)."""

    name = "pubeval"

    def score(self, afterstates: np.ndarray, parent: np.ndarray, boards: np.ndarray) -> np.ndarray:
        race = ~np.asarray(has_contact(boards), dtype=bool)
        return pubeval_scores(afterstates, race[parent])
