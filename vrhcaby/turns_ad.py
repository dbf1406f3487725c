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

from dataclasses import dataclass

import numpy as np

from agents.base import GameContext
from engine.position import Position
from engine.waiting import waiting_id
from vrhcaby import analysis, cube
from vrhcaby.encode import waiting_on_bar


@dataclass(frozen=True)
class TurnCandidate:
    """One whole acey-deucey turn with its evaluation, from the mover's view."""

    play: object
    """The `engine.acey_deucey.PlayAD`."""
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
    from engine.acey_deucey import legal_plays_ad, to_board_ad

    if not getattr(agent, "acey_deucey", False) or not hasattr(agent, "probabilities_ad"):
        raise ValueError(f"agent {agent.name!r} does not play acey-deucey (use td:td-acey-deucey)")
    plays = legal_plays_ad(position, dice)
    if not plays:
        return []
    after = np.stack([to_board_ad(p.position) for p in plays])
    extra = np.array([p.extra_turn for p in plays], bool)
    root = to_board_ad(position)[None]
    probs = agent.probabilities_ad(after, extra, root, np.zeros(len(plays), np.int64))
    plain = waiting_on_bar(after)
    values = []
    for i in range(len(plays)):
        cl, cl_mwc = analysis.mover_equity(probs[i], plain[i], context, cubeful=False)
        if not cubeful:
            values.append((cl, cl, cl_mwc))
        elif extra[i]:  # the mover rolls again, the cube untouched before that roll
            d = analysis.cube_decision(probs[i], plain[i], context, params=params, x=x)
            values.append((float(d.nd), cl, d.nd_mwc))
        else:
            eq, mwc = analysis.mover_equity(probs[i], plain[i], context, params=params, x=x)
            values.append((eq, cl, mwc))
    order = sorted(range(len(plays)), key=lambda i: -values[i][0])
    return [TurnCandidate(plays[i], probs[i].copy(), *values[i]) for i in order]
