"""`vrhcaby cube POSITION`: the cube decision of the side on roll, like gnubg's cube analysis.

Shows the five probabilities before the roll, the cubeless and cubeful equities, the
equities of no double (ND), double/take (D/T) and double/pass (D/P) per unit of the
current cube (EMG in a match, with MWCs), the proper action for both sides and the size of
the error of the other choice, and the look-ahead used. Cubeful equities follow Janowski's
model with gnubg's cube efficiencies (or `--cube-efficiency X`) at the leaves of GNU
Backgammon's cubeful N-ply look-ahead (`agents.cubeful`), N = `--cube-plies N` (`--plies
N`), else the agent spec's `cube_plies`, else 2 (`vrhcaby.analysis.CUBE_PLIES`, the depth
measured best); at 0 plies, on the 0-ply probabilities. Money play follows GNU
Backgammon's rules by default, the Jacoby rule and beavers (`--no-jacoby`, `--no-beavers`).
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
from vrhcaby.io.answers import cube_json, evaluate


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "cube", help="the cube decision of the side on roll", description=__doc__.splitlines()[0]
    )
    add_position_arguments(parser, cube=True)
    add_variant_argument(parser)
    parser.set_defaults(func=run)


def _mwc(value: float | None) -> str:
    return "" if value is None else f"   MWC {100 * value:6.2f}%"


def run(args: argparse.Namespace) -> int:
    ev, setting, rules = evaluate(args)
    if args.json:
        print(json.dumps(cube_json(ev, rules)))
        return 0
    d = ev.decision
    names = " ".join(f"{n:>6}" for n in SHORT_NAMES)
    print(f"Cube analysis ({setting}; {ev.plies}-ply; cube efficiency {ev.x:.3f})")
    print(f"  {names}")
    print(f"  {percent(ev.probabilities)}")
    print(f"Cubeless equity {d.cubeless:+.3f}{_mwc(d.cubeless_mwc)}")
    if not d.available:
        print(f"Cubeful equity  {d.nd:+.3f}{_mwc(d.nd_mwc)}   ({d.detail})")
        return 0
    rows = (
        ("No double", d.nd, d.nd_mwc),
        ("Double, take", d.dt, d.dt_mwc),
        ("Double, pass", d.dp, d.dp_mwc),
    )
    for rank, (name, eq, mwc) in enumerate(rows, 1):
        diff = "" if eq == d.optimal else f"  ({eq - d.optimal:+.3f})"
        print(f"{rank}. {name:<13} {eq:+.3f}{_mwc(mwc)}{diff}")
    print(f"Proper cube action: {d.detail}")
    doubler = "double" if d.double else "no double"
    taker = "beaver" if d.beaver else "take" if d.take else "pass"
    print(
        f"Doubler: {doubler} (the other choice costs {d.doubler_error:.3f}); "
        f"opponent: {taker} (the other answer costs {d.taker_error:.3f})"
    )
    return 0
