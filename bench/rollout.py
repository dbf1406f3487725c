"""Rollout throughput and what variance reduction buys, the figures quoted in the README.

    python bench/rollout.py                    # 1,296 trials of the start position, 0-ply
    python bench/rollout.py --net PATH --trials 1296 --jobs 2

For each of: plain dice without luck adjustment, quasi-random dice, luck adjustment, and
both (the default), it prints trials per second, wall and CPU seconds (this process and
its workers: the fairer figure on a loaded machine), and the equity with its standard
error. Luck adjustment judges every roll's plays at every ply, so it costs about 21 times
the network evaluations of a plain 0-ply rollout.
The network is `--net`, else `checkpoints/td-best.pt`, else an untrained 198-80-5 network
(speed does not depend on the weights; the errors do: a stronger network cuts more).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine
from agents.td import SHIPPED, TDAgent
from vrhcaby.net import Evaluator, NetConfig, load_evaluator
from vrhcaby.rollout import Settings, rollout_position


def network(path: str | None) -> tuple[Evaluator, str]:
    file = Path(path) if path else SHIPPED
    if file.is_file():
        ev = load_evaluator(file)
        return ev, f"{file} ({ev.net.describe()})"
    cfg = NetConfig()
    rng = np.random.default_rng(0)
    weights = [
        (rng.normal(0, 0.1, (o, i)).astype(np.float32), np.zeros(o, np.float32))
        for i, o in zip(cfg.sizes[:-1], cfg.sizes[1:], strict=True)
    ]
    return Evaluator(cfg, weights), f"untrained {cfg.describe()}"


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", help="checkpoint (default checkpoints/td-best.pt)")
    parser.add_argument("--trials", type=int, default=1296)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    evaluator, described = network(args.net)
    agent = TDAgent(evaluator, plies=0)
    start = engine.Position.start().board
    # Compile and load the numba kernels before timing.
    rollout_position(start, agent, settings=Settings(trials=2, truncate=2))
    print(f"start position, {args.trials} trials, 0-ply, {described}, jobs {args.jobs}")
    print(
        f"{'dice':<14}{'luck':<6}{'trials/s':>10}{'seconds':>9}{'cpu s':>8}{'equity':>9}{'se':>8}"
    )
    for quasi, luck in ((False, False), (True, False), (False, True), (True, True)):
        settings = Settings(trials=args.trials, quasi_random=quasi, luck=luck, seed=args.seed)
        t, cpu = time.perf_counter(), cpu_seconds()
        r = rollout_position(start, agent, settings=settings, jobs=args.jobs)
        seconds, cpu = time.perf_counter() - t, cpu_seconds() - cpu
        e = r.estimate()
        dice = "quasi-random" if quasi else "random"
        print(
            f"{dice:<14}{'on' if luck else 'off':<6}{args.trials / seconds:10.1f}"
            f"{seconds:9.1f}{cpu:8.1f}{e.equity:+9.4f}{e.equity_se:8.4f}"
        )


if __name__ == "__main__":
    main()
