"""`vrhcaby dice`: the six-dice scoring game (RULES.md §3) in the terminal.

vrhcaby dice play [--against optimal greedy] [--harsh]
vrhcaby dice hint 113456 --sheet ones=3,straight=21 --bonus 2 --throw 2
vrhcaby dice tournament optimal greedy random --games 200
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import numpy as np

from engine.sixdice import (
    CATEGORIES,
    FREE_RETHROWS,
    N_CATEGORIES,
    DiceError,
    Game,
    RuleError,
    TurnView,
    check_score,
    open_mask,
    parse_category,
    parse_dice,
)
from engine.text import ascii_int
from vrhcaby.cli.common import StopSignals
from vrhcaby.play.stats import wilson_ci95
from vrhcaby.play.tournament import MAX_GAMES
from vrhcaby.sixdice.players import (
    MAX_BANK,
    DiceAgent,
    Rethrow,
    Score,
    ValueAgent,
    apply,
    optimal_expected_score,
    play_game,
)
from vrhcaby.sixdice.specs import load_dice_agent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dice", help="the six-dice scoring game", description=__doc__.splitlines()[0]
    )
    verbs = parser.add_subparsers(dest="dice_command", metavar="VERB", required=True)

    play = verbs.add_parser("play", help="play against agents in the terminal")
    play.add_argument("--against", nargs="+", default=["optimal"], metavar="AGENT")
    play.add_argument("--harsh", action="store_true", help="the harsh variant")
    play.add_argument("--seed", type=int, default=None)

    hint = verbs.add_parser("hint", help="which dice to keep, which category to score")
    hint.add_argument("dice", help="six dice, e.g. 113456 or 1,1,3,4,5,6")
    hint.add_argument(
        "--sheet",
        default="",
        help="used categories, comma-separated, with scores: ones=3,straight=21 (default: none)",
    )
    hint.add_argument("--bonus", type=int, default=0, help="bonus points on the sheet")
    hint.add_argument("--throw", type=int, default=1, help="which throw the dice are (1, 2, 3...)")
    hint.add_argument("--harsh", action="store_true", help="the harsh variant")
    hint.add_argument("--announced", default=None, help="harsh: the announced category")
    hint.add_argument("--agent", default="optimal", help="optimal or td:PATH")
    hint.add_argument("--top", type=int, default=8, help="options to list")

    tour = verbs.add_parser("tournament", help="agents play each other; win rates, mean totals")
    tour.add_argument("agents", nargs="+", metavar="AGENT")
    tour.add_argument("--games", type=int, default=100)
    tour.add_argument("--harsh", action="store_true", help="the harsh variant")
    tour.add_argument("--seed", type=int, default=0)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.dice_command == "hint":
        return hint(args, sys.stdout)
    if args.dice_command == "tournament":
        return tournament(args, sys.stdout)
    return play(args, sys.stdin, sys.stdout)


# --- hint ----------------------------------------------------------------------------


def parse_sheet(text: str) -> list[int | None]:
    """Scores of the used categories from "ones=3,straight=21": each a score the category
    can hold (`engine.sixdice.check_score`), so that no expected total is of a sheet no
    game can make."""
    scores: list[int | None] = [None] * N_CATEGORIES
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = item.partition("=")
        c = parse_category(name)
        if scores[c] is not None:
            raise RuleError(f"category {CATEGORIES[c]} is listed twice in --sheet")
        if not eq:
            raise RuleError(
                f"--sheet {item!r}: give the score written, as {CATEGORIES[c]}=0 for a zero"
            )
        try:
            points = ascii_int(value)
        except ValueError:
            raise ValueError(f"score of {CATEGORIES[c]} must be a number, got {value!r}") from None
        check_score(c, points)
        scores[c] = points
    return scores


def describe(action: Score | Rethrow, dice: tuple[int, ...]) -> str:
    if isinstance(action, Score):
        return f"score {CATEGORIES[action.category]}"
    kept = " ".join(map(str, action.keep)) or "nothing"
    return f"keep {kept} (re-throw {len(dice) - len(action.keep)})"


def hint(args: argparse.Namespace, out: TextIO) -> int:
    dice = parse_dice(args.dice)
    scores = parse_sheet(args.sheet)
    filled = sum(s is not None for s in scores)
    if filled == N_CATEGORIES:
        raise RuleError("the sheet is full: no category left to score")
    if args.throw < 1:
        raise ValueError("--throw counts from 1")
    if args.harsh and (args.bonus or args.throw > 1 + FREE_RETHROWS):
        raise RuleError("the harsh variant has no bonus throws and at most three throws")
    if not 0 <= args.bonus <= min(2 * filled, MAX_BANK):
        raise RuleError(
            f"a sheet with {filled} filled categories holds 0 to {2 * filled} bonus points, "
            f"not {args.bonus}"
        )
    extra = max(0, args.throw - 1 - FREE_RETHROWS)
    if extra > args.bonus:
        raise RuleError(
            f"throw {args.throw} needs {extra} bonus throws; the sheet has {args.bonus}"
        )
    announced = None if args.announced is None else parse_category(args.announced)
    open_set = open_mask(c for c, s in enumerate(scores) if s is None)
    if announced is not None and not open_set >> announced & 1:
        raise RuleError(f"category {CATEGORIES[announced]} is already used")
    view = TurnView(
        dice=dice,
        open=open_set,
        bonus=args.bonus - extra,
        free_rethrows=max(0, 1 + FREE_RETHROWS - args.throw),
        throw=args.throw,
        harsh=args.harsh,
        announced=announced,
        player=0,
        totals=(sum(s for s in scores if s is not None) + args.bonus,),
    )
    agent = load_dice_agent(args.agent, harsh=args.harsh)
    if not isinstance(agent, ValueAgent):
        raise ValueError("hints come from a valuing agent: optimal or td:PATH")
    written = sum(s for s in scores if s is not None)
    out.write(
        f"dice {' '.join(map(str, dice))}, throw {args.throw}: {view.rethrows_left} re-throws "
        f"left ({view.free_rethrows} free), {written} points written\n"
    )
    if args.harsh and announced is None:
        opts = agent.announce_options(view)
        out.write(
            f"announce {CATEGORIES[opts[0][0]]}: expected final total {opts[0][1] + written:.2f}\n"
        )
        for c, v in opts[: args.top]:
            out.write(f"  {v + written:8.2f}  announce {CATEGORIES[c]}\n")
        return 0
    options = agent.options(view)
    best, value = options[0]
    out.write(f"{describe(best, dice)}: expected final total {value + written:.2f}\n")
    for action, v in options[: args.top]:
        out.write(f"  {v + written:8.2f}  {describe(action, dice)}\n")
    return 0


# --- tournament ----------------------------------------------------------------------


def tournament(args: argparse.Namespace, out: TextIO) -> int:
    if args.games < 1:
        raise ValueError("--games must be at least 1")
    if args.games > MAX_GAMES:  # each game's scores are kept
        raise ValueError(f"--games must be at most {MAX_GAMES:,}, got {args.games:,}")
    agents = [
        load_dice_agent(s, harsh=args.harsh, seed=args.seed + i) for i, s in enumerate(args.agents)
    ]
    rng = np.random.default_rng(args.seed)
    n = len(agents)
    wins = np.zeros((args.games, n))
    totals = np.zeros((args.games, n))
    played = 0
    with StopSignals() as stop:  # a stop keeps the games finished, exit status 130 or 143
        try:
            for g in range(args.games):
                seats = [(g + i) % n for i in range(n)]
                game = play_game([agents[s] for s in seats], rng, harsh=args.harsh)
                winners = game.winners()
                for seat, a in enumerate(seats):
                    totals[g, a] = game.sheets[seat].total
                    if seat in winners:
                        wins[g, a] = 1 / len(winners)
                played = g + 1
        except KeyboardInterrupt:
            print(f"interrupted: the results of the {played} games finished", file=sys.stderr)
        with stop.holding():
            if played:
                _tournament_table(args, out, wins[:played], totals[:played])
    return stop.status


def _tournament_table(
    args: argparse.Namespace, out: TextIO, wins: np.ndarray, totals: np.ndarray
) -> None:
    """The table of a dice tournament's games (rows) by agent (columns)."""
    games, n = wins.shape
    out.write(f"{games} games, {n} players each, first seat rotating; ties share a win\n")
    out.write(
        f"{'agent':<24} {'win rate':>8} {'95% interval':>16} {'mean total':>11} {'±95%':>6}\n"
    )
    for a, spec in enumerate(args.agents):
        w, t = wins[:, a], totals[:, a]
        ht = 1.96 * t.std(ddof=1) / np.sqrt(len(t)) if len(t) > 1 else float("nan")
        lo, hi = wilson_ci95(float(w.sum()), len(w))
        out.write(
            f"{spec:<24} {w.mean():8.1%} {f'[{lo:.1%}, {hi:.1%}]':>16} {t.mean():11.2f} {ht:6.2f}\n"
        )
    if "optimal" in args.agents:
        out.write(
            f"optimum (optimal solitaire play, exact): {optimal_expected_score(args.harsh):.4f}\n"
        )


