"""A network's 0-ply and 1-ply on the judged set, from one search: the judged cost of each,
and how far its 1-ply values of the same candidates are from its 0-ply values.

    python bench/ply_gap.py td:checkpoints/td-contact-gen3.pt td:checkpoints/distill/x.pt

For each agent (a `td` spec; its move filter and pruning are used as `td?plies=1` uses
them), every legal play of the judged set's 2,400 decisions (`data/judge/gnubg-2ply.npz`,
bench/judge.py) is valued at 0 ply, and the best `filter[0]` (8) of each decision at
1 ply, as `td?plies=1` chooses (`agents.search.filtered_search`). Printed per agent: the
judged cost per decision of the 0-ply's choice and of the 1-ply's (what bench/judge.py
gives for `td:NET` and `td:NET?plies=1`), and the mean and standard deviation, over those
candidates, of their 1-ply equity minus their 0-ply equity: a network whose values one
ply away agree with its own 0-ply values has a small spread, and a negative mean is the
one-ply search's winner's curse (the opponent's reply picked among overvalued ones;
docs/distillation.md, sessions 15 and 16). And what a choice among those candidates sees
of each depth's error: the standard deviation of its equity minus gnubg 2-ply's, less that
difference's mean over the decision's candidates (a search whose errors are the same for
every candidate of a decision chooses as the judge does; session 30). Then each agent's
paired differences of both costs to the first agent's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent, search  # noqa: E402
from vrhcaby.equity.outcomes import equity  # noqa: E402
from vrhcaby.play.judge import Judged  # noqa: E402

DEFAULT_SET = ROOT / "data" / "judge" / "gnubg-2ply.npz"


def searched(agent: Any, judged: Judged, chunk: int = 200) -> dict[str, np.ndarray]:
    """The per-decision costs of the 0-ply and 1-ply choices of `agent` (a td agent), the
    1-ply minus 0-ply equity of each candidate valued at 1 ply, and those candidates'
    0-ply and 1-ply errors against the judge relative to their decision's mean error
    (`relative`); `chunk` decisions at a time (a 1-ply search of all of them at once holds
    about 20 GB)."""
    chosen: dict[str, list[np.ndarray]] = {"zero": [], "one": []}
    gaps = []
    relative: dict[str, list[np.ndarray]] = {"zero": [], "one": []}
    for lo in range(0, len(judged.boards), chunk):
        part = judged.first(lo + chunk)
        rows = part.parent >= lo
        after, parent, boards = part.after[rows], part.parent[rows] - lo, part.boards[lo:]
        zero = equity(search.ply_probabilities(agent.evaluator, after, 0, boards, parent))
        found = search.filtered_search(
            agent.evaluator,
            after,
            parent,
            boards,
            1,
            agent.filter,
            prune=agent.prune,
        )
        at_one = found.plies == 1
        one = np.where(at_one, found.values, -np.inf)
        chosen["zero"].append(search.chosen_boards(boards, after, parent, zero))
        chosen["one"].append(search.chosen_boards(boards, after, parent, one))
        gaps.append((found.values - zero)[at_one])
        judge = part.equities[rows][at_one]
        for depth, values in (("zero", zero[at_one]), ("one", found.values[at_one])):
            relative[depth].append(within(values - judge, parent[at_one]))
    return {
        "zero": judged.cost(np.concatenate(chosen["zero"])),
        "one": judged.cost(np.concatenate(chosen["one"])),
        "gap": np.concatenate(gaps),
        "relative zero": np.concatenate(relative["zero"]),
        "relative one": np.concatenate(relative["one"]),
    }


def within(error: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each candidate's `error` less the mean error of its decision's candidates (`parent`:
    each candidate's decision): the part of the error that can change a choice."""
    counts = np.bincount(parent)
    means = np.bincount(parent, error) / np.maximum(counts, 1)
    return error - means[parent]


def mean_se(x: np.ndarray) -> str:
    return f"{x.mean():.5f} ± {x.std() / np.sqrt(len(x)):.5f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="+", help="td agent specs; paired to the first")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the judged set (.npz)")
    args = parser.parse_args()
    judged = Judged.load(args.set)
    print(f"{len(judged.boards)} decisions, {len(judged.after)} plays ({args.set.name})")
    results = {}
    for spec in args.agents:
        start = time.perf_counter()
        r = results[spec] = searched(load_agent(spec), judged)
        print(
            f"{spec}: 0-ply {mean_se(r['zero'])}, 1-ply {mean_se(r['one'])}, 1-ply - 0-ply "
            f"over {len(r['gap'])} candidates: mean {r['gap'].mean():+.4f}, sd "
            f"{r['gap'].std():.4f}; error against the judge within a decision: sd 0-ply "
            f"{r['relative zero'].std():.4f}, 1-ply {r['relative one'].std():.4f} "
            f"({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    first = results[args.agents[0]]
    for spec in args.agents[1:]:
        r = results[spec]
        print(
            f"{spec} - {args.agents[0]}: 0-ply {mean_se(r['zero'] - first['zero'])}, "
            f"1-ply {mean_se(r['one'] - first['one'])}"
        )


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:  # a bad agent spec or checkpoint, a bad set
        raise SystemExit(f"ply_gap: {exc}") from None
