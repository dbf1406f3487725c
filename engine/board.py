"""Facts of a bare board array: how many checkers a side has, whether it is legal, pips, contact.

The lowest floor of the engine: `engine.position`, `engine.formats` and `engine.svg` all
read boards through these, and none of them imports another to do so.
"""

from __future__ import annotations

import numpy as np

CHECKERS = 15


def validate_board(board: np.ndarray, waiting: tuple[int, int] = (0, 0)) -> None:
    """Raise ValueError naming what is wrong with a (2, 25) board, if anything."""
    if board.shape != (2, 25):
        raise ValueError(f"a board has shape (2, 25), got {board.shape}")
    if board.min() < 0:
        raise ValueError("a board cannot hold a negative number of checkers")
    for row, side in ((1, "the side on roll"), (0, "the side not on roll")):
        total = int(board[row].sum()) + waiting[row]
        if total > CHECKERS:
            raise ValueError(f"{side} has {total} checkers; at most {CHECKERS} are allowed")
    clash = (board[1, :24] > 0) & (board[0, 23::-1] > 0)
    if clash.any():
        point = int(np.flatnonzero(clash)[0]) + 1
        raise ValueError(f"point {point} (from the side on roll) is held by both sides")


def pips(board: np.ndarray) -> np.ndarray:
    """Pip counts `[side not on roll, side on roll]` of a board, or of a batch of them."""
    weights = np.arange(1, 26, dtype=np.int64)
    counts: np.ndarray = (board.astype(np.int64) * weights).sum(axis=-1)
    return counts


def has_contact(board: np.ndarray) -> np.ndarray | bool:
    """Whether any checker must still pass an opposing one (batched over leading axes)."""
    b = np.asarray(board)
    # My rearmost checker (highest point, the bar counting as 25) against the opponent's
    # rearmost checker seen from my side (25 - its highest point, the bar as 0).
    mine = b[..., 1, :] > 0
    theirs = b[..., 0, :] > 0
    my_back = np.where(mine.any(axis=-1), 24 - np.argmax(mine[..., ::-1], axis=-1), -1)
    their_back = np.where(theirs.any(axis=-1), 24 - np.argmax(theirs[..., ::-1], axis=-1), -1)
    # Their index j is my point 24 - j; my rearmost checker (my point i + 1) still has to
    # pass their rearmost one while i + 1 > 24 - j.
    contact = (my_back >= 0) & (their_back >= 0) & (my_back + their_back > 23)
    return bool(contact) if contact.ndim == 0 else contact
