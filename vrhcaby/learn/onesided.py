"""Training the one-sided race network (`vrhcaby.nn.onesided`) by fitted value iteration.

A side alone on the board is a single-player game with a known end: its values are fixed
points of a one-roll backup, the database's where its checkers are all home. A round
(`backup`) takes each training row, plays each of the 21 rolls from it (every legal play,
`engine.batch_afterstates` with the other side off the board), picks, per distribution,
the play whose mean rolls is least (each head its own policy, as GNU Backgammon's one-sided
database picks its bear-off and its gammon-saving plays), and averages the chosen plays'
distributions, one roll later, over the rolls. The network is then fitted to these targets
(cross-entropy per distribution, squared error of the means) and the next round backs up
through the fitted network. Values are exact at the database and move one roll further out
each round, so a dozen rounds reach the longest races the rows hold.

The rows are a side's rows of race positions from games (`race_rows`), widened each round
by the plays the backups chose (positions the policy reaches), and a few with a checker
sent back into the opponent's home board (the positions where backgammons are at stake,
rare in games but the costliest to misjudge).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.dice import ROLLS, WEIGHTS
from engine.movegen import batch_afterstates
from vrhcaby.base.config import ConfigError, load_config, to_dict
from vrhcaby.base.files import read_arrays, write_npz
from vrhcaby.learn.starts import StartsConfig, load_starts
from vrhcaby.nn import onesided
from vrhcaby.nn.onesided import (
    HEADS,
    INPUTS,
    MEAN_SCALE,
    OUTPUTS,
    K,
    OneSidedNet,
    OneSidedRace,
    _exact_facts,
    _home,
    inputs,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OneSidedConfig:
    """A one-sided training run (its TOML file's top level, and ``[starts]``)."""

    name: str = "onesided-race"
    """The run's name, recorded in the network's checkpoint (and so in a set holding it)."""
    out: str = "checkpoints/onesided-race.pt"
    """The network's checkpoint; ``<out>.partial.npz`` holds the run between rounds."""
    starts: StartsConfig = field(
        default_factory=lambda: StartsConfig("td-best", "race", games=50_000, seed=5)
    )
    """The race positions whose two sides' rows the run starts from (`vrhcaby.learn.starts`)."""
    init_from: str = ""
    """A one-sided race network's checkpoint whose weights the run starts from ("" fresh):
    a run that carries on another's rounds."""
    hidden: int = 128
    rounds: int = 16
    epochs: int = 24
    """Passes over the rows per round (4 left the network half as accurate)."""
    batch: int = 256
    lr: float = 3e-3
    lr_final: float = 3e-4
    """The learning rate falls geometrically to this over the rounds."""
    mean_weight: float = 1.0
    """Weight of the means' squared error (in tens of rolls) beside the cross-entropy."""
    grow: float = 0.25
    """Rows added each round from the plays the backups chose, as a share of the rows."""
    max_rows: int = 120_000
    back: float = 0.05
    """Rows added once with a checker moved back into the opponent's home board, as a share."""
    seed: int = 1
    jobs: int = 1
    """Processes the backups are spread over (the fit runs in the main one)."""

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.hidden < 1 or self.rounds < 1 or self.epochs < 1 or self.batch < 1:
            raise ValueError("hidden, rounds, epochs and batch must be at least 1")
        if not (0 < self.lr_final <= self.lr):
            raise ValueError(f"need 0 < lr_final <= lr, got {self.lr_final}, {self.lr}")
        if self.starts.position_class != "race":
            raise ValueError("starts.position_class must be race: the rows are race sides")


def backup(
    valuer: OneSidedRace, rows: np.ndarray, chunk: int = 128
) -> tuple[np.ndarray, np.ndarray]:
    """The one-roll backup of each row (N, 25): targets (N, 3, K) float64, and the rows
    (one per row and roll) the rolls-head policy moved to."""
    rows = np.asarray(rows, np.int8)
    out = np.zeros((len(rows), len(HEADS), K))
    reached = []
    for lo in range(0, len(rows), chunk):
        part = rows[lo : lo + chunk]
        boards = np.zeros((len(part) * len(ROLLS), 2, 25), np.int8)
        boards[:, 1] = np.repeat(part, len(ROLLS), axis=0)
        after, parent = batch_afterstates(boards, np.tile(ROLLS, (len(part), 1)))
        if len(np.unique(parent)) != len(boards):
            raise AssertionError("a one-sided position with a roll and no legal play")
        played = after[:, 1]
        means = valuer.means(played)
        best = np.empty((len(boards), len(HEADS)), np.int64)
        for h in range(len(HEADS)):
            order = np.lexsort((means[:, h], parent))
            first = np.flatnonzero(np.r_[True, parent[order][1:] != parent[order][:-1]])
            best[:, h] = order[first]
        chosen, where = np.unique(best, return_inverse=True)
        dists = valuer.distributions(played[chosen])[where.reshape(best.shape)]
        d = dists[:, np.arange(len(HEADS)), np.arange(len(HEADS))]  # (B*21, 3, K)
        shifted = np.zeros_like(d)
        shifted[..., 1:] = d[..., :-1]
        shifted[..., -1] += d[..., -1]
        out[lo : lo + len(part)] = np.einsum(
            "brhk,r->bhk", shifted.reshape(len(part), len(ROLLS), len(HEADS), K), WEIGHTS
        )
        reached.append(played[best[:, 0]])
    off, clear = _exact_facts(rows)
    out[off, 1] = 0.0
    out[off, 1, 0] = 1.0
    out[clear, 2] = 0.0
    out[clear, 2, 0] = 1.0
    return out, np.concatenate(reached) if reached else np.zeros((0, 25), np.int8)


def _backup_part(net: OneSidedNet, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`backup` in a worker process (its own evaluator, the database read there)."""
    import torch

    torch.set_num_threads(1)
    return backup(OneSidedRace(net), rows)


def spread_backup(net: OneSidedNet, rows: np.ndarray, jobs: int) -> tuple[np.ndarray, np.ndarray]:
    """`backup` of `rows` through `net`, split over `jobs` forked processes (the same
    numbers as one process, to float32 rounding: each row's backup is its own)."""
    if jobs == 1:
        return backup(OneSidedRace(net), rows)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    parts = np.array_split(rows, jobs)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        done = list(pool.map(_backup_part, [net] * jobs, parts))
    return np.concatenate([t for t, _ in done]), np.concatenate([r for _, r in done])


def sent_back(rows: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` rows drawn from `rows` with one checker moved back to a random point of
    the opponent's home board (19..24)."""
    picked = rows[rng.integers(len(rows), size=count)].copy()
    for row in picked:
        occupied = np.flatnonzero(row[:24])
        src = rng.choice(occupied)
        row[src] -= 1
        row[rng.integers(18, 24)] += 1
    return picked


def _torch_model(hidden: int, seed: int):
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(INPUTS, hidden), torch.nn.Sigmoid(), torch.nn.Linear(hidden, OUTPUTS)
    )


def _start_model(cfg: OneSidedConfig):
    """The run's first model: fresh, or `cfg.init_from`'s weights (a ValueError naming the
    file if it is not a one-sided network of `cfg.hidden` units)."""
    import torch

    model = _torch_model(cfg.hidden, cfg.seed)
    if cfg.init_from:
        net = onesided.load(cfg.init_from).network
        if net.hidden != cfg.hidden:
            raise ValueError(
                f"init_from {cfg.init_from} has {net.hidden} hidden units, the run {cfg.hidden}"
            )
        with torch.no_grad():
            for layer, (w, b) in zip((model[0], model[2]), net.layers(), strict=True):
                layer.weight.copy_(torch.from_numpy(w))
                layer.bias.copy_(torch.from_numpy(b))
    return model


def _net_of(model) -> OneSidedNet:
    w1, b1 = model[0].weight.detach().numpy(), model[0].bias.detach().numpy()
    w2, b2 = model[2].weight.detach().numpy(), model[2].bias.detach().numpy()
    return OneSidedNet(w1.copy(), b1.copy(), w2.copy(), b2.copy())


def fit(model, rows: np.ndarray, targets: np.ndarray, cfg: OneSidedConfig, lr: float, rng) -> float:
    """`cfg.epochs` passes of Adam over (rows, targets); the last pass's mean loss. The
    heads an exact fact decides (first with a checker off, clear with none back) are not
    fitted."""
    import torch

    x = torch.from_numpy(inputs(rows))
    t = torch.from_numpy(targets.astype(np.float32))
    means = torch.from_numpy((targets @ np.arange(K) / MEAN_SCALE).astype(np.float32))
    off, clear = _exact_facts(rows)
    mask = torch.from_numpy(np.stack([np.ones(len(rows), bool), ~off, ~clear], axis=1))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    total = 0.0
    for _ in range(cfg.epochs):
        perm = torch.from_numpy(rng.permutation(len(rows)))
        total, n = 0.0, 0
        for lo in range(0, len(rows), cfg.batch):
            idx = perm[lo : lo + cfg.batch]
            out = model(x[idx])
            logits = out[:, : len(HEADS) * K].reshape(-1, len(HEADS), K)
            ce = -(t[idx] * torch.log_softmax(logits, dim=2)).sum(dim=2)
            se = (out[:, len(HEADS) * K :] - means[idx]) ** 2
            m = mask[idx].float()
            loss = ((ce + cfg.mean_weight * se) * m).sum() / m.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            n += len(idx)
        total /= max(n, 1)
    return total


def _keys(rows: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1]))).ravel()


def start_rows(cfg: OneSidedConfig) -> np.ndarray:
    """Both sides' rows (N, 25) of the run's race starts, and some of them with a checker
    sent back (`sent_back`): the rows every round backs up, none home."""
    boards = load_starts(cfg.starts.network, cfg.starts)
    rows = np.unique(boards.reshape(-1, 25), axis=0)
    rows = rows[~_home(rows)]
    rng = np.random.default_rng(cfg.seed)
    base = np.unique(
        np.concatenate([rows, sent_back(rows, int(cfg.back * len(rows)), rng)]), axis=0
    )
    return base[~_home(base)]


def _resumable(config: dict[str, Any]) -> dict[str, Any]:
    """The settings a resumed run must share with the saved one: all but `jobs`, which
    changes where the backups run, not what they compute."""
    return {k: v for k, v in config.items() if k != "jobs"}


@dataclass
class _State:
    """A run between rounds: what `<out>.partial` holds."""

    model: Any
    extra: np.ndarray
    previous: np.ndarray | None
    history: list[dict]
    rng: np.random.Generator

    def save(self, path: Path, cfg: OneSidedConfig) -> None:
        arrays = {k: v.detach().numpy() for k, v in self.model.state_dict().items()}
        arrays["extra"] = self.extra
        if self.previous is not None:
            arrays["previous"] = self.previous
        meta = {
            "history": self.history,
            "rng": self.rng.bit_generator.state,
            "config": to_dict(cfg),
        }
        arrays["meta"] = np.array(json.dumps(meta))
        write_npz(path, arrays, compressed=True)

    @classmethod
    def load(cls, path: Path, cfg: OneSidedConfig) -> _State | None:
        """The saved run, if `path` holds one of this config; else None."""
        import torch

        try:
            arrays = read_arrays(path)
            meta = json.loads(str(arrays.pop("meta")))
        except (OSError, ValueError, KeyError):
            return None
        if _resumable(meta.get("config", {})) != _resumable(to_dict(cfg)):
            log.warning("%s is of another config: starting afresh", path)
            return None
        model = _torch_model(cfg.hidden, cfg.seed)
        model.load_state_dict({k: torch.from_numpy(arrays[k]) for k in model.state_dict()})
        rng = np.random.default_rng()
        rng.bit_generator.state = meta["rng"]
        return cls(model, arrays["extra"], arrays.get("previous"), meta["history"], rng)


def train(
    cfg: OneSidedConfig, base: np.ndarray, partial: Path | None = None, start: Any = None
) -> tuple[OneSidedNet, list[dict]]:
    """The one-sided race network fitted by `cfg.rounds` rounds of backups over the rows
    `base` (N, 25) and those the backups reach; and each round's figures (the mean change
    of the expected rolls of `base`, round to round, is the iteration's convergence). With
    `partial`, the run is saved there after every round and resumed from it; `start` is
    the model a fresh run starts from (default `_start_model`)."""
    state = _State.load(partial, cfg) if partial is not None and partial.is_file() else None
    if state is None:
        state = _State(
            start if start is not None else _start_model(cfg),
            np.zeros((0, 25), np.int8),
            None,
            [],
            np.random.default_rng(cfg.seed + 1),
        )
    model, rng = state.model, state.rng
    for r in range(len(state.history), cfg.rounds):
        start = time.perf_counter()
        pool = np.concatenate([base, state.extra])
        targets, reached = spread_backup(_net_of(model), pool, cfg.jobs)
        mean = targets[: len(base), 0] @ np.arange(K)
        previous = state.previous
        change = float(np.abs(mean - previous).mean()) if previous is not None else None
        lr = cfg.lr * (cfg.lr_final / cfg.lr) ** (r / max(cfg.rounds - 1, 1))
        loss = fit(model, pool, targets, cfg, lr, rng)
        state.history.append(
            {
                "round": r,
                "rows": len(pool),
                "loss": loss,
                "mean_change": change,
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
        log.info("one-sided round %s", state.history[-1])
        # The next round's rows: these, and some of the positions the policy reached.
        new = np.unique(reached[~_home(reached)], axis=0)
        new = new[~np.isin(_keys(new), _keys(pool))]
        room = min(int(cfg.grow * len(pool)), cfg.max_rows - len(pool), len(new))
        if room > 0:
            picked = new[rng.choice(len(new), size=room, replace=False)]
            state.extra = np.concatenate([state.extra, picked])
        state.previous = mean
        if partial is not None:
            state.save(partial, cfg)
    return _net_of(model), state.history


def main(argv: list[str] | None = None) -> int:
    """``python -m vrhcaby.learn.onesided [--config FILE] [key=value ...]``: train and
    write the network to the config's `out` (resuming from ``<out>.partial.npz``)."""
    import argparse

    import torch

    parser = argparse.ArgumentParser(prog="python -m vrhcaby.learn.onesided", description=__doc__)
    parser.add_argument("--config", help="TOML file of a OneSidedConfig")
    parser.add_argument("overrides", nargs="*", help="key=value settings over the file's")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(1)
    try:
        cfg = load_config(OneSidedConfig, args.config, args.overrides)
        start = _start_model(cfg)
        base = start_rows(cfg)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(cfg.out)
    partial = out.with_name(out.name + ".partial.npz")
    net, history = train(cfg, base, partial, start)
    onesided.save(net, out, {**to_dict(cfg), "history": history, "start_rows": len(base)})
    partial.unlink(missing_ok=True)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
