"""0-ply evaluations per second of a network set against its single network.

    python bench/netset.py [--net checkpoints/td-best.pt] [--games 24] [--repeats 7]

The set holds three copies of one network (contact, crashed, race), so the two give the
same numbers and the difference is the set's own cost: classifying the afterstates,
splitting a batch into its classes' shares and gathering the answers, and answering the
bear-offs from the databases instead of the network. The afterstates are those of every
legal play of the positions met in seeded random games (mostly contact, with races and
bear-offs). Three ways of asking, as the users ask:

- ``from (batch)``: `probabilities_from` on all of them at once (the incremental first
  layer; tournaments, training and rollouts ask so);
- ``full (batch)``: `probabilities` on all of them at once (the n-ply search's replies);
- ``from (position)``: `probabilities_from` on one position's plays at a time (an agent
  choosing one play).

Both evaluators take turns within every repeat, so load from other processes falls on
them alike; the figures are medians, evaluations (afterstates) per second, side by side
with their ratio.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not another
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import lockstep_positions

from engine.classify import BEAROFF1, BEAROFF2, CONTACT, CRASHED, OVER, RACE, classify_boards
from vrhcaby.nn import netset
from vrhcaby.nn.net import load_evaluator

ROOT = Path(__file__).resolve().parents[1]


def per_position(evaluator, roots: np.ndarray, after: np.ndarray, parent: np.ndarray):
    """One `probabilities_from` call per root, on its plays."""
    assert (np.diff(parent) >= 0).all(), "afterstates grouped by root"
    bounds = np.searchsorted(parent, np.arange(len(roots) + 1))
    calls = [
        (roots[r : r + 1], after[lo:hi], np.zeros(hi - lo, np.int64))
        for r, (lo, hi) in enumerate(itertools.pairwise(bounds))
        if hi > lo
    ]

    def run() -> None:
        for root, plays, zero in calls:
            evaluator.probabilities_from(root, plays, zero)

    return run


def rates(contenders: dict[str, Callable[[], object]], items: int, repeats: int) -> dict:
    """Median items/s of each contender, timed in turn within every repeat."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():
        fn()  # compile and warm the caches
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: items / statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--net", default=str(ROOT / "checkpoints" / "td-best.pt"))
    parser.add_argument("--games", type=int, default=24, help="random games to draw from")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    single = load_evaluator(args.net)
    copies = netset.from_networks({name: load_evaluator(args.net) for name in netset.SET_CLASSES})
    roots, after, parent = lockstep_positions(args.games, args.seed)
    classes = classify_boards(after)
    mix = ", ".join(
        f"{name} {np.isin(classes, codes).mean():.1%}"
        for name, codes in (("contact", [CONTACT]), ("crashed", [CRASHED]), ("race", [RACE]),
                            ("bear-off", [BEAROFF1, BEAROFF2]), ("over", [OVER]))
    )  # fmt: skip
    print(f"network: {args.net} ({single.net.describe()}), set: three copies")
    print(f"{len(after):,} afterstates of {len(roots):,} positions ({mix})")
    print(f"{'evaluations/s':<18}{'single':>12}{'set':>12}{'set/single':>12}")
    for label, make in (
        ("from (batch)", lambda ev: lambda: ev.probabilities_from(roots, after, parent)),
        ("full (batch)", lambda ev: lambda: ev.probabilities(after)),
        ("from (position)", lambda ev: per_position(ev, roots, after, parent)),
    ):
        got = rates({"single": make(single), "set": make(copies)}, len(after), args.repeats)
        ratio = got["set"] / got["single"]
        print(f"{label:<18}{got['single']:>12,.0f}{got['set']:>12,.0f}{ratio:>12.2f}")


if __name__ == "__main__":
    main()
