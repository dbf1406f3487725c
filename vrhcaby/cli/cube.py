"""`vrhcaby cube POSITION`: the cube decision of the side on roll, like gnubg's cube analysis.

Shows the five probabilities before the roll, the cubeless and cubeful equities, the
equities of no double (ND), double/take (D/T) and double/pass (D/P) per unit of the
current cube (EMG in a match, with MWCs), the proper action for both sides and the size of
the error of the other choice. Cubeful equities follow Janowski's model with gnubg's cube
efficiencies (or `--cube-efficiency X`); money play follows GNU Backgammon's rules by
default, the Jacoby rule and beavers (`--no-jacoby`, `--no-beavers`).
"""

from __future__ import annotations

import argparse
import json

from vrhcaby import analysis
from vrhcaby.cli.hint import (
    PROBABILITY_NAMES,
    add_position_arguments,
    describe_context,
    load_analysis_agent,
    money_json,
    number,
    percent,
    read_context,
    read_position,
    read_rules,
)
from vrhcaby.equity.context import money_rule


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "cube", help="the cube decision of the side on roll", description=__doc__.splitlines()[0]
    )
    add_position_arguments(parser)
    parser.set_defaults(func=run)


def _analyse(args: argparse.Namespace) -> tuple[analysis.PositionEvaluation, str, dict]:
    """The evaluation, the header's setting line and the money rules for `--json`."""
    board, state = read_position(args)
    rules = read_rules(args, state)
    ctx = read_context(args, board, state, rules)
    agent = load_analysis_agent(args.agent)
    beavers = money_rule(rules.beavers, match_to=ctx.match_to)
    ev = analysis.evaluate(
        agent, board, ctx, plies=args.plies, x=args.cube_efficiency, beavers=beavers
    )
    return ev, describe_context(ctx, rules), money_json(ctx, rules)


def cube_json(ev: analysis.PositionEvaluation, rules: dict) -> dict:
    """The `--json` document of the cube command."""
    d = ev.decision
    out = {
        **rules,
        "action": d.action,
        "detail": d.detail,
        "double": d.double,
        "take": d.take,
        "beaver": d.beaver,
        "available": d.available,
        "equities": {"nd": number(d.nd), "dt": number(d.dt), "dp": number(d.dp)},
        "optimal": number(d.optimal),
        "cubeless": number(d.cubeless),
        "doubler_error": number(d.doubler_error),
        "taker_error": number(d.taker_error),
        "probabilities": [number(v) for v in ev.probabilities],
        "cube_efficiency": number(ev.x),
    }
    if d.nd_mwc is not None:
        out["mwc"] = {
            "nd": number(d.nd_mwc),
            "dt": number(d.dt_mwc),
            "dp": number(d.dp_mwc),
            "optimal": number(d.optimal_mwc),
            "cubeless": number(d.cubeless_mwc),
        }
    return out


def _mwc(value: float | None) -> str:
    return "" if value is None else f"   MWC {100 * value:6.2f}%"


def run(args: argparse.Namespace) -> int:
    ev, setting, rules = _analyse(args)
    if args.json:
        print(json.dumps(cube_json(ev, rules)))
        return 0
    d = ev.decision
    names = " ".join(f"{n:>6}" for n in PROBABILITY_NAMES)
    print(f"Cube analysis ({setting}; cube efficiency {ev.x:.3f})")
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
