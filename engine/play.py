"""A whole turn as a value, its notation both ways, and the legal plays of a roll.

Notation follows GNU Backgammon: steps sorted from the highest source point, the steps of
one checker joined (`24/13`, with a hit on the way shown as `13/7*/5`), equal moves
counted (`8/5(2) 6/5(2)`), `bar` and `off` for the bar and bearing off.
"""

from __future__ import annotations

import itertools
import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine import jit
from engine.plain import plays_of
from engine.position import Position
from engine.text import quoted

BAR = 25
OFF = 0


class InvalidPlayError(ValueError):
    """The text is not a play in backgammon notation at all."""


class IllegalPlayError(ValueError):
    """The text is a play, but not a legal one in this position with this roll."""


def check_dice(dice: tuple[int, int] | list[int] | np.ndarray) -> tuple[int, int]:
    """Two dice as ints in 1..6, or a ValueError naming the bad value: a pair of integers
    (numpy's included; not floats, not bools, not text, which `parse_dice` reads)."""
    if isinstance(dice, str | bytes) or not isinstance(dice, Iterable):
        raise ValueError(f"a roll is a pair of dice like (3, 1), got {_short(dice)}")
    values = list(dice)
    if len(values) != 2:
        raise ValueError(f"a roll is two dice, got {len(values)}")
    for d in values:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise ValueError(f"a die is an integer 1..6, got {_short(d)}")
        if not 1 <= int(d) <= 6:
            raise ValueError(f"a die shows 1..6, got {d}")
    return int(values[0]), int(values[1])


_DICE = re.compile(r"([1-6])[-, ]?([1-6])", re.ASCII)
DICE_SYNTAX = "two dice from 1 to 6, such as 31, 3-1, 3,1 or '3 1'"
"""The one way dice are written on the command line (`parse_dice`)."""


def parse_dice(text: str) -> tuple[int, int]:
    """A roll as the command line writes it: two ASCII digits 1..6, side by side or with
    one ``-``, ``,`` or space between them; spaces around are ignored. Anything else is a
    ValueError with the one message every command gives."""
    if not isinstance(text, str):
        raise ValueError(f"dice are text ({DICE_SYNTAX}), got {_short(text)}")
    m = _DICE.fullmatch(text.strip(" "))
    if not m:
        raise ValueError(f"dice {_short(text)}: write {DICE_SYNTAX}")
    return int(m[1]), int(m[2])


