"""Acey-deucey turns for people: whole turns ranked (`vrhcaby hint --variant acey-deucey`)
and a 1-2 turn typed in steps (`vrhcaby play --variant acey-deucey`).

A 1-2 turn is the play of the 1 and the 2, the double chosen (1-1 to 6-6) and that
double's play, then, when the double went all four times, another roll. `rank_turns_ad`
values every whole turn at 0 plies with a td agent's acey-deucey network, as the agent's
own choice does in stages, and ranks them by equity: cubeful when asked (money: Janowski,
match: EMG), cubeless otherwise. A turn after which the other side rolls is valued as
`vrhcaby hint` values plays (the opponent on roll with its cube options); a turn that
earns another roll leaves the mover on roll, and no cube is turned before an extra roll,
so it is worth the mover's "no double" equity.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from agents.base import GameContext
from engine.position import Position
from engine.variants import get_variant
from engine.waiting import waiting_id
from vrhcaby.equity import cube, decisions
from vrhcaby.equity.outcomes import equity
from vrhcaby.nn.encode import waiting_on_bar

if TYPE_CHECKING:
    from engine.acey_deucey import PlayAD


@dataclass(frozen=True)
class TurnCandidate:
    """One whole acey-deucey turn with its evaluation, from the mover's view."""

    play: PlayAD
    """The whole turn."""
    probabilities: np.ndarray
    """The mover's five probabilities after the turn."""
    equity: float
    """The ranking equity (cubeful unless asked otherwise), per unit of the cube."""
    cubeless: float
    """Cubeless money equity, or in a match the EMG of the cubeless MWC."""
    mwc: float | None
    """Match winning chance that goes with `equity` (None in money play)."""

    @property
    def parts(self) -> tuple[str, int | None, str | None]:
        """(the play of the roll, or of the 1 and the 2; the double chosen; its play)."""
        text = str(self.play)
        if self.play.double is None:
            return text, None, None
        first, _, rest = text.partition(", ")
        return first, self.play.double, rest.partition(": ")[2]

    @property
    def extra_turn(self) -> bool:
        """Whether the mover rolls again."""
        return bool(self.play.extra_turn)

    @property
    def position_id(self) -> str:
        """The resulting position from the view of the side that rolls next (`PID@X,O`)."""
        pos = self.play.position
        return waiting_id(pos if self.extra_turn else pos.flip())


def rank_turns_ad(
    agent,
    position: Position,
    dice: tuple[int, int],
    context: GameContext,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    cubeful: bool = True,
) -> list[TurnCandidate]:
    """Every whole acey-deucey turn of the side on roll, best first (empty: it passes).

    `agent` is a td agent with an acey-deucey network (`TDAgent.probabilities_ad`).
    """
    from engine.acey_deucey import legal_plays_ad

    _check_agent(agent)
    plays = legal_plays_ad(position, dice)
    return _rank(agent, position, plays, context, params=params, x=x, cubeful=cubeful)


def rank_bonus_ad(agent, position: Position) -> list[TurnCandidate]:
    """The bonus of a 1-2 whose 1 and 2 are played: every double's plays, best first by
    cubeless money equity (what a person choosing the double in `vrhcaby play` is shown)."""
    from engine.acey_deucey import bonus_plays_ad

    _check_agent(agent)
    return _rank(agent, position, bonus_plays_ad(position), GameContext(), cubeful=False)


def _check_agent(agent) -> None:
    if not getattr(agent, "acey_deucey", False) or not hasattr(agent, "probabilities_ad"):
        raise ValueError(f"agent {agent.name!r} does not play acey-deucey (use td:td-acey-deucey)")


def _rank(
    agent,
    position: Position,
    plays: list,
    context: GameContext,
    *,
    params: cube.Efficiency = cube.GNUBG_EFFICIENCY,
    x: float | None = None,
    cubeful: bool = True,
) -> list[TurnCandidate]:
    """`plays` of `position` valued by the agent's network, best first."""
    from engine.acey_deucey import to_board_ad

    if not plays:
        return []
    after = np.stack([to_board_ad(p.position) for p in plays])
    extra = np.array([p.extra_turn for p in plays], bool)
    root = to_board_ad(position)[None]
    probs = agent.probabilities_ad(after, extra, root, np.zeros(len(plays), np.int64))
    plain = waiting_on_bar(after)
    values: list[tuple[float, float, float | None]] = []
    if not cubeful and not context.match_to:  # cubeless money: one batched formula
        eq = equity(probs)
        values = [(float(e), float(e), None) for e in eq]
    for i in range(len(values), len(plays)):
        cl, cl_mwc = decisions.mover_equity(probs[i], plain[i], context, cubeful=False)
        if not cubeful:
            values.append((cl, cl, cl_mwc))
        elif extra[i]:  # the mover rolls again, the cube untouched before that roll
            d = decisions.cube_decision(probs[i], plain[i], context, params=params, x=x)
            values.append((float(d.nd), cl, d.nd_mwc))
        else:
            eq, mwc = decisions.mover_equity(probs[i], plain[i], context, params=params, x=x)
            values.append((eq, cl, mwc))
    order = sorted(range(len(plays)), key=lambda i: -values[i][0])
    return [TurnCandidate(plays[i], probs[i].copy(), *values[i]) for i in order]


