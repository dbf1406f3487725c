"""Games: dice from an injected generator, the opening roll, turns, the end and its value.

`play_game` records one game that replays exactly from its seed; `random_selfplay`
advances many games in lockstep, a turn of each in one call of the generator's kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.play import Play, legal_plays
from engine.position import CHECKERS, Position
from engine.variants import get_variant

#: Chooses one of the legal plays (never empty) for the position and roll.
Chooser = Callable[[Position, tuple[int, int], Sequence[Play]], Play]


def roll_dice(rng: np.random.Generator, n: int) -> np.ndarray:
    """`n` rolls of two dice, int64 (n, 2)."""
    return rng.integers(1, 7, size=(n, 2))


def opening_roll(rng: np.random.Generator) -> tuple[int, tuple[int, int]]:
    """Each side rolls one die, ties rolled again: `(starter, (its die, the other's))`.

    The starter is 0 when the first die is higher; it plays both numbers.
    """
    while True:
        a, b = (int(x) for x in rng.integers(1, 7, size=2))
        if a != b:
            return (0, (a, b)) if a > b else (1, (b, a))


def game_value(afterstates: np.ndarray) -> np.ndarray:
    """What the mover (row 1) has won: 0 not over, 1 single, 2 gammon, 3 backgammon.

    >>> import numpy as np
    >>> b = np.zeros((1, 2, 25), np.int8); b[0, 0, 20] = 15
    >>> game_value(b).tolist()
    [3]
    """
    a = np.asarray(afterstates)
    won = a[..., 1, :].sum(axis=-1) == 0
    opp_on_board = a[..., 0, :].sum(axis=-1)
    gammon = opp_on_board == CHECKERS
    # The winner's home board is the loser's points 19..24 (indices 18..23), or the bar.
    backgammon = gammon & (a[..., 0, 18:].sum(axis=-1) > 0)
    value = np.where(won, 1 + gammon.astype(np.int8) + backgammon.astype(np.int8), 0)
    return value.astype(np.int8)


@dataclass(frozen=True)
class Turn:
    """One turn: who rolled (0 or 1), the dice, and the play (None when none was legal)."""

    player: int
    dice: tuple[int, int]
    play: Play | None


@dataclass
class GameRecord:
    """A finished game: its turns and result, enough to replay it move by move."""

    variant: str
    seed: int | None
    turns: list[Turn] = field(default_factory=list)
    winner: int = -1
    value: int = 0

    def positions(self) -> list[Position]:
        """The position before each turn (from the roller's view), then the final one."""
        pos = Position.start(self.variant)
        out = [pos]
        for turn in self.turns:
            after = pos if turn.play is None else turn.play.position
            pos = after.flip()
            out.append(pos)
        return out


def play_game(
    choosers: tuple[Chooser, Chooser],
    rng: np.random.Generator,
    variant: str = "standard",
    seed: int | None = None,
    max_turns: int = 10_000,
) -> GameRecord:
    """Play one game between two choosers with dice from `rng`; `seed` is only recorded."""
    if get_variant(variant).enter_from_start:
        raise ValueError(f"play_game does not play {variant!r}; use engine.acey_deucey")
    record = GameRecord(variant=variant, seed=seed)
    player, dice = opening_roll(rng)
    pos = Position.start(variant)
    for _ in range(max_turns):
        plays = legal_plays(pos, dice)
        play = choosers[player](pos, dice, plays) if plays else None
        record.turns.append(Turn(player, dice, play))
        after = pos if play is None else play.position
        value = int(game_value(after.board[None])[0])
        if value:
            record.winner, record.value = player, value
            return record
        pos, player = after.flip(), 1 - player
        d1, d2 = roll_dice(rng, 1)[0]
        dice = int(d1), int(d2)
    raise RuntimeError(f"game did not end within {max_turns} turns")


def random_chooser(rng: np.random.Generator) -> Chooser:
    """A chooser picking uniformly among the distinct legal plays."""
    return lambda pos, dice, plays: plays[int(rng.integers(len(plays)))]


@dataclass(frozen=True)
class SelfPlayResult:
    """Outcome of a batch of games: winner (0 = the side that opened), value, plies."""

    winner: np.ndarray
    value: np.ndarray
    plies: np.ndarray


def random_selfplay(
    n_games: int, rng: np.random.Generator, variant: str = "standard", max_plies: int = 5000
) -> SelfPlayResult:
    """Play `n_games` games in lockstep, each turn uniform over the distinct resulting positions."""
    if get_variant(variant).enter_from_start:
        raise ValueError(f"random_selfplay does not play {variant!r}")
    from engine.movegen import random_turns

    boards = np.repeat(Position.start(variant).board[None], n_games, axis=0)
    winner = np.full(n_games, -1, np.int8)
    value = np.zeros(n_games, np.int8)
    plies = np.zeros(n_games, np.int32)
    # The opener plays an opening roll (never a double); "side" counts from the opener.
    dice = rng.integers(1, 7, size=(n_games, 2))
    while (tie := dice[:, 0] == dice[:, 1]).any():
        dice[tie] = rng.integers(1, 7, size=(int(tie.sum()), 2))
    active = np.arange(n_games)
    for ply in range(max_plies):
        val = random_turns(boards, active, dice, rng.random(active.size))
        done = val > 0
        ended = active[done]
        winner[ended] = ply % 2
        value[ended] = val[done]
        plies[ended] = ply + 1
        active = active[~done]
        if active.size == 0:
            break
        dice = roll_dice(rng, active.size)
    return SelfPlayResult(winner, value, plies)
