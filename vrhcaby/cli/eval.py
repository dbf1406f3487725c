"""`vrhcaby eval POSITION`: the position before the roll, for the side on roll.

The five probabilities (W, W(g), W(bg), L(g), L(bg)), the cubeless and cubeful equity
(keeping the cube, and with correct cube play by both sides), and in a match the cubeless
and cubeful match winning chances, the dead-cube take points and the gammon values at the
score; `--cube-plies N` (`--plies N`) looks N plies ahead as `vrhcaby cube` does (by
default 1, or the agent spec's `cube_plies`).
"""

from __future__ import annotations

import argparse
import json

from vrhcaby.cli.hint import (
    add_position_arguments,
    add_variant_argument,
    percent,
)
from vrhcaby.equity.outcomes import SHORT_NAMES
from vrhcaby.io.answers import eval_json, evaluate


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval", help="evaluate a position before the roll", description=__doc__.splitlines()[0]
    )
    add_position_arguments(parser, cube=True)
    add_variant_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ev, setting, rules = evaluate(args)
    d = ev.decision
    if args.json:
        out = eval_json(ev, rules)
        print(json.dumps(out))
        return 0
    names = " ".join(f"{n:>6}" for n in SHORT_NAMES)
    print(f"Evaluation ({setting}; cube analysis {ev.plies}-ply)")
    print(f"  {names}")
    print(f"  {percent(ev.probabilities)}")
    unit = "EMG" if ev.mwc_cubeless is not None else "points per cube"
    print(f"Cubeless equity {ev.cubeless:+.3f} ({unit})")
    print(f"Cubeful equity  {ev.cubeful:+.3f} ({d.detail.lower()}; no double {ev.cubeful_nd:+.3f})")
    if ev.mwc_cubeless is not None and ev.mwc_cubeful is not None:
        print(f"MWC cubeless {100 * ev.mwc_cubeless:.2f}%, cubeful {100 * ev.mwc_cubeful:.2f}%")
    if ev.take_points is not None:
        mine, theirs = (f"{100 * t:.1f}%" if t == t else "n/a" for t in ev.take_points)
        print(f"Dead-cube take points: side on roll {mine}, opponent {theirs}")
    if ev.gammon_values is not None:
        g = ev.gammon_values
        print(f"Gammon values: win {g.win_gammon:.3f}, lose {g.lose_gammon:.3f}")
    return 0
