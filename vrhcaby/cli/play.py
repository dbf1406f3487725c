"""`vrhcaby play`: play against the bot in the terminal.

You are X, at the bottom, moving from your 24-point to your home board. The board is drawn
before each of your moves; type plays in notation (``13/7 8/7``, ``bar/22``, ``6/off``).
At the move prompt: ``hint`` ranks your plays, ``board`` redraws, ``resign [1|2|3]``
offers to resign a single game, gammon or backgammon, ``quit`` ends. Before rolling, when
the cube is yours to turn, you are asked ``roll`` or ``double`` (``hint`` gives the cube
analysis). The bot doubles, takes, beavers, passes and resigns by its cube analysis. Money
play goes game after game, by GNU Backgammon's rules unless told (the Jacoby rule, beavers
allowed: ``--no-jacoby``, ``--no-beavers``); ``--match-to N`` plays a match with the
Crawford rule.

``--variant nackgammon|nackgammon-seed`` starts from that layout (the bot defaults to the
shipped Nackgammon network); ``--variant acey-deucey`` plays acey-deucey with its network:
checkers enter from ``start`` (``start/20``), and a 1-2 is typed in steps, as it is
played: the 1 and the 2, then the double you choose (a number 1-6), then that double's
play; when the double went all four times you roll again. The cube is offered only before
a turn's first roll.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import numpy as np

import engine
from agents import turns_ad
from agents.base import GameContext
from vrhcaby import analysis
from vrhcaby.cli.common import MoneyRules, add_money_rules_arguments, money_rules
from vrhcaby.cli.hint import load_analysis_agent
from vrhcaby.equity.context import check_match_length, money_rule
from vrhcaby.io.answers import variant_agent
from vrhcaby.io.board_text import draw
from vrhcaby.play.match import MatchScore

HUMAN, BOT = 0, 1
RESULT = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class Quit(Exception):
    """The player typed quit (or the input ended)."""


class Session:
    """One sitting of games or a match between a person (`inp`/`out`) and the bot."""

    def __init__(
        self,
        agent: Any,
        *,
        match_to: int = 0,
        seed: int | None = None,
        cube: bool = True,
        jacoby: bool = True,
        beavers: bool = True,
        variant: str = "standard",
        inp: TextIO | None = None,
        out: TextIO | None = None,
    ) -> None:
        check_match_length(match_to)
        if not agent.supports(variant):
            raise ValueError(f"agent {agent.name!r} cannot play variant {variant!r}")
        self.agent = agent
        self.variant = variant
        self.acey_deucey = engine.get_variant(variant).enter_from_start
        self.match_to = match_to
        self.rng = np.random.default_rng(seed)
        self.cube_enabled = cube
        #: The Jacoby rule as asked; `context` keeps it only where it is in force.
        self.jacoby = jacoby
        self.beavers = money_rule(beavers, cube_enabled=cube, match_to=match_to)
        self.inp = inp or sys.stdin
        self.out = out or sys.stdout
        #: The score (money play: the points won so far) and, in a match, its Crawford game.
        self.match = MatchScore(match_to)
        self.cube_value, self.owner = 1, -1

    # --- input and output ----------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            raise Quit
        text = line.strip()
        if text.lower() in ("quit", "q", "exit"):
            raise Quit
        return text

    def ask_yes_no(self, prompt: str) -> bool:
        """A question answered y/yes or n/no, asked again until it is (anything else is
        neither: a stray key must not start a game or settle a resignation)."""
        while True:
            reply = self.ask(prompt).lower()
            if reply in ("y", "yes", "n", "no"):
                return reply.startswith("y")
            self.say("Answer y or n (or quit).")

    # --- boards: (2, 25), or (2, 26) with the waiting checkers in acey-deucey ------------

    def position(self, board: np.ndarray) -> engine.Position:
        """The position of a board, the side on roll in row 1."""
        if self.acey_deucey:
            return turns_ad.position_of(board)
        return engine.Position(board)

    def draw(self, board: np.ndarray) -> str:
        """The board drawn (acey-deucey: with the waiting checkers)."""
        pos = self.position(board)
        return draw(pos.board, None, pos.waiting if self.acey_deucey else None)

    def context(self, side: int) -> GameContext:
        """The cube and match from the view of `side` (without beavers: the bot's cube
        decisions here do not weigh a beaver)."""
        return GameContext.of_side(
            side,
            cube_value=self.cube_value,
            cube_owner=self.owner,
            score=(self.match.score[0], self.match.score[1]),
            cube_enabled=self.cube_enabled,
            match_to=self.match_to,
            crawford=self.match.crawford,
            jacoby=self.jacoby,
        )

    def status(self) -> str:
        owner = {-1: "centred", HUMAN: "yours", BOT: "the bot's"}[self.owner]
        cube = f"cube {self.cube_value} ({owner})" if self.cube_enabled else "no cube"
        you, bot = self.match.score
        if not self.match_to:
            rules = MoneyRules(self.jacoby, self.beavers).describe() if self.cube_enabled else ""
            rules = f" ({rules})" if rules else ""
            return f"Money play{rules}, you {you} - bot {bot}; {cube}"
        tag = " (Crawford game)" if self.match.crawford else ""
        return f"Match to {self.match_to}: you {you} - bot {bot}{tag}; {cube}"

    # --- the session -----------------------------------------------------------------

    def run(self) -> int:
        try:
            while True:
                winner, points = self.play_game()
                self.match.add(points, winner)
                who = "You win" if winner == HUMAN else "The bot wins"
                self.say(f"{who} {points} point{'s' if points > 1 else ''}. {self.status()}")
                if self.match_to:
                    if self.match.over:
                        won = self.match.winner == HUMAN
                        self.say("You win the match!" if won else "The bot wins the match.")
                        return 0
                    self.match.next_game()
                elif not self.ask_yes_no("Another game? [y/n] "):
                    return 0
        except Quit:
            self.say(f"Bye. {self.status()}")
            return 0

    def play_game(self) -> tuple[int, int]:
        """Play one game; (winner, points)."""
        self.cube_value, self.owner = 1, -1
        side, dice = engine.opening_roll(self.rng)
        board = turns_ad.start_board(self.variant)  # `side`'s view
        self.say(f"New game. {self.status()}")
        first, again = True, False
        while True:
            if side == HUMAN:
                self.say(self.draw(board))
                self.say(self.status())
            if not first:
                if not again:  # no cube before an extra roll
                    ended = self.before_roll(side, board)
                    if ended is not None:
                        return ended
                roll = engine.roll_dice(self.rng, 1)[0]
                dice = (int(roll[0]), int(roll[1]))
            first = False
            if self.acey_deucey:
                turn = self.move_ad(side, board, dice)
            else:
                moved = self.move(side, board, dice)
                turn = moved if isinstance(moved, tuple) else (moved, False)
            if isinstance(turn[0], int):  # the game is over: (winner, points)
                return turn
            board, again = turn
            if again:
                who = "You roll" if side == HUMAN else "The bot rolls"
                self.say(f"{who} again (the 1-2 bonus double went all four times).")
                continue
            board = board[::-1].copy()
            side = 1 - side

    def end_value(self, side: int, value: int) -> int:
        """The points `side` wins by a game won by `value` (1-3) on the cube."""
        return self.context(side).game_points(value)

    # --- before the roll: resignations and the cube ------------------------------------

    def before_roll(self, side: int, board: np.ndarray) -> tuple[int, int] | None:
        ctx = self.context(side)
        position = self.position(board)
        if side == BOT:
            offer = self.agent.resign_offer(position, ctx)
            if offer:
                if self.ask_yes_no(f"The bot resigns {RESULT[offer]}. Accept? [y/n] "):
                    return HUMAN, offer * self.cube_value
                self.say("Resignation refused; play goes on.")
            if ctx.may_double() and self.agent.double_decision(position, ctx):
                return self.bot_doubles(board)
            return None
        while ctx.may_double():
            reply = self.ask("Roll or double? [roll/double/hint/resign] ").lower()
            if reply in ("", "r", "roll"):
                return None
            if reply in ("d", "double"):
                return self.human_doubles(board)
            if reply == "hint":
                self.show_cube(board, ctx)
            elif reply.startswith("resign"):
                ended = self.human_resigns(board, reply)
                if ended is not None:
                    return ended
            else:
                self.say("Type roll, double, hint, resign [1|2|3] or quit.")
        return None

    def bot_doubles(self, bot_board: np.ndarray) -> tuple[int, int] | None:
        new = 2 * self.cube_value
        answers = "take/beaver/pass/hint" if self.beavers else "take/pass/hint"
        while True:
            reply = self.ask(f"The bot doubles to {new}. Take or pass? [{answers}] ").lower()
            if reply in ("t", "take"):
                self.cube_value, self.owner = new, HUMAN
                self.say(f"You take; the cube is at {new}.")
                return None
            if self.beavers and reply in ("b", "beaver"):
                self.cube_value, self.owner = 2 * new, HUMAN
                self.say(f"You beaver; the cube is at {2 * new}, yours.")
                return None
            if reply in ("p", "pass", "drop"):
                return BOT, self.cube_value
            if reply == "hint":
                self.show_cube(bot_board, self.context(BOT), taker=True)
            else:
                self.say(f"Type {answers.replace('/', ', ')} or quit.")

    def human_doubles(self, board: np.ndarray) -> tuple[int, int] | None:
        new = 2 * self.cube_value
        position, ctx = self.position(board).flip(), self.context(HUMAN).flip()
        if self.beavers and self.agent.beaver_decision(position, ctx):
            self.cube_value, self.owner = 2 * new, BOT
            self.say(f"The bot beavers; the cube is at {2 * new}, the bot's.")
            return None
        if self.agent.take_decision(position, ctx):
            self.cube_value, self.owner = new, BOT
            self.say(f"The bot takes; the cube is at {new}.")
            return None
        self.say("The bot passes.")
        return HUMAN, self.cube_value

    def human_resigns(self, board: np.ndarray, text: str) -> tuple[int, int] | None:
        """`resign`, `resign 1`, `2` or `3` offered to the bot; anything else after
        `resign` is no offer, and says so."""
        parts = text.split()
        if parts[0] != "resign" or len(parts) > 2 or parts[1:] not in ([], ["1"], ["2"], ["3"]):
            self.say(
                "Type resign or resign 1 (a single game), resign 2 (a gammon) or resign 3 "
                f"(a backgammon); {' '.join(parts)!r} offers none of them."
            )
            return None
        value = int(parts[1]) if len(parts) > 1 else 1
        ctx = self.context(BOT)
        if self.agent.accept_resignation(self.position(board).flip(), ctx, value):
            self.say(f"The bot accepts your resignation of {RESULT[value]}.")
            return BOT, value * self.cube_value
        self.say("The bot refuses your resignation; play on.")
        return None

    def show_cube(self, board: np.ndarray, ctx: GameContext, *, taker: bool = False) -> None:
        if self.acey_deucey:
            d = turns_ad.cube_decision_ad(self.agent, board, ctx)
        else:
            d = analysis.evaluate(self.agent, board, ctx, beavers=self.beavers).decision
        who = "the bot" if taker else "you"
        self.say(
            f"Cube analysis for {who}: ND {d.nd:+.3f}, D/T {d.dt:+.3f}, D/P {d.dp:+.3f}: "
            f"{d.detail}."
        )
        if taker:
            answer = "beaver" if self.beavers and d.beaver else "take" if d.take else "pass"
            self.say(f"Your proper answer: {answer}.")

    # --- the roll ----------------------------------------------------------------------

    def move(
        self, side: int, board: np.ndarray, dice: tuple[int, int]
    ) -> np.ndarray | tuple[int, int]:
        """The board after `side` plays `dice` (mover in row 1), or a finished game."""
        position = engine.Position(board)
        plays = engine.legal_plays(position, dice)
        if side == BOT:
            if not plays:
                self.say(f"The bot rolls {dice[0]}-{dice[1]} and cannot move.")
                return board
            if getattr(self.agent, "ranks_in_context", False):  # cubeful, as hint ranks
                play = self.agent.choose_play(position, dice, self.context(BOT))
            else:
                play = self.agent.choose_play(position, dice)
            self.say(f"The bot rolls {dice[0]}-{dice[1]} and plays {play}.")
        else:
            if not plays:
                self.say(f"You roll {dice[0]}-{dice[1]} and cannot move.")
                return board
            picked = self.human_play(position, dice, plays)
            if isinstance(picked, tuple):
                return picked
            play = picked
        value = int(engine.game_value(play.position.board[None])[0])
        if value:
            return side, self.end_value(side, value)
        return play.position.board

    def human_play(
        self, position: engine.Position, dice: tuple[int, int], plays: list[engine.Play]
    ) -> engine.Play | tuple[int, int]:
        while True:
            text = self.ask(f"You roll {dice[0]}-{dice[1]}. Your play: ")
            low = text.lower()
            if low == "hint":
                ranked = analysis.candidate_plays(
                    self.agent, position.board, dice, self.context(HUMAN)
                )
                for rank, c in enumerate(ranked[:5], 1):
                    self.say(f"  {rank}. {c.play!s:<24} {c.equity:+.3f}")
                continue
            if low == "board":
                self.say(self.draw(position.board))
                continue
            if low.startswith("resign"):
                ended = self.human_resigns(position.board, low)
                if ended is not None:
                    return ended
                continue
            if low in ("help", "?", ""):
                self.say("Type a play like 13/7 8/7, or hint, board, resign [1|2|3], quit.")
                continue
            try:
                return engine.Play.parse(text, position, dice)
            except ValueError as exc:
                legal = ", ".join(sorted(str(p) for p in plays))
                self.say(f"Illegal play: {exc}. Legal plays: {legal}")

    # --- acey-deucey turns ---------------------------------------------------------------

    def move_ad(
        self, side: int, board: np.ndarray, dice: tuple[int, int]
    ) -> tuple[np.ndarray, bool] | tuple[int, int]:
        """Acey-deucey: (the board after `side`'s turn, whether it rolls again), or a
        finished game."""
        position = self.position(board)
        roll = f"{dice[0]}-{dice[1]}"
        if side == BOT:
            try:
                play = self.agent.choose_play_ad(position, dice)
            except ValueError:
                self.say(f"The bot rolls {roll} and cannot move.")
                return board, False
            self.say(f"The bot rolls {roll} and plays {play}.")
            after, again = turns_ad.board_of(play.position), play.extra_turn
        else:
            turn = self.human_turn_ad(position, dice)
            if turn is None:
                return board, False
            if isinstance(turn[0], int):
                return turn  # type: ignore[return-value]
            after, again = turn  # type: ignore[misc]
        value = int(turns_ad.game_value(after))
        if value:
            return side, self.end_value(side, value)
        return after, again

    def human_turn_ad(self, position: engine.Position, dice: tuple[int, int]):
        """The person's turn, typed in steps: None when no play is legal, else (board,
        rolls again) or a finished game (a resignation accepted)."""
        first = turns_ad.first_plays(position, dice)
        roll = f"{dice[0]}-{dice[1]}"
        if not first:
            self.say(f"You roll {roll} and cannot move.")
            return None
        one_two = turns_ad.is_one_two(dice)
        prompt = f"You roll {roll}. " + ("Play the 1 and the 2: " if one_two else "Your play: ")
        picked = self.human_step(position, dice, first, prompt)
        if isinstance(picked, tuple):
            return picked
        if not picked.extra_turn:  # no bonus due: the turn is over
            return turns_ad.board_of(picked.position), False
        position = picked.position
        while True:
            text = self.ask("Choose your double (1-6): ")
            if text in tuple("123456"):
                break
            if text.lower() == "hint":
                self.hint_ad(position, None)
            else:
                self.say("Type a number 1 to 6 (the double you play), hint or quit.")
        k = int(text)
        bonus = [p for p in turns_ad.bonus_plays(position) if p.double == k]
        if len(bonus) == 1 and not bonus[0].steps:
            self.say(f"{k}-{k} cannot be played: no extra roll.")
            return turns_ad.board_of(position), False
        picked = self.human_step(position, None, bonus, f"Play {k}-{k}: ")
        if isinstance(picked, tuple):
            return picked
        if not picked.extra_turn:
            self.say(f"{k}-{k} went fewer than four times: no extra roll.")
        return turns_ad.board_of(picked.position), picked.extra_turn

    def human_step(self, position: engine.Position, dice, plays: list, prompt: str):
        """One typed step of an acey-deucey turn, one of `plays` (a `PlayAD`), or a finished
        game (a resignation accepted). `dice` None: the step is the bonus double."""
        while True:
            text = self.ask(prompt)
            low = text.lower()
            if low == "hint":
                self.hint_ad(position, dice)
                continue
            if low == "board":
                self.say(self.draw(turns_ad.board_of(position)))
                continue
            if low.startswith("resign") and dice is not None:
                ended = self.human_resigns(turns_ad.board_of(position), low)
                if ended is not None:
                    return ended
                continue
            if low in ("help", "?", ""):
                self.say("Type a play like start/20 13/7, or hint, board, resign [1|2|3], quit.")
                continue
            try:
                return turns_ad.match_play(text, position, plays)
            except ValueError as exc:
                legal = ", ".join(sorted(turns_ad.step_text(p) for p in plays))
                self.say(f"Illegal play: {exc}. Legal plays: {legal}")

    def hint_ad(self, position: engine.Position, dice: tuple[int, int] | None) -> None:
        """The best whole turns of a roll (or, for the bonus, of each double) by the bot's
        network."""
        if dice is None:
            ranked = turns_ad.rank_bonus_ad(self.agent, position)
        else:
            ranked = turns_ad.rank_turns_ad(self.agent, position, dice, self.context(HUMAN))
        for rank, c in enumerate(ranked[:5], 1):
            then = "  (rolls again)" if c.extra_turn else ""
            self.say(f"  {rank}. {c.play!s:<40} {c.equity:+.3f}{then}")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "play", help="play against the bot in the terminal", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--agent",
        help="the bot: a td agent spec (default td; td:td-nackgammon, td:td-acey-deucey-gen2 "
        "for those variants)",
    )
    parser.add_argument(
        "--variant",
        default="standard",
        help="standard (default), nackgammon, nackgammon-seed or acey-deucey",
    )
    parser.add_argument(
        "--match-to", type=int, default=0, help="match length, 1 to 25 (default 0: money play)"
    )
    parser.add_argument("--seed", type=int, help="dice seed (default: random)")
    parser.add_argument("--no-cube", action="store_true", help="play without the cube")
    add_money_rules_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    agent = load_analysis_agent(variant_agent(args.agent or "td", args.variant))
    rules = money_rules(args)
    session = Session(
        agent,
        match_to=args.match_to,
        seed=args.seed,
        cube=not args.no_cube,
        jacoby=rules.jacoby,
        beavers=rules.beavers,
        variant=args.variant,
    )
    return session.run()
