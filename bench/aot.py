"""The ahead-of-time compiled kernels against numba's JIT, in one process, interleaved.

The same calls three ways, taking turns so that the machine's load falls on each alike:
through `engine.jit.Kernel` with the ahead-of-time module (what a process gets once
`python -m vrhcaby.cli.warm` has built it), through `Kernel` with the module off (numba's
JIT: what it gets without one), and numba's dispatcher called directly (as the kernels
were called before `engine.jit`). Calls: `engine.batch_afterstates` on 1, 64, 1,024 and
8,192 positions of the seeded corpus, and a 1-ply value of 64 positions with the default
network (`agents.search.ply_probabilities`: move generation, the network's kernels, the
rules' clamp). Prints the best time per call of `--repeats` rounds of each, in
microseconds, and the ratios to the dispatcher.

    python bench/aot.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from corpus import corpus  # noqa: E402

import engine  # noqa: E402
from agents import load_agent, search  # noqa: E402
from engine import aot, jit, movegen  # noqa: E402

#: This compares the module's code itself: no switch to the JIT however many calls.
jit.LONG_RUN = sys.maxsize


def _routed(aot_on: bool) -> None:
    """Calls through `Kernel` from now on use the ahead-of-time module (or not)."""
    os.environ["VRHCABY_AOT"] = "1" if aot_on else "0"
    jit.reset()


def best_microseconds(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best time per call of each, over `repeats` interleaved rounds of about 0.2 s each."""
    best = dict.fromkeys(calls, float("inf"))
    counts = {}
    for name, call in calls.items():  # compiled or loaded, then timed once to size a round
        if name.split()[0] in ("aot", "jit"):
            _routed(name.startswith("aot"))
        call()
        start = time.perf_counter()
        call()
        counts[name] = max(1, int(0.2 / max(time.perf_counter() - start, 1e-6)))
    for _ in range(repeats):
        for name, call in calls.items():
            routed = name.split()[0]
            if routed in ("aot", "jit"):
                _routed(routed == "aot")
            start = time.perf_counter()
            for _ in range(counts[name]):
                call()
            best[name] = min(best[name], (time.perf_counter() - start) / counts[name] * 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    _routed(True)
    boards, dice = corpus(8192, 3)
    boards = np.ascontiguousarray(boards, np.int8)
    dice = np.ascontiguousarray(dice, np.int64)
    if not aot.functions(movegen._afterstates.key):
        print("no current ahead-of-time module: run python -m vrhcaby.cli.warm first")
        return 1
    evaluator = load_agent("td").evaluator  # type: ignore[attr-defined]
    roots = boards[:64]
    rows = []
    for n in (1, 64, 1024, 8192):
        b, d = boards[:n], dice[:n]
        calls = {
            "aot Kernel": lambda b=b, d=d: engine.batch_afterstates(b, d),
            "jit Kernel": lambda b=b, d=d: engine.batch_afterstates(b, d),
            "dispatcher": lambda b=b, d=d: movegen._afterstates.jit(b, d, movegen._ZOBRIST),
        }
        rows.append((f"batch_afterstates, {n} positions", best_microseconds(calls, args.repeats)))
    calls = {
        "aot Kernel": lambda: search.ply_probabilities(evaluator, roots, 1),
        "jit Kernel": lambda: search.ply_probabilities(evaluator, roots, 1),
    }
    rows.append(("1-ply values, 64 positions", best_microseconds(calls, args.repeats)))
    print(f"best microseconds per call of {args.repeats} interleaved rounds")
    print(f"  {'':36} {'AOT':>11} {'JIT':>11} {'dispatcher':>11}  AOT/JIT")
    for name, t in rows:
        direct = f"{t['dispatcher']:11.1f}" if "dispatcher" in t else f"{'-':>11}"
        ratio = t["aot Kernel"] / t["jit Kernel"]
        print(f"  {name:36} {t['aot Kernel']:11.1f} {t['jit Kernel']:11.1f} {direct}  {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
