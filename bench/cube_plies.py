"""What a cube decision costs at 0, 1 and 2 plies (`agents.cubeful`), next to a checker play.

    python bench/cube_plies.py [--network td] [--positions 24] [--repeat 3]

Positions: the boards before each roll of the shipped network's own games (cubeless money,
`--seed`), `--positions` distinct ones with legal plays. On one core each is given, warm
(the kernels loaded, the network's first call made), the contenders taking turns on each
position: a cube decision in money play with a
centred cube at `cube_plies` 0, 1 and 2, without pruning and with the network's pruner
(`td?cube_prune=off`, `on`), the old way for comparison (Janowski's formula on the n-ply cubeless
probabilities, what `cube_plies` meant before), and the agent's 1-ply and 2-ply checker
play of the recorded roll: the median milliseconds a decision and the ratio to the 1-ply
checker play. Then the cold `vrhcaby cube POSITION` (a fresh interpreter: imports,
kernels and the network's load all count) at `--cube-plies` 0, 1, 1 pruned and 2 and
without the option (the default depth): the median wall seconds over `--repeat` runs on
the start and three of those positions, the contenders taking turns. `--cold-only` times
only the cold answers.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, before numpy loads
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from agents import load_agent  # noqa: E402
from vrhcaby.equity import decisions  # noqa: E402
from vrhcaby.equity.context import GameContext  # noqa: E402
from vrhcaby.play.judge import recorded_positions  # noqa: E402


def positions(network: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` distinct boards before a roll of the network's games with a choice of plays,
    and their rolls."""
    agent = load_agent(network)
    boards, dice, _ = recorded_positions(agent, agent, max(2, n // 30 + 1), seed)
    _, parent = engine.batch_afterstates(boards, dice)
    choice = np.flatnonzero(np.bincount(parent, minlength=len(boards)) > 1)
    keys = boards[choice].reshape(len(choice), -1)
    _, first = np.unique(keys, axis=0, return_index=True)
    rows = choice[np.random.default_rng(seed).permutation(np.sort(first))[:n]]
    return boards[rows], dice[rows]


def median_ms(rows: list, items: list) -> list[float]:
    """Median milliseconds of each row's `decide(item)` over the items, the rows taking
    turns on each item (so that load from other processes falls on all alike; one warm-up
    call each first)."""
    times: list[list[float]] = [[] for _ in rows]
    for _, decide in rows:
        decide(items[0])
    for item in items:
        for k, (_, decide) in enumerate(rows):
            start = time.perf_counter()
            decide(item)
            times[k].append(time.perf_counter() - start)
    return [1000 * statistics.median(t) for t in times]


#: The cold answers timed: (column, agent spec option added, --cube-plies or None).
COLD = (
    ("0", "", 0),
    ("1", "", 1),
    ("1 pruned", "prune=on", 1),
    ("2", "", 2),
    ("default", "", None),
)


def cube_command(network: str, position: str, option: str, plies: int | None) -> list[str]:
    """A cold `vrhcaby cube POSITION` of `network` (with spec `option`) at `plies`."""
    code = "import sys, vrhcaby.cli.main as cli; sys.exit(cli.main(sys.argv[1:]))"
    sep = "&" if "?" in network else "?"
    args = ["cube", position, "--agent", f"{network}{sep}{option}" if option else network]
    if plies is not None:
        args += ["--cube-plies", str(plies)]
    return [sys.executable, "-c", code, *args]


def cold_seconds(
    network: str, positions: list[str], repeat: int
) -> dict[str, list[tuple[float, float]]]:
    """The median wall and CPU seconds (the child's user and system time, which load from
    other processes disturbs less) of each position's cold answer in each `COLD` column,
    the columns taking turns on each position in each of `repeat` rounds."""
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    subprocess.run(  # one first run writes what a first run caches
        cube_command(network, positions[0], "", 1), cwd=ROOT, check=True, capture_output=True
    )
    for _ in range(repeat):
        for position in positions:
            for name, option, plies in COLD:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                command = cube_command(network, position, option, plies)
                subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
                wall = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                times.setdefault((position, name), []).append((wall, cpu))
    return {
        position: [
            (
                statistics.median(w for w, _ in times[position, name]),
                statistics.median(c for _, c in times[position, name]),
            )
            for name, _, _ in COLD
        ]
        for position in positions
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", default="td", help="a td agent spec (default td)")
    parser.add_argument("--positions", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--cold-only", action="store_true", help="time only the cold answers")
    args = parser.parse_args(argv)
    network = args.network
    boards, dice = positions(network, args.positions, args.seed)
    if not args.cold_only:
        warm(network, boards, dice)
    shown = [engine.Position.start().position_id()]
    shown += [engine.position_id(b) for b in boards[:3]]
    print(
        f"cold `vrhcaby cube POSITION [--cube-plies N]`, median of {args.repeat} runs, "
        "wall seconds (CPU seconds)"
    )
    print(f"  {'position':16} " + " ".join(f"{name:>15}" for name, _, _ in COLD))
    for position, cells in cold_seconds(network, shown, args.repeat).items():
        print(f"  {position:16} " + " ".join(f"{w:7.3f} ({c:5.3f})" for w, c in cells))
    return 0


def warm(network: str, boards: np.ndarray, dice: np.ndarray) -> None:
    """The warm table: each kind of decision's median milliseconds on the positions."""
    ctx = GameContext(jacoby=True)
    items = list(zip(boards, dice, strict=True))
    print(f"{network}: {len(items)} positions of its own games, money, centred cube, one core")

    def cube_at(spec: str):
        agent = load_agent(spec)

        def decide(item) -> None:
            agent.__dict__.pop("_last_search", None)  # no answer kept from the last board
            agent.cube_decision(engine.Position(item[0]), ctx)  # type: ignore[attr-defined]

        return decide

    def janowski_at(plies: int):
        agent = load_agent(network)

        def decide(item) -> None:
            p = agent.before_roll(item[0][None], plies)[0]  # type: ignore[attr-defined]
            decisions.cube_decision(p, item[0], ctx)

        return decide

    def play_at(plies: int):
        agent = load_agent(f"{network}?plies={plies}")

        def decide(item) -> None:
            agent.choose_boards(item[0][None], item[1][None])  # type: ignore[attr-defined]

        return decide

    sep = "&" if "?" in network else "?"
    rows = [
        ("cube, 0-ply (Janowski)", cube_at(f"{network}{sep}cube_plies=0")),
        ("cube, 1-ply cubeful", cube_at(f"{network}{sep}cube_plies=1&cube_prune=off")),
        ("cube, 1-ply cubeful, pruned", cube_at(f"{network}{sep}cube_plies=1&cube_prune=on")),
        ("cube, 2-ply cubeful", cube_at(f"{network}{sep}cube_plies=2&cube_prune=off")),
        ("cube, 2-ply cubeful, pruned", cube_at(f"{network}{sep}cube_plies=2&cube_prune=on")),
        ("old: Janowski on 1-ply probabilities", janowski_at(1)),
        ("old: Janowski on 2-ply probabilities", janowski_at(2)),
        ("checker play, 1-ply", play_at(1)),
        ("checker play, 2-ply", play_at(2)),
    ]
    figures = list(zip([name for name, _ in rows], median_ms(rows, items), strict=True))
    reference = dict(figures)["checker play, 1-ply"]
    print(f"  {'decision':38} {'ms (median)':>11} {'/ 1-ply play':>12}")
    for name, ms in figures:
        print(f"  {name:38} {ms:11.1f} {ms / reference:11.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
