"""Rollout throughput and what variance reduction buys (docs/benchmarks.md, docs/commands.md).

    python bench/rollout.py                    # 1,296 trials of the start position, 0-ply
    python bench/rollout.py --net PATH --trials 1296 --jobs 2
    python bench/rollout.py --against /tmp/base --repeats 3 --only default

For each of: plain dice without luck adjustment, quasi-random dice, luck adjustment, and
both (the default; `--only default` measures it alone), it prints trials per second, wall
and CPU seconds (this process and its workers: the fairer figure on a loaded machine), and
the equity with its standard error. Luck adjustment judges every roll's plays at every
ply, so it costs about 21 times the network evaluations of a plain 0-ply rollout.

`--against DIR` measures another copy of the project (e.g. `git worktree add /tmp/base
HEAD~3`) side by side with this one: each measurement runs in a fresh process, the two
trees taking turns `--repeats` times; it prints both trees' medians and their ratio.
The network is `--net`, else `checkpoints/td-best.pt`, else an untrained 198-80-5 network
(speed does not depend on the weights; the errors do: a stronger network cuts more).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {
    "random": (False, False),
    "quasi": (True, False),
    "luck": (False, True),
    "default": (True, True),
}


def network(path: str | None):
    import numpy as np

    from agents.td import SHIPPED
    from vrhcaby.nn.net import Evaluator, NetConfig, load_evaluator

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


def measure(args: argparse.Namespace, names: list[str]) -> list[dict]:
    """Time the rollouts `names` of the start position in this process (the project at
    `args.root` first on the path)."""
    sys.path.insert(0, str(Path(args.root).resolve()))
    import engine
    from agents.td import TDAgent
    from vrhcaby.play.rollout import Settings, rollout_position

    evaluator, described = network(args.net)
    agent = TDAgent(evaluator, plies=0)
    start = engine.Position.start().board
    # Compile and load the numba kernels before timing.
    rollout_position(start, agent, settings=Settings(trials=2, truncate=2))
    out = []
    for name in names:
        quasi, luck = CONFIGS[name]
        settings = Settings(trials=args.trials, quasi_random=quasi, luck=luck, seed=args.seed)
        t, cpu = time.perf_counter(), cpu_seconds()
        r = rollout_position(start, agent, settings=settings, jobs=args.jobs)
        seconds, cpu = time.perf_counter() - t, cpu_seconds() - cpu
        e = r.estimate()
        out.append(
            {
                "name": name,
                "seconds": seconds,
                "cpu": cpu,
                "equity": e.equity,
                "se": e.equity_se,
                "net": described,
            }
        )
    return out


def row(label: str, name: str, seconds: float, cpu: float, eq: float, se: float, n: int) -> str:
    quasi, luck = CONFIGS[name]
    dice = "quasi-random" if quasi else "random"
    return (
        f"{label:<8}{dice:<14}{'on' if luck else 'off':<6}{n / seconds:10.1f}"
        f"{seconds:9.2f}{cpu:8.2f}{eq:+9.4f}{se:8.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", help="checkpoint (default checkpoints/td-best.pt)")
    parser.add_argument("--trials", type=int, default=1296)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=sorted(CONFIGS), help="one configuration")
    parser.add_argument("--against", metavar="DIR", help="another copy of the project")
    parser.add_argument("--repeats", type=int, default=1, help="turns each tree takes")
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [args.only] if args.only else list(CONFIGS)
    head = f"{'tree':<8}{'dice':<14}{'luck':<6}{'trials/s':>10}{'seconds':>9}{'cpu s':>8}"
    head += f"{'equity':>9}{'se':>8}"
    if args.json:
        print(json.dumps(measure(args, names)))
        return
    if not args.against:
        results = measure(args, names)
        print(f"start position, {args.trials} trials, 0-ply, {results[0]['net']}, jobs {args.jobs}")
        print(head)
        for x in results:
            print(row("", x["name"], x["seconds"], x["cpu"], x["equity"], x["se"], args.trials))
        return
    trees = {"this": str(ROOT), "against": str(Path(args.against).resolve())}
    runs: dict[tuple[str, str], list[dict]] = {}
    common = ["--trials", str(args.trials), "--jobs", str(args.jobs), "--seed", str(args.seed)]
    common += ["--net", args.net] if args.net else []
    for name in names:
        for _ in range(args.repeats):
            for label, root in trees.items():
                cmd = [sys.executable, __file__, "--json", "--only", name, "--root", root]
                done = subprocess.run([*cmd, *common], capture_output=True, text=True, check=True)
                runs.setdefault((name, label), []).extend(json.loads(done.stdout))
    print(
        f"start position, {args.trials} trials, 0-ply, jobs {args.jobs}, medians of "
        f"{args.repeats} interleaved runs; this = {ROOT}, against = {trees['against']}"
    )
    print(head + f"{'cpu ratio':>11}")
    for name in names:
        cpu = {}
        for label in trees:
            xs = runs[(name, label)]
            med = {k: statistics.median(x[k] for x in xs) for k in ("seconds", "cpu")}
            cpu[label] = med["cpu"]
            line = row(
                label, name, med["seconds"], med["cpu"], xs[0]["equity"], xs[0]["se"], args.trials
            )
            print(line + (f"{cpu['against'] / cpu['this']:10.2f}x" if label == "against" else ""))


if __name__ == "__main__":
    main()
