"""Move-generator speed: the batched generator, the plain reference, GNU Backgammon.

Prints, from one run on a fixed seeded corpus of positions from varied games, resulting-
position sets per second (positions in, all afterstates out as arrays) for batch sizes 1,
64, 1024 and 8192, for the reference generator in tests/, for `gnubg_nn.moves()` when
installed, and random self-play games per second, batched and with GNU Backgammon's
generator in a Python loop. The contenders take turns within each repeat, so load from
other processes falls on all of them alike; figures are medians, ratios are side by side.

    python bench/movegen.py [--positions 8192] [--repeats 5] [--games 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from corpus import corpus
from reference import reference_afterstates

import engine


def interleaved_rates(
    contenders: list[tuple[str, Callable[[], object], int]], repeats: int
) -> dict[str, float]:
    """Median items/s of each contender, timing them in turn within every repeat."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    for _ in range(repeats):
        for name, fn, items in contenders:
            t0 = time.perf_counter()
            fn()
            times[name].append(items / (time.perf_counter() - t0))
    return {name: statistics.median(rates) for name, rates in times.items()}


def gnubg_random_game(gnubg_nn, rng: np.random.Generator) -> int:
    """One random game with GNU Backgammon's generator in a Python loop; its plies."""
    board = engine.Position.start().board.tolist()
    plies = 0
    while True:
        d = rng.integers(1, 7, size=2)
        keys = gnubg_nn.moves(board, int(d[0]), int(d[1]))
        plies += 1
        if not keys:  # no legal move: the turn passes
            board = [board[1], board[0]]
            continue
        after = gnubg_nn.boardfromkey(keys[int(rng.integers(len(keys)))])
        if sum(after[1]) == 0:
            return plies
        board = [list(after[1]), list(after[0])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--games", type=int, default=2000)
    args = ap.parse_args()
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None

    boards, dice = corpus(args.positions, seed=2024)
    n = len(boards)
    engine.batch_afterstates(boards[:8], dice[:8])  # compile / load the kernel
    after, _ = engine.batch_afterstates(boards, dice)
    print(
        f"corpus: {n} positions with rolls, {len(after)} resulting positions "
        f"({len(after) / n:.1f} per position)"
    )

    contenders: list[tuple[str, Callable[[], object], int]] = []
    for batch in (1, 64, 1024, 8192):

        def run(batch=batch):
            for i in range(0, n, batch):
                engine.batch_afterstates(boards[i : i + batch], dice[i : i + batch])

        contenders.append((f"batched, batch {batch}", run, n))
    k = min(n, 300)
    as_tuples = [(tuple(b[0].tolist()), tuple(b[1].tolist())) for b in boards[:k]]
    contenders.append(
        (
            "reference (tests/reference.py)",
            lambda: [
                reference_afterstates(b, (int(d[0]), int(d[1])))
                for b, d in zip(as_tuples, dice[:k], strict=True)
            ],
            k,
        )
    )
    if gnubg_nn is not None:
        lists = [b.tolist() for b in boards]
        pairs = [(int(d[0]), int(d[1])) for d in dice]

        def gnubg_keys():
            for b, (d1, d2) in zip(lists, pairs, strict=True):
                gnubg_nn.moves(b, d1, d2)

        def gnubg_arrays():
            for b, (d1, d2) in zip(lists, pairs, strict=True):
                np.array([gnubg_nn.boardfromkey(key) for key in gnubg_nn.moves(b, d1, d2)], np.int8)

        contenders.append(("gnubg_nn.moves(), keys only", gnubg_keys, n))
        contenders.append(("gnubg_nn.moves() + boards as arrays", gnubg_arrays, n))
    rates = interleaved_rates(contenders, args.repeats)
    best = max(rate for name, rate in rates.items() if name.startswith("batched"))
    print(f"\n{'generator':40s} {'positions/s':>14s} {'batched best / this':>20s}")
    for name, rate in rates.items():
        print(f"{name:40s} {rate:14,.0f} {best / rate:20.2f}")

    rng = np.random.default_rng(1)
    engine.random_selfplay(8, rng)
    plies: list[float] = []

    def selfplay():
        plies.append(engine.random_selfplay(args.games, rng).plies.mean())

    games = [("batched random self-play", selfplay, args.games)]
    n_loop = max(20, args.games // 20)
    loop_plies: list[float] = []
    if gnubg_nn is not None:
        games.append(
            (
                "gnubg_nn.moves() in a Python loop",
                lambda: loop_plies.append(
                    np.mean([gnubg_random_game(gnubg_nn, rng) for _ in range(n_loop)])
                ),
                n_loop,
            )
        )
    rates = interleaved_rates(games, args.repeats)
    print(f"\n{'random self-play':40s} {'games/s':>14s} {'plies/game':>12s}")
    for (name, _, _), ply in zip(games, (plies, loop_plies), strict=False):
        print(f"{name:40s} {rates[name]:14,.0f} {statistics.median(ply):12.1f}")
    if gnubg_nn is not None:
        ratio = rates["batched random self-play"] / rates["gnubg_nn.moves() in a Python loop"]
        print(f"batched / gnubg loop: {ratio:.2f}")


if __name__ == "__main__":
    main()
