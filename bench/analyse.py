"""How long `vrhcaby analyse` takes on a money session, beside GNU Backgammon's own
``analyse match`` of the same file, the figures quoted in docs/analyse.md.

    python bench/analyse.py                        # a 25-game session, 0 and 2 plies
    python bench/analyse.py --games 10 --plies 0 --repeats 3

It plays a money session with the cube between the shipped td network (0-ply) and pubeval
(`--games`, seed `--seed`), writes it as a `.mat` file, then times, each `--repeats`
times in a fresh process and one core: `vrhcaby analyse` with the default judge (the
shipped network, pruned) and with `--judge gnubg`, and Debian's gnubg (``gnubg -t -q``,
``set threads 1``, ``analyse match``) at each ply. It prints the medians of wall and CPU
seconds (the CPU figure is the fairer one on a loaded machine), the decisions judged and
the ratios to gnubg's own analysis.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def session(path: Path, games: int, seed: int) -> None:
    """A money session with the cube, td (0-ply) against pubeval, written as `.mat`."""
    sys.path.insert(0, str(ROOT))
    from agents import load_agent
    from vrhcaby.io import matchfile
    from vrhcaby.play.tournament import PairSettings, play_pair

    pair = play_pair(
        load_agent("td"), load_agent("pubeval"), games=games, seed=seed,
        settings=PairSettings(record=True),
    )  # fmt: skip
    matchfile.export_mat(pair.records(seed), path)


def timed(command: list[str], stdin: str | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (the child's user + system) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--gnubg-judge", action="store_true", help="also time --judge gnubg")
    args = parser.parse_args()
    gnubg = shutil.which("gnubg") or "/usr/games/gnubg"
    env_note = f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    with tempfile.TemporaryDirectory() as tmp:
        mat = Path(tmp) / "session.mat"
        session(mat, args.games, args.seed)
        sys.path.insert(0, str(ROOT))
        from vrhcaby.io.matchfile import read_mat

        match = read_mat(mat)
        moves = sum(t.kind == "move" for g in match.games for t in g.turns)
        print(f"{len(match.games)}-game money session, {moves} moves ({env_note})")
        print(
            f"{'what':<34} {'plies':>5} {'wall s':>8} {'CPU s':>8} {'CPU / gnubg':>12}", flush=True
        )
        vrhcaby = [sys.executable, "-m", "vrhcaby.cli", "analyse", str(mat), "--jobs", "1"]
        for plies in args.plies:
            runs: dict[str, list[tuple[float, float]]] = {}
            script = "\n".join(
                [
                    "set threads 1",
                    "set jacoby off",
                    f"import mat {mat}",
                    f"set analysis chequerplay evaluation plies {plies}",
                    f"set analysis cubedecision evaluation plies {plies}",
                    "analyse match",
                    "",
                ]
            )
            commands: dict[str, tuple[list[str], str | None]] = {
                "gnubg -t: analyse match": ([gnubg, "-t", "-q"], script),
                "vrhcaby analyse (td, pruned)": ([*vrhcaby, "--plies", str(plies)], None),
            }
            if args.gnubg_judge:
                commands["vrhcaby analyse --judge gnubg"] = (
                    [*vrhcaby, "--plies", str(plies), "--judge", "gnubg"],
                    None,
                )
            base = 0.0
            for name, (command, stdin) in commands.items():  # gnubg's first: the base
                runs[name] = [timed(command, stdin) for _ in range(args.repeats)]
                wall = statistics.median(w for w, _ in runs[name])
                cpu = statistics.median(c for _, c in runs[name])
                base = base or cpu
                line = f"{name:<34} {plies:>5} {wall:>8.1f} {cpu:>8.1f} {cpu / base:>11.2f}x"
                print(line, flush=True)


if __name__ == "__main__":
    main()
