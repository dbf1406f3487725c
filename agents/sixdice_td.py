"""The learned six-dice player: a small network valuing score-sheet states, trained by
TD(lambda) self-play.

The network values a sheet state (open categories, bonus points) as the points still to
come, final bank included. The player plays each turn exactly for that valuation (the
same within-turn expectimax as the optimal player, `agents.sixdice.ValueAgent`), so all
it learns is what a sheet is worth: 4096 open-sets times at most 25 banks.

Training is TD self-play with the game's model: each round the current network plays a
batch of solitaire games (writing a random open category now and then, to see sheets
its own choices avoid). The targets are the TD(lambda) returns of the turns played, the
one-step return taken in expectation over the dice (the turn's expectimax under the
current network, which the player computes anyway to move), and the expected one-step
backups of every open-set met or weighed as an option, at every bank it can hold: one
turn's dynamic program values all banks of an open-set at once, so these are nearly
free and teach the network what a banked point is worth. Lambda = 0 is expected TD(0)
throughout; the optimal table is used only to measure the result.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.sixdice import (
    MAX_BANK,
    SelfPlay,
    SheetValues,
    ValueAgent,
    self_play,
    turn_tables,
)
from engine.sixdice import FREE_RETHROWS, N_CATEGORIES, OUTCOME_PROB, RuleError

log = logging.getLogger(__name__)

MEAN_POINTS_PER_CATEGORY = 15.0
"""Scale of the network's output: a typical category's worth, so outputs stay near 0."""


N_INPUTS = 2 * N_CATEGORIES + MAX_BANK + 4
"""Width of the network's input (see `sheet_features`)."""


def sheet_features(masks: torch.Tensor, banks: torch.Tensor) -> torch.Tensor:
    """Network inputs of sheet states, (B, N_INPUTS)."""
    bits = ((masks[:, None] >> torch.arange(N_CATEGORIES)) & 1).float()
    n_open = bits.sum(1)
    count = nn.functional.one_hot(n_open.long(), N_CATEGORIES + 1).float()
    bank = nn.functional.one_hot(banks, MAX_BANK + 1).float()
    scaled = banks.float()[:, None] / MAX_BANK
    per_turn = banks.float()[:, None] / n_open.clamp(min=1)[:, None] / 4
    return torch.cat([bits, count, bank, scaled, per_turn], dim=1)


class SheetNet(nn.Module):
    """Value of a sheet state: bank + open categories x (15 + net output).

    Inputs: which categories are open, how many (one-hot), the bank both one-hot and as
    a number, and the bank per open category (the re-throws each remaining turn can add).
    """

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.hidden = hidden
        self.body = nn.Sequential(
            nn.Linear(N_INPUTS, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, masks: torch.Tensor, banks: torch.Tensor) -> torch.Tensor:
        n_open = ((masks[:, None] >> torch.arange(N_CATEGORIES)) & 1).sum(1).float()
        out = self.body(sheet_features(masks, banks))[:, 0]
        return banks.float() + n_open * (MEAN_POINTS_PER_CATEGORY + 5.0 * out)


def net_values(net: SheetNet) -> SheetValues:
    """The network as a numpy valuation of sheet states (no gradients); each distinct
    state is evaluated once (a turn's options share most of their sheets)."""

    def values(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
        keys = np.asarray(masks, dtype=np.int64) * (MAX_BANK + 1) + np.asarray(banks)
        uniq, back = np.unique(keys, return_inverse=True)
        with torch.no_grad():
            v = net(torch.as_tensor(uniq // (MAX_BANK + 1)), torch.as_tensor(uniq % (MAX_BANK + 1)))
        return v.double().numpy()[back.reshape(np.shape(keys))]

    return values


@dataclass
class TDConfig:
    """Training settings for the learned six-dice player."""

    iterations: int = 90
    """Rounds of self-play followed by fitting the TD targets."""
    games: int = 64
    """Solitaire games played in lockstep per round."""
    lam: float = 0.3
    """TD(lambda) trace parameter of the played turns (0: expected one-step backups,
    1: Monte Carlo)."""
    lr: float = 1e-3
    """Adam learning rate at the start."""
    lr_end: float = 3e-5
    """Learning rate at the last round (geometric decay)."""
    epochs: int = 2
    """Passes over each round's states."""
    minibatch: int = 256
    """States per gradient step."""
    explore: float = 0.1
    """Chance that a self-play stop writes a random open category."""
    hidden: int = 128
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


def expected_backups(
    values: SheetValues, masks: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expected one-step TD targets of these open-sets at every bank each can hold: the
    turn's expectimax over the dice for `values` of the sheets after it.

    One turn's dynamic program with the largest re-throw budget gives the value with
    every smaller budget too, so all banks of an open-set cost one backup. Returns flat
    (masks, banks, targets).
    """
    masks = np.unique(np.asarray(masks, dtype=np.int64))
    masks = masks[masks != 0]
    filled = N_CATEGORIES - ((masks[:, None] >> np.arange(N_CATEGORIES)) & 1).sum(1)
    budgets = 2 * filled + FREE_RETHROWS
    order = np.argsort(-budgets, kind="stable")
    masks, budgets = masks[order], budgets[order]
    tt = turn_tables(masks, budgets, values)
    out_m, out_b, out_t = [], [], []
    for n in range(FREE_RETHROWS, len(tt.value)):
        expected = OUTCOME_PROB @ tt.value[n]
        out_m.append(masks[: len(expected)])
        out_b.append(np.full(len(expected), n - FREE_RETHROWS))
        out_t.append(expected)
    return np.concatenate(out_m), np.concatenate(out_b), np.concatenate(out_t)


def successors(masks: np.ndarray) -> np.ndarray:
    """The open-sets one written category away from each of these, distinct."""
    masks = np.unique(np.asarray(masks, dtype=np.int64))
    bits = (masks[:, None] >> np.arange(N_CATEGORIES)) & 1
    rows, cats = np.nonzero(bits)
    return np.unique(masks[rows] & ~(1 << cats))


def train(cfg: TDConfig) -> tuple[SheetNet, list[float]]:
    """Train a network by self-play; the network and each round's mean final total.

    Each round the current network plays `games` solitaire games. Its targets are the
    TD(lambda) returns of the turns played, and the expected one-step backups of every
    open-set it met or weighed as an option (each written category's sheet) at all the
    banks that open-set can hold.
    """
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    net = SheetNet(cfg.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    span = max(cfg.iterations - 1, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: (cfg.lr_end / cfg.lr) ** (min(i, span) / span)
    )
    history = []
    for it in range(cfg.iterations):
        t0 = time.perf_counter()
        net.eval()
        values = net_values(net)
        play = self_play(values, cfg.games, rng, explore=cfg.explore)
        met = play.masks[:-1].ravel()
        sweep = expected_backups(values, np.concatenate([met, successors(met)]))
        masks = torch.as_tensor(np.concatenate([play.masks[:-1].ravel(), sweep[0]]))
        banks = torch.as_tensor(np.concatenate([play.banks[:-1].ravel(), sweep[1]]))
        targets = torch.as_tensor(
            np.concatenate([lambda_returns(play, cfg.lam).ravel(), sweep[2]]),
            dtype=torch.float32,
        )
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
            "round %d: mean total %.2f, %d states, loss %.3f, %.1f s",
            it,
            history[-1],
            len(targets),
            loss.item(),
            time.perf_counter() - t0,
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
