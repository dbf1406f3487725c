"""The learned six-dice player: a small network valuing score-sheet states, trained by the
project's TD(lambda) trainer (`vrhcaby.learn.trainer`, `vrhcaby train` with `game = "sixdice"`).

The network values a sheet state (open categories, bonus points) as the points still to
come, final bank included. The player plays each turn exactly for that valuation (the
same within-turn expectimax as the optimal player, `vrhcaby.sixdice.players.ValueAgent`), so all
it learns is what a sheet is worth: 4096 open-sets times at most 25 banks.

`SixDice` is the game as the trainer sees it. Each round the current network plays a
batch of solitaire games (writing a random open category at a stop with probability
`td.epsilon`, to see sheets its own choices avoid). An episode is a game's 13 sheet states
(the fresh sheet, then the sheet after each turn), the points written each turn are its
rewards and the unspent bank at the end is its result. Why expected backups: the one-step
return of a turn is taken in expectation over the dice (the turn's expectimax under the
current network, which the player computes anyway to move), not from the one throw
sampled, which removes the dice noise from the targets; and one turn's dynamic program
values all banks of an open-set at once, so the expected backups of every open-set met or
weighed as an option (each written category's sheet), at every bank it can hold, are
nearly free: they join the round as episodes cut short after one state (`truncated`),
trained on their backup, and teach the network what a banked point is worth. The shared
`vrhcaby.learn.returns.lambda_returns` blends the backups with the realised returns; the optimal
table is used only to measure the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.td import find_checkpoint
from engine.sixdice import FREE_RETHROWS, N_CATEGORIES, OUTCOME_PROB, RuleError
from vrhcaby.learn.config import EvalConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.game import Evaluation
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import check_weights
from vrhcaby.sixdice.players import (
    MAX_BANK,
    SheetValues,
    ValueAgent,
    optimal_expected_score,
    self_play,
    turn_tables,
)

MEAN_POINTS_PER_CATEGORY = 15.0
"""Scale of the network's output: a typical category's worth, so outputs stay near 0."""

N_INPUTS = 2 * N_CATEGORIES + MAX_BANK + 4
"""Width of the network's input (see `sheet_features`)."""


@dataclass(frozen=True)
class SheetNetConfig:
    """The six-dice network: widths of its tanh hidden layers."""

    hidden: tuple[int, ...] = (128, 128)

    def __post_init__(self) -> None:
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"sixdice.hidden needs positive widths, got {list(self.hidden)}")
        check_weights((N_INPUTS, *self.hidden, 1))

    def to_dict(self) -> dict[str, Any]:
        return {"hidden": list(self.hidden)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SheetNetConfig:
        return cls(hidden=tuple(int(h) for h in data["hidden"]))

    def describe(self) -> str:
        return "-".join(str(n) for n in (N_INPUTS, *self.hidden, 1)) + " six-dice sheet"


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
    """Value of sheet states (B, 2) = (open mask, bank): bank + open categories x (15 +
    net output), so a full sheet is worth its bank exactly.

    Inputs: which categories are open, how many (one-hot), the bank both one-hot and as
    a number, and the bank per open category (the re-throws each remaining turn can add).
    """

    def __init__(self, config: SheetNetConfig) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = N_INPUTS
        for h in config.hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        self.body = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, sheets: torch.Tensor) -> torch.Tensor:
        masks, banks = sheets[:, 0], sheets[:, 1]
        n_open = ((masks[:, None] >> torch.arange(N_CATEGORIES)) & 1).sum(1).float()
        out = self.body(sheet_features(masks, banks))[:, 0]
        return banks.float() + n_open * (MEAN_POINTS_PER_CATEGORY + 5.0 * out)


