"""What a deeper network costs: evaluations per second, 0-ply tournament time and the cold
0-ply hint of networks side by side (issue 29 item 3: a cold 0-ply `hint` under
0.3 s, 0-ply tournaments within 2x today's time).

    python bench/depth.py BASE.pt DEEP.pt [MORE.pt ...] [--games 1000] [--repeats 3]

- evaluations (afterstates) per second of each network in the three ways
  `bench/netset.py` asks (`from (batch)`, `full (batch)`, `from (position)`), on the
  afterstates of seeded random games;
- a 0-ply tournament: `--games` cubeless money games of each against pubeval, the same
  dice for all (seed 1), `--repeats` times, the networks taking turns within each repeat
  so that load from other processes falls on all alike;
- a cold `vrhcaby hint POSITION DICE --plies 0 --agent td:NET` in a fresh interpreter
  (imports and the checkpoint load count), `--hints` runs of each on the README's contact
  position, taking turns.

Every figure is a median over the repeats, each network's beside the first's with the
ratio to it. One thread (set before numpy loads), so a core's figures.
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
from vrhcaby.play.tournament import PairSettings, play_pair  # noqa: E402

#: The README's contact example and a roll.
POSITION, DICE = "4HPwATDgc/ABMA", "31"
#: The tournaments: cubeless money, mirrored (the yardstick tournaments' settings).
CUBELESS = PairSettings(cube=False)


def row(label: str, figures: list[float], unit: str = "") -> None:
    """One measure: each network's figure, then each one's ratio to the first's."""
    ratios = "".join(f"{f / figures[0]:>8.2f}" for f in figures[1:])
    print(f"{label:<28}" + "".join(f"{f:>12,.3f}" for f in figures) + f"  {ratios}  {unit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("networks", nargs="+", help="checkpoints; ratios to the first")
    parser.add_argument("--games", type=int, default=1000, help="games of each tournament")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hints", type=int, default=5, help="cold hints of each")
    parser.add_argument("--positions", type=int, default=24, help="random games to draw from")
    args = parser.parse_args()

    paths = list(args.networks)
    evaluators = {path: load_evaluator(path) for path in paths}
    for number, (path, evaluator) in enumerate(evaluators.items()):
        print(f"{number}: {path}: {evaluator.describe()}")  # type: ignore[union-attr]
    roots, after, parent = lockstep_positions(args.positions, 0)
    print(f"{len(after):,} afterstates of {len(roots):,} positions")
    print(f"{'network':<28}" + "".join(f"{n:>12}" for n in range(len(paths))) + "  ratios to 0")
    for label, make in (
        ("from (batch)", lambda ev: lambda: ev.probabilities_from(roots, after, parent)),
        ("full (batch)", lambda ev: lambda: ev.probabilities(after)),
        ("from (position)", lambda ev: per_position(ev, roots, after, parent)),
    ):
        got = rates({p: make(ev) for p, ev in evaluators.items()}, len(after), args.repeats)
        row(f"{label} evals/s", [got[p] for p in paths])

    agents = {path: load_agent(f"td:{path}") for path in paths}
    pubeval = load_agent("pubeval")
    seconds: dict[str, list[float]] = {path: [] for path in paths}
    ppg: dict[str, float] = {}
    for agent in agents.values():
        play_pair(agent, pubeval, games=4, seed=0, settings=CUBELESS)  # compile, warm up
    for _ in range(args.repeats):
        for path, agent in agents.items():
            start = time.perf_counter()
            ppg[path] = play_pair(agent, pubeval, games=args.games, seed=1, settings=CUBELESS).ppg
            seconds[path].append(time.perf_counter() - start)
    row(f"0-ply tournament ({args.games} g)", [statistics.median(seconds[p]) for p in paths], "s")
    print(f"{'  ppg against pubeval':<28}" + "".join(f"{ppg[p]:>+12.3f}" for p in paths))

    hints: dict[str, list[float]] = {path: [] for path in paths}
    commands = {
        path: [*hint_command(POSITION, DICE, 0), "--agent", f"td:{Path(path).resolve()}"]
        for path in paths
    }
    for command in commands.values():
        run(command, ROOT)  # bytecode and numba's cache
    for _ in range(args.hints):
        for path, command in commands.items():
            hints[path].append(run(command, ROOT))
    row("cold 0-ply hint", [statistics.median(hints[p]) for p in paths], "s")


if __name__ == "__main__":
    main()