# --- play ----------------------------------------------------------------------------

HELP = (
    "commands: keep DICE (set those aside, re-throw the rest; 'keep' alone re-throws all), "
    "score CATEGORY, announce CATEGORY (harsh), sheet, hint, quit"
)


def show_sheets(game: Game, names: list[str], out: TextIO) -> None:
    out.write(f"{'':<10}" + "".join(f"{n[:10]:>11}" for n in names) + "\n")
    for c, cat in enumerate(CATEGORIES):
        cells = ["-" if s.scores[c] is None else str(s.scores[c]) for s in game.sheets]
        out.write(f"{cat:<10}" + "".join(f"{x:>11}" for x in cells) + "\n")
    if not game.harsh:
        out.write(f"{'bonus':<10}" + "".join(f"{s.bonus:>11}" for s in game.sheets) + "\n")
    out.write(f"{'total':<10}" + "".join(f"{s.total:>11}" for s in game.sheets) + "\n")


def _status(game: Game) -> str:
    v = game.view()
    ann = "" if v.announced is None else f", playing for {CATEGORIES[v.announced]}"
    return (
        f"throw {v.throw}: dice {' '.join(map(str, v.dice))} "
        f"({v.free_rethrows} free re-throws, {v.bonus if not v.harsh else 0} bonus{ann})"
    )


