"""`vrhcaby hint POSITION [DICE]`: the candidate plays ranked by equity, like gnubg's `hint`.

POSITION is a Position ID, ``PositionID:MatchID`` or an XGID; DICE (``31``, ``3-1``) may
be left out when the Match ID or XGID holds the roll. Each candidate shows its rank, the
play, how deep it was evaluated, its equity and the difference from the best, and the five
probabilities after the play (W, W(g), W(bg), L(g), L(bg)) for the side that plays it.
Equities are cubeful (Janowski; per unit of the cube, EMG in a match) unless `--cubeless`.
At 1 and 2 plies the search is pruned (`td?prune=on`: each roll's replies pre-ranked by a
small pruning network, `agents.search.Pruner`) unless the agent spec says otherwise or
`--no-prune` is given: 2.5-4 times as fast, its plays judged as good (docs/benchmarks.md).

The options here are shared by `cube` and `eval`; what they compute and their JSON are
`vrhcaby.io.answers`', which `vrhcaby serve` answers with too.
Only the torch-free numpy evaluator is loaded, so a 0-ply answer comes fast.
"""

from __future__ import annotations

import argparse
import json

import engine
from engine.waiting import waiting_id
from vrhcaby.cli.common import add_money_rules_arguments
from vrhcaby.equity.outcomes import SHORT_NAMES
from vrhcaby.io.answers import (
    describe_context,
    hint,
    hint_json,
    hint_json_ad,
    load_analysis_agent,
    money_json,
    number,
    pruned_spec,
    read_context,
    read_dice,
    read_position,
    read_rules,
    read_variant_position,
    variant_agent,
)

# --- options shared by hint, cube and eval ------------------------------------------


def add_position_arguments(
    parser: argparse.ArgumentParser, *, plies: bool = True, cube: bool = False
) -> None:
    """POSITION, the agent, the match context, the cube settings and --json; with `cube`
    (`cube`, `eval`), the look-ahead is the cube analysis's: `--cube-plies`, or `--plies`."""
    parser.add_argument("position", help="Position ID, PositionID:MatchID, or XGID")
    parser.add_argument(
        "--agent", default="td", help="a td agent spec (default td: checkpoints/td-contact-gen9.pt)"
    )
    if plies and cube:
        parser.add_argument(
            "--cube-plies",
            "--plies",
            dest="plies",
            type=int,
            choices=(0, 1, 2),
            help="look-ahead of the cube analysis, GNU Backgammon's cubeful n-ply; 0: "
            "Janowski on the 0-ply probabilities (default: the agent spec's cube_plies, "
            "td?cube_plies=N, else 2)",
        )
    elif plies:
        parser.add_argument(
            "--plies", type=int, choices=(0, 1, 2), help="look-ahead (default: the agent's)"
        )
    parser.add_argument("--match-id", help="GNU Backgammon Match ID for a bare Position ID")
    parser.add_argument(
        "--match-to", type=int, help="match length in points, 1 to 25 (0: money play)"
    )
    parser.add_argument("--score", help="match score A-B, the side on roll's first")
    parser.add_argument(
        "--crawford", action="store_true", help="with --match-to: this is the Crawford game"
    )
    add_money_rules_arguments(parser)
    parser.add_argument("--max-cube", type=int, default=64, help="highest cube value (default 64)")
    parser.add_argument(
        "--cube-efficiency",
        type=float,
        metavar="X",
        help="fixed Janowski cube efficiency (default: gnubg's, 0.68 in contact, "
        "0.6-0.7 by pip count in races)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def add_variant_argument(parser: argparse.ArgumentParser) -> None:
    """`--variant` of `eval` and `cube`: the position's variant (`start` is its start, an
    acey-deucey position has its waiting checkers) and the network `td` stands for."""
    parser.add_argument(
        "--variant",
        default="standard",
        help="rule variant (default: standard); td alone is the variant's own network "
        "(td:td-nackgammon, td:td-acey-deucey-gen2)",
    )


def percent(p) -> str:
    """Probabilities as percentages, each in six columns."""
    return " ".join(f"{100 * v:6.2f}" for v in p)


# --- hint -----------------------------------------------------------------------------


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "hint", help="rank the plays of a roll", description=__doc__.splitlines()[0]
    )
    add_position_arguments(parser)
    parser.add_argument("dice", nargs="?", help="the roll, e.g. 31 (default: the Match ID's)")
    parser.add_argument(
        "-n", "--candidates", type=int, default=10, help="how many plays to show (default 10)"
    )
    parser.add_argument(
        "--cubeless", action="store_true", help="rank by cubeless equity (what the agent plays)"
    )
    parser.add_argument(
        "--no-prune",
        action="store_true",
        help="value every reply in the search with the full network (slower; default: "
        "the agent's prune option, else on)",
    )
    parser.add_argument(
        "--variant",
        default="standard",
        help="rule variant (default: standard); acey-deucey ranks whole turns, 1-2 bonus "
        "included, with an acey-deucey network (--agent td:td-acey-deucey-gen2, its default)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {args.candidates}")
    if engine.get_variant(args.variant).enter_from_start:
        return run_acey_deucey(args)
    found = hint(args)
    board, dice, ctx, rules, ranked = (
        found.board,
        found.dice,
        found.context,
        found.rules,
        found.ranked,
    )
    shown = ranked[: args.candidates]
    if args.json:
        print(json.dumps(hint_json(shown, dice, ctx, not args.cubeless, rules)))
        return 0
    print(
        f"{engine.position_id(board)}  roll {dice[0]}-{dice[1]}  ({describe_context(ctx, rules)})"
    )
    if not ranked:
        print("No legal play: the turn passes.")
        return 0
    kind = "cubeless" if args.cubeless else "cubeful"
    unit = "EMG" if ctx.match_to else "points per cube"
    print(f"Equity: {kind}, {unit}; probabilities in % after the play.")
    best = ranked[0].equity
    width = max(len(str(c.play)) for c in shown)
    names = " ".join(f"{n:>6}" for n in SHORT_NAMES)
    print(f"{'#':>3}  {'play':<{width}}  ply  {'equity':>7}  {'diff':>7}  {names}")
    for rank, c in enumerate(shown, 1):
        diff = "" if rank == 1 else f"{c.equity - best:+7.3f}"
        mwc = f"  MWC {100 * c.mwc:5.2f}%" if c.mwc is not None else ""
        print(
            f"{rank:>3}  {c.play!s:<{width}}  {c.plies:>3}  {c.equity:+7.3f}  {diff:>7}  "
            f"{percent(c.probabilities)}{mwc}"
        )
    if len(ranked) > len(shown):
        print(f"({len(ranked) - len(shown)} more; --candidates N shows more)")
    return 0


