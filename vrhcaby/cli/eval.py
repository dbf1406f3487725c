"""`vrhcaby eval POSITION`: the position before the roll, for the side on roll.

The five probabilities (W, W(g), W(bg), L(g), L(bg)), the cubeless and cubeful equity
(keeping the cube, and with correct cube play by both sides), and in a match the cubeless
and cubeful match winning chances, the dead-cube take points and the gammon values at the
score.
"""

from __future__ import annotations

import argparse
import json

from vrhcaby.cli.cube import _analyse, cube_json
from vrhcaby.cli.hint import PROBABILITY_NAMES, add_position_arguments, number, percent


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval", help="evaluate a position before the roll", description=__doc__.splitlines()[0]
    )
    add_position_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ev, setting, rules = _analyse(args)
    d = ev.decision
    if args.json:
        out = {
            **rules,
            "probabilities": [number(v) for v in ev.probabilities],
            "cubeless_equity": number(ev.cubeless),
            "cubeful_equity": number(ev.cubeful),
            "cubeful_equity_no_double": number(ev.cubeful_nd),
            "mwc_cubeless": number(ev.mwc_cubeless),
            "mwc_cubeful": number(ev.mwc_cubeful),
            "take_points": None if ev.take_points is None else [number(t) for t in ev.take_points],
            "gammon_values": None
            if ev.gammon_values is None
            else dict(zip(ev.gammon_values._fields, map(number, ev.gammon_values), strict=True)),
            "cube": cube_json(ev, rules),
        }
        print(json.dumps(out))
        return 0
    names = " ".join(f"{n:>6}" for n in PROBABILITY_NAMES)
    print(f"Evaluation ({setting})")
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
