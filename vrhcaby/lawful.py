"""Outcome probabilities that never contradict the rules (`obey_rules`).

A network's five outputs (win, win gammon, win backgammon, lose gammon, lose backgammon,
for the side that just moved, row 1 of the afterstate) are consistent by construction
(backgammons <= gammons <= wins, `vrhcaby.net.joint`), but nothing stops them from
giving a chance to what the rules rule out. `obey_rules` sets:

- no gammon (nor backgammon) loss once the mover has borne off a checker, and no gammon
  win once the side to roll has;
- no backgammon for a side with no checker in the other's home board or on the bar when
  there is no contact any more (its checkers only move away from there);
- a finished game (a side with no checker left) to its result;
- a bear-off (`engine.classify`: every checker home) to the databases' values
  (`vrhcaby.bearoff_db`): the exact two-sided win probability, no gammons, where both
  sides have at most 6 checkers, else the one-sided race as GNU Backgammon combines it.

It takes numpy arrays or torch tensors (kept on their device, differentiable where they
are not replaced), so every evaluation path, numpy or torch, can go through it.
Acey-deucey boards (26 columns) only get the borne-off rules: their waiting checkers are
neither borne off nor home.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.classify import BEAROFF1, BEAROFF2, CONTACT, CRASHED, classify_boards
from engine.game import game_value
from vrhcaby.jit import in_numpy, lazy_jit

WIN, WIN_GAMMON, WIN_BACKGAMMON, LOSE_GAMMON, LOSE_BACKGAMMON = range(5)


def rule_masks(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the rules allow each afterstate (N, 2, 25 or 26), the mover in row 1:
    `allowed` bool (N, 5), which outputs may be non-zero; `fixed` bool (N,), whose
    outputs the rules or the databases decide; and their values float64 (len(fixed), 5)."""
    b = np.ascontiguousarray(afterstates, dtype=np.int8)
    n = b.shape[0]
    # (N, 2), [to roll, mover]: checkers on the board (waiting ones too), and whether any
    # is where a loser is backgammoned: the winner's home board (its own points 19..24,
    # indices 18..23) or the bar (24).
    on_board, back = (_side_facts_numpy if in_numpy(n) else _side_facts)(b)
    allowed = np.ones((n, 5), bool)
    allowed[:, [LOSE_GAMMON, LOSE_BACKGAMMON]] &= (on_board[:, 1] >= 15)[:, None]
    allowed[:, [WIN_GAMMON, WIN_BACKGAMMON]] &= (on_board[:, 0] >= 15)[:, None]
    if b.shape[2] != 25:
        return allowed, np.zeros(n, bool), np.zeros((0, 5))
    classes = classify_boards(b)
    race = (classes != CONTACT) & (classes != CRASHED)
    allowed[:, LOSE_BACKGAMMON] &= ~race | back[:, 1]
    allowed[:, WIN_BACKGAMMON] &= ~race | back[:, 0]
    done = (on_board == 0).any(axis=1)
    bear = np.isin(classes, (BEAROFF1, BEAROFF2)) & ~done
    fixed = done | bear
    values = np.zeros((n, 5))
    if done.any():
        ended = b[done]
        won, lost = game_value(ended), game_value(ended[:, ::-1])  # points won, or lost
        values[done] = np.stack([won > 0, won >= 2, won >= 3, lost >= 2, lost >= 3], axis=1)
    if bear.any():
        from vrhcaby.bearoff_db import database  # its tables are read on first need only

        values[bear] = database().probabilities(b[bear])
    return allowed, fixed, values[fixed]


def _side_facts_numpy(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_side_facts` in numpy, for small batches."""
    return b.sum(axis=2, dtype=np.int16), b[:, :, 18:25].any(axis=2)


@lazy_jit
def _side_facts(b):  # pragma: no cover - numba
    """Checkers on the board (N, 2) int16 and whether any is on the indices 18..24 (N, 2)
    bool, of boards int8 (N, 2, C)."""
    n, columns = b.shape[0], b.shape[2]
    on_board = np.zeros((n, 2), np.int16)
    back = np.zeros((n, 2), np.bool_)
    for r in range(n):
        for side in range(2):
            total = 0
            for i in range(columns):
                total += b[r, side, i]
            on_board[r, side] = total
            for i in range(18, 25):
                if b[r, side, i]:
                    back[r, side] = True
    return on_board, back


def obey_rules(afterstates: np.ndarray, p: Any) -> Any:
    """`p` (N, 5) for afterstates (N, 2, 25 or 26) (numpy or torch, the mover in row 1)
    made to obey the rules (see the module); numpy input gives a new array of its dtype.

    >>> import numpy as np, engine
    >>> board = np.zeros((1, 2, 25), np.int8); board[0, 1, 0] = 1; board[0, 0, 5] = 1
    >>> obey_rules(board, np.full((1, 5), 0.5)).tolist()  # on roll: one checker on its 6
    [[0.25, 0.0, 0.0, 0.0, 0.0]]
    """
    allowed, fixed, values = rule_masks(afterstates)
    if isinstance(p, np.ndarray):
        out = np.where(allowed, p, 0).astype(p.dtype, copy=False)
        out[fixed] = values
        return out
    import torch

    out = torch.where(torch.from_numpy(allowed).to(p.device), p, torch.zeros_like(p))
    if fixed.any():
        rows = torch.from_numpy(fixed).to(p.device)[:, None]
        full = np.zeros((len(fixed), 5))
        full[fixed] = values
        out = torch.where(rows, torch.from_numpy(full).to(p), out)
    return out