def run_acey_deucey(args: argparse.Namespace) -> int:
    """`hint --variant acey-deucey`: whole turns ranked (`agents.turns_ad`)."""
    from agents.turns_ad import rank_turns_ad
    from engine.acey_deucey import to_board_ad
    from vrhcaby.nn.encode import waiting_on_bar

    position, state = read_variant_position(args)
    plain = waiting_on_bar(to_board_ad(position)[None])[0]
    rules = read_rules(args, state)
    ctx = read_context(args, plain, state, rules)
    dice = read_dice(args, state)
    agent = load_analysis_agent(variant_agent(args.agent, args.variant))
    if args.plies:
        raise ValueError("acey-deucey hints are 0-ply (no --plies)")
    cubeful = not args.cubeless
    ranked = rank_turns_ad(agent, position, dice, ctx, x=args.cube_efficiency, cubeful=cubeful)
    shown = ranked[: args.candidates]
    if args.json:
        print(json.dumps(hint_json_ad(shown, dice, ctx, cubeful)))
        return 0
    print(f"{waiting_id(position)}  roll {dice[0]}-{dice[1]}  ({describe_context(ctx, rules)})")
    if not ranked:
        print("No legal play: the turn passes.")
        return 0
    kind = "cubeless" if args.cubeless else "cubeful"
    unit = "EMG" if ctx.match_to else "points per cube"
    print(f"Acey-deucey, whole turns. Equity: {kind}, {unit}; probabilities in % after the turn.")
    if ranked[0].play.double is not None:
        print("A 1-2 turn: the 1 and the 2, then the double chosen and its play.")
    best = ranked[0].equity
    width = max(len(str(c.play)) for c in shown)
    names = " ".join(f"{n:>6}" for n in SHORT_NAMES)
    print(f"{'#':>3}  {'turn':<{width}}  {'then':<11}  {'equity':>7}  {'diff':>7}  {names}")
    for rank, c in enumerate(shown, 1):
        diff = "" if rank == 1 else f"{c.equity - best:+7.3f}"
        then = "rolls again" if c.extra_turn else ""
        mwc = f"  MWC {100 * c.mwc:5.2f}%" if c.mwc is not None else ""
        print(
            f"{rank:>3}  {c.play!s:<{width}}  {then:<11}  {c.equity:+7.3f}  {diff:>7}  "
            f"{percent(c.probabilities)}{mwc}"
        )
    if ranked[0].extra_turn:
        print("The best turn earns another roll: the same side rolls again after it.")
    if len(ranked) > len(shown):
        print(f"({len(ranked) - len(shown)} more; --candidates N shows more)")
    return 0


__all__ = [
    "add_position_arguments",
    "describe_context",
    "hint_json",
    "load_analysis_agent",
    "money_json",
    "number",
    "pruned_spec",
    "read_context",
    "read_position",
    "read_rules",
    "register",
    "run",
]
