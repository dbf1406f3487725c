"""The agent protocol, the cube/match context it is asked in, and the batched move picker.

An agent answers four questions for the side on roll, always from that side's view:
which play to make for a roll (`choose_play`), whether to double before rolling
(`double_decision`), whether to take a double (`take_decision`), and whether to offer
or accept a resignation. Agents that know beavers also answer `beaver_decision`
(doubled in money play with beavers allowed: whether to take and redouble at once);
those without it never beaver. Agents that judge afterstates also answer `choose_boards`, the
same choice for a whole batch of boards at once; the tournament runner uses it to play
many games in lockstep.

Agents without cube knowledge (everything here except a cube-aware neural agent) never
double, always take, never offer to resign, and accept a resignation only when it
concedes a backgammon, the most a game can be worth, so accepting can never cost them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

import engine
from agents.search import best_rows, chosen_boards
from vrhcaby.equity.context import MONEY, CubeOwner, GameContext

__all__ = ["MONEY", "CubeOwner", "GameContext"]  # the context agents are asked in

#: Board-only variants: a (2, 25) board is the whole state, so batched play applies.
BOARD_VARIANTS = ("standard", "nackgammon", "nackgammon-seed")

#: The variant whose boards are (2, 26) (column 25 the waiting checkers) and whose turns
#: may earn another roll; agents that play it say so with `acey_deucey = True`.
ACEY_DEUCEY = "acey-deucey"


@runtime_checkable
class Agent(Protocol):
    """What the tournament runner and the command line ask of every agent."""

    #: The spec string the agent was loaded from (its name in tables and files).
    name: str
    #: Whether the agent makes real cube and resignation decisions (the runner asks
    #: only these; the others are known never to double or resign and always to take).
    cube_aware: bool

    def supports(self, variant: str) -> bool:
        """Whether the agent can play this variant."""
        ...

    def choose_play(self, position: engine.Position, dice: tuple[int, int]) -> engine.Play:
        """The play chosen for the side on roll (ValueError when there is none)."""
        ...

    def double_decision(self, position: engine.Position, context: GameContext) -> bool:
        """Before rolling: whether to offer a double."""
        ...

    def take_decision(self, position: engine.Position, context: GameContext) -> bool:
        """Doubled (the doubler is row 0 of `position`): whether to take."""
        ...

    def resign_offer(self, position: engine.Position, context: GameContext) -> int:
        """Before rolling: 0, or the game value (1, 2, 3) offered in resignation."""
        ...

    def accept_resignation(
        self, position: engine.Position, context: GameContext, value: int
    ) -> bool:
        """On roll, offered the opponent's resignation of `value`: whether to accept."""
        ...


