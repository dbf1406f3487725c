"""Benchmark of the six-dice players: the optimum, confirmed by simulation, and each
agent's mean final total as a fraction of it.

    .venv/bin/python bench/sixdice.py                   # evaluate checkpoints/sixdice-td.pt
    .venv/bin/python bench/sixdice.py --train 100       # train it first (100 rounds)

Prints a markdown table for the README.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.sixdice import (
    ALL_OPEN,
    load_dice_agent,
    play_game,
    self_play,
    solve,
    table_values,
)
from agents.sixdice_td import TDConfig, load_net, net_values, save_checkpoint, train


def interval(totals: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval."""
    return float(totals.mean()), float(1.96 * totals.std(ddof=1) / np.sqrt(len(totals)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/sixdice-td.pt")
    parser.add_argument("--train", type=int, default=0, help="training rounds first (0: none)")
    parser.add_argument("--lam", type=float, default=TDConfig.lam, help="TD lambda")
    parser.add_argument("--explore", type=float, default=TDConfig.explore)
    parser.add_argument("--hidden", type=int, default=TDConfig.hidden, help="network width")
    parser.add_argument(
        "--train-games", type=int, default=TDConfig.games, help="self-play games per round"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--games", type=int, default=10000, help="batched games per value agent")
    parser.add_argument("--engine-games", type=int, default=300, help="games through the engine")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.set_num_threads(args.threads)

    t0 = time.perf_counter()
    table = solve()
    optimum = float(table[ALL_OPEN, 0])
    print(f"optimal table: {time.perf_counter() - t0:.1f} s, optimum {optimum:.4f}")

    if args.train:
        t0 = time.perf_counter()
        cfg = TDConfig(
            iterations=args.train,
            games=args.train_games,
            lam=args.lam,
            hidden=args.hidden,
            explore=args.explore,
        )
        net, history = train(cfg)
        save_checkpoint(args.checkpoint, net, cfg, history)
        print(
            f"trained {args.train} rounds ({args.train * cfg.games} games) in "
            f"{time.perf_counter() - t0:.0f} s"
        )

    rng = np.random.default_rng(args.seed)
    rows = []
    for name, values in [("optimal", table_values(table)), ("td", None)]:
        if values is None:
            if not Path(args.checkpoint).is_file():
                continue
            values = net_values(load_net(args.checkpoint))
            name = f"td:{args.checkpoint}"
        t0 = time.perf_counter()
        mean, half = interval(self_play(values, args.games, rng).totals)
        rows.append((name, "batched", args.games, mean, half, time.perf_counter() - t0))
    specs = ["optimal", f"td:{args.checkpoint}", "greedy", "random"]
    if not Path(args.checkpoint).is_file():
        specs.remove(f"td:{args.checkpoint}")
    for spec in specs if args.engine_games else []:
        agent = load_dice_agent(spec, seed=args.seed)
        t0 = time.perf_counter()
        totals = np.array(
            [play_game([agent], rng).sheets[0].total for _ in range(args.engine_games)]
        )
        mean, half = interval(totals)
        rows.append((spec, "engine", args.engine_games, mean, half, time.perf_counter() - t0))

    print("\n| agent | played via | games | mean total | 95% interval | of optimum | time |")
    print("|---|---|---|---|---|---|---|")
    for name, via, n, mean, half, secs in rows:
        print(
            f"| {name} | {via} | {n} | {mean:.2f} | ±{half:.2f} | {mean / optimum:.1%} "
            f"| {secs:.0f} s |"
        )
    print(f"\noptimum (exact): {optimum:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
