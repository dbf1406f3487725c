"""`vrhcaby hint POSITION [DICE]`: the candidate plays ranked by equity, like gnubg's `hint`.

POSITION is a Position ID, ``PositionID:MatchID`` or an XGID; DICE (``31``, ``3-1``) may
be left out when the Match ID or XGID holds the roll. Each candidate shows its rank, the
play, how deep it was evaluated, its equity and the difference from the best, and the five
probabilities after the play (W, W(g), W(bg), L(g), L(bg)) for the side that plays it.
Equities are cubeful (Janowski; per unit of the cube, EMG in a match) unless `--cubeless`.
At 1 and 2 plies the search is pruned (`td?prune=on`: each roll's replies pre-ranked by a
small pruning network, `agents.search.Pruner`) unless the agent spec says otherwise or
`--no-prune` is given: 2.5-4 times as fast, its plays judged as good (docs/benchmarks.md).

The helpers here (the position, match and agent options) are shared by `cube` and `eval`.
Only the torch-free numpy evaluator is loaded, so a 0-ply answer comes fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from typing import Any

import numpy as np

import engine
from agents import load_agent, parse_spec
from agents.base import GameContext
from engine.formats import is_xgid
from engine.play import parse_dice
from engine.waiting import read_position as read_waiting_position
from engine.waiting import waiting_id
from vrhcaby import analysis
from vrhcaby.cli.common import MoneyRules, add_money_rules_arguments, money_rules
from vrhcaby.equity.context import context_for, parse_score

PROBABILITY_NAMES = ("W", "W(g)", "W(bg)", "L(g)", "L(bg)")


# --- options shared by hint, cube and eval ------------------------------------------


def add_position_arguments(parser: argparse.ArgumentParser, *, plies: bool = True) -> None:
    """POSITION, the agent, the match context, the cube settings and --json."""
    parser.add_argument("position", help="Position ID, PositionID:MatchID, or XGID")
    parser.add_argument(
        "--agent", default="td", help="a td agent spec (default td: checkpoints/td-contact-gen3.pt)"
    )
    if plies:
        parser.add_argument(
            "--plies", type=int, choices=(0, 1, 2), help="look-ahead (default: the agent's)"
        )
    parser.add_argument("--match-id", help="GNU Backgammon Match ID for a bare Position ID")
    parser.add_argument("--match-to", type=int, help="match length in points")
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


def load_analysis_agent(spec: str) -> Any:
    """The agent a spec names, if it gives probabilities (a td agent); ValueError if not."""
    agent = load_agent(spec)
    if not hasattr(agent, "before_roll"):
        raise ValueError(
            f"agent {spec!r} gives no outcome probabilities; analysis needs a td agent "
            "(td or td:PATH)"
        )
    return agent


def read_position(args: argparse.Namespace) -> tuple[np.ndarray, engine.MatchState | None]:
    """The board (side on roll in row 1) and the match state of POSITION and --match-id."""
    position, state = read_variant_position(args)
    return position.board, state


def read_variant_position(
    args: argparse.Namespace,
) -> tuple[engine.Position, engine.MatchState | None]:
    """The position (acey-deucey: with its waiting checkers) and the match state of
    POSITION (also `start`, `engine.waiting`) in `--variant`, and of --match-id."""
    position, state = read_waiting_position(args.position, getattr(args, "variant", "standard"))
    if args.match_id:
        given = engine.MatchState.from_id(args.match_id.strip())
        if state is not None and state != given:
            raise ValueError(f"--match-id {args.match_id} contradicts the Match ID in the position")
        state = given
    return position, state


def read_rules(args: argparse.Namespace, state: engine.MatchState | None) -> MoneyRules:
    """The money rules in force: the flags, else the position's, else gnubg's defaults."""
    return money_rules(args, state, from_xgid=is_xgid(args.position))


def read_context(
    args: argparse.Namespace, board: np.ndarray, state, rules: MoneyRules
) -> GameContext:
    """The cube and match context of the side on roll from the options."""
    if args.max_cube < 1 or args.max_cube & (args.max_cube - 1):
        raise ValueError(f"--max-cube must be a power of two, got {args.max_cube}")
    if args.cube_efficiency is not None and not 0.0 <= args.cube_efficiency <= 1.0:
        raise ValueError(f"--cube-efficiency must be in [0, 1], got {args.cube_efficiency}")
    score = parse_score(args.score) if args.score else None
    if args.match_to is None and score is not None and state is None:
        raise ValueError("--score needs --match-to")
    if state is not None and not state.match_length:
        state = dataclasses.replace(state, jacoby=rules.jacoby, beavers=rules.beavers)
    return context_for(
        board,
        state,
        match_to=args.match_to,
        score=score,
        crawford=args.crawford,
        jacoby=rules.jacoby,
        max_cube=args.max_cube,
    )


def describe_context(ctx: GameContext, rules: MoneyRules) -> str:
    """One line: money play and its rules, or the match score; and the cube."""
    owner = {
        "centre": "centred",
        "me": "owned by the side on roll",
        "opponent": "owned by the opponent",
    }[ctx.cube_owner]
    cube_text = f"cube {ctx.cube_value} {owner}"
    if not ctx.match_to:
        return f"money play, {rules.describe()}; {cube_text}"
    away = (ctx.match_to - ctx.score[0], ctx.match_to - ctx.score[1])
    tag = ", Crawford game" if ctx.crawford else ""
    if not ctx.crawford and 1 in away:
        tag = ", post-Crawford"
    return (
        f"{ctx.match_to}-point match, score {ctx.score[0]}-{ctx.score[1]} "
        f"({away[0]}-away, {away[1]}-away{tag}); {cube_text}"
    )


def money_json(ctx: GameContext, rules: MoneyRules) -> dict:
    """The money rules in force for `--json` (None for both in match play)."""
    money = not ctx.match_to
    return {"jacoby": rules.jacoby if money else None, "beavers": rules.beavers if money else None}


def number(x: float | None) -> float | None:
    """A float for JSON (None for a missing or NaN value)."""
    return None if x is None or math.isnan(x) else round(float(x), 6)


def percent(p: np.ndarray) -> str:
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
        "included, with an acey-deucey network (--agent td:td-acey-deucey, its default)",
    )
    parser.set_defaults(func=run)


def _dice(args: argparse.Namespace, state) -> tuple[int, int]:
    if state is not None and (state.doubled or state.resign):
        raise ValueError("the Match ID has a double or resignation pending; answer it first")
    if args.dice:
        return parse_dice(args.dice)
    if state is not None and state.dice != (0, 0):
        return state.dice
    raise ValueError("give the dice (e.g. 31): the position does not hold a roll")


def pruned_spec(spec: str, plies: int | None, no_prune: bool) -> str:
    """The agent spec hint uses: `spec` with ``prune=on`` added for a td agent searching
    1 or 2 plies whose spec does not set prune, unless `no_prune`; with `no_prune`, a
    spec that asks for pruning is an error (they contradict each other)."""
    name, _, options = parse_spec(spec)
    if name != "td":
        return spec
    if no_prune:
        if options.get("prune", "off") != "off":
            raise ValueError(f"--no-prune contradicts the agent spec {spec!r}")
        return spec
    given = options.get("plies", "0")  # a malformed one is load_agent's to report
    depth = plies if plies is not None else (int(given) if given.isdigit() else 0)
    if depth == 0 or "prune" in options:
        return spec
    return f"{spec.strip()}{'&' if '?' in spec else '?'}prune=on"


def run(args: argparse.Namespace) -> int:
    if args.candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {args.candidates}")
    if engine.get_variant(args.variant).enter_from_start:
        return run_acey_deucey(args)
    board, state = read_position(args)
    rules = read_rules(args, state)
    ctx = read_context(args, board, state, rules)
    dice = _dice(args, state)
    agent = load_analysis_agent(pruned_spec(args.agent, args.plies, args.no_prune))
    ranked = analysis.candidate_plays(
        agent,
        board,
        dice,
        ctx,
        plies=args.plies,
        x=args.cube_efficiency,
        cubeful=not args.cubeless,
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
    names = " ".join(f"{n:>6}" for n in PROBABILITY_NAMES)
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
    dice = _dice(args, state)
    agent = load_analysis_agent("td:td-acey-deucey" if args.agent == "td" else args.agent)
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
    names = " ".join(f"{n:>6}" for n in PROBABILITY_NAMES)
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


def hint_json_ad(candidates, dice: tuple[int, int], ctx: GameContext, cubeful: bool) -> dict:
    """`hint --variant acey-deucey --json`: as `hint_json`, each move also split into its
    parts (`first`: the roll's play, or the 1 and the 2; `double`: the double chosen, or
    null; `double_play`) with `extra_turn`, and `position_id` written `PID@X,O` from the
    view of the side that rolls next."""
    doc: dict[str, Any] = {
        "variant": "acey-deucey",
        "dice": list(dice),
        "cubeful": cubeful,
        "match_to": ctx.match_to,
        "score": list(ctx.score),
        "moves": [],
    }
    for c in candidates:
        first, double, double_play = c.parts
        doc["moves"].append(
            {
                "play": str(c.play),
                "first": first,
                "double": double,
                "double_play": double_play,
                "extra_turn": c.extra_turn,
                "equity": number(c.equity),
                "cubeless_equity": number(c.cubeless),
                "mwc": number(c.mwc),
                "plies": 0,
                "probabilities": [number(v) for v in c.probabilities],
                "position_id": c.position_id,
            }
        )
    return doc


def hint_json(
    candidates: list[analysis.Candidate],
    dice: tuple[int, int],
    ctx: GameContext,
    cubeful: bool,
    rules: MoneyRules,
) -> dict:
    """The `--json` document: ``{"moves": [...]}`` best first, plus the roll and setting."""
    return {
        "dice": list(dice),
        "cubeful": cubeful,
        "match_to": ctx.match_to,
        "score": list(ctx.score),
        **money_json(ctx, rules),
        "moves": [
            {
                "play": str(c.play),
                "equity": number(c.equity),
                "cubeless_equity": number(c.cubeless),
                "mwc": number(c.mwc),
                "plies": c.plies,
                "probabilities": [number(v) for v in c.probabilities],
                "position_id": c.position_id,
                "next_position_id": c.next_position_id,
            }
            for c in candidates
        ],
    }


__all__ = [
    "add_position_arguments",
    "describe_context",
    "hint_json",
    "load_analysis_agent",
    "money_json",
    "read_context",
    "read_position",
    "read_rules",
    "register",
    "run",
]
