"""Move-generator speed: the batched generator, the plain reference, GNU Backgammon.

Prints, from one run on a fixed seeded corpus of positions from varied games, resulting-
position sets per second (positions in, all afterstates out as arrays) for batch sizes 1,
64, 1024 and 8192, for the reference generator in tests/, for `gnubg_nn.moves()` when
installed, and random self-play games per second. Medians of several repeats, one core.

    python bench/movegen.py [--positions 8192] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from corpus import corpus
from reference import reference_afterstates

import engine


def median_rate(fn, items: int, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        rates.append(items / (time.perf_counter() - t0))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--games", type=int, default=2000)
    args = ap.parse_args()

    boards, dice = corpus(args.positions, seed=2024)
    n = len(boards)
    engine.batch_afterstates(boards[:8], dice[:8])  # compile / load the kernel
    after, _ = engine.batch_afterstates(boards, dice)
    print(f"corpus: {n} positions with rolls, {len(after)} resulting positions "
          f"({len(after) / n:.1f} per position)")
    rows = []
    for batch in (1, 64, 1024, 8192):
        def run(batch=batch):
            for i in range(0, n, batch):
                engine.batch_afterstates(boards[i : i + batch], dice[i : i + batch])
        rows.append((f"batched, batch {batch}", median_rate(run, n, args.repeats)))

    k = min(n, 500)
    as_tuples = [(tuple(b[0].tolist()), tuple(b[1].tolist())) for b in boards[:k]]
    rows.append(("reference (tests/reference.py)", median_rate(
        lambda: [reference_afterstates(b, (int(d[0]), int(d[1])))
                 for b, d in zip(as_tuples, dice[:k], strict=True)], k, 1)))
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None
    if gnubg_nn is not None:
        lists = [b.tolist() for b in boards]

        def gnubg_sets():
            for b, d in zip(lists, dice, strict=True):
                keys = gnubg_nn.moves(b, int(d[0]), int(d[1]))
                np.array([gnubg_nn.boardfromkey(key) for key in keys], np.int8)

        def gnubg_keys():
            for b, d in zip(lists, dice, strict=True):
                gnubg_nn.moves(b, int(d[0]), int(d[1]))

        rows.append(("gnubg_nn.moves() + boards as arrays", median_rate(gnubg_sets, n, 3)))
        rows.append(("gnubg_nn.moves() keys only", median_rate(gnubg_keys, n, 3)))

    best = max(rate for name, rate in rows if name.startswith("batched"))
    print(f"\n{'generator':40s} {'positions/s':>14s} {'batched best / this':>20s}")
    for name, rate in rows:
        print(f"{name:40s} {rate:14,.0f} {best / rate:20.2f}")

    games = args.games
    engine.random_selfplay(8, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    plies = []

    def selfplay():
        res = engine.random_selfplay(games, rng)
        plies.append(int(res.plies.sum()))

    rate = median_rate(selfplay, games, args.repeats)
    print(f"\nrandom self-play, {games} games in lockstep: {rate:,.0f} games/s "
          f"({statistics.median(plies) / games:.1f} plies per game)")


if __name__ == "__main__":
    main()