def cube_decision_ad(agent, board: np.ndarray, context: GameContext) -> cube.CubeDecision:
    """The cube decision of the side on roll of an acey-deucey board (2, 26), before its
    turn's first roll (the waiting checkers count as on the bar for the cube efficiency)."""
    p = agent.before_roll(np.asarray(board, np.int8)[None])[0]
    return decisions.cube_decision(p, waiting_on_bar(np.asarray(board)[None])[0], context)


# --- boards and plays of `vrhcaby play` -------------------------------------------------


def start_board(variant: str) -> np.ndarray:
    """A writable starting board of `variant`: (2, 25), or (2, 26) for acey-deucey."""
    if get_variant(variant).enter_from_start:
        from engine.acey_deucey import start_boards_ad

        return start_boards_ad(1)[0]
    return Position.start(variant).board.copy()


def position_of(board: np.ndarray) -> Position:
    """The `Position` of an acey-deucey board (2, 26)."""
    from engine.acey_deucey import position_from_board_ad

    return position_from_board_ad(board)


def board_of(position: Position) -> np.ndarray:
    """The acey-deucey board (2, 26) of a `Position`."""
    from engine.acey_deucey import to_board_ad

    return to_board_ad(position)


def game_value(board: np.ndarray) -> int:
    """What the mover (row 1) of an acey-deucey afterstate (2, 26) has won (0: not over)."""
    from engine.acey_deucey import game_value_ad

    return int(game_value_ad(np.asarray(board)[None])[0])


def is_one_two(dice: tuple[int, int]) -> bool:
    """Whether the roll is an acey-deucey (a 1 and a 2)."""
    return sorted(dice) == [1, 2]


def first_plays(position: Position, dice: tuple[int, int]) -> list:
    """The plays of a roll, a 1-2 stopping after the 1 and the 2 (`extra_turn`: the bonus
    double is due)."""
    from engine.acey_deucey import legal_plays_ad

    return legal_plays_ad(position, dice, bonus=False)


def bonus_plays(position: Position) -> list:
    """The bonus doubles' plays after the 1 and the 2 (`engine.acey_deucey.bonus_plays_ad`)."""
    from engine.acey_deucey import bonus_plays_ad

    return bonus_plays_ad(position)


def step_text(play) -> str:
    """A play as a person types it: the steps alone (a bonus without its `k-k:` label)."""
    text = str(play)
    return text.split(": ", 1)[1] if play.double is not None and ": " in text else text


_POINT = {"start": 26, "s": 26, "bar": 25, "b": 25, "off": 0, "o": 0}
_TOKEN = re.compile(r"^(?P<chain>[a-z0-9*/\-]+?)(\((?P<times>[1-4])\))?$")


def parse_steps(text: str) -> list[tuple[int, int]]:
    """Typed acey-deucey notation as steps (from, to), the mover's points (26 `start`, 25
    `bar`, 0 `off`): `start/20 13/7*`, `24/18/13`, `8/5(2)`, `6/off`, `s-20`; ValueError
    for text that is not notation."""
    steps = []
    for token in text.lower().split():
        m = _TOKEN.match(token)
        points = re.split(r"[/-]", m["chain"].replace("*", "")) if m else []
        if len(points) < 2 or not all(p.isdigit() or p in _POINT for p in points):
            raise ValueError(f"{token!r} is not a move like start/20, 13/7 or 6/off")
        numbers = [_POINT[p] if p in _POINT else int(p) for p in points]
        if any(not 0 <= n <= 26 for n in numbers):
            raise ValueError(f"{token!r}: points are 1 to 24, bar, start and off")
        chain = list(itertools.pairwise(numbers))
        steps += chain * int(m["times"] or 1)  # type: ignore[index]
    if not steps:
        raise ValueError("no move given")
    return steps


def apply_steps(board: np.ndarray, steps: list[tuple[int, int]]) -> np.ndarray:
    """The acey-deucey board (2, 26) after moving the mover's (row 1) checkers along
    `steps`, hitting blots; ValueError naming a step that has no checker or lands on a
    point the opponent holds. Which dice the steps use is not checked here."""
    b = np.array(board, np.int8)
    names = {26: "start", 25: "the bar"}
    for a, t in steps:
        if a == 0 or t >= a or t > 24:
            raise ValueError(f"{a}/{t} does not move forward")
        src = {26: 25, 25: 24}.get(a, a - 1)
        if b[1, src] == 0:
            raise ValueError(f"no checker of yours on {names.get(a, f'point {a}')}")
        b[1, src] -= 1
        if t == 0:
            continue
        opp = 23 - (t - 1)
        if b[0, opp] >= 2:
            raise ValueError(f"point {t} is held by the opponent")
        if b[0, opp] == 1:
            b[0, opp], b[0, 24] = 0, b[0, 24] + 1
        b[1, t - 1] += 1
    return b


def match_play(text: str, position: Position, plays: list):
    """The one of `plays` (legal `PlayAD`s of `position`) whose result the typed `text`
    reaches; ValueError when the text is not notation or reaches none of them."""
    from engine.acey_deucey import to_board_ad

    board = apply_steps(to_board_ad(position), parse_steps(text))
    for play in plays:
        if np.array_equal(to_board_ad(play.position), board):
            return play
    raise ValueError(f"{text!r} is not a legal play of this roll")
