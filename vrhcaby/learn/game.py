"""What the TD(λ) trainer needs of a game it learns (`Game`): self-play episodes, the
network and its inputs, the value of a finished game, the evaluation. `Backgammon`
(`vrhcaby.learn.backgammon`) is one, the six-dice scoring game (`vrhcaby.sixdice.learner`)
another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from vrhcaby.learn.config import EvalConfig
from vrhcaby.learn.episodes import Episodes


@dataclass
class Evaluation:
    """An evaluation read for the run's logs."""

    score: float
    """Higher is better; the run keeps the checkpoint with the highest as its best."""
    scalars: dict[str, float]
    """TensorBoard scalars (logged as eval/<name>)."""
    postfix: dict[str, str]
    """Progress-bar fields."""


class SelfPlayer(Protocol):
    """Plays rounds of self-play games with the current network."""

    def play(self, n_games: int, rng: np.random.Generator, epsilon: float = 0.0) -> Episodes: ...


class Game(Protocol):
    """A game the TD(λ) trainer learns by self-play: `Backgammon`, or the six-dice game
    (`vrhcaby.sixdice.learner.SixDice`). It supplies the episodes, the network and its inputs,
    the value of a finished game, and the evaluation."""

    name: str
    """Its name in configs (the `game` key) and checkpoints."""
    variant: str
    """The rules played."""
    net: Any
    """The network's config: compared with ==, with `to_dict`, `from_dict`, `describe`."""

    @property
    def flip(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """The change of view between the sides, on value arrays (..., K); None: solitaire."""
        ...

    def build_model(self) -> torch.nn.Module:
        """A fresh network (from torch's generator)."""
        ...

    def selfplay(self, model: torch.nn.Module, device: torch.device) -> SelfPlayer:
        """The self-play of `model`, whose weights may change between rounds."""
        ...

    def inputs(self, episodes: Episodes, valid: np.ndarray) -> torch.Tensor:
        """The network's inputs for the states where `valid` (T, G) is True, in order."""
        ...

    def values(self, output: torch.Tensor) -> torch.Tensor:
        """The values (N, K) the network's raw output stands for."""
        ...

    def obey(self, states: np.ndarray, values: Any) -> Any:
        """`values` (N, K) of `states` (N, ...), numpy or torch, made to obey what the
        game's rules decide (the identity where they decide nothing)."""
        ...

    def final(self, episodes: Episodes) -> np.ndarray:
        """float32 (G, K): the value of each game's last state, from `episodes.values`."""
        ...

    def equity(self, values: np.ndarray) -> np.ndarray:
        """One number per value (..., K) -> (...), for the TD-error statistics."""
        ...

    def charts(self, episodes: Episodes) -> dict[str, float]:
        """TensorBoard charts of a round's games."""
        ...

    def evaluate(
        self, model: torch.nn.Module, config: EvalConfig, run: dict[str, Any]
    ) -> dict[str, Any]:
        """Evaluate `model` (`run` is the run's config, for the record); a JSON record."""
        ...

    def report(self, record: dict[str, Any], config: EvalConfig) -> Evaluation:
        """What an `evaluate` record means for the logs and the best checkpoint."""
        ...
