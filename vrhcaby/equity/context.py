"""The game context: the cube and the match, from the view of the side asked.

Every decision (an agent's double, take and resignation; a hint; a rollout's cube) is
taken in a `GameContext`; `MONEY` is money play with a centred cube. Whoever tracks a
game by seat (a tournament, `vrhcaby play`, a Match ID, a FIBS board) makes the context of
one side with `GameContext.of_side`, and `money_rule` is the one place that says where
the Jacoby rule and beavers exist: money play with the cube in play.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

import engine
from engine.text import ascii_int
from vrhcaby.equity import met

CubeOwner = Literal["centre", "me", "opponent"]
#: The cube's owner seen by the other side.
_FLIPPED: dict[CubeOwner, CubeOwner] = {"centre": "centre", "me": "opponent", "opponent": "me"}


def money_rule(rule: bool, *, cube_enabled: bool = True, match_to: int = 0) -> bool:
    """Whether a money-play rule that is switched on (the Jacoby rule, beavers) is in
    force: only in money play with the cube in play (without a cube, or in a match,
    gammons count and no one is doubled)."""
    return rule and cube_enabled and not match_to


@dataclass(frozen=True)
class MoneyRules:
    """The rules of money play in force: GNU Backgammon's defaults, both on."""

    #: Gammons and backgammons count single while the cube has not been turned.
    jacoby: bool = True
    #: A side doubled may beaver: take and redouble at once, keeping the cube.
    beavers: bool = True

    def describe(self) -> str:
        """The rules in words, for each output's header line."""
        return ", ".join(
            (
                "Jacoby rule" if self.jacoby else "no Jacoby rule",
                "beavers allowed" if self.beavers else "no beavers",
            )
        )


def money_rules(
    args: object, state: engine.MatchState | None = None, *, from_xgid: bool = False
) -> MoneyRules:
    """The money rules of a command or request: its options `jacoby` and `beavers`
    where given (an `argparse.Namespace`), else the position's (a Match ID's Jacoby bit;
    an XGID's Jacoby and beaver bits), else GNU Backgammon's defaults."""
    jacoby = getattr(args, "jacoby", None)
    beavers = getattr(args, "beavers", None)
    if jacoby is None:
        jacoby = state.jacoby if state is not None else True
    if beavers is None:
        beavers = state.beavers if state is not None and from_xgid else True
    return MoneyRules(jacoby=jacoby, beavers=beavers)


@dataclass(frozen=True)
class GameContext:
    """What an agent knows about the cube and the match, from the view of the side asked."""

    #: The cube's value (1 while it has never been turned).
    cube_value: int = 1
    #: Who may double next: the centre (either side) or the side that owns the cube.
    cube_owner: CubeOwner = "centre"
    #: Whether the cube is in play at all (`--no-cube` turns it off).
    cube_enabled: bool = True
    #: The highest cube value allowed.
    max_cube: int = 64
    #: Match length in points; 0 for money play.
    match_to: int = 0
    #: Points already won in the match: (the side asked, its opponent).
    score: tuple[int, int] = (0, 0)
    #: Whether this game is the Crawford game (no doubling at all).
    crawford: bool = False
    #: Money play only: gammons count single while the cube has never been turned.
    jacoby: bool = False
    #: Money play only: a side doubled may beaver (take and redouble at once, keeping
    #: the cube), so a double is judged against that answer.
    beavers: bool = False

    @classmethod
    def of_side(
        cls,
        side: int,
        *,
        cube_value: int = 1,
        cube_owner: int = -1,
        score: tuple[int, int] = (0, 0),
        cube_enabled: bool = True,
        match_to: int = 0,
        crawford: bool = False,
        jacoby: bool = False,
        beavers: bool = False,
        max_cube: int = 64,
    ) -> GameContext:
        """The context of seat `side` (0 or 1) of a game told by seat: `cube_owner` the
        seat that owns the cube (-1 centred), `score` the points of seats 0 and 1. The
        Jacoby rule and beavers are kept only where they are in force (`money_rule`)."""
        owner: CubeOwner = (
            "centre" if cube_owner < 0 else "me" if cube_owner == side else "opponent"
        )
        return cls(
            cube_value=cube_value,
            cube_owner=owner,
            cube_enabled=cube_enabled,
            max_cube=max_cube,
            match_to=match_to,
            score=(score[side], score[1 - side]),
            crawford=crawford,
            jacoby=money_rule(jacoby, cube_enabled=cube_enabled, match_to=match_to),
            beavers=money_rule(beavers, cube_enabled=cube_enabled, match_to=match_to),
        )

    def game_points(self, value: int) -> int:
        """The points a game won by `value` (1 single, 2 gammon, 3 backgammon) scores on
        this cube: under the Jacoby rule a gammon or backgammon on a centred cube counts
        single."""
        counted = 1 if self.jacoby and self.cube_owner == "centre" else value
        return counted * self.cube_value

    def flip(self) -> GameContext:
        """The same context seen by the other side."""
        owner = _FLIPPED[self.cube_owner]
        return replace(self, cube_owner=owner, score=(self.score[1], self.score[0]))

    def may_double(self) -> bool:
        """Whether the side asked may legally and usefully offer a double now."""
        if not self.cube_enabled or self.crawford or self.cube_owner == "opponent":
            return False
        if self.cube_value * 2 > self.max_cube:
            return False
        if self.match_to:
            away = self.match_to - self.score[0]
            # Needing one point, or already winning the match with the current cube,
            # a double gains nothing (the rules say: offer no such double).
            if away <= 1 or self.cube_value >= away:
                return False
        return True

    def doubled(self) -> GameContext:
        """The context after the side asked doubles and is taken: the cube at twice its
        value, owned by the opponent (the cube analysis's double/take)."""
        return replace(self, cube_value=2 * self.cube_value, cube_owner="opponent")

    def away(self) -> tuple[int, int]:
        """Match play: the points (the side asked, its opponent) still needed to win."""
        return self.match_to - self.score[0], self.match_to - self.score[1]


