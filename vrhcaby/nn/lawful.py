"""Outcome probabilities that never contradict the rules (`obey_rules`).

A network's five outputs (win, win gammon, win backgammon, lose gammon, lose backgammon,
for the side that just moved, row 1 of the afterstate) are consistent by construction
(backgammons <= gammons <= wins, `vrhcaby.nn.net.joint`), but nothing stops them from
giving a chance to what the rules rule out. `obey_rules` sets:

- no gammon (nor backgammon) loss once the mover has borne off a checker, and no gammon
  win once the side to roll has;
- no backgammon for a side with no checker in the other's home board or on the bar when
  there is no contact any more (its checkers only move away from there);
- a finished game (a side with no checker left) to its result;
- a bear-off (`engine.classify`: every checker home) to the databases' values
  (`vrhcaby.nn.bearoff_db`): the exact two-sided win probability, no gammons, where both
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
from vrhcaby.base.jit import in_numpy, lazy_jit
from vrhcaby.equity.outcomes import LOSE_BACKGAMMON, LOSE_GAMMON, WIN_BACKGAMMON, WIN_GAMMON


def _facts(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per afterstate (N, 2, 25 or 26) int8: checkers on the board (N, 2) [to roll, mover]
    (waiting ones too); whether any is where a loser is backgammoned (N, 2): the winner's
    home board (its own points 19..24, indices 18..23) or the bar (24); and the class
    (`engine.classify`; `CONTACT` for every acey-deucey board)."""
    on_board, back = (_side_facts_numpy if in_numpy(len(b)) else _side_facts)(b)
    plain = b.shape[2] == 25
    classes = classify_boards(b) if plain else np.full(len(b), CONTACT, np.int8)
    return on_board, back, classes


def _allowed(on_board: np.ndarray, back: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Which of the five outputs the rules leave possible, bool (N, 5)."""
    allowed = np.ones((len(classes), 5), bool)
    allowed[:, [LOSE_GAMMON, LOSE_BACKGAMMON]] &= (on_board[:, 1] >= 15)[:, None]
    allowed[:, [WIN_GAMMON, WIN_BACKGAMMON]] &= (on_board[:, 0] >= 15)[:, None]
    race = (classes != CONTACT) & (classes != CRASHED)
    allowed[:, LOSE_BACKGAMMON] &= ~race | back[:, 1]
    allowed[:, WIN_BACKGAMMON] &= ~race | back[:, 0]
    return allowed


@lazy_jit
def _zero_impossible(p, on_board, back, classes):  # pragma: no cover - numba
    """`p *= _allowed(on_board, back, classes)`, in place, in one pass."""
    for r in range(p.shape[0]):
        race = classes[r] != CONTACT and classes[r] != CRASHED
        if on_board[r, 1] < 15 or (race and not back[r, 1]):
            p[r, LOSE_BACKGAMMON] = 0
        if on_board[r, 1] < 15:
            p[r, LOSE_GAMMON] = 0
        if on_board[r, 0] < 15 or (race and not back[r, 0]):
            p[r, WIN_BACKGAMMON] = 0
        if on_board[r, 0] < 15:
            p[r, WIN_GAMMON] = 0


def _fixed(
    b: np.ndarray, on_board: np.ndarray, classes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The rows (int) whose outputs the rules or the databases decide, and those outputs
    (float64): finished games their result, bear-offs the databases' values."""
    done = (on_board == 0).any(axis=1)
    bear = ((classes == BEAROFF1) | (classes == BEAROFF2)) & ~done
    rows = np.flatnonzero(done | bear)
    values = np.zeros((len(rows), 5))
    if not len(rows):
        return rows, values
    ended = done[rows]
    if ended.any():
        over = b[rows[ended]]
        won, lost = game_value(over), game_value(over[:, ::-1])  # points won, or lost
        values[ended] = np.stack([won > 0, won >= 2, won >= 3, lost >= 2, lost >= 3], axis=1)
    if (~ended).any():
        from vrhcaby.nn.bearoff_db import database  # its tables are read on first need only

        values[~ended] = database().probabilities(b[rows[~ended]])
    return rows, values


def rule_masks(afterstates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the rules allow each afterstate (N, 2, 25 or 26), the mover in row 1:
    `allowed` bool (N, 5), which outputs may be non-zero; `rows` int, those whose
    outputs the rules or the databases decide; and their values float64 (len(rows), 5)."""
    b = np.ascontiguousarray(afterstates, dtype=np.int8)
    on_board, back, classes = _facts(b)
    return (_allowed(on_board, back, classes), *_fixed(b, on_board, classes))


def _side_facts_numpy(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_side_facts` in numpy, for small batches."""
    on_board: np.ndarray = b.sum(axis=2, dtype=np.int16)
    back = np.asarray(b[:, :, 18:25].any(axis=2))  # numpy types `any` of 1-D as a scalar
    return on_board, back


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
    b = np.ascontiguousarray(afterstates, dtype=np.int8)
    on_board, back, classes = _facts(b)
    rows, values = _fixed(b, on_board, classes)
    if isinstance(p, np.ndarray):
        if in_numpy(len(b)):
            out = np.where(_allowed(on_board, back, classes), p, 0).astype(p.dtype, copy=False)
        else:
            out = np.array(p, copy=True)
            _zero_impossible(out, on_board, back, classes)
        out[rows] = values
        return out
    import torch

    allowed = torch.from_numpy(_allowed(on_board, back, classes)).to(p.device)
    obeyed = torch.where(allowed, p, torch.zeros_like(p))
    if len(rows):
        fixed = np.zeros(len(b), bool)
        fixed[rows] = True
        full = np.zeros((len(b), 5))
        full[rows] = values
        obeyed = torch.where(
            torch.from_numpy(fixed).to(p.device)[:, None], torch.from_numpy(full).to(p), obeyed
        )
    return obeyed
