"""The judged benchmark: any agent's checker plays on a fixed set of decisions, each legal
play scored once by GNU Backgammon 2-ply and kept on disk, judged in seconds.

    python bench/judge.py td 'td?plies=1' td:td-contact 'gnubg?plies=0'
    python bench/judge.py td td:checkpoints/student.pt --json results/judged.json

The set (`data/judge/gnubg-2ply.npz`, made by `--build`) holds decisions from three
sources, `--per-source` each (default 800: 560 contact or crashed, 240 race or bear-off,
drawn at random from the turns with a choice of `--games` games): GNU Backgammon 0-ply
self-play, `td-best.pt` against pubeval, and `td-best.pt` self-play (cubeless money,
mirrored dice, `--seed`). Every legal play of every decision is valued by
`gnubg_nn.probabilities(board, 2)` (cubeless money equity, about 50 ms a play on one
core: some 40 minutes for the whole set). `--build` is resumable: it scores the set in
parts of 100 decisions under `data/judge/.parts/` and only merges them at the end.

Printed per agent: the mean equity lost per decision against gnubg 2-ply's best play,
with its standard error; the mean per class (contact, crashed, race, bear-off) with theirs;
and the paired difference to the first agent (same decisions, so far tighter than either
mean). gnubg 2-ply is a judge, not a teacher: nothing here may become a training target.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from vrhcaby.play.judge import (  # noqa: E402
    CLASSES,
    Judged,
    build_in_parts,
    gnubg_equities,
    recorded_positions,
)

DEFAULT_SET = ROOT / "data" / "judge" / "gnubg-2ply.npz"
#: Where each source's games come from: (name, agent spec, opponent spec).
SOURCES = (
    ("gnubg-selfplay", "gnubg?plies=0", "gnubg?plies=0"),
    ("td-vs-pubeval", "td:td-best", "pubeval"),
    ("td-selfplay", "td:td-best", "td:td-best"),
)
PART = 100
RACE = ("race", "bearoff")


def select(per_source: int, games: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boards, rolls and source names of the decisions of the set, in a fixed order: per
    source, 70% contact or crashed and 30% race or bear-off turns with a choice, drawn at
    random (without replacement) from its games."""
    import engine

    boards, dice, sources = [], [], []
    rng = np.random.default_rng(seed)
    for k, (name, a, b) in enumerate(SOURCES):
        bb, dd, _ = recorded_positions(load_agent(a), load_agent(b), games, seed + k)
        _, parent = engine.batch_afterstates(bb, dd)
        choice = np.flatnonzero(np.bincount(parent, minlength=len(bb)) > 1)
        race = np.isin([engine.Position(bb[i]).classify() for i in choice], RACE)
        n_race = round(0.3 * per_source)
        picked = []
        for pool, n in ((choice[~race], per_source - n_race), (choice[race], n_race)):
            if len(pool) < n:
                raise SystemExit(f"judge: {name} has {len(pool)} decisions of a kind, wants {n}")
            picked.append(rng.choice(pool, n, replace=False))
        rows = np.concatenate(picked)
        boards.append(bb[rows])
        dice.append(dd[rows])
        sources.append(np.full(len(rows), name))
    return np.concatenate(boards), np.concatenate(dice), np.concatenate(sources)


def build(out: Path, per_source: int, games: int, seed: int) -> None:
    """Score the set part by part (resumable), then write it to `out`."""
    boards, dice, sources = select(per_source, games, seed)
    judge = functools.partial(gnubg_equities, plies=2)
    whole = build_in_parts(
        out,
        boards,
        lambda rows: Judged.from_positions(
            boards[rows], dice[rows], games * len(SOURCES), judge=judge, sources=sources[rows]
        ),
        Judged.load,
        lambda parts: replace(Judged.concat(parts), games=games * len(SOURCES)),
        size=PART,
    )
    print(f"wrote {out}: {len(whole.boards)} decisions, {len(whole.after)} plays")


def judge_agents(judged: Judged, specs: list[str]) -> list[dict]:
    """Each agent's cost summary on the set, the first agent's paired differences and the
    decisions where it chose another play than the first agent (`moved`)."""
    agents = [load_agent(spec) for spec in specs]  # bad specs fail before any play
    classes = " ".join(f"{c:>15s}" for c in CLASSES)
    print(f"{'agent':36s} {'cost/decision':>17s} {classes} {'paired diff':>19s}  time")
    first = first_chosen = None
    results = []
    for spec, agent in zip(specs, agents, strict=True):
        t = time.perf_counter()
        chosen = judged.choose(agent)
        cost = judged.cost(chosen)
        seconds = time.perf_counter() - t
        first = cost if first is None else first
        first_chosen = chosen if first_chosen is None else first_chosen
        diff = cost - first
        by_class = {}
        for c in CLASSES:
            x = cost[judged.classes == c]
            mean, se = (
                (float(x.mean()), float(x.std() / np.sqrt(len(x)))) if len(x) else (None,) * 2
            )
            by_class[c] = {"mean": mean, "se": se, "decisions": len(x)}
        row = {
            "agent": spec,
            "mean": float(cost.mean()),
            "se": float(cost.std() / np.sqrt(len(cost))),
            "decisions": len(cost),
            "classes": by_class,
            "paired_diff": float(diff.mean()),
            "paired_se": float(diff.std() / np.sqrt(len(diff))),
            "moved": int((chosen != first_chosen).any(axis=(1, 2)).sum()),
            "seconds": seconds,
        }
        results.append(row)
        cells = " ".join(
            f"{v['mean']:.5f}±{v['se']:.5f}" if v["decisions"] else f"{'-':>13s}"
            for v in by_class.values()
        )
        print(
            f"{spec:36s} {row['mean']:.5f} ± {row['se']:.5f} {cells}"
            f" {row['paired_diff']:+.5f} ± {row['paired_se']:.5f} {seconds:5.1f}s"
            f" moved {row['moved']}"
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="*", help="agent specs; paired differences to the first")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the judged set (.npz)")
    parser.add_argument("--build", action="store_true", help="score the set (about 40 min)")
    parser.add_argument("--per-source", type=int, default=800)
    parser.add_argument("--games", type=int, default=60, help="games per source")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.build:
        build(args.set, args.per_source, args.games, args.seed)
    if not args.agents:
        if not args.build:
            parser.error("name agents to judge, or --build the set")
        return 0
    judged = Judged.load(args.set)
    counts = {c: int((judged.classes == c).sum()) for c in CLASSES}
    print(
        f"{len(judged.boards)} decisions ({', '.join(f'{n} {c}' for c, n in counts.items())}), "
        f"{len(judged.after)} plays judged by gnubg 2-ply ({args.set.name})"
    )
    results = judge_agents(judged, args.agents)
    if args.json:
        text = json.dumps({"set": str(args.set), "results": results}, indent=1)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.json.with_suffix(".tmp")
        tmp.write_text(text + "\n")
        tmp.replace(args.json)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as exc:  # a bad agent spec or checkpoint, a bad set, no gnubg-nn
        raise SystemExit(f"judge: {exc}") from None