MONEY = GameContext()


def parse_score(text: str) -> tuple[int, int]:
    """``A-B`` -> (A, B): points won by the side on roll and by its opponent."""
    parts = text.strip().split("-")
    try:
        a, b = (ascii_int(x) for x in parts)
    except ValueError:
        raise ValueError(f"a score is two numbers like 2-4, got {text!r}") from None
    if a < 0 or b < 0:
        raise ValueError(f"scores cannot be negative, got {text!r}")
    return a, b


def check_match_length(match_to: int, *, money: bool = True, what: str = "--match-to") -> None:
    """The one rule for a match's length, in every verb (hint, cube, eval, rollout, play,
    tournament, external) and for every agent, cubeless ones too: 1 to 25 points, the
    match equity table's length (Kazaross-XG2), where the cube decisions and match
    equities are defined; with `money`, 0 for money play. ValueError naming `what`."""
    longest = met.KAZAROSS_XG2.length
    if (money and match_to == 0) or 1 <= match_to <= longest:
        return
    raise ValueError(
        f"{what} {match_to}: a match is 1 to {longest} points (the match equity table's "
        f"length){', or 0 for money play' if money else ''}"
    )


def _check_match(match_to: int, score: tuple[int, int], crawford: bool, what: str) -> None:
    check_match_length(match_to, money=False, what=what)
    if max(score) >= match_to:
        raise ValueError(
            f"impossible score {score[0]}-{score[1]} in a {match_to}-point match "
            "(each score is below the match length)"
        )
    if crawford and match_to - 1 not in score:
        raise ValueError(
            f"the Crawford game needs a side at {match_to - 1} points, got score "
            f"{score[0]}-{score[1]}"
        )


def context_for(
    board: np.ndarray,
    state: engine.MatchState | None = None,
    *,
    match_to: int | None = None,
    score: tuple[int, int] | None = None,
    crawford: bool = False,
    jacoby: bool = False,
    max_cube: int = 64,
) -> GameContext:
    """The context of the side on roll (row 1 of `board`) from a Match ID/XGID state, or
    from a match length and score (the side on roll's first), or money play.

    ValueError (one line) for an impossible score, a match length outside
    `check_match_length`, a cube above `max_cube` (a power of two up to 2**15, what a
    Match ID can hold), a state the board contradicts (a finished game, a game not
    being played), or both sources at once. The state itself is sound already
    (`engine.MatchState` refuses a cube of 1 with an owner, a centred cube above 1).
    """
    if max_cube < 1 or max_cube > 1 << 15 or max_cube & (max_cube - 1):
        raise ValueError(f"--max-cube is a power of two from 1 to 32768, got {max_cube}")
    if state is not None and (match_to is not None or score is not None):
        raise ValueError(
            "give the match either in the position (Match ID/XGID) or as "
            "--match-to/--score, not both"
        )
    off = engine.CHECKERS - np.asarray(board).sum(axis=1)
    if off.max() >= engine.CHECKERS:
        raise ValueError("the position is a finished game (a side has borne off all checkers)")
    if state is None:
        if match_to is not None:
            check_match_length(match_to)
        if not match_to and score is not None:
            raise ValueError("--score needs --match-to")
        if not match_to:  # money play (--match-to 0 too, as in every verb)
            if crawford:
                raise ValueError("the Crawford rule is for match play (give --match-to)")
            return GameContext.of_side(0, jacoby=jacoby, max_cube=max_cube)
        score = score or (0, 0)
        _check_match(match_to, score, crawford, "--match-to")
        return GameContext.of_side(
            0, match_to=match_to, score=score, crawford=crawford, max_cube=max_cube
        )
    if state.game_state != engine.GameState.PLAYING:
        raise ValueError(
            f"the Match ID says the game is {state.game_state.name.lower()}, not being played"
        )
    if state.cube_value > max_cube:
        raise ValueError(f"the cube {state.cube_value} is above the cube limit {max_cube}")
    ctx = GameContext.of_side(
        state.dice_owner,
        cube_value=state.cube_value,
        cube_owner=state.cube_owner,
        score=state.score,
        match_to=state.match_length,
        crawford=state.crawford,
        jacoby=state.jacoby,
        max_cube=max_cube,
    )
    if state.match_length:
        _check_match(state.match_length, ctx.score, state.crawford, "the match length")
    return ctx
