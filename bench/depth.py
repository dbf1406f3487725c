"""What a deeper network costs: evaluations per second, 0-ply tournament time and the cold
0-ply hint of two networks side by side (issue 29 item 3: a cold 0-ply `hint` under
0.3 s, 0-ply tournaments within 2x today's time).

    python bench/depth.py BASE.pt DEEP.pt [--games 1000] [--repeats 3] [--hints 5]

- evaluations (afterstates) per second of each network in the three ways
  `bench/netset.py` asks (`from (batch)`, `full (batch)`, `from (position)`), on the
  afterstates of seeded random games;
- a 0-ply tournament: `--games` cubeless money games of each against pubeval, the same
  dice for both (seed 1), `--repeats` times, the two taking turns within each repeat so
  that load from other processes falls on both alike;
- a cold `vrhcaby hint POSITION DICE --plies 0 --agent td:NET` in a fresh interpreter
  (imports and the checkpoint load count), `--hints` runs of each on the README's contact
  position, taking turns.

Every figure is a median over the repeats, the second network's beside the first's with
their ratio. One thread (set before numpy loads), so a core's figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, before numpy loads

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not another
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from cli_latency import hint_command, run  # noqa: E402
from corpus import lockstep_positions  # noqa: E402
from netset import per_position, rates  # noqa: E402

from agents import load_agent  # noqa: E402
from vrhcaby.nn.net import load_evaluator  # noqa: E402
from vrhcaby.play.tournament import play_pair  # noqa: E402

#: The README's contact example and a roll.
POSITION, DICE = "4HPwATDgc/ABMA", "31"


def row(label: str, a: float, b: float, unit: str = "") -> None:
    print(f"{label:<26}{a:>14,.3f}{b:>14,.3f}{b / a:>10.2f}  {unit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the first network (checkpoint)")
    parser.add_argument("deep", help="the second network (checkpoint)")
    parser.add_argument("--games", type=int, default=1000, help="games of each tournament")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hints", type=int, default=5, help="cold hints of each")
    parser.add_argument("--positions", type=int, default=24, help="random games to draw from")
    args = parser.parse_args()

    paths = {"base": args.base, "deep": args.deep}
    evaluators = {name: load_evaluator(path) for name, path in paths.items()}
    for name, evaluator in evaluators.items():
        print(f"{name}: {paths[name]}: {evaluator.describe()}")  # type: ignore[union-attr]
    roots, after, parent = lockstep_positions(args.positions, 0)
    print(f"{len(after):,} afterstates of {len(roots):,} positions")
    print(f"{'':<26}{'base':>14}{'deep':>14}{'deep/base':>10}")
    for label, make in (
        ("from (batch)", lambda ev: lambda: ev.probabilities_from(roots, after, parent)),
        ("full (batch)", lambda ev: lambda: ev.probabilities(after)),
        ("from (position)", lambda ev: per_position(ev, roots, after, parent)),
    ):
        got = rates({n: make(ev) for n, ev in evaluators.items()}, len(after), args.repeats)
        row(f"{label} evals/s", got["base"], got["deep"])

    agents = {name: load_agent(f"td:{path}") for name, path in paths.items()}
    pubeval = load_agent("pubeval")
    seconds: dict[str, list[float]] = {name: [] for name in agents}
    ppg: dict[str, float] = {}
    for agent in agents.values():
        play_pair(agent, pubeval, games=4, seed=0)  # compile and warm up
    for _ in range(args.repeats):
        for name, agent in agents.items():
            start = time.perf_counter()
            ppg[name] = play_pair(agent, pubeval, games=args.games, seed=1).ppg
            seconds[name].append(time.perf_counter() - start)
    base, deep = (statistics.median(seconds[n]) for n in ("base", "deep"))
    row(f"0-ply tournament s ({args.games} g)", base, deep, "seconds, median")
    print(
        f"{'':<26}{'':>14}{'':>14}{'':>10}  ppg vs pubeval {ppg['base']:+.3f} / {ppg['deep']:+.3f}"
    )

    hints: dict[str, list[float]] = {name: [] for name in paths}
    commands = {
        name: [*hint_command(POSITION, DICE, 0), "--agent", f"td:{Path(path).resolve()}"]
        for name, path in paths.items()
    }
    for command in commands.values():
        run(command, ROOT)  # bytecode and numba's cache
    for _ in range(args.hints):
        for name, command in commands.items():
            hints[name].append(run(command, ROOT))
    base, deep = (statistics.median(hints[n]) for n in ("base", "deep"))
    row("cold 0-ply hint s", base, deep, "seconds, median")


if __name__ == "__main__":
    main()
