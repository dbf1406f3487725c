"""Training speed: this batched TD(λ) trainer against a plain one-game-at-a-time trainer.

    python bench/train_speed.py [--config configs/full.toml] [--seconds 20] [--repeats 3]

Both count whole training games: move generation, encoding, network evaluation and the
TD(λ) updates. The baseline is how typical PyTorch TD-Gammon code works: one game at a
time, one forward call per ply over that position's candidates, then an online TD(λ)
step with eligibility traces per output (Tesauro's rule), using the same engine, encoding
and network size. Prints the median of `--repeats` timed runs of each, side by side.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine
from train import TrainConfig
from vrhcaby.config import load_config
from vrhcaby.encode import get_encoding
from vrhcaby.net import NetConfig, build_model, equity, invert, joint, outcome
from vrhcaby.td import Trainer

# The linear part of `invert`: re-expresses traces when the side to move changes.
_VIEW = torch.tensor(
    [[-1.0, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]]
)


def batched(cfg: TrainConfig, seconds: float) -> tuple[int, int, float]:
    """Rounds of the batched trainer for about `seconds`: (games, plies, elapsed)."""
    trainer = Trainer(cfg.net, cfg.td, cfg.variant, 10**9, cfg.seed, torch.device("cpu"))
    trainer.round()  # compile the kernels, warm the caches
    games = plies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        stats = trainer.round()
        games += stats.games
        plies += stats.plies
    return games, plies, time.perf_counter() - start


def baseline(net: NetConfig, lam: float, lr: float, seconds: float) -> tuple[int, int, float]:
    """One game at a time with online TD(λ) traces: (games, plies, elapsed)."""
    model = build_model(net)
    params = list(model.parameters())
    encode = get_encoding(net.encoding)[0]
    rng = np.random.default_rng(0)
    games = plies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or not games:  # at least one whole game
        board = engine.Position.start().board.copy()
        _, dice = engine.opening_roll(rng)
        traces = [torch.zeros((5, *p.shape)) for p in params]
        previous = None  # value of the last afterstate, from its mover's view
        while True:
            after, _ = engine.batch_afterstates(board[None], np.array([dice]))
            if not len(after):
                after = board[None]
            with torch.no_grad():
                scores = equity(joint(model(torch.from_numpy(encode(after)))))
            chosen = after[int(torch.argmax(scores))]
            won = int(engine.game_value(chosen[None])[0])
            x = torch.from_numpy(encode(chosen[None]))
            if previous is not None:  # move the previous afterstate toward this one
                with torch.no_grad():
                    target = torch.from_numpy(outcome(np.array(won))) if won else joint(model(x))[0]
                    delta = invert(target) - previous
                    for p, e in zip(params, traces, strict=True):
                        p += lr * (delta @ e.reshape(5, -1)).reshape(p.shape)
            if not won:
                current = joint(model(x))[0]
                jac = [
                    torch.autograd.grad(current[k], params, retain_graph=k < 4) for k in range(5)
                ]
                for j, e in enumerate(traces):
                    traces[j] = lam * (_VIEW @ e.reshape(5, -1)).reshape(e.shape)
                    traces[j] += torch.stack([g[j] for g in jac])
                previous = current.detach()
            plies += 1
            if won:
                break
            board = chosen[::-1].copy()
            dice = tuple(engine.roll_dice(rng, 1)[0])
        games += 1
    return games, plies, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/full.toml", help="training config")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    args = parser.parse_args(argv)
    cfg = load_config(TrainConfig, args.config)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"network {cfg.net.describe()}, {torch.get_num_threads()} torch threads")
    rows = []
    for name, job in (
        (f"batched ({cfg.td.batch_games} games in lockstep)", lambda: batched(cfg, args.seconds)),
        ("one game at a time (baseline)", lambda: baseline(cfg.net, 0.7, 0.1, args.seconds)),
    ):
        runs = [job() for _ in range(args.repeats)]
        plies = statistics.median(p / s for _, p, s in runs)
        games = statistics.median(g / s for g, _, s in runs)
        rows.append((name, plies, games))
    print(f"{'trainer':<40} {'plies/s':>10} {'games/s':>9}")
    for name, plies, games in rows:
        print(f"{name:<40} {plies:>10,.0f} {games:>9,.1f}")
    print(f"speed-up: {rows[0][1] / rows[1][1]:.1f}x in plies/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
