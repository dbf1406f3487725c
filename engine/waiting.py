"""Position strings for every variant: the word `start`, and acey-deucey's waiting checkers.

A POSITION on the command line is a Position ID, ``PositionID:MatchID`` or an XGID
(`engine.formats.parse_position`), and also:

- ``start``: the starting position of the variant asked for (acey-deucey: every checker
  of both sides waiting);
- any of those followed by ``@X,O``: acey-deucey's checkers still waiting to enter, X of
  the side on roll and O of the other side (the order `vrhcaby show` draws them in, X at
  the bottom). The Position ID (or XGID) holds the checkers on the board; those it does
  not show are waiting as the suffix says, the rest borne off. So the acey-deucey start is
  ``AAAAAAAAAAAAAA@15,15`` (an empty board, 15 waiting each), and
  ``4HPwATDgc/ABMA@0,0`` is a position with every checker entered.

Without the suffix an acey-deucey position has no waiting checkers (those an ID does not
show are borne off). No numba here: the command line's fast answers read positions too.

>>> pos, state = read_position("start", "acey-deucey")
>>> waiting_id(pos), state is None
('AAAAAAAAAAAAAA@15,15', True)
>>> read_position("AAAAAAAAAAAAAA@15,15", "acey-deucey")[0] == pos
True
>>> read_position("4HPwATDgc/ABMA@1,0", "standard")
Traceback (most recent call last):
...
ValueError: '4HPwATDgc/ABMA@1,0': waiting checkers @X,O need --variant acey-deucey
"""

from __future__ import annotations

import re

from engine.formats import MatchState, parse_position
from engine.position import CHECKERS, Position
from engine.variants import get_variant

START = "start"
"""The POSITION word for the variant's starting position."""

_SUFFIX = re.compile(r"^(?P<rest>.*)@(?P<x>[^,@]*),(?P<o>[^,@]*)$")


def split_waiting(text: str) -> tuple[str, tuple[int, int] | None]:
    """`text` without a trailing ``@X,O``, and (X, O): the waiting checkers of the side on
    roll and of the other side (None without a suffix); ValueError for a bad suffix."""
    s = text.strip()
    if "@" not in s:
        return s, None
    m = _SUFFIX.match(s)
    if m is None:
        raise ValueError(f"{text!r}: waiting checkers are written @X,O (like @15,15) at the end")
    counts = []
    for part in (m["x"], m["o"]):
        if not (part.isascii() and part.strip().isdigit()) or int(part) > CHECKERS:
            raise ValueError(
                f"{text!r}: waiting checkers @X,O are two counts 0..{CHECKERS}, got {part!r}"
            )
        counts.append(int(part))
    return m["rest"].strip(), (counts[0], counts[1])


def read_position(text: str, variant: str = "standard") -> tuple[Position, MatchState | None]:
    """The position a POSITION argument names in `variant`, and its match state (None
    unless a Match ID or XGID gives one); ValueError (one line) if it names none."""
    acey_deucey = get_variant(variant).enter_from_start
    if text.strip().lower() == START:
        return Position.start(variant), None
    rest, waiting = split_waiting(text)
    if waiting is not None and not acey_deucey:
        raise ValueError(f"{text!r}: waiting checkers @X,O need --variant acey-deucey")
    board, state = parse_position(rest)
    x, o = waiting or (0, 0)
    try:
        return Position(board, (o, x)), state
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None


def waiting_id(position: Position) -> str:
    """The acey-deucey position string ``PositionID@X,O`` (X waiting on roll, O not)."""
    off_roll, on_roll = position.waiting
    return f"{position.position_id()}@{on_roll},{off_roll}"
