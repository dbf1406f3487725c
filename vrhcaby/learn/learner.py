"""TD(λ) learning from finished episodes: the λ-return formulation, not online traces.

After a round, its games are split into updates of `games_per_update` games. For each,
one forward pass (with gradients) evaluates every state of those games; the λ-return
targets (`vrhcaby.learn.returns.lambda_returns`) are built backwards from the final
result using those same (detached) values, and one optimizer step lowers the mean of
½‖G_t - P_t‖². With plain SGD this equals offline TD(λ) with Tesauro's eligibility traces
(weights held fixed over the games, updates summed) exactly, which `tests/test_td.py`
checks against a one-game-at-a-time trace implementation. Why this form: it needs one
ordinary batched backward pass per update, where per-game online traces need a per-game,
per-output copy of every weight (five times the network per game in flight) and a
per-sample gradient every ply.

Also the optimizer and the run's linear schedules of the learning rate and λ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.game import Game
from vrhcaby.learn.returns import lambda_returns


def scheduled(start: float, end: float, progress: float) -> float:
    """Linear schedule: `start` at progress 0, `end` at progress 1 (and beyond)."""
    return start + (end - start) * min(max(progress, 0.0), 1.0)


@dataclass
class UpdateStats:
    """What one round of learning measured (means over trained positions)."""

    loss: float
    td_error: float
    """Mean one-step TD error of the equity (target minus value; ideally near 0)."""
    abs_td_error: float
    """Mean |one-step TD error| of the equity."""
    positions: int

    @classmethod
    def combined(cls, stats: list[UpdateStats]) -> UpdateStats:
        """The statistics of several updates together: their means weighted by positions."""
        positions = sum(s.positions for s in stats)
        weight = [s.positions / max(positions, 1) for s in stats]
        return cls(
            loss=sum(w * s.loss for w, s in zip(weight, stats, strict=True)),
            td_error=sum(w * s.td_error for w, s in zip(weight, stats, strict=True)),
            abs_td_error=sum(w * s.abs_td_error for w, s in zip(weight, stats, strict=True)),
            positions=positions,
        )


class Learner:
    """Turns finished episodes into optimizer steps on the λ-return targets.

    `game` is the game learnt (its inputs, outputs and results). `fits`, given the states
    (N, ...) of the episodes, says which of them are fitted (None: all trained states; a
    network set's: those of the classes its trained networks answer, `vrhcaby.learn.sets`).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        game: Game,
        device: torch.device,
        fits: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.game = game
        self.device = device
        self.fits = fits

    def update(self, episodes: Episodes, lam: float) -> UpdateStats:
        """One optimizer step on the λ-return loss of all trained states of `episodes`.

        Both sides of the loss obey the rules (`Game.obey`; backgammon: `obey_rules`).
        The targets: the values bootstrapped from are those self-play chose its plays by
        (the network's, made to obey the rules of their states), and each λ-return takes
        what the rules decide of its own state (`lambda_returns`' `decided`), so that a
        bear-off is fitted to its exact database value (and earlier states bootstrap from
        that), a finished game to its result, a side that has borne off to no gammon
        loss. The prediction fitted is masked the same way: an output the rules
        decide equals its target and gives no gradient. Why: every use of the network
        (self-play, agents, hint) goes through the same rules, so its raw value there is
        never read; fitting it would spend the network's capacity (and the update's step)
        on what the rules know, and pull shared weights toward zeros and database values
        that a plain position never needs. Such outputs still count in the mean, so the
        step per position is that of plain TD(λ) (`tests/test_td.py`).
        """
        p, padded, decided = self._values(episodes)
        valid = episodes.lengths[None, :] > np.arange(episodes.movers.shape[0])[:, None]
        train = self._trained(episodes, valid)
        targets = self._returns(episodes, padded, train, decided, lam)
        n = int(train.sum())
        chosen = torch.from_numpy(np.flatnonzero(train[valid])).to(self.device)
        target = torch.as_tensor(targets, dtype=p.dtype).to(self.device)
        diff = target - p[chosen]
        loss = 0.5 * (diff * diff).sum() / max(n, 1)
        if n:  # (a set's update can hold no afterstate of a trained class)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
        one_step = self._returns(episodes, padded, train, decided, 0.0)
        delta = self.game.equity(one_step) - self.game.equity(padded[train])
        return UpdateStats(
            loss=float(loss.detach()),
            td_error=float(delta.mean()),
            abs_td_error=float(np.abs(delta).mean()),
            positions=n,
        )

    @torch.no_grad()
    def targets(self, episodes: Episodes, lam: float) -> np.ndarray:
        """The targets (N, K) `update` fits the trained states (`Episodes.trained`, in
        order) to, with the network as it is now."""
        _, padded, decided = self._values(episodes)
        valid = episodes.lengths[None, :] > np.arange(episodes.movers.shape[0])[:, None]
        return self._returns(episodes, padded, self._trained(episodes, valid), decided, lam)

    def _trained(self, episodes: Episodes, valid: np.ndarray) -> np.ndarray:
        """bool (T, G): the states fitted (`Episodes.trained`, those `fits` keeps)."""
        train = episodes.trained()
        if self.fits is not None:
            fitted = np.zeros(valid.shape, bool)
            fitted[valid] = self.fits(episodes.states[valid])
            train &= fitted
        return train

    def _values(self, episodes: Episodes) -> tuple[torch.Tensor, np.ndarray, np.ndarray]:
        """The network's values of every state, obeying the rules: (N, K) with gradients,
        in order, and padded (T, G, K) numpy; and what the rules decide of each state's
        values (T, G, K), NaN where they leave a value open and after the end.

        The rules are asked once, as `Game.obey` of NaN, and the answer serves both the
        prediction and the targets (a bear-off's database value is read once)."""
        valid = episodes.lengths[None, :] > np.arange(episodes.movers.shape[0])[:, None]
        x = self.game.inputs(episodes, valid).to(self.device)
        raw = self.game.values(self.model(x))
        free = np.full(tuple(raw.shape), np.nan, np.float32)
        decided = np.full((*valid.shape, raw.shape[-1]), np.nan, np.float32)
        decided[valid] = self.game.obey(episodes.states[valid], free)
        fixed = torch.from_numpy(decided[valid]).to(raw.device)
        p = torch.where(torch.isnan(fixed), raw, fixed.to(raw.dtype))
        padded = np.zeros(decided.shape, np.float32)
        padded[valid] = p.detach().cpu().numpy()  # GPU sync point
        return p, padded, decided

    def _returns(
        self,
        episodes: Episodes,
        padded: np.ndarray,
        train: np.ndarray,
        decided: np.ndarray,
        lam: float,
    ) -> np.ndarray:
        """The λ-returns of the `train` states bootstrapped from the values `padded`
        (T, G, K) (or from the episodes' backups), each state's what its rules decide
        (`lambda_returns`' `decided`)."""
        game = self.game
        same = None
        if game.flip is not None:
            same = np.zeros(train.shape, bool)
            same[:-1] = episodes.movers[1:] == episodes.movers[:-1]
        returns = lambda_returns(
            padded if episodes.backups is None else None,
            same,
            episodes.lengths,
            game.final(episodes),
            lam,
            rewards=episodes.rewards,
            backups=episodes.backups,
            truncated=episodes.truncated,
            flip=game.flip,
            decided=decided,
        )
        return returns[train]


def make_optimizer(model: torch.nn.Module, config: TDConfig) -> torch.optim.Optimizer:
    """The optimizer named in `config` of `model`'s parameters that learn, at its starting
    learning rate."""
    params = [p for p in model.parameters() if p.requires_grad]  # not a set's frozen networks
    if config.optimizer == "adam":
        return torch.optim.Adam(params, lr=config.lr)
    return torch.optim.SGD(params, lr=config.lr)


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Set the learning rate of every parameter group (the schedule's next value)."""
    for group in optimizer.param_groups:
        group["lr"] = lr
