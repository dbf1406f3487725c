"""How fast the 2-ply search is, pruned and not, next to GNU Backgammon's 2-ply.

    python bench/search_speed.py [--network td-best] [--positions 16] [--keep 4]

Positions: the afterstates the shipped network plays at 0-ply in its own games (cubeless
money, `--seed`), `--positions` distinct ones. On one core (one thread) each is valued at
2-ply by `agents.search.ply_probabilities` without pruning, then with the network's
pruner (`agents.td.load_pruner`, `--keep` replies per roll), then by
`gnubg_nn.probabilities(board, 2)` (GNU Backgammon's 2-ply, its own pruning nets on):
positions per second and the ratios, and how far the pruned equities are from the
unpruned ones. Then the cold `vrhcaby hint POSITION DICE --plies 2` (a fresh interpreter:
imports, numba's cached kernels and the checkpoint load all count; pruned by default, then
`--no-prune`) and, when the `gnubg` command is installed, `gnubg -t` giving the same hint at
2 plies: the median wall time over `--hint-repeat` runs on each of three decisions.
"""

from __future__ import annotations

import argparse
import os
import shutil
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
from agents import load_agent, search  # noqa: E402
from agents.gnubg import require_gnubg_nn  # noqa: E402
from agents.td import find_checkpoint, load_pruner  # noqa: E402
from vrhcaby.equity.outcomes import equity  # noqa: E402
from vrhcaby.play.judge import recorded_positions  # noqa: E402

#: The gnubg command (Debian installs it in /usr/games, often not on PATH), or None.
GNUBG = shutil.which("gnubg") or shutil.which("gnubg", path="/usr/games")


def positions(network: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`n` distinct afterstates the network plays in its games, and the boards and rolls
    they were played from."""
    agent = load_agent(f"td:{network}")
    boards, dice, _ = recorded_positions(agent, agent, max(2, n // 30 + 1), seed)
    _, parent = engine.batch_afterstates(boards, dice)
    choice = np.flatnonzero(np.bincount(parent, minlength=len(boards)) > 1)
    chosen = agent.choose_boards(boards[choice], dice[choice])  # type: ignore[attr-defined]
    _, first = np.unique(chosen.reshape(len(chosen), -1), axis=0, return_index=True)
    rows = np.random.default_rng(seed).permutation(np.sort(first))[:n]
    return chosen[rows], boards[choice][rows], dice[choice][rows]


def per_second(value, a: np.ndarray) -> tuple[float, np.ndarray]:
    """Positions valued per second by `value(a)` (one warm-up call first), and the values."""
    value(a[:1])
    start = time.perf_counter()
    out = value(a)
    return len(a) / (time.perf_counter() - start), out


def gnubg_two_ply(a: np.ndarray) -> np.ndarray:
    """gnubg-nn's 2-ply cubeless equity of each afterstate for its mover."""
    gnubg_nn = require_gnubg_nn("the speed benchmark")
    out = []
    for board in a:
        w, wg, wbg, lg, lbg = gnubg_nn.probabilities(board[::-1].tolist(), 2)
        out.append(-(2 * w - 1 + wg + wbg - lg - lbg))
    return np.array(out)


def hint_command(network: str, position: str, dice: str, prune: bool) -> list[str]:
    args = ["hint", position, dice, "--agent", f"td:{network}", "--plies", "2"]
    code = "import sys, vrhcaby.cli.main as cli; sys.exit(cli.main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *args, *([] if prune else ["--no-prune"])]


def gnubg_command(position: str, dice: str) -> tuple[list[str], str]:
    """The gnubg command line and its input: the position and roll, a 2-ply hint."""
    script = (
        "set evaluation chequerplay evaluation plies 2\nnew game\n"
        f"set board {position}\nset dice {dice[0]} {dice[1]}\nhint 3\n"
    )
    return [GNUBG or "gnubg", "-t", "-q", "-r"], script


def median_wall(command: list[str], repeat: int, text: str | None = None) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, input=text, text=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", default="td-best", help="a shipped network or a path")
    parser.add_argument("--positions", type=int, default=16)
    parser.add_argument("--keep", type=int, default=search.Pruner.keep)
    parser.add_argument("--hint-repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    file = find_checkpoint(args.network)
    evaluator = load_agent(f"td:{args.network}").evaluator  # type: ignore[attr-defined]
    pruner = load_pruner(file, args.keep)
    a, boards, dice = positions(args.network, args.positions, args.seed)
    print(f"{file.name}, {len(a)} distinct afterstates of its own games; 2-ply, one core")

    def plain(x: np.ndarray) -> np.ndarray:
        return equity(search.ply_probabilities(evaluator, x, 2))

    def pruned(x: np.ndarray) -> np.ndarray:
        return equity(search.ply_probabilities(evaluator, x, 2, prune=pruner))

    rate_plain, e_plain = per_second(plain, a)
    rate_pruned, e_pruned = per_second(pruned, a)
    rate_gnubg, _ = per_second(gnubg_two_ply, a)
    d = np.abs(e_pruned - e_plain)
    print(f"  {'':34} {'positions/s':>11} {'vs gnubg':>9}")
    rows = (
        ("unpruned", rate_plain),
        (f"pruned (keep {args.keep} replies a roll)", rate_pruned),
        ("gnubg-nn probabilities(board, 2)", rate_gnubg),
    )
    for name, rate in rows:
        print(f"  {name:34} {rate:11.1f} {rate / rate_gnubg:8.2f}x")
    print(
        f"  pruned / unpruned: {rate_pruned / rate_plain:.2f}x; pruned equity - unpruned: "
        f"mean {np.mean(e_pruned - e_plain):+.4f}, mean |d| {d.mean():.4f}, max {d.max():.4f}"
    )
    decisions = [(engine.position_id(boards[i]), f"{dice[i, 0]}{dice[i, 1]}") for i in range(3)]
    warm = hint_command(args.network, *decisions[0], prune=True)
    subprocess.run(warm, cwd=ROOT, check=True, capture_output=True)  # numba's disk cache
    print(f"cold `vrhcaby hint ... --plies 2`, median of {args.hint_repeat} runs, wall seconds")
    print(f"  {'decision':22} {'pruned':>7} {'unpruned':>8} {'gnubg':>7}")
    for position, roll in decisions:
        cells = [
            median_wall(hint_command(args.network, position, roll, prune), args.hint_repeat)
            for prune in (True, False)
        ]
        gnubg = "-"
        if GNUBG:
            command, script = gnubg_command(position, roll)
            gnubg = f"{median_wall(command, args.hint_repeat, script):7.2f}"
        print(f"  {position} {roll:>3}   {cells[0]:7.2f} {cells[1]:8.2f} {gnubg:>7}")
    if not GNUBG:
        print("  (no gnubg command installed: compare with gnubg-nn's rate above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
