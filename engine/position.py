"""The position value: both sides' checkers, seen from the side on roll.

A `Position` wraps an int8 (2, 25) board in GNU Backgammon's layout: row 1 the side on
roll, row 0 the other side, each from its own view (index 0..23 its points 1..24, index
24 its bar); checkers not on the board are borne off, except in acey-deucey, where
`waiting` counts each side's checkers that have not yet entered.
"""

from __future__ import annotations

import numpy as np

from engine.board import CHECKERS, has_contact, pips, validate_board
from engine.classify import NAMES, PositionClass, classify_boards
from engine.formats import board_from_position_id
from engine.formats import position_id as board_position_id
from engine.variants import get_variant

__all__ = ["CHECKERS", "Position", "PositionClass", "has_contact", "pips", "validate_board"]


class Position:
    """An immutable position, from the view of the side on roll.

    >>> p = Position.start()
    >>> p.position_id()
    '4HPwATDgc/ABMA'
    >>> p.pips()
    (167, 167)
    >>> p.flip() == p
    True
    """

    __slots__ = ("_board", "_key", "_waiting")

    def __init__(self, board: np.ndarray, waiting: tuple[int, int] = (0, 0)) -> None:
        arr = np.array(board, dtype=np.int8, copy=True)
        waiting = (int(waiting[0]), int(waiting[1]))
        validate_board(arr, waiting)
        if min(waiting) < 0:
            raise ValueError("waiting checker counts cannot be negative")
        arr.setflags(write=False)
        self._board = arr
        self._waiting = waiting
        self._key = arr.tobytes() + bytes(waiting)

    @classmethod
    def start(cls, variant: str = "standard") -> Position:
        """The starting position of a variant, the first player on roll."""
        v = get_variant(variant)
        board = np.zeros((2, 25), np.int8)
        for point, count in v.layout:
            board[:, point - 1] = count
        waiting = (CHECKERS, CHECKERS) if v.enter_from_start else (0, 0)
        return cls(board, waiting)

    @classmethod
    def from_id(cls, position_id: str) -> Position:
        """Decode a GNU Backgammon Position ID.

        >>> Position.from_id('4HPwATDgc/ABMA') == Position.start()
        True
        """
        return cls(board_from_position_id(position_id))

    def position_id(self) -> str:
        """The GNU Backgammon Position ID (waiting acey-deucey checkers count as off)."""
        return board_position_id(self._board)

    @property
    def board(self) -> np.ndarray:
        """The read-only int8 (2, 25) board: row 1 on roll, row 0 not on roll."""
        return self._board

    @property
    def waiting(self) -> tuple[int, int]:
        """Acey-deucey checkers not yet entered: `(side not on roll, side on roll)`."""
        return self._waiting

    def borne_off(self) -> tuple[int, int]:
        """Checkers borne off: `(side on roll, side not on roll)`."""
        on = CHECKERS - int(self._board[1].sum()) - self._waiting[1]
        off = CHECKERS - int(self._board[0].sum()) - self._waiting[0]
        return on, off

    def flip(self) -> Position:
        """The same position seen by the other side (now on roll)."""
        return Position(self._board[::-1], self._waiting[::-1])

    def pips(self) -> tuple[int, int]:
        """Pip counts `(side on roll, side not on roll)`; waiting checkers count 25."""
        p = pips(self._board)
        return int(p[1]) + 25 * self._waiting[1], int(p[0]) + 25 * self._waiting[0]

    def classify(self) -> PositionClass:
        """GNU Backgammon's position class (`engine.classify`): `over` (a side has borne
        off all), `bearoff` (no contact, every checker home: the bear-off databases cover
        it), `race` (no contact), `crashed` or `contact`. Acey-deucey checkers still
        waiting to enter make it `contact`."""
        on, off = self.borne_off()
        if CHECKERS in (on, off):
            return "over"
        if any(self._waiting):
            return "contact"
        return NAMES[int(classify_boards(self._board))]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def _repr_svg_(self) -> str:
        """The board as an SVG picture (`engine.svg`), which notebooks draw."""
        from engine.svg import board_svg

        return board_svg(self._board, waiting=self._waiting)

    def __repr__(self) -> str:
        if any(self._waiting):
            return f"Position(board={self._board.tolist()}, waiting={self._waiting})"
        return f"Position.from_id({self.position_id()!r})"