def net_values(net: nn.Module) -> SheetValues:
    """The network as a numpy valuation of sheet states (no gradients); each distinct
    state is evaluated once (a turn's options share most of their sheets)."""

    def values(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
        keys = np.asarray(masks, dtype=np.int64) * (MAX_BANK + 1) + np.asarray(banks)
        uniq, back = np.unique(keys, return_inverse=True)
        sheets = np.stack([uniq // (MAX_BANK + 1), uniq % (MAX_BANK + 1)], axis=1)
        with torch.no_grad():
            v = net(torch.from_numpy(sheets))
        return v.double().numpy()[back.reshape(np.shape(keys))]

    return values


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


def episodes(
    masks: np.ndarray,
    banks: np.ndarray,
    points: np.ndarray,
    backups: np.ndarray,
    swept: tuple[np.ndarray, np.ndarray, np.ndarray],
    evaluated: int = 0,
) -> Episodes:
    """The trainer's episodes of a round: the played games, then the swept sheets.

    `masks`, `banks` (T + 1, G): each game's sheet at every turn start, the last the full
    sheet; `points` (T, G): points written each turn; `backups` (T, G): the expected
    one-step backup at each turn start; `swept`: flat (masks, banks, backups) of other
    sheets, each an episode cut short after its one state.
    """
    steps, played = masks.shape
    sweep = len(swept[0])
    total = played + sweep
    states = np.zeros((steps, total, 2), np.int64)
    states[:, :played, 0], states[:, :played, 1] = masks, banks
    states[0, played:, 0], states[0, played:, 1] = swept[0], swept[1]
    rewards = np.zeros((steps, total, 1))
    rewards[: steps - 1, :played, 0] = points
    expected = np.zeros((steps, total, 1))
    expected[: steps - 1, :played, 0] = backups
    expected[0, played:, 0] = swept[2]
    return Episodes(
        states=states,
        movers=np.zeros((steps, total), np.int8),
        lengths=np.concatenate([np.full(played, steps), np.ones(sweep, np.int64)]),
        values=np.concatenate([banks[-1], np.zeros(sweep, np.int64)]),
        evaluated=evaluated,
        rewards=rewards,
        backups=expected,
        truncated=np.arange(total) >= played,
    )


class SheetSelfPlay:
    """Rounds of batched solitaire games of the current network, with the sweep."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model

    def play(self, n_games: int, rng: np.random.Generator, epsilon: float = 0.0) -> Episodes:
        """`n_games` games played for the network (a random category at a stop with
        probability `epsilon`) and the expected backups of every open-set met or weighed."""
        evaluated = 0
        network = net_values(self.model)

        def values(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
            nonlocal evaluated
            evaluated += np.size(masks)
            return network(masks, banks)

        play = self_play(values, n_games, rng, explore=epsilon)
        met = play.masks[:-1].ravel()
        swept = expected_backups(values, np.concatenate([met, successors(met)]))
        return episodes(play.masks, play.banks, play.points, play.backups, swept, evaluated)


class SixDice:
    """The six-dice scoring game (standard rules, solitaire) as a game the TD(λ) trainer
    learns: sheet states valued by a `SheetNet`, evaluated by the mean final total of the
    network's greedy player against the exact optimum."""

    name = "sixdice"
    variant = "standard"
    flip = None

    def __init__(self, net: SheetNetConfig) -> None:
        self.net = net

    def build_model(self) -> SheetNet:
        return SheetNet(self.net)

    def selfplay(self, model: torch.nn.Module, device: torch.device) -> SheetSelfPlay:
        if device.type != "cpu":
            raise ValueError("the six-dice trainer runs on the CPU only (device = 'cpu')")
        return SheetSelfPlay(model)

    def inputs(self, episodes: Episodes, valid: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(episodes.states[valid])

    def values(self, output: torch.Tensor) -> torch.Tensor:
        return output[:, None]

    def obey(self, states: np.ndarray, values: Any) -> Any:
        """The values as they are: the rules decide nothing a sheet's value learns."""
        return values

    def final(self, episodes: Episodes) -> np.ndarray:
        return episodes.values.astype(np.float32)[:, None]

    def equity(self, values: np.ndarray) -> np.ndarray:
        return values[..., 0]

    def charts(self, episodes: Episodes) -> dict[str, float]:
        """The mean final total of the round's games."""
        assert episodes.rewards is not None, "six-dice episodes carry their rewards"
        played = ~episodes.truncated if episodes.truncated is not None else slice(None)
        totals = episodes.rewards[:, played, 0].sum(0) + episodes.values[played]
        return {"mean_total": float(totals.mean())}

    def evaluate(
        self, model: torch.nn.Module, config: EvalConfig, run: dict[str, Any]
    ) -> dict[str, Any]:
        """Mean final total of the greedy player over `config.games` solitaire games,
        with its 95% interval and its fraction of the exact optimum."""
        rng = np.random.default_rng(config.seed)
        totals = self_play(net_values(model), config.games, rng).totals
        mean = float(totals.mean())
        half = float(1.96 * totals.std(ddof=1) / np.sqrt(len(totals)))
        optimum = optimal_expected_score()
        return {
            "mean_total": mean,
            "ci95": [mean - half, mean + half],
            "solitaire_games": len(totals),
            "of_optimum": mean / optimum,
        }

    def report(self, record: dict[str, Any], config: EvalConfig) -> Evaluation:
        low, high = record["ci95"]
        scalars = {
            "mean_total": record["mean_total"],
            "ci95_low": low,
            "ci95_high": high,
            "of_optimum": record["of_optimum"],
        }
        shown = f"{record['mean_total']:.1f}±{(high - low) / 2:.1f} ({record['of_optimum']:.1%})"
        return Evaluation(record["mean_total"], scalars, {"mean total": shown})


def load_net(path: str | Path) -> SheetNet:
    """The network of a six-dice training checkpoint, checked by `vrhcaby.nn.checkpoint.load`
    (a CheckpointError naming the file and what is wrong)."""
    arrays, meta = checkpoint.load(path, SixDice.name)
    net = SheetNet(SheetNetConfig.from_dict(meta["net"]))
    weights = {
        k[len("model/") :]: torch.from_numpy(v) for k, v in arrays.items() if k.startswith("model/")
    }
    try:
        net.load_state_dict(weights)
    except RuntimeError:
        got = arrays["model/body.0.weight"].shape[1]
        raise checkpoint.CheckpointError(
            f"{path}: its first layer reads {got} inputs, a six-dice sheet network {N_INPUTS}"
        ) from None
    net.eval()
    return net


def load_td_agent(path: str | Path, harsh: bool = False) -> ValueAgent:
    """The learned player from a checkpoint: a path, or a shipped network by its name from
    any folder (`td:sixdice-td`, `td:checkpoints/sixdice-td.pt`; `agents.td.find_checkpoint`,
    as backgammon's `td:NAME`). It plays the standard game only."""
    if harsh:
        raise RuleError("the learned dice agent plays the standard game only")
    return ValueAgent(f"td:{path}", net_values(load_net(find_checkpoint(str(path)))))
