"""How much equity each agent's checker plays give away, judged by GNU Backgammon's 0-ply net.

    python bench/move_errors.py td td:checkpoints/td-wide.pt pubeval --games 600

The positions and rolls come from `--games` cubeless money games of the first agent
against pubeval (mirrored dice, `--seed`): every position where the roll has more than one
legal play. Every agent plays every one of those positions, and each play costs the
difference, in gnubg's 0-ply cubeless equity, between gnubg's best play of the roll and
the agent's (0 when they agree). Printed: the mean cost per move with its standard error,
by position class (contact, race, bear-off), the total per game and side (the equity
a side gives away in a game, played by this agent), and each agent's paired difference
to the first.

Why: points per game against pubeval need 20,000 games for a ±0.018 interval; judged
move by move on the same positions, two networks are ranked to a few per cent in
seconds, and the classes say where the equity goes. gnubg 0-ply is a judge, not the
truth: a play better than its choice still counts as an error. Needs `gnubg-nn`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine
from agents import load_agent
from agents.gnubg import INSTALL_HINT
from vrhcaby.tournament import play_pair

CLASSES = ("contact", "race", "bearoff")


def gnubg_equities(after: np.ndarray) -> np.ndarray:
    """gnubg 0-ply cubeless equity of each afterstate (mover in row 1) for its mover."""
    try:
        import gnubg_nn
    except ImportError:
        raise SystemExit(f"move_errors needs GNU Backgammon's network: {INSTALL_HINT}") from None
    out = np.empty(len(after))
    for i, a in enumerate(after):
        w, wg, wbg, lg, lbg = gnubg_nn.probabilities(a[::-1].tolist(), 0)  # the opponent on roll
        out[i] = 2 * (1 - w) - 1 + lg - wg + lbg - wbg
    return out


def positions(agent, games: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[str], int]:
    """Boards (side on roll in row 1), rolls and classes met in `agent` vs pubeval games
    where the roll has a choice, and the number of games."""
    pair = play_pair(agent, load_agent("pubeval"), games=games, seed=seed, cube=False, record=True)
    boards, dice, classes = [], [], []
    for result in pair.results:
        for turn in (result.record or {}).get("turns", []):
            if "dice" not in turn:
                continue
            position = engine.Position.from_id(turn["position_id"])
            roll = np.array([turn["dice"]])
            if len(engine.batch_afterstates(position.board[None], roll)[0]) > 1:
                boards.append(position.board)
                dice.append(turn["dice"])
                classes.append(position.classify())
    return np.array(boards), np.array(dice), classes, len(pair.results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="+", help="agent specs; the first one's games")
    parser.add_argument("--games", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args(argv)
    agents = [load_agent(spec) for spec in args.agents]  # bad specs fail before any game
    start = time.perf_counter()
    boards, dice, classes, games = positions(agents[0], args.games, args.seed)
    after, parent = engine.batch_afterstates(boards, dice)
    equities = gnubg_equities(after)
    counts = np.bincount(parent)
    best = np.maximum.reduceat(equities, np.cumsum(counts) - counts)[parent]
    kind = np.array(classes)
    print(
        f"{len(boards)} positions with a choice from {games} games of {args.agents[0]} vs "
        f"pubeval (seed {args.seed}); judged by gnubg 0-ply in {time.perf_counter() - start:.0f} s"
    )
    classes_header = " ".join(f"{c:>8s}" for c in CLASSES)
    print(f"{'agent':40s} {'cost/move':>17s} {'per side-game':>13s} {classes_header} paired diff")
    first = None
    for spec, agent in zip(args.agents, agents, strict=True):
        chosen = agent.choose_boards(boards, dice)
        hit = np.flatnonzero((after == chosen[parent]).all(axis=(1, 2)))
        if len(hit) != len(boards) or (parent[hit] != np.arange(len(boards))).any():
            raise SystemExit(f"{spec}: a chosen play is not one of the roll's legal plays")
        cost = best[hit] - equities[hit]
        first = cost if first is None else first
        diff = cost - first
        by_class = " ".join(f"{cost[kind == c].mean():8.5f}" for c in CLASSES)
        print(
            f"{spec:40s} {cost.mean():.5f} ± {cost.std() / np.sqrt(len(cost)):.5f}"
            f" {cost.sum() / (2 * games):13.4f} {by_class}"
            f" {diff.mean():+10.5f} ± {diff.std() / np.sqrt(len(diff)):.5f}"
        )
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as exc:  # a bad agent spec or checkpoint
        raise SystemExit(f"move_errors: {exc}") from None
