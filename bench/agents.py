"""Agent and tournament throughput, and the yardstick matches (docs/benchmarks.md, commands.md).

    python bench/agents.py                      # games/s, and td 2-ply seconds per move
    python bench/agents.py --yardstick --games 10000 --jobs 2

The `td` figure uses `checkpoints/td-best.pt` when present, else an untrained network of
the default size (speed does not depend on the weights).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import load_agent
from agents.td import SHIPPED, TDAgent
from vrhcaby.play.tournament import play_pair

YARDSTICKS = (
    ("heuristic", "random"),
    ("pubeval", "random"),
    ("pubeval", "heuristic"),
    ("gnubg?plies=0", "pubeval"),
)


def td_agent() -> TDAgent:
    if SHIPPED.is_file():
        return load_agent("td")  # type: ignore[return-value]
    from vrhcaby.nn.net import Evaluator, NetConfig

    cfg = NetConfig()
    rng = np.random.default_rng(0)
    weights = [
        (rng.normal(0, 0.1, (o, i)).astype(np.float32), np.zeros(o, np.float32))
        for i, o in zip(cfg.sizes[:-1], cfg.sizes[1:], strict=True)
    ]
    return TDAgent(Evaluator(cfg, weights), name="td (untrained)")


def throughput(a, b, games: int, jobs: int) -> None:
    play_pair(a, b, games=4, seed=0)  # compile and warm up
    start = time.perf_counter()
    r = play_pair(a, b, games=games, seed=1, jobs=jobs)
    seconds = time.perf_counter() - start
    print(f"{a.name:>20} vs {b.name:<12} {r.games:6d} games  {r.games / seconds:8.1f} games/s")


def two_ply_seconds(positions: int = 20) -> None:
    """Seconds per move of `td?plies=2` on positions from pubeval self-play."""
    import engine

    agent = td_agent()
    agent.plies = 2
    pub = load_agent("pubeval")
    rng = np.random.default_rng(3)
    pos, times = engine.Position.start(), []
    while len(times) < positions:
        dice = tuple(int(d) for d in engine.roll_dice(rng, 1)[0])
        if not engine.legal_plays(pos, dice):
            pos = pos.flip()
            continue
        start = time.perf_counter()
        agent.choose_play(pos, dice)
        times.append(time.perf_counter() - start)
        after = pub.choose_play(pos, dice).position
        over = engine.game_value(after.board[None])[0]
        pos = engine.Position.start() if over else after.flip()
    print(
        f"td 2-ply: {np.mean(times[1:]):.3f} s per move on average, {max(times[1:]):.3f} s at most"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--yardstick", action="store_true")
    args = parser.parse_args()
    if not args.yardstick:
        throughput(load_agent("pubeval"), load_agent("heuristic"), args.games, args.jobs)
        throughput(td_agent(), load_agent("pubeval"), args.games, args.jobs)
        two_ply_seconds()
        return
    for a, b in YARDSTICKS:
        start = time.perf_counter()
        r = play_pair(load_agent(a), load_agent(b), games=args.games, seed=2026, jobs=args.jobs)
        print(
            f"{a:>14} vs {b:<10} {r.games} games ({r.pairs} mirrored pairs): "
            f"ppg {r.ppg:+.3f} [{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]  wins {r.wins[0]}-{r.wins[1]} "
            f"gammons {r.gammons[0]}-{r.gammons[1]} bgs {r.backgammons[0]}-{r.backgammons[1]}  "
            f"({time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
