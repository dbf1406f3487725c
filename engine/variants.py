"""Named starting layouts and the rule flags that go with them.

Each side's layout is given from its own view as `{point: checkers}`; both sides start
alike. `acey-deucey` starts with every checker waiting off the board.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """A starting layout plus the rule flags that distinguish it."""

    name: str
    layout: tuple[tuple[int, int], ...]
    description: str
    #: Checkers start off the board, waiting to enter (acey-deucey).
    enter_from_start: bool = False
    #: The 1-2 roll earns a chosen double and another roll (acey-deucey).
    acey_deucey_bonus: bool = False


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "standard",
            ((24, 2), (13, 5), (8, 3), (6, 5)),
            "Backgammon: 2 on the 24-point, 5 on 13, 3 on 8, 5 on 6.",
        ),
        Variant(
            "nackgammon",
            ((24, 2), (23, 2), (13, 4), (8, 3), (6, 4)),
            "Nack Ballard's Nackgammon, as GNU Backgammon plays it: 2 on 24, 2 on 23, "
            "4 on 13, 3 on 8, 4 on 6.",
        ),
        Variant(
            "nackgammon-seed",
            ((24, 4), (23, 1), (13, 2), (8, 3), (6, 5)),
            "Nackgammon as the rule documents write it: 4 on 24, 1 on 23, 2 on 13, 3 on 8, 5 on 6.",
        ),
        Variant(
            "acey-deucey",
            (),
            "Acey-deucey: all 15 checkers start off the board and enter; the 1-2 roll "
            "plays 1 and 2, then a double of the player's choice, then rolls again.",
            enter_from_start=True,
            acey_deucey_bonus=True,
        ),
    )
}


def get_variant(name: str) -> Variant:
    """The variant called `name`, or a ValueError listing the known names."""
    try:
        return VARIANTS[name]
    except KeyError:
        known = ", ".join(VARIANTS)
        raise ValueError(f"unknown variant {name!r} (known: {known})") from None
