"""The 21 distinct rolls of two dice, how often each comes, and where each roll sits.

Every exact average over the dice reads this table: the one-ply search's expectimax
(`agents.search`), the bear-off databases' dynamic programs (`engine.bearoff_build`), the
heuristic's count of shots. A roll a-b and b-a are the same roll: doubles come 1 time in
36, the others 2.

>>> len(ROLLS), COUNTS.sum(), ROLLS[ROLL_INDEX[5, 3]].tolist()
(21, np.float64(36.0), [3, 5])
"""

from __future__ import annotations

import numpy as np

ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int64)
"""int64 (21, 2): the distinct rolls (a, b), a <= b, in order of a then b."""
COUNTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 1.0, 2.0)
"""float64 (21,): how many of the 36 ordered rolls each stands for."""
WEIGHTS = COUNTS / 36.0
"""float64 (21,): each roll's probability."""
ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
"""int64 (7, 7): `ROLL_INDEX[a, b]` is the row of ROLLS of the roll a-b, in either order."""
ROLL_INDEX[ROLLS[:, 0], ROLLS[:, 1]] = ROLL_INDEX[ROLLS[:, 1], ROLLS[:, 0]] = np.arange(len(ROLLS))
