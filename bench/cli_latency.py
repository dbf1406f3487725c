"""Cold `vrhcaby hint` at 0 and 2 plies on contact, race and bear-off positions, beside
GNU Backgammon's own 2-ply hint on the same positions, in one run.

Each command runs in a fresh interpreter, as a user's would after an install: imports,
numba's cached kernels or the ahead-of-time compiled ones (`python -m vrhcaby.cli.warm`
builds both), and the checkpoint load all count. One untimed run of each command first
writes the bytecode (so `PYTHONDONTWRITEBYTECODE` is dropped for the children) and fills
numba's cache if it is empty. Then the commands take turns `--repeat` times, so that load
from other processes falls on all of them alike; the table has the median wall time of
each, and of `python -c pass` and `python -c 'import numpy'` (the floor under any
answer), then how many positions meet the targets. The default network (`td`) is used;
gnubg is Debian's command line (`gnubg -t`: 2-ply chequer play, then `hint`), shown when
it is installed.

    python bench/cli_latency.py [--repeat 5] [--against DIR]

`--against DIR` times another checkout's code (DIR, e.g. a `git worktree` of the commit
before) in the same run, its columns beside this one's.
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

ROOT = Path(__file__).resolve().parents[1]

#: The gnubg command (Debian installs it in /usr/games, often not on PATH), or None.
GNUBG = shutil.which("gnubg") or shutil.which("gnubg", path="/usr/games")

#: The wall seconds a cold 0-ply hint should stay under (issue #16); at 2 plies it should
#: be no slower than gnubg's own 2-ply hint.
ZERO_PLY_TARGET = 0.3

#: (position ID, roll, kind): the README's contact example, a middle-game contact
#: position, a race and a bear-off.
POSITIONS = (
    ("4HPwATDgc/ABMA", "31", "contact"),
    ("t6bAQQiSz14gAA", "52", "contact"),
    ("7bZNAADbdpMAAA", "43", "race"),
    ("BQAA+O9SAAAAAA", "41", "bear-off"),
)


def gnubg_command(position: str, dice: str) -> tuple[list[str], str]:
    """The gnubg command line and its input: the position and roll, a 2-ply hint."""
    script = (
        "set evaluation chequerplay evaluation plies 2\nnew game\n"
        f"set board {position}\nset dice {dice[0]} {dice[1]}\nhint 3\n"
    )
    return [GNUBG or "gnubg", "-t", "-q", "-r"], script


def hint_command(position: str, dice: str, plies: int) -> list[str]:
    """`vrhcaby hint` as the `vrhcaby` program runs it (`python -m vrhcaby.cli`: the
    entry point, `vrhcaby.cli.main.main()`, with the program's arguments), in a fresh
    interpreter."""
    return [sys.executable, "-m", "vrhcaby.cli", "hint", position, dice, "--plies", str(plies)]


def run(command: list[str], tree: Path, text: str | None = None) -> float:
    """Wall seconds of one run of `command` with `tree`'s code."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    start = time.perf_counter()
    subprocess.run(
        command, cwd=tree, env=env, check=True, capture_output=True, input=text, text=True
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, timed beside this one")
    args = parser.parse_args(argv)
    trees = {"this": ROOT}
    if args.against:
        trees = {"before": args.against.resolve(), "after": ROOT}
    # (label, tree, command, stdin) for every timed cell, in the order they take turns.
    cells: list[tuple[str, Path, list[str], str | None]] = [
        ("python -c pass", ROOT, [sys.executable, "-c", "pass"], None),
        ("import numpy", ROOT, [sys.executable, "-c", "import numpy"], None),
    ]
    for position, dice, _ in POSITIONS:
        for plies in (0, 2):
            for name, tree in trees.items():
                cells.append(
                    (
                        f"{position} {dice} {plies} {name}",
                        tree,
                        hint_command(position, dice, plies),
                        None,
                    )
                )
        if GNUBG:
            cells.append((f"{position} {dice} gnubg", ROOT, *gnubg_command(position, dice)))
    for _, tree, command, text in cells:  # bytecode, numba's cache
        run(command, tree, text)
    times: dict[str, list[float]] = {label: [] for label, *_ in cells}
    for _ in range(args.repeat):
        for label, tree, command, text in cells:
            times[label].append(run(command, tree, text))
    median = {label: statistics.median(t) for label, t in times.items()}
    limits = [
        f"{k}={os.environ[k]}"
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        if k in os.environ
    ]
    print(f"cold starts, median wall seconds of {args.repeat} runs; the default network")
    print(f"  thread limits: {', '.join(limits) or 'none'}")
    print(
        f"  python -c pass: {median['python -c pass']:.3f} s; "
        f"python -c 'import numpy': {median['import numpy']:.3f} s"
    )
    head = [f"{plies}-ply {name}" for plies in (0, 2) for name in trees]
    print(
        f"  {'position':16} {'roll':4} {'kind':8} "
        + " ".join(f"{h:>12}" for h in head)
        + f" {'gnubg 2-ply':>12}"
    )
    for position, dice, kind in POSITIONS:
        row = [median[f"{position} {dice} {plies} {name}"] for plies in (0, 2) for name in trees]
        gnubg = f"{median[f'{position} {dice} gnubg']:12.3f}" if GNUBG else f"{'-':>12}"
        print(
            f"  {position:16} {dice:4} {kind:8} "
            + " ".join(f"{t:12.3f}" for t in row)
            + f" {gnubg}"
        )
    mine, n = list(trees)[-1], len(POSITIONS)
    fast = sum(median[f"{p} {d} 0 {mine}"] < ZERO_PLY_TARGET for p, d, _ in POSITIONS)
    summary = f"  {mine}: 0-ply under {ZERO_PLY_TARGET} s on {fast} of {n} positions"
    if GNUBG:
        even = sum(median[f"{p} {d} 2 {mine}"] <= median[f"{p} {d} gnubg"] for p, d, _ in POSITIONS)
        summary += f"; 2-ply no slower than gnubg's on {even} of {n}"
    else:
        summary += " (gnubg is not installed: apt-get install gnubg)"
    print(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