def _short(value: object) -> str:
    """`value` for an error message, its repr cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _point_text(point: int) -> str:
    return "bar" if point == BAR else "off" if point == OFF else str(point)


@dataclass(frozen=True)
class Play:
    """One turn: checker steps `(from, to)` in the order played, which of them hit, and
    the resulting position (the mover still on roll). Points are the mover's own: 25 is
    the bar, 0 is off.

    >>> plays = legal_plays(Position.start(), (3, 1))
    >>> str(plays[0]) in {str(p) for p in plays}
    True
    >>> str(Play.parse("8/5 6/5", Position.start(), (3, 1)))
    '8/5 6/5'
    """

    steps: tuple[tuple[int, int], ...]
    hits: tuple[bool, ...]
    position: Position

    def __str__(self) -> str:
        return format_steps(self.steps, self.hits)

    @classmethod
    def parse(cls, text: str, position: Position, dice: tuple[int, int] | list[int]) -> Play:
        """The legal play that `text` names, e.g. `24/18 13/11` or `bar/22 6/off`.

        Raises InvalidPlayError for text that is not notation and IllegalPlayError for
        a play this roll cannot make here.
        """
        if not isinstance(text, str):
            raise InvalidPlayError(f"a play is text like '24/18 13/11', got {_short(text)}")
        if not isinstance(position, Position):
            raise ValueError(f"Play.parse needs a Position, got {_short(position)}")
        segments = parse_notation(text)
        dice = check_dice(dice)
        mover = position.board[1].astype(np.int64)
        starred: set[int] = set()
        for chain, stars, count in segments:
            for _ in range(count):
                src = 24 if chain[0] == BAR else chain[0] - 1
                if mover[src] == 0:
                    where = "on the bar" if chain[0] == BAR else f"on point {chain[0]}"
                    raise IllegalPlayError(f"{quoted(text.strip())}: no checker left {where}")
                mover[src] -= 1
                if chain[-1] != OFF:
                    mover[chain[-1] - 1] += 1
            starred.update(stars)
        candidates = [
            p
            for p in legal_plays(position, dice)
            if np.array_equal(p.position.board[1], mover)
            and starred <= {to for (_, to), hit in zip(p.steps, p.hits, strict=True) if hit}
        ]
        if not candidates:
            raise IllegalPlayError(
                f"{quoted(text.strip())} is not a legal play for {dice[0]}-{dice[1]} here"
            )
        exact = [p for p in candidates if _hit_points(p) == starred] or candidates
        if len({p.position for p in exact}) > 1:
            raise InvalidPlayError(
                f"{quoted(text.strip())} is ambiguous: write the intermediate points, "
                f"e.g. {' or '.join(str(p) for p in exact)}"
            )
        return exact[0]


def _hit_points(play: Play) -> set[int]:
    return {to for (_, to), hit in zip(play.steps, play.hits, strict=True) if hit}


def format_steps(steps: tuple[tuple[int, int], ...], hits: tuple[bool, ...]) -> str:
    """GNU Backgammon's notation for a sequence of steps.

    Steps are ordered from the highest source; the steps of one checker are joined, keeping
    an intermediate point only where it hit (`13/7*/5`); equal moves are counted (`(2)`);
    each point where a blot was hit is starred once.
    """
    hit_points = {dst for (_, dst), hit in zip(steps, hits, strict=True) if hit}
    chains = [[src, dst] for src, dst in sorted(steps, key=lambda s: (-s[0], -s[1]))]
    alive = [True] * len(chains)
    for i, chain in enumerate(chains):
        for j in range(i + 1, len(chains)):
            if alive[i] and alive[j] and chain[-1] == chains[j][0]:
                if chain[-1] in hit_points:
                    chain.append(chains[j][-1])
                else:
                    chain[-1] = chains[j][-1]
                alive[j] = False
    counted: list[tuple[list[int], int]] = []
    for chain, live in zip(chains, alive, strict=True):
        if not live:
            continue
        for k, (other, n) in enumerate(counted):
            if other == chain:
                counted[k] = (other, n + 1)
                break
        else:
            counted.append((chain, 1))
    starred: set[int] = set()
    texts = []
    for chain, n in counted:
        text = _point_text(chain[0])
        for point in chain[1:-1]:
            text += f"/{_point_text(point)}*"
            starred.add(point)
        last = chain[-1]
        text += "/" + _point_text(last)
        if last in hit_points and last not in starred:
            text += "*"
            starred.add(last)
        texts.append(text if n == 1 else f"{text}({n})")
    return " ".join(texts)


_TOKEN = re.compile(r"^(?P<chain>[^()]+?)(?:\((?P<count>\d+)\))?$", re.ASCII)
_POINT = re.compile(r"^(?P<point>\d+|bar|b|off|o)(?P<star>\*?)$", re.ASCII)


def parse_notation(text: str) -> list[tuple[list[int], set[int], int]]:
    """Split notation into `(points, hit points, count)` per token; InvalidPlayError if
    it is not notation. Points are the mover's: 25 the bar, 0 off."""
    tokens = text.lower().replace(",", " ").split()
    if not tokens:
        raise InvalidPlayError("empty play: write moves like '24/18 13/11'")
    segments = []
    for token in tokens:
        m = _TOKEN.match(token)
        if not m:
            raise InvalidPlayError(
                f"cannot read {quoted(token)}: write moves like '13/7' or '8/5(2)'"
            )
        count = int(m["count"]) if m["count"] else 1
        if not 1 <= count <= 4:
            raise InvalidPlayError(f"{quoted(token)}: a move is repeated 1 to 4 times, not {count}")
        parts = re.split(r"[/-]", m["chain"])
        if len(parts) < 2:
            raise InvalidPlayError(f"{quoted(token)}: a move needs a source and a destination")
        points: list[int] = []
        stars: set[int] = set()
        for part in parts:
            pm = _POINT.match(part)
            if not pm:
                raise InvalidPlayError(
                    f"{quoted(token)}: {quoted(part)} is not a point, 'bar' or 'off'"
                )
            name = pm["point"]
            point = BAR if name in ("bar", "b") else OFF if name in ("off", "o") else int(name)
            if not 0 <= point <= 25:
                raise InvalidPlayError(f"{quoted(token)}: there is no point {point}")
            if pm["star"]:
                if point in (OFF, BAR):
                    raise InvalidPlayError(
                        f"{quoted(token)}: nothing can be hit {_point_text(point)}"
                    )
                stars.add(point)
            points.append(point)
        if points[0] == OFF:
            raise InvalidPlayError(f"{quoted(token)}: a move cannot start from 'off'")
        if any(p == BAR for p in points[1:]) or any(p == OFF for p in points[:-1]):
            raise InvalidPlayError(f"{quoted(token)}: 'bar' comes first and 'off' last")
        if any(a <= b for a, b in itertools.pairwise(points)):
            raise InvalidPlayError(f"{quoted(token)}: checkers move from higher to lower points")
        segments.append((points, stars, count))
    return segments


def legal_plays(position: Position, dice: tuple[int, int] | list[int]) -> list[Play]:
    """Every distinct legal play (one per resulting position); empty when none is legal.

    >>> len(legal_plays(Position.start(), (3, 1)))
    16
    >>> len(legal_plays(Position.start(), (6, 6)))
    11
    """
    if any(position.waiting):
        raise ValueError("use engine.acey_deucey for positions with waiting checkers")
    dice = check_dice(dice)
    if not jit.compiled():
        # No compiled kernel is loaded yet: one position does not pay for loading numba.
        return [
            Play(steps=steps, hits=hits, position=Position(board))
            for board, steps, hits in plays_of(position.board, dice)
        ]
    from engine.movegen import batch_afterstates_with_steps

    after, _, steps = batch_afterstates_with_steps(
        position.board[None], np.array([dice], dtype=np.int64)
    )
    plays = []
    for board, path in zip(after, steps, strict=True):
        used = path[path[:, 0] > 0]
        plays.append(
            Play(
                steps=tuple((int(a), int(b)) for a, b, _ in used),
                hits=tuple(bool(h) for _, _, h in used),
                position=Position(board),
            )
        )
    return plays
