"""How much equity each agent's checker plays give away, judged by GNU Backgammon's 0-ply net.

    python bench/move_errors.py td td:checkpoints/td-wide.pt pubeval --games 600

The positions and rolls come from `--games` cubeless money games of the first agent
against pubeval (mirrored dice, `--seed`): every turn with more than one legal play.
Every agent plays every one of those positions, and each play costs the difference, in
gnubg's 0-ply cubeless equity, between gnubg's best play of the roll and the agent's
(`vrhcaby.play.judge`). Printed: the mean cost per move with its standard error, the total
per game and side (the equity one side gives away in a game, played by this agent), the
mean by position class, and each agent's paired difference to the first.

Race and bear-off decisions judged by gnubg 2-ply, gnubg 0-ply among the contenders (the
first agent's games, so the positions do not depend on the networks judged):

    python bench/move_errors.py 'gnubg?plies=0' td td:checkpoints/td-contact.pt \
        --games 120 --classes race,bearoff --judge-plies 2
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine
from agents import load_agent
from vrhcaby.play.judge import CLASSES, Judged, gnubg_equities, recorded_positions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="+", help="agent specs; the first one's games")
    parser.add_argument("--games", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument(
        "--classes", default=",".join(CLASSES), help=f"positions judged (of {', '.join(CLASSES)})"
    )
    parser.add_argument("--judge-plies", type=int, default=0, choices=(0, 1, 2))
    args = parser.parse_args(argv)
    classes = args.classes.split(",")
    if not set(classes) <= set(CLASSES):
        parser.error(f"--classes: unknown {', '.join(sorted(set(classes) - set(CLASSES)))}")
    agents = [load_agent(spec) for spec in args.agents]  # bad specs fail before any game
    start = time.perf_counter()
    boards, dice, games = recorded_positions(
        agents[0], load_agent("pubeval"), args.games, args.seed
    )
    kept = np.isin([engine.Position(b).classify() for b in boards], classes)
    judge = functools.partial(gnubg_equities, plies=args.judge_plies)
    judged = Judged.from_positions(boards[kept], dice[kept], games, judge=judge)
    print(
        f"{len(judged.boards)} {'/'.join(classes)} positions with a choice from {judged.games} "
        f"games of {args.agents[0]} vs pubeval (seed {args.seed}); judged by gnubg "
        f"{args.judge_plies}-ply in {time.perf_counter() - start:.0f} s"
    )
    classes = " ".join(f"{c:>8s}" for c in CLASSES)
    print(f"{'agent':40s} {'cost/move':>17s} {'per side-game':>13s} {classes} paired diff")
    first = None
    for spec, agent in zip(args.agents, agents, strict=True):
        cost = judged.cost(agent.choose_boards(judged.boards, judged.dice))
        first = cost if first is None else first
        diff = cost - first
        s = judged.summary(cost)
        by_class = " ".join(f"{s.by_class[c]:8.5f}" for c in CLASSES)
        print(
            f"{spec:40s} {s.mean:.5f} ± {s.se:.5f} {s.per_game:13.4f} {by_class}"
            f" {diff.mean():+10.5f} ± {diff.std() / np.sqrt(len(diff)):.5f}"
        )
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as exc:  # a bad agent spec or checkpoint, no gnubg-nn
        raise SystemExit(f"move_errors: {exc}") from None
