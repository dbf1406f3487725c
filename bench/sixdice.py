"""Benchmark of the six-dice players: the optimum, confirmed by simulation, and each
agent's mean final total as a fraction of it.

    .venv/bin/python bench/sixdice.py                                # evaluate the shipped net
    .venv/bin/python bench/sixdice.py --train configs/recipes/sixdice.toml   # retrain it first

`--train` runs the project's trainer on that config (`vrhcaby train`; TensorBoard logs
under runs/), copies the run's best network by its evaluation (else its last) to
`--checkpoint`, then evaluates it. Prints a markdown table for the README.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vrhcaby.sixdice.learner import load_net, net_values
from vrhcaby.sixdice.players import (
    ALL_OPEN,
    play_game,
    self_play,
    solve,
    table_values,
)
from vrhcaby.sixdice.specs import load_dice_agent


def interval(totals: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval."""
    return float(totals.mean()), float(1.96 * totals.std(ddof=1) / np.sqrt(len(totals)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/sixdice-td.pt")
    parser.add_argument("--train", metavar="TOML", help="train first, with this config")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--games", type=int, default=10000, help="batched games per value agent")
    parser.add_argument("--engine-games", type=int, default=300, help="games through the engine")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    t0 = time.perf_counter()
    table = solve()
    optimum = float(table[ALL_OPEN, 0])
    print(f"optimal table: {time.perf_counter() - t0:.1f} s, optimum {optimum:.4f}")

    if args.train:
        from vrhcaby.cli import train

        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            code = train.main(
                ["--config", args.train, "--no-progress", "--set", f"checkpoint_dir={tmp}"]
            )
            if code:
                return code
            # the best by evaluation; the last snapshot when the config evaluates never
            best = next(Path(tmp).glob("*-best.pt"), None) or max(Path(tmp).glob("*-g*.pt"))
            shutil.copyfile(best, args.checkpoint)
        print(f"trained in {time.perf_counter() - t0:.0f} s; {best.name} -> {args.checkpoint}")

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
