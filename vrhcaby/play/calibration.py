"""Calibration: an agent's predicted win, gammon and backgammon probabilities against how
often they happen in its own games, with no judge at all.

The agent plays itself (cubeless money, many games in lockstep, each with its own seeded
dice); before every turn but each game's first (whose roll, the opening's, is never a
double) the side on roll's five probabilities are recorded (`before_roll`), and at the end
what that side won or lost. Each predicted probability is then binned in deciles (ten
bins of equal count, by the prediction) and each bin's mean prediction set against the
frequency with which the event happened. A calibrated predictor's gaps are within their
standard errors; one whose probabilities run high shows positive gaps.

Turns of one game share its outcome, so they are not independent: besides the binomial
standard error of each bin (what it would be for independent turns) each bin also gets
one clustered by game (the residuals summed per game), the honest one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine
from engine.classify import NAMES
from vrhcaby.equity.outcomes import OUTCOMES
from vrhcaby.play.cube_judge import pre_roll_probabilities

#: How positions are grouped: engine.classify's classes folded into two.
GROUPS = {"contact": ("contact", "crashed"), "race": ("race", "bearoff")}
_NAMES = np.array(NAMES)


def happened(outcome: np.ndarray) -> np.ndarray:
    """bool (N, 5): for the side on roll whose game ended with `outcome` (+1..+3 won, -1..-3
    lost, single, gammon, backgammon) whether it won, won a gammon or more, won a
    backgammon, lost a gammon or more, lost a backgammon (the events `OUTCOMES` names)."""
    o = np.asarray(outcome)
    return np.stack([o > 0, o >= 2, o == 3, o <= -2, o == -3], axis=1)


@dataclass(frozen=True)
class Predictions:
    """What the side on roll predicted at each recorded turn, and what then happened."""

    probabilities: np.ndarray
    """float (N, 5): P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose
    backgammon) before the roll."""
    outcome: np.ndarray
    """int (N,): the game's result for that side, +1..+3 won, -1..-3 lost."""
    game: np.ndarray
    """int (N,): which game each turn belongs to."""
    classes: np.ndarray
    """str (N,): contact, crashed, race or bearoff."""

    def report(self, bins: int = 10) -> dict[str, Any]:
        """`calibration_table` of each event, over all turns and per group (`GROUPS`)."""
        hit = happened(self.outcome)
        out: dict[str, Any] = {"turns": len(self.outcome), "games": int(self.game.max()) + 1}
        for name, rows in [("all", np.ones(len(self.outcome), bool))] + [
            (g, np.isin(self.classes, c)) for g, c in GROUPS.items()
        ]:
            out[name] = {
                e: calibration_table(
                    self.probabilities[rows, k], hit[rows, k], self.game[rows], bins
                )
                for k, e in enumerate(OUTCOMES)
            }
        return out


def calibration_table(
    predicted: np.ndarray, happened: np.ndarray, game: np.ndarray | None = None, bins: int = 10
) -> list[dict[str, float]]:
    """Equal-count bins of `predicted` (sorted, then cut in `bins` runs as equal as can
    be): per bin the range and mean of the predictions, the frequency the event
    `happened`, the gap (frequency minus prediction), its binomial standard error
    (sqrt(p(1 - p)/n) at the mean prediction p), and, given each turn's `game`, the
    standard error with the turns of a game as one cluster."""
    predicted = np.asarray(predicted, dtype=np.float64)
    hit = np.asarray(happened, dtype=np.float64)
    order = np.argsort(predicted, kind="stable")
    rows = []
    for part in np.array_split(order, bins):
        if not len(part):
            continue
        p, y = predicted[part], hit[part]
        mean = float(p.mean())
        row = {
            "lo": float(p.min()),
            "hi": float(p.max()),
            "count": len(part),
            "predicted": mean,
            "realised": float(y.mean()),
            "gap": float(y.mean() - mean),
            "se": float(np.sqrt(mean * (1 - mean) / len(part))),
        }
        if game is not None:
            _, cluster = np.unique(np.asarray(game)[part], return_inverse=True)
            sums = np.bincount(cluster, weights=y - p)
            row["se_games"] = float(np.sqrt((sums**2).sum()) / len(part))
        rows.append(row)
    return rows


def selfplay_turns(
    agent: Any,
    games: int,
    seed: int,
    record: Callable[[int, np.ndarray, np.ndarray], Any],
    batch: int = 2000,
) -> Iterator[tuple[Any, np.ndarray, np.ndarray]]:
    """`games` cubeless money games of `agent` against itself, `batch` at a time in
    lockstep (`choose_boards`), the dice drawn from one generator seeded by `seed` (no
    mirrored copies: with the same agent on both sides a copy would replay the game).
    At every turn `record(turn, boards, after)` is called with the turn's number in its
    games (0 the opening roll's), the boards of the games still going before the roll and
    the afterstates the agent chose (the mover in row 1); once a batch's games are over,
    each turn whose `record` returned something other than None is yielded as (what it
    returned, the game's result for the side that was on roll: +1..+3 won, -1..-3 lost,
    the index of the game), one row per game then going."""
    rng = np.random.default_rng(seed)
    start = engine.Position.start().board
    for first in range(0, games, batch):
        n = min(batch, games - first)
        boards = np.repeat(start[None], n, axis=0)
        dice = rng.integers(1, 7, (n, 2))
        while (tie := dice[:, 0] == dice[:, 1]).any():  # the opening roll: no doubles
            dice[tie] = rng.integers(1, 7, (int(tie.sum()), 2))
        alive = np.arange(n)
        side = np.zeros(n, dtype=np.int64)  # who is on roll: 0 started the game
        result = np.zeros(n, dtype=np.int64)  # from side 0's view
        seen: list[tuple[Any, np.ndarray, np.ndarray]] = []
        turn = 0
        while len(alive):
            if turn:
                dice = rng.integers(1, 7, (len(alive), 2))
            after = agent.choose_boards(boards, dice)
            kept = record(turn, boards, after)
            if kept is not None:
                seen.append((kept, alive.copy(), side[alive].copy()))
            value = engine.game_value(after).astype(np.int64)
            over = value > 0
            result[alive[over]] = np.where(side[alive[over]] == 0, 1, -1) * value[over]
            side[alive] ^= 1
            boards = np.ascontiguousarray(after[~over][:, ::-1])
            alive = alive[~over]
            turn += 1
        for kept, who, s in seen:
            yield kept, np.where(s == 0, 1, -1) * result[who], who + first


def selfplay_predictions(agent: Any, games: int, seed: int, batch: int = 2000) -> Predictions:
    """The side on roll's probabilities before every turn but each game's first in
    `selfplay_turns` (`before_roll`, batched when the agent takes a batch) and what the
    game then gave it."""
    if getattr(agent, "before_roll", None) is None:
        raise ValueError(f"{agent.name} has no pre-roll probabilities (before_roll)")

    def before(turn: int, boards: np.ndarray, after: np.ndarray) -> Any:
        if not turn:
            return None
        p = np.asarray(pre_roll_probabilities(agent, boards))
        return p, _NAMES[engine.classify_boards(boards)]

    parts = list(selfplay_turns(agent, games, seed, before, batch))
    return Predictions(
        probabilities=np.concatenate([p for (p, _), _, _ in parts]),
        outcome=np.concatenate([o for _, o, _ in parts]),
        game=np.concatenate([g for _, _, g in parts]),
        classes=np.concatenate([c for (_, c), _, _ in parts]).astype(str),
    )
