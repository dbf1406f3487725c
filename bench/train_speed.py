"""Training speed: this batched TD(λ) trainer against a plain one-game-at-a-time trainer.

    python bench/train_speed.py [--config configs/recipes/full.toml] [--seconds 20] [--repeats 3]
    python bench/train_speed.py --against ../base [--config ...]  # two checkouts

Both count whole training games: move generation, encoding, network evaluation and the
TD(λ) updates. The baseline is how typical PyTorch TD-Gammon code works: one game at a
time, one forward call per ply over that position's candidates, then an online TD(λ)
step with eligibility traces per output (Tesauro's rule), using the same engine, encoding
and network size. Prints the median of `--repeats` timed runs of each, side by side.

`--against DIR` times the batched trainer of this checkout against that of another
(DIR, e.g. a worktree of an older commit) instead: each timed run in a fresh process of
its own checkout, the two interleaved (this, other, this, other, ...) so that a change in
the machine's load falls on both, the same config file for both; medians and their ratio.
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
from vrhcaby.base.config import load_config
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn.encode import get_encoding
from vrhcaby.nn.net import NetConfig, build_model, joint
from vrhcaby.training.run import TrainConfig

# The linear part of `invert`: re-expresses traces when the side to move changes.
_VIEW = torch.tensor(invert(np.eye(5)) - invert(np.zeros(5)), dtype=torch.float32)


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


# One timed run of a checkout's batched trainer, in its own process: argv root, config,
# seconds, threads; prints [games, plies, seconds] as JSON.
_ONE_RUN = """
import importlib.util, json, sys
root, config, seconds, threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, root)
import torch
if threads:
    torch.set_num_threads(threads)
spec = importlib.util.spec_from_file_location("train_speed", root + "/bench/train_speed.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
print(json.dumps(bench.batched(bench.load_config(bench.TrainConfig, config), seconds)))
"""


def against(other: Path, config: str, seconds: float, repeats: int, threads: int) -> int:
    """This checkout's batched trainer against `other`'s, interleaved runs (see module)."""
    import json
    import os
    import subprocess

    here = Path(__file__).resolve().parents[1]
    other = other.resolve()
    if not (other / "bench" / "train_speed.py").is_file():
        print(f"error: {str(other)[:300]} holds no bench/train_speed.py", file=sys.stderr)
        return 2
    config = str(Path(config).resolve())
    runs: dict[Path, list[tuple[float, float]]] = {here: [], other: []}
    for _ in range(repeats):
        for root in runs:
            env = {**os.environ, "PYTHONPATH": str(root)}
            args = [sys.executable, "-c", _ONE_RUN, str(root), config, str(seconds), str(threads)]
            done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
            if done.returncode:
                print(f"error: the run in {root} failed: {done.stderr[-300:]}", file=sys.stderr)
                return 1
            games, plies, elapsed = json.loads(done.stdout.strip().splitlines()[-1])
            runs[root].append((plies / elapsed, games / elapsed))
            print(f"{root!s:<40} {plies / elapsed:>10,.0f} plies/s", flush=True)
    print(f"{'checkout':<40} {'plies/s':>10} {'games/s':>9}  (medians of {repeats})")
    medians = {}
    for root, rates in runs.items():
        medians[root] = statistics.median(p for p, _ in rates)
        games = statistics.median(g for _, g in rates)
        print(f"{root!s:<40} {medians[root]:>10,.0f} {games:>9,.1f}")
    print(f"ratio: {medians[here] / medians[other]:.3f} (this / other, plies/s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/recipes/full.toml", help="training config")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    parser.add_argument(
        "--against", metavar="DIR", type=Path, help="time the batched trainer against DIR's"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be at least 1 and --seconds positive")
    if args.against is not None:
        return against(args.against, args.config, args.seconds, args.repeats, args.threads)
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
