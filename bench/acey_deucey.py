"""Acey-deucey generator speed, and how many positions a 1-2 roll reaches.

Prints, for boards met in random acey-deucey games: positions per second and resulting
rows per board for ordinary rolls, for the 1-2 as whole turns (`bonus=True`), and for the
1-2 in two stages (`bonus=False`, then `batch_bonus_ad` on one chosen row); then random
self-play games per second next to the standard game's.

    python bench/acey_deucey.py [--positions 2048] [--games 500]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import engine
from engine.acey_deucey import (
    batch_afterstates_ad,
    batch_bonus_ad,
    game_value_ad,
    random_selfplay_ad,
    start_boards_ad,
)


def game_boards(n: int, seed: int) -> np.ndarray:
    """Boards before each roll of random games (1-2 bonus skipped), roller's view."""
    rng = np.random.default_rng(seed)
    boards, out = start_boards_ad(64), []
    while sum(len(b) for b in out) < n:
        after, parent, _ = batch_afterstates_ad(boards, rng.integers(1, 7, (64, 2)), bonus=False)
        counts = np.bincount(parent, minlength=64)
        first = np.cumsum(counts) - counts
        for i in np.flatnonzero(counts):
            boards[i] = after[first[i] + rng.integers(counts[i])]
        over = game_value_ad(boards) > 0
        boards = np.where(over[:, None, None], start_boards_ad(64), boards[:, ::-1])
        out.append(boards.copy())
    return np.concatenate(out)[:n]


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=2048)
    ap.add_argument("--games", type=int, default=500)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    boards = game_boards(args.positions * 4, 2024)[::4]  # spread over whole games
    n = len(boards)
    batch_afterstates_ad(boards[:4], np.array([[1, 2]] * 4))  # compile / load the kernel
    batch_bonus_ad(boards[:4])

    dice = rng.integers(1, 7, size=(n, 2))
    dice[(dice.min(1) == 1) & (dice.max(1) == 2)] = (3, 1)
    dt, (after, _, _) = timed(lambda: batch_afterstates_ad(boards, dice))
    print(f"{'ordinary rolls':34s} {n / dt:10,.0f} positions/s {len(after) / n:9.1f} rows each")

    k = min(n, 256)
    one_two = np.tile([[1, 2]], (k, 1))
    dt, (after, parent, _) = timed(lambda: batch_afterstates_ad(boards[:k], one_two))
    counts = np.bincount(parent, minlength=k)
    print(
        f"{'1-2, whole turns':34s} {k / dt:10,.0f} positions/s {counts.mean():9.1f} rows each"
        f" (median {np.median(counts):.0f}, max {counts.max()})"
    )

    def staged():
        first, parent, due = batch_afterstates_ad(boards[:k], one_two, bonus=False)
        rows = np.cumsum(np.bincount(parent, minlength=k)) - 1  # one row per board: its last
        chosen = rows[rows >= 0]
        chosen = chosen[due[chosen]]
        bonus, _, _ = batch_bonus_ad(first[chosen])
        return len(first) + len(bonus)

    dt, rows = timed(staged)
    print(f"{'1-2 in two stages':34s} {k / dt:10,.0f} positions/s {rows / k:9.1f} rows each")

    random_selfplay_ad(8, np.random.default_rng(0))
    dt, res = timed(lambda: random_selfplay_ad(args.games, np.random.default_rng(1)))
    values = np.bincount(res.value, minlength=4)[1:] / args.games
    print(
        f"\nrandom self-play, acey-deucey: {args.games / dt:,.0f} games/s, "
        f"{res.plies.mean():.0f} rolls per game, single/gammon/backgammon "
        + "/".join(f"{v:.2f}" for v in values)
    )
    engine.random_selfplay(8, np.random.default_rng(0))
    dt, res = timed(lambda: engine.random_selfplay(args.games, np.random.default_rng(1)))
    print(
        f"random self-play, standard:    {args.games / dt:,.0f} games/s, "
        f"{res.plies.mean():.0f} rolls per game"
    )


if __name__ == "__main__":
    main()
