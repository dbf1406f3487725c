"""Training speed on Ray with 1, 2, ... self-play workers, next to the local trainer, and
how many workers one learner can feed.

    python bench/ray_scaling.py [--config configs/quick.toml] [--workers 1 2] [--seconds 20]

Every figure counts whole learned games (self-play and TD(λ) updates). The local row is
the single-process batched trainer (`vrhcaby.learn.trainer.Trainer`); the Ray rows are
`RayTrainer` on a local Ray instance with that many workers (the learner in this
process). Separately, on one batch of games, it times self-play and the learner's updates
alone: one learner can feed about (learner games/s) / (one worker's games/s) workers
before it, not the workers, bounds the speed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vrhcaby.base.config import load_config
from vrhcaby.learn.learner import scheduled
from vrhcaby.learn.ray import DistributedConfig, RayTrainer
from vrhcaby.learn.trainer import Trainer
from vrhcaby.play.ray import connect
from vrhcaby.training.run import TrainConfig


def timed(trainer: Trainer | RayTrainer, seconds: float) -> tuple[int, float]:
    """Rounds for about `seconds` after one warm-up round: (games learned, elapsed)."""
    trainer.round()
    games, start = trainer.games, time.perf_counter()
    while time.perf_counter() - start < seconds:
        trainer.round()
    return trainer.games - games, time.perf_counter() - start


def split_costs(cfg: TrainConfig, repeats: int) -> tuple[float, float]:
    """Games/s of self-play alone and of the learner alone (median over `repeats` batches)."""
    trainer = Trainer(cfg.net, cfg.td, cfg.variant, 10**9, cfg.seed, torch.device("cpu"))
    trainer.round()  # compile and warm up
    play, learn = [], []
    n = cfg.td.batch_games
    for _ in range(repeats):
        start = time.perf_counter()
        episodes = trainer.selfplay.play(n, trainer.rng)
        play.append(n / (time.perf_counter() - start))
        lam = scheduled(cfg.td.lam, cfg.td.lam_end, 0.0)
        start = time.perf_counter()
        for chunk in np.array_split(np.arange(n), max(1, -(-n // cfg.td.games_per_update))):
            trainer.learner.update(episodes.select(chunk), lam)
        learn.append(n / (time.perf_counter() - start))
    return float(np.median(play)), float(np.median(learn))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/quick.toml", help="training config")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per timed run")
    parser.add_argument("--address", help="Ray cluster to join (default: start one here)")
    args = parser.parse_args(argv)
    cfg = load_config(TrainConfig, args.config)
    torch.set_num_threads(1)  # one core for the learner, the others for the workers
    print(
        f"network {cfg.net.describe()}, {cfg.td.batch_games} games per batch, "
        f"{cfg.td.games_per_update} games per update"
    )

    play, learn = split_costs(cfg, 3)
    rows = []
    local = Trainer(cfg.net, cfg.td, cfg.variant, 10**9, cfg.seed, torch.device("cpu"))
    rows.append(("local (one process)", *timed(local, args.seconds), float("nan")))
    ray = connect(args.address)
    print(f"Ray cluster: {ray.cluster_resources().get('CPU', 0):.0f} CPUs", flush=True)
    for workers in args.workers:
        trainer = Trainer(cfg.net, cfg.td, cfg.variant, 10**9, cfg.seed, torch.device("cpu"))
        remote = RayTrainer(trainer, DistributedConfig(workers=workers), args.address)
        try:
            games, seconds = timed(remote, args.seconds)
            busy = remote.scalars()["learner/busy_fraction"]
        finally:
            remote.close()
        rows.append((f"ray, {workers} worker{'s' * (workers > 1)}", games, seconds, busy))

    print(f"{'trainer':<24} {'games':>7} {'games/s':>9} {'learner busy':>13}")
    for name, games, seconds, busy in rows:
        shown = "-" if np.isnan(busy) else f"{busy:.0%}"
        print(f"{name:<24} {games:>7} {games / seconds:>9.1f} {shown:>13}")
    print(f"self-play alone: {play:.1f} games/s per process; learner alone: {learn:.1f} games/s")
    print(f"one learner can feed about {learn / play:.1f} workers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