@runtime_checkable
class BatchAgent(Agent, Protocol):
    """An agent that picks plays for many boards in one call."""

    def choose_boards(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The chosen afterstate, int8 (B, 2, 25), per board of int8 (B, 2, 25) and roll
        int (B, 2); a board with no legal play comes back unchanged."""
        ...


class CubelessAgent:
    """The cube and resignation answers of an agent without cube knowledge."""

    name = "cubeless"
    cube_aware = False
    #: Whether the agent plays acey-deucey: it then has `choose_turns_ad(boards, dice)`,
    #: the chosen turn of each (B, 2, 26) board and whether its mover rolls again.
    acey_deucey = False

    def supports(self, variant: str) -> bool:
        return variant in BOARD_VARIANTS or (variant == ACEY_DEUCEY and self.acey_deucey)

    def choose_turns_ad(
        self, boards: np.ndarray, dice: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Acey-deucey: the chosen turn of each board (B, 2, 26) for its roll, and whether
        its mover rolls again. Agents with `acey_deucey = True` define it."""
        raise NotImplementedError(f"{self.name} does not play acey-deucey")

    def choose_play_ad(self, position: engine.Position, dice: tuple[int, int]):
        """Acey-deucey: the `PlayAD` chosen for the roll (ValueError when there is none)."""
        from engine.acey_deucey import to_board_ad

        chosen, again = self.choose_turns_ad(to_board_ad(position)[None], np.array([dice]))
        return play_reaching_ad(position, dice, chosen[0], bool(again[0]))

    def double_decision(self, position: engine.Position, context: GameContext) -> bool:
        return False

    def take_decision(self, position: engine.Position, context: GameContext) -> bool:
        return True

    def resign_offer(self, position: engine.Position, context: GameContext) -> int:
        return 0

    def accept_resignation(
        self, position: engine.Position, context: GameContext, value: int
    ) -> bool:
        return value >= 3

    def __repr__(self) -> str:
        return f"<agent {self.name}>"


class AfterstateAgent(CubelessAgent):
    """An agent that plays the afterstate of highest score, batched over many boards.

    Subclasses define `score(afterstates, parent, boards)`: one float per afterstate,
    higher is better for the mover (row 1), given the boards they came from.
    """

    def score(self, afterstates: np.ndarray, parent: np.ndarray, boards: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def choose_boards(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        after, parent = engine.batch_afterstates(boards, dice)
        if not len(after):
            return boards.copy()
        return chosen_boards(boards, after, parent, self.score(after, parent, boards))

    def choose_play(self, position: engine.Position, dice: tuple[int, int]) -> engine.Play:
        chosen = self.choose_boards(position.board[None], np.array([dice]))[0]
        return play_reaching(position, dice, chosen)

    def score_ad(
        self, afterstates: np.ndarray, extra: np.ndarray, parent: np.ndarray, boards: np.ndarray
    ) -> np.ndarray:
        """Acey-deucey: one float per afterstate (2, 26) played from `boards[parent]`,
        higher is better for its mover; `extra` marks those whose mover moves again (a
        1-2 whose bonus double is due, or a turn that earns another roll). Agents with
        `acey_deucey = True` define it."""
        raise NotImplementedError

    def choose_turns_ad(
        self, boards: np.ndarray, dice: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Acey-deucey: the chosen turn of each board (B, 2, 26) for its roll, and whether
        its mover rolls again; a board without a legal play comes back unchanged.

        A 1-2 is chosen in two stages, as the trainer's self-play does: the best-scored
        play of the 1 and the 2 (its bonus still due), then the best-scored outcome of the
        six doubles. Whole 1-2 turns can number tens of thousands; the stages cost a few
        dozen rows each (`vrhcaby hint` ranks whole turns).
        """
        from engine.acey_deucey import batch_afterstates_ad, batch_bonus_ad

        boards = np.ascontiguousarray(boards, dtype=np.int8)
        after, parent, due = batch_afterstates_ad(boards, dice, bonus=False)
        chosen, again = boards.copy(), np.zeros(len(boards), bool)
        if not len(after):
            return chosen, again
        rows = best_rows(self.score_ad(after, due, parent, boards), parent, len(boards))
        has = rows >= 0
        chosen[has] = after[rows[has]]
        owed = np.flatnonzero(has)[due[rows[has]]]
        if owed.size:
            roots = chosen[owed]
            after, parent, extra = batch_bonus_ad(roots)  # a row for every root
            rows = best_rows(self.score_ad(after, extra, parent, roots), parent, owed.size)
            chosen[owed], again[owed] = after[rows], extra[rows]
        return chosen, again


def play_reaching_ad(position: engine.Position, dice: tuple[int, int], board, extra: bool):
    """The legal acey-deucey turn of `position` for `dice` that ends on `board` (2, 26),
    rolling again or not as `extra` says; ValueError if none does."""
    from engine.acey_deucey import reaching_play_ad

    play = reaching_play_ad(position, dice, board, extra)
    if play is None:
        raise ValueError(f"no legal turn for {dice[0]}-{dice[1]} reaches the chosen position")
    return play


def play_reaching(
    position: engine.Position, dice: tuple[int, int], board: np.ndarray
) -> engine.Play:
    """The legal play of `position` for `dice` whose resulting board is `board`."""
    for play in engine.legal_plays(position, dice):
        if np.array_equal(play.position.board, board):
            return play
    raise ValueError(f"no legal play for {dice[0]}-{dice[1]} reaches the chosen position")