def human_turn(
    game: Game, inp: TextIO, out: TextIO, adviser: DiceAgent | None, names: list[str]
) -> bool:
    """Reads commands until the human's turn ends; False on quit or end of input."""
    player = game.player
    while game.player == player and not game.over:
        out.write(_status(game) + "\n> ")
        out.flush()
        line = inp.readline()
        if not line:
            return False
        verb, _, rest = line.strip().partition(" ")
        try:
            if verb in ("quit", "q"):
                return False
            if verb == "keep":
                game.rethrow(rest)
            elif verb == "score":
                points = game.score(rest or None)
                out.write(f"you wrote {points}\n")
            elif verb == "announce":
                game.announce(rest)
            elif verb == "sheet":
                show_sheets(game, names, out)
            elif verb == "hint" and adviser is not None:
                view = game.view()
                if game.harsh and view.announced is None:
                    out.write(f"announce {CATEGORIES[adviser.announce(view)]}\n")
                else:
                    out.write(describe(adviser.decide(view), view.dice) + "\n")
            else:
                out.write(HELP + "\n")
        except ValueError as exc:
            out.write(f"error: {exc}\n")
    return True


def play(args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    opponents = [load_dice_agent(s, harsh=args.harsh, seed=args.seed) for s in args.against]
    names = ["you", *args.against]
    try:
        adviser: DiceAgent | None = load_dice_agent("optimal", harsh=args.harsh)
    except RuleError:
        adviser = None
    game = Game(len(names), np.random.default_rng(args.seed), harsh=args.harsh)
    out.write(HELP + "\n")
    while not game.over:
        if game.player == 0:
            out.write(f"-- your turn ({12 - bin(game.sheet.open).count('1') + 1} of 12)\n")
            if not human_turn(game, inp, out, adviser, names):
                out.write("game abandoned\n")
                return 1
            continue
        agent = opponents[game.player - 1]
        name = names[game.player]
        if game.harsh and game.announced is None:
            game.announce(agent.announce(game.view()))
        action = agent.decide(game.view())
        if isinstance(action, Score):
            dice = game.dice
            points = game.score(action.category)
            out.write(
                f"{name}: {' '.join(map(str, dice))} -> {CATEGORIES[action.category]} {points}\n"
            )
        else:
            apply(game, action)
    show_sheets(game, names, out)
    winners = [names[i] for i in game.winners()]
    out.write(f"winner: {', '.join(winners)}\n")
    return 0


__all__ = ["DiceError", "register", "run"]
