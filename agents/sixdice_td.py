"""The learned six-dice player: a small network valuing score-sheet states, trained by
TD(lambda) self-play.

The network values a sheet state (open categories, bonus points) as the points still to
come, final bank included. The player plays each turn exactly for that valuation (the
same within-turn expectimax as the optimal player, `agents.sixdice.ValueAgent`), so all
it learns is what a sheet is worth: 4096 open-sets times at most 25 banks.

Training is TD(lambda) over the turn-start states of batched solitaire self-play games.
The one-step return of a turn is taken in expectation over the dice (the turn's
expectimax under the current network, which the player computes anyway to move), so
lambda = 0 is expected TD(0) and lambda = 1 is the Monte Carlo return of the game.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.sixdice import MAX_BANK, SelfPlay, SheetValues, ValueAgent, self_play
from engine.sixdice import N_CATEGORIES, RuleError

log = logging.getLogger(__name__)

MEAN_POINTS_PER_CATEGORY = 15.0
"""Scale of the network's output: a typical category's worth, so outputs stay near 0."""


class SheetNet(nn.Module):
    """Value of a sheet state: bank + open categories x (15 + net output)."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.hidden = hidden
        self.body = nn.Sequential(
            nn.Linear(N_CATEGORIES + MAX_BANK + 1, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, masks: torch.Tensor, banks: torch.Tensor) -> torch.Tensor:
        bits = ((masks[:, None] >> torch.arange(N_CATEGORIES)) & 1).float()
        bank = nn.functional.one_hot(banks, MAX_BANK + 1).float()
        n_open = bits.sum(1)
        out = self.body(torch.cat([bits, bank], dim=1))[:, 0]
        return banks.float() + n_open * (MEAN_POINTS_PER_CATEGORY + 5.0 * out)


def net_values(net: SheetNet) -> SheetValues:
    """The network as a numpy valuation of sheet states (no gradients)."""

    def values(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            v = net(
                torch.as_tensor(np.asarray(masks), dtype=torch.int64),
                torch.as_tensor(np.asarray(banks), dtype=torch.int64),
            )
        return v.double().numpy()

    return values


@dataclass
class TDConfig:
    """Training settings for the learned six-dice player."""

    iterations: int = 60
    """Rounds of self-play followed by fitting the TD targets."""
    games: int = 256
    """Solitaire games played in lockstep per round."""
    lam: float = 0.3
    """TD(lambda) trace parameter (0: expected one-step backups, 1: Monte Carlo)."""
    lr: float = 1e-3
    """Adam learning rate at the start."""
    lr_end: float = 1e-4
    """Learning rate at the last round (linear decay)."""
    epochs: int = 4
    """Passes over each round's states."""
    minibatch: int = 512
    """States per gradient step."""
    explore: float = 0.0
    """Chance that a self-play stop writes a random open category."""
    hidden: int = 64
    """Width of the network's two hidden layers."""
    seed: int = 0
    """Seeds the dice and the network's initial weights."""


def lambda_returns(play: SelfPlay, lam: float) -> np.ndarray:
    """TD(lambda) targets (T, G) for the turn-start states of a self-play record."""
    targets = np.empty_like(play.backups)
    ahead = play.banks[-1].astype(np.float64)
    for t in range(len(play.points) - 1, -1, -1):
        ahead = (1 - lam) * play.backups[t] + lam * (play.points[t] + ahead)
        targets[t] = ahead
    return targets


def train(cfg: TDConfig) -> tuple[SheetNet, list[float]]:
    """Train a network by self-play; the network and each round's mean final total."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    net = SheetNet(cfg.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    span = max(cfg.iterations - 1, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: 1 + (cfg.lr_end / cfg.lr - 1) * min(i, span) / span
    )
    history = []
    for it in range(cfg.iterations):
        t0 = time.perf_counter()
        net.eval()
        play = self_play(net_values(net), cfg.games, rng, explore=cfg.explore)
        targets = torch.as_tensor(lambda_returns(play, cfg.lam).ravel(), dtype=torch.float32)
        masks = torch.as_tensor(play.masks[:-1].ravel())
        banks = torch.as_tensor(play.banks[:-1].ravel())
        net.train()
        for _ in range(cfg.epochs):
            for idx in torch.randperm(len(targets)).split(cfg.minibatch):
                loss = nn.functional.mse_loss(net(masks[idx], banks[idx]), targets[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        sched.step()
        history.append(float(play.totals.mean()))
        log.info(
            "round %d: mean total %.2f, loss %.2f, %.1f games/s",
            it,
            history[-1],
            loss.item(),
            cfg.games / (time.perf_counter() - t0),
        )
    net.eval()
    return net, history


def save_checkpoint(path: str | Path, net: SheetNet, cfg: TDConfig, history: list[float]) -> None:
    """One dict: weights, the model's own config, the run config and the training curve."""
    torch.save(
        {
            "model": net.state_dict(),
            "model_config": {"hidden": net.hidden},
            "config": asdict(cfg),
            "history": history,
            "game": "sixdice",
        },
        path,
    )


def load_net(path: str | Path) -> SheetNet:
    """The network saved in a checkpoint, rebuilt from its own config."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    if ckpt.get("game") != "sixdice":
        raise ValueError(f"{path} is not a six-dice checkpoint")
    net = SheetNet(**ckpt["model_config"])
    net.load_state_dict(ckpt["model"])
    net.eval()
    return net


def load_td_agent(path: str | Path, harsh: bool = False) -> ValueAgent:
    """The learned player from a checkpoint (it plays the standard game only)."""
    if harsh:
        raise RuleError("the learned dice agent plays the standard game only")
    if not Path(path).is_file():
        raise FileNotFoundError(f"no checkpoint {path}")
    return ValueAgent(f"td:{path}", net_values(load_net(path)))
