"""The episodes of a self-play round: every game's states, padded to the longest game."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Episodes:
    """The states of a round of finished games, padded to the longest game.

    In backgammon a state is an afterstate and a step one move; in the six-dice game a
    state is a score sheet at the start of a turn and a step one turn (`vrhcaby.sixdice.learner`).
    """

    states: np.ndarray
    """(T, G, ...): state t of game g; padding after the end. Backgammon: int8 afterstates
    (T, G, 2, C), mover in row 1, C = 25, or 26 for acey-deucey (column 25 the waiting
    checkers)."""
    movers: np.ndarray
    """int8 (T, G): which side (0 = the opener) made each state. Two states in a row by
    the same side mean the first earned another roll (acey-deucey); a solitaire game has
    one side only."""
    lengths: np.ndarray
    """int64 (G,): states per game, the last being the finished position."""
    values: np.ndarray
    """(G,): the result of each game, in the last mover's view: the points it won
    (backgammon: 1 single, 2 gammon, 3 backgammon), or the points it still holds at the end
    (six-dice: the unspent bank). The game turns it into the value of the last state."""
    evaluated: int
    """States evaluated by the network while playing."""
    rewards: np.ndarray | None = None
    """float (T, G, K): points earned by the step from state t, in its mover's view, in the
    units of the network's K outputs (None: no rewards before the end)."""
    backups: np.ndarray | None = None
    """float (T, G, K): the expected one-step backup of each state, computed during play
    (the expectation over the dice of the reward plus the next state's value); None: the
    learner backs up the sampled next state's value."""
    truncated: np.ndarray | None = None
    """bool (G,): games cut short after their last state, which is then no end: it is
    trained on its one-step backup (needs `backups`). None: every game finished."""

    @property
    def plies(self) -> int:
        """States of the finished games."""
        if self.truncated is None:
            return int(self.lengths.sum())
        return int(self.lengths[~self.truncated].sum())

    def select(self, games: np.ndarray) -> Episodes:
        """The episodes of the given game indices only, trimmed to their longest game."""
        t = int(self.lengths[games].max())
        return Episodes(
            states=self.states[:t, games],
            movers=self.movers[:t, games],
            lengths=self.lengths[games],
            values=self.values[games],
            evaluated=0,
            rewards=None if self.rewards is None else self.rewards[:t, games],
            backups=None if self.backups is None else self.backups[:t, games],
            truncated=None if self.truncated is None else self.truncated[games],
        )

    def trained(self) -> np.ndarray:
        """bool (T, G): the states to learn from: all but each finished game's last, whose
        value is the known result."""
        ends = self.lengths - 1
        if self.truncated is not None:
            ends = ends + self.truncated
        return np.arange(self.movers.shape[0])[:, None] < ends[None, :]

    def extra_turns(self) -> np.ndarray:
        """bool (T, G): the afterstates after which the same side rolls again."""
        steps = self.movers.shape[0]
        extra = np.zeros(self.movers.shape, bool)
        extra[:-1] = self.movers[1:] == self.movers[:-1]
        extra &= np.arange(steps)[:, None] < self.lengths[None, :] - 1
        return extra
