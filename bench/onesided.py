"""Race evaluations per second: the one-sided race evaluator against a race network.

    python bench/onesided.py [--onesided checkpoints/onesided-race.pt]
                             [--race checkpoints/td-race-set.pt] [--positions 2000]

The afterstates are every legal play, for one seeded roll, of race positions where
td-best's self-play games turned into races (`vrhcaby.learn.starts`, the pool the
one-sided network's recipe starts from), those still races after the play. Both
evaluators answer them as a network set's race member does: all at once with
`probabilities` and with `probabilities_from` (the incremental path the race network
has and the one-sided evaluator does not need), and one position's plays at a time. They
take turns within every repeat; the figures are medians, afterstates per second, side by
side with their ratio. How well each plays the races is `bench/judge.py`'s race column.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.netset import per_position, rates  # noqa: E402
from engine import batch_afterstates, roll_dice  # noqa: E402
from engine.classify import RACE, classify_boards  # noqa: E402
from vrhcaby.base.config import load_config  # noqa: E402
from vrhcaby.learn.onesided import OneSidedConfig  # noqa: E402
from vrhcaby.learn.starts import load_starts  # noqa: E402
from vrhcaby.nn import onesided  # noqa: E402
from vrhcaby.nn.net import load_member  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onesided", default=str(ROOT / "checkpoints" / "onesided-race.pt"))
    parser.add_argument("--race", default=str(ROOT / "checkpoints" / "td-race-set.pt"))
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    recipe = load_config(OneSidedConfig, ROOT / "configs" / "recipes" / "onesided-race.toml")
    pool = load_starts(recipe.starts.network, recipe.starts)[: args.positions]
    after, parent = batch_afterstates(pool, roll_dice(np.random.default_rng(args.seed), len(pool)))
    keep = classify_boards(after) == RACE
    after, parent = after[keep], parent[keep]
    used = np.unique(parent)
    roots, parent = pool[used], np.searchsorted(used, parent)
    race_net = load_member(args.race, "race")
    one_sided = onesided.load(args.onesided)
    one_sided.probabilities(after[:1])  # the bear-off database read once, outside the timing
    print(f"race network: {args.race} ({race_net.net.describe()})")
    print(f"one-sided: {args.onesided} ({one_sided.net.describe()})")
    print(f"{len(after):,} race afterstates of {len(roots):,} positions")
    print(f"{'evaluations/s':<18}{'race net':>12}{'one-sided':>12}{'ratio':>10}")
    for label, make in (
        ("from (batch)", lambda ev: lambda: ev.probabilities_from(roots, after, parent)),
        ("full (batch)", lambda ev: lambda: ev.probabilities(after)),
        ("from (position)", lambda ev: per_position(ev, roots, after, parent)),
    ):
        got = rates({"net": make(race_net), "one-sided": make(one_sided)}, len(after), args.repeats)
        ratio = got["one-sided"] / got["net"]
        print(f"{label:<18}{got['net']:>12,.0f}{got['one-sided']:>12,.0f}{ratio:>10.2f}")


if __name__ == "__main__":
    main()
