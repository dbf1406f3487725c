"""Agents' checker plays compared where they differ, on the positions of real games, judged.

    python bench/disagreements.py runs/tournaments/gen9-gnubg-20k-s7 td \\
        td:checkpoints/distill/ens-mix-best.pt 'gnubg?plies=0' --positions 40000

The judged set (`bench/judge.py`) draws its decisions from three sources at fixed shares
(race and bear-off 30%, games of an old network against pubeval a third); tournaments
against GNU Backgammon 0-ply are played on other positions. This yardstick takes its
decisions from the games of a `vrhcaby tournament --out` folder (`games.jsonl`): the turns
its first agent (`a`) played with a choice of plays, `--positions` of them drawn at random
(`--seed`), so that they weigh classes, gammonish and quiet positions as those games do.
Every agent named chooses its play in each (at the depth its spec asks); where one
chooses other than the first agent, both afterstates are valued by GNU Backgammon 2-ply
(`--judge-plies`; cubeless money equity for the mover, about 7 ms a position, 3-ply 0.3 to 1
s). Only the disagreements are judged, so a pair of networks that agree on nine
decisions in ten is compared in a tenth of the judging, and the comparison is paired:
the same positions and rolls, the dice's luck absent.

Printed per agent, against the first: the share of decisions where its play differs,
the equity it gains (+) or loses per such decision by the judge, per decision of the
sample, and per game (times the decisions with a choice the first agent had per game in
the folder: the points a game the change of play is worth on these positions, to first
order, as a tournament's paired difference would see it), with standard errors; by
position class. GNU Backgammon judges here and never teaches: nothing printed may become
a training target.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from agents import load_agent  # noqa: E402
from vrhcaby.nn.checkpoint import write_atomic  # noqa: E402
from vrhcaby.play.cube_judge import mean_se  # noqa: E402
from vrhcaby.play.judge import CLASSES, chosen_plays, gnubg_equities  # noqa: E402


def first_agent_turns(folder: Path) -> tuple[np.ndarray, np.ndarray, int, str]:
    """Boards (side on roll in row 1) and rolls of every turn the folder's first agent
    (`a`) played, the games read, and that agent's spec."""
    path = folder / "games.jsonl"
    if not path.is_file():
        raise ValueError(f"{folder}: no games.jsonl (a `vrhcaby tournament --out` folder)")
    boards, dice, games, spec = [], [], 0, ""
    with path.open() as f:
        for line in f:
            game = json.loads(line)
            games += 1
            spec = spec or game.get("a", "")
            seat = game.get("a_seat", 0)
            for turn in game.get("turns", []):
                if "dice" in turn and turn.get("player") == seat:
                    boards.append(engine.Position.from_id(turn["position_id"]).board)
                    dice.append(turn["dice"])
    if not games:
        raise ValueError(f"{path}: no games")
    return np.array(boards, np.int8), np.array(dice, np.int64), games, spec


def with_choice(boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
    """Indices of the turns with more than one legal play."""
    _, parent = engine.batch_afterstates(boards, dice)
    return np.flatnonzero(np.bincount(parent, minlength=len(boards)) > 1)


class Judge:
    """GNU Backgammon's equity of afterstates, each distinct one valued once."""

    def __init__(self, plies: int) -> None:
        self.plies = plies
        self.known: dict[bytes, float] = {}

    def __call__(self, after: np.ndarray) -> np.ndarray:
        keys = [a.tobytes() for a in after]
        new = {k: a for k, a in zip(keys, after, strict=True) if k not in self.known}
        if new:
            values = gnubg_equities(np.array(list(new.values())), self.plies)
            self.known.update(zip(new, values.tolist(), strict=True))
        return np.array([self.known[k] for k in keys])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a `vrhcaby tournament --out` folder")
    parser.add_argument("agents", nargs="+", help="agent specs; each compared to the first")
    parser.add_argument("--positions", type=int, default=20_000, help="decisions drawn")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge-plies", type=int, default=2, choices=(0, 1, 2, 3))
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.positions < 1:
        parser.error(f"--positions must be at least 1, got {args.positions}")
    if len(args.agents) < 2:
        parser.error("name at least two agents: the first and one to compare with it")
    import torch

    torch.set_num_threads(1)
    try:
        agents = [load_agent(spec) for spec in args.agents]
        boards, dice, games, played_by = first_agent_turns(args.folder)
    except (ValueError, OSError, json.JSONDecodeError) as e:
        print(f"disagreements: {e}", file=sys.stderr)
        return 2
    choice = with_choice(boards, dice)
    per_game = len(choice) / games
    rng = np.random.default_rng(args.seed)
    rows = np.sort(rng.choice(choice, min(args.positions, len(choice)), replace=False))
    boards, dice = boards[rows], dice[rows]
    classes = np.array([engine.Position(b).classify() for b in boards])
    print(
        f"{args.folder}: {games:,} games, {played_by} on roll with a choice "
        f"{per_game:.1f} times a game; {len(rows):,} of those decisions drawn (seed {args.seed}), "
        f"judged by gnubg {args.judge_plies}-ply where an agent differs from {args.agents[0]}",
        flush=True,
    )
    judge = Judge(args.judge_plies)
    start = time.perf_counter()
    base = chosen_plays(agents[0], boards, dice)
    results = {}
    header = (
        f"{'agent':<44} {'differs':>8} {'gain/difference':>17} {'gain/decision':>19} {'ppg':>16}"
    )
    print(header + "".join(f" {c:>18}" for c in CLASSES))
    for spec, agent in zip(args.agents[1:], agents[1:], strict=True):
        t = time.perf_counter()
        mine = chosen_plays(agent, boards, dice)
        differ = np.flatnonzero(np.any((mine != base).reshape(len(base), -1), axis=1))
        gain = np.zeros(len(rows))
        if len(differ):
            gain[differ] = judge(mine[differ]) - judge(base[differ])
        m_diff, se_diff = mean_se(gain[differ])
        m_all, se_all = mean_se(gain)
        by_class = {c: mean_se(gain[classes == c]) for c in CLASSES}
        results[spec] = {
            "differs": len(differ),
            "gain_per_difference": [m_diff, se_diff],
            "gain_per_decision": [m_all, se_all],
            "ppg": [m_all * per_game, se_all * per_game],
            "by_class": {c: list(v) for c, v in by_class.items()},
            "decisions_by_class": {c: int((classes == c).sum()) for c in CLASSES},
            "seconds": time.perf_counter() - t,
        }
        print(
            f"{spec:<44} {len(differ) / len(rows):>7.1%} {m_diff:>+8.4f}±{se_diff:.4f} "
            f"{m_all:>+10.5f}±{se_all:.5f} {m_all * per_game:>+8.4f}±{se_all * per_game:.4f}"
            + "".join(f" {m:>+9.5f}±{s:.5f}" for m, s in by_class.values()),
            flush=True,
        )
    print(f"({len(judge.known):,} afterstates judged, {time.perf_counter() - start:.0f} s)")
    if args.json:
        summary = {
            "folder": str(args.folder),
            "games": games,
            "decisions_per_game": per_game,
            "positions": len(rows),
            "seed": args.seed,
            "judge_plies": args.judge_plies,
            "first": args.agents[0],
            "agents": results,
        }
        write_atomic(args.json, json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
