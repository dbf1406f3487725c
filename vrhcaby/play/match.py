"""The course of a match: the score, the Crawford game and the end.

A match is played to `match_to` points between seats 0 and 1 (0: money play, which keeps
the points won and never ends by them). The game after either seat first reaches one
point short of the match is the Crawford game (no doubling); the games after it are
post-Crawford. The tournament's games and `vrhcaby play` keep their matches in a
`MatchScore`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MatchScore:
    """A match between seats 0 and 1: the points each has won, and whether the game now
    being played is the Crawford game."""

    match_to: int
    #: Points won by seats 0 and 1.
    score: list[int] = field(default_factory=lambda: [0, 0])
    #: The game being played is the Crawford game.
    crawford: bool = False
    #: The Crawford game has been played: later games are post-Crawford.
    crawford_done: bool = False

    @property
    def over(self) -> bool:
        """Whether a seat has won the match (never in money play: `match_to` 0)."""
        return bool(self.match_to) and max(self.score) >= self.match_to

    @property
    def winner(self) -> int:
        """The seat that won the match, -1 while it goes on."""
        if not self.over:
            return -1
        return 0 if self.score[0] >= self.match_to else 1

    def after_game(self, points: int, winner: int) -> None:
        """Score a game that seat `winner` won for `points` and, unless the match is
        over, go on to the next game."""
        self.add(points, winner)
        if not self.over:
            self.next_game()

    def add(self, points: int, winner: int) -> None:
        """Score a game that seat `winner` won for `points` (`crawford` still tells
        whether that game was the Crawford game)."""
        self.score[winner] += points

    def next_game(self) -> None:
        """The next game starts: it is the Crawford game if a seat has just come to one
        point short of the match."""
        if self.crawford:
            self.crawford_done = True
        self.crawford = not self.crawford_done and self.match_to - 1 in self.score
