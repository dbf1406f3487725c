"""Cube decisions judged by GNU Backgammon 2-ply: the equity each double, no double, take
or pass gives away.

A fixed set of cube decisions (the position before the roll, with the side on roll's cube
and match) is judged once by GNU Backgammon's cube analysis at 2 plies (the full `gnubg`
package: cubeful equities of no double, double/take and double/pass, the `hint` of its
command line) and kept on disk. Any agent then answers all of them, and each answer costs
the equity between gnubg's best answer and its own:

* the doubler: gnubg's best of no double (ND) and double (a double gets min(DT, DP): the
  opponent answers correctly) minus what its own choice gets;
* the taker, asked on every decision as if doubled: |DT - DP| when it picks the worse of
  take and pass (0 when it agrees).

Equities are per unit of the current cube, from the doubler's view: money equity (EMG), or
in a match gnubg's EMG (its match winning chances expressed as money-like equity). gnubg
2-ply is a judge, not the truth (its own 0-ply cube play is not error-free against it), and
never a teacher: nothing here may become a training target.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

import engine
from vrhcaby.base.files import read_arrays, write_npz
from vrhcaby.equity.context import CubeOwner, GameContext
from vrhcaby.equity.outcomes import LOSE_GAMMON, OUTCOMES, WIN, WIN_GAMMON
from vrhcaby.play.judge import CLASSES
from vrhcaby.play.match import MatchScore

#: The cube states a decision is reported by: money with the cube centred, money with the
#: cube owned by the side on roll, and match play (either).
CUBE_STATES = ("centred", "owned", "match")

#: The cube's owner as gnubg numbers the players, the side on roll being player 1.
_OWNER: dict[CubeOwner, int] = {"centre": -1, "me": 1, "opponent": 0}

#: What one judged decision holds: (ND, DT, DP) and gnubg's 2-ply cubeless probabilities.
Judgement = tuple[float, float, float, np.ndarray]


# --- GNU Backgammon's cube analysis ------------------------------------------------------

#: The session settings of the judge: one thread (the embedded engine's worker threads
#: hang the Python package's `hint`), humans on both seats (nothing plays on its own), the
#: project's default money rules (no Jacoby rule unless a decision's context has it, no
#: beavers), cube decisions at 2 plies cubeful without pruning, equities as EMG with five
#: digits.
_SETUP = (
    "set threads 1",
    "set player 0 human",
    "set player 1 human",
    "set jacoby off",
    "set beavers 0",
    "set evaluation cubedecision evaluation plies 2",
    "set evaluation cubedecision evaluation cubeful on",
    "set evaluation cubedecision evaluation prune off",
    "set output mwc off",
    "set output digits 5",
    "new game",
)
_NUMBER = r"([+-]?\d+\.\d+)"
_LINES = {
    "nd": re.compile(rf"No (?:re)?double\s+{_NUMBER}"),
    "dt": re.compile(rf"(?:Re)?[Dd]ouble, take\s+{_NUMBER}"),
    "dp": re.compile(rf"(?:Re)?[Dd]ouble, pass\s+{_NUMBER}"),
}
_PROBABILITIES = re.compile(
    rf"^\s*{_NUMBER} {_NUMBER} {_NUMBER} - {_NUMBER} {_NUMBER} {_NUMBER}\s*$", re.M
)


@contextlib.contextmanager
def _captured_stdout() -> Iterator[list[str]]:
    """What the C library writes to standard output inside the block (gnubg prints its
    analysis there), as one string appended to the list yielded."""
    libc = ctypes.CDLL(None)
    out: list[str] = []
    sys.stdout.flush()
    libc.fflush(None)
    with tempfile.TemporaryFile() as f:
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            yield out
            libc.fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        out.append(f.read().decode(errors="replace"))


class GnubgCubeJudge:
    """GNU Backgammon's 2-ply cube analysis of positions before the roll (the full `gnubg`
    package, driven by its own commands as `hint` is in its command line)."""

    def __init__(self) -> None:
        try:
            import gnubg
        except ImportError:
            raise ValueError(
                "judging cube decisions needs the gnubg package: pip install gnubg"
            ) from None
        self._gnubg = gnubg
        self._jacoby = False
        with _captured_stdout():
            for command in _SETUP:
                gnubg.command(command)

    def __call__(self, board: np.ndarray, context: GameContext) -> Judgement:
        """ND, DT, DP (per unit of the cube, the side on roll's view) and the 2-ply cubeless
        probabilities of the side on roll (row 1 of `board`) in `context`."""
        text = self.analysis(board, context)
        found = {key: pattern.search(text) for key, pattern in _LINES.items()}
        p = _PROBABILITIES.search(text)
        if p is None or None in found.values():
            where = f"{engine.position_id(np.asarray(board, dtype=np.int8))}:{match_id(context)}"
            raise ValueError(f"gnubg gave no cube analysis of {where}")
        values = {key: float(m.group(1)) for key, m in found.items() if m is not None}
        win, wg, wbg, _lose, lg, lbg = (float(x) for x in p.groups())
        return values["nd"], values["dt"], values["dp"], np.array([win, wg, wbg, lg, lbg])

    def analysis(self, board: np.ndarray, context: GameContext) -> str:
        """gnubg's `hint` text for the side on roll of `board` before its roll."""
        pid = engine.position_id(np.asarray(board, dtype=np.int8))
        with _captured_stdout() as out:
            if context.jacoby != self._jacoby:  # the money games' rule, decision by decision
                self._gnubg.command(f"set jacoby {'on' if context.jacoby else 'off'}")
                self._jacoby = context.jacoby
            self._gnubg.command(f"set gnubgid {pid}:{match_id(context)}")
            self._gnubg.command("hint")
        return out[0]


def match_id(context: GameContext) -> str:
    """GNU Backgammon's Match ID of the side on roll's `context` before its roll (the side
    on roll is player 1, the board's row 1)."""
    state = engine.MatchState(
        cube_value=context.cube_value,
        cube_owner=_OWNER[context.cube_owner],
        dice_owner=1,
        crawford=context.crawford,
        match_length=context.match_to,
        score=(context.score[1], context.score[0]),
        jacoby=context.jacoby,
    )
    return engine.match_id(state)


# --- the judged set ----------------------------------------------------------------------


@dataclass(frozen=True)
class CubeSet:
    """Cube decisions (the side on roll in row 1, before its roll) judged by gnubg 2-ply."""

    boards: np.ndarray
    """int8 (N, 2, 25)."""
    cube_value: np.ndarray
    """int (N,)."""
    cube_owner: np.ndarray
    """int (N,): -1 centred, 1 owned by the side on roll (0, its opponent, never: the
    side on roll could not double)."""
    match_to: np.ndarray
    """int (N,): match length, 0 for money."""
    score: np.ndarray
    """int (N, 2): points won by the side on roll and by its opponent."""
    crawford: np.ndarray
    """bool (N,): the Crawford game (never, as no one may double in it; post-Crawford
    games are not)."""
    jacoby: np.ndarray
    """bool (N,): the Jacoby rule (money play)."""
    nd: np.ndarray
    """float (N,): gnubg 2-ply cubeful equity of no double."""
    dt: np.ndarray
    """float (N,): ... of double, take."""
    dp: np.ndarray
    """float (N,): ... of double, pass."""
    probabilities: np.ndarray
    """float (N, 5): gnubg 2-ply cubeless P(win), P(win gammon), P(win backgammon),
    P(lose gammon), P(lose backgammon) of the side on roll (five digits)."""
    classes: np.ndarray
    """str (N,): contact, crashed, race or bearoff."""
    sources: np.ndarray
    """str (N,): where each decision came from, e.g. "gnubg-money"."""

    def __len__(self) -> int:
        return len(self.boards)

    def context(self, i: int) -> GameContext:
        """The game context of decision `i` for the side on roll."""
        owner: CubeOwner = (
            "centre" if self.cube_owner[i] < 0 else "me" if self.cube_owner[i] else "opponent"
        )
        return GameContext(
            cube_value=int(self.cube_value[i]),
            cube_owner=owner,
            match_to=int(self.match_to[i]),
            score=(int(self.score[i, 0]), int(self.score[i, 1])),
            crawford=bool(self.crawford[i]),
            jacoby=bool(self.jacoby[i]),
        )

    @property
    def cube_states(self) -> np.ndarray:
        """str (N,): each decision's cube state (`CUBE_STATES`)."""
        return np.where(
            self.match_to > 0, "match", np.where(self.cube_owner < 0, "centred", "owned")
        )

    def save(self, path: Path) -> None:
        """Write the set to `path` (.npz, compressed, atomically)."""
        write_npz(
            Path(path), {f.name: getattr(self, f.name) for f in fields(self)}, compressed=True
        )

    @classmethod
    def load(cls, path: Path) -> CubeSet:
        """A set written by `save`; a ValueError naming the file if it is not one."""
        try:
            arrays = read_arrays(path)
            judged = cls(**{f.name: arrays[f.name] for f in fields(cls)})
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"{path}: not a judged cube set ({exc})") from None
        n = len(judged.boards)
        if any(len(getattr(judged, f.name)) != n for f in fields(cls)):
            raise ValueError(f"{path}: not a judged cube set (its arrays differ in length)")
        return judged

    def first(self, n: int) -> CubeSet:
        """The set of its first `n` decisions (all of them when it has fewer)."""
        return CubeSet(**{f.name: getattr(self, f.name)[:n] for f in fields(self)})

    @classmethod
    def concat(cls, parts: list[CubeSet]) -> CubeSet:
        """One set of the decisions of `parts`, in order."""
        return cls(
            **{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)}
        )

    @classmethod
    def judge(
        cls,
        boards: np.ndarray,
        contexts: list[GameContext],
        sources: np.ndarray,
        judge: Callable[[np.ndarray, GameContext], Judgement] | None = None,
    ) -> CubeSet:
        """Judge the decisions of the side on roll of `boards` in `contexts` (each one in
        which it may double) with `judge` (default: gnubg 2-ply, `GnubgCubeJudge`)."""
        boards = np.asarray(boards, dtype=np.int8).reshape(-1, 2, 25)
        if len(contexts) != len(boards) or len(sources) != len(boards):
            raise ValueError("a board, a context and a source for each decision")
        if not all(c.may_double() for c in contexts):
            raise ValueError("every decision must be one in which the side on roll may double")
        judge = judge or GnubgCubeJudge()
        judged = [judge(b, c) for b, c in zip(boards, contexts, strict=True)]
        return cls(
            boards=boards,
            cube_value=np.array([c.cube_value for c in contexts], dtype=np.int64),
            cube_owner=np.array([_OWNER[c.cube_owner] for c in contexts], dtype=np.int64),
            match_to=np.array([c.match_to for c in contexts], dtype=np.int64),
            score=np.array([c.score for c in contexts], dtype=np.int64).reshape(-1, 2),
            crawford=np.array([c.crawford for c in contexts], dtype=bool),
            jacoby=np.array([c.jacoby for c in contexts], dtype=bool),
            nd=np.array([j[0] for j in judged]),
            dt=np.array([j[1] for j in judged]),
            dp=np.array([j[2] for j in judged]),
            probabilities=np.array([j[3] for j in judged]).reshape(-1, 5),
            classes=np.array([engine.Position(b).classify() for b in boards]),
            sources=np.asarray(sources).astype(str),
        )

    # --- an agent's answers ------------------------------------------------------------

    def answers(self, agent: Any) -> tuple[np.ndarray, np.ndarray]:
        """Whether `agent` doubles on each decision, and whether it takes when doubled
        there (asked from the taker's view, as the tournament asks)."""
        doubled, took = np.zeros(len(self), bool), np.zeros(len(self), bool)
        for i, board in enumerate(self.boards):
            position, context = engine.Position(board), self.context(i)
            doubled[i] = agent.double_decision(position, context)
            took[i] = agent.take_decision(position.flip(), context.flip())
        return doubled, took

    def errors(self, doubled: np.ndarray, took: np.ndarray) -> CubeErrors:
        """What the answers cost against gnubg 2-ply (`doubler_errors`, `taker_errors`)."""
        return CubeErrors(
            double=doubler_errors(self.nd, self.dt, self.dp, doubled),
            take=taker_errors(self.dt, self.dp, took),
            doubled=np.asarray(doubled, bool),
            took=np.asarray(took, bool),
        )

    def counts(self, errors: CubeErrors) -> dict[str, int]:
        """Wrong answers by kind: wrong doubles (too good to double, or not good enough),
        wrong no-doubles, wrong takes, wrong passes."""
        doubled, took = errors.doubled, errors.took
        wrong_double = doubled & (self.nd > np.minimum(self.dt, self.dp))
        too_good = wrong_double & (self.dt > self.dp)
        return {
            "wrong_doubles": int(wrong_double.sum()),
            "too_good_to_double": int(too_good.sum()),
            "not_good_enough": int((wrong_double & ~too_good).sum()),
            "wrong_no_doubles": int((~doubled & (np.minimum(self.dt, self.dp) > self.nd)).sum()),
            "wrong_takes": int((took & (self.dt > self.dp)).sum()),
            "wrong_passes": int((~took & (self.dt < self.dp)).sum()),
        }

    def summary(self, errors: CubeErrors, first: CubeErrors | None = None) -> dict[str, Any]:
        """The report of an agent's errors, in millipoints per decision with standard
        errors: the doubler's, the taker's and both together, overall, per class and per
        cube state; the counts of wrong answers; and, given the `first` agent's errors on
        the same set, the paired differences (this agent minus the first)."""

        def means(rows: np.ndarray) -> dict[str, Any]:
            out: dict[str, Any] = {"decisions": int(rows.sum())}
            for kind in ("double", "take", "total"):
                m, se = mean_se(1000 * getattr(errors, kind)[rows])
                out[kind] = {"mean": m, "se": se}
            return out

        everything = np.ones(len(self), bool)
        report: dict[str, Any] = means(everything)
        report["counts"] = self.counts(errors)
        report["classes"] = {c: means(self.classes == c) for c in CLASSES}
        report["cube_states"] = {s: means(self.cube_states == s) for s in CUBE_STATES}
        if first is not None:
            report["paired"] = {}
            for kind in ("double", "take", "total"):
                diff = 1000 * (getattr(errors, kind) - getattr(first, kind))
                m, se = mean_se(diff)
                report["paired"][kind] = {"mean": m, "se": se}
        return report


@dataclass(frozen=True)
class CubeErrors:
    """An agent's answers to a judged set and the equity each gave away."""

    double: np.ndarray
    """float (N,): the doubler's error on each decision."""
    take: np.ndarray
    """float (N,): the taker's error on each decision."""
    doubled: np.ndarray
    """bool (N,)."""
    took: np.ndarray
    """bool (N,)."""

    @property
    def total(self) -> np.ndarray:
        """Doubler's and taker's error of each decision together."""
        return self.double + self.take


def doubler_errors(
    nd: np.ndarray, dt: np.ndarray, dp: np.ndarray, doubled: np.ndarray
) -> np.ndarray:
    """The equity a doubler gives away: the best of no double (`nd`) and a double
    correctly answered (min(`dt`, `dp`)), minus what its choice gets."""
    doubling = np.minimum(dt, dp)
    return np.maximum(nd, doubling) - np.where(doubled, doubling, nd)


def taker_errors(dt: np.ndarray, dp: np.ndarray, took: np.ndarray) -> np.ndarray:
    """The equity a side doubled gives away (the doubler's `dt` and `dp`, so the taker
    wants the smaller): |dt - dp| when it picks the larger, else 0."""
    return np.where(took, dt, dp) - np.minimum(dt, dp)


def mean_se(x: np.ndarray) -> tuple[float, float]:
    """The mean of `x` and its standard error (NaN for an empty `x`)."""
    if not len(x):
        return float("nan"), float("nan")
    return float(x.mean()), float(x.std() / np.sqrt(len(x)))


def pre_roll_probabilities(agent: Any, boards: np.ndarray) -> np.ndarray | None:
    """The agent's five probabilities (N, 5) for the side on roll of each board before its
    roll (`before_roll`: a batch for the td agent, a board at a time for gnubg), or None
    when the agent has none."""
    before_roll = getattr(agent, "before_roll", None)
    if before_roll is None:
        return None
    if next(iter(inspect.signature(before_roll).parameters)) == "boards":
        return np.asarray(before_roll(boards), dtype=np.float64)
    return np.array([before_roll(b) for b in boards], dtype=np.float64)


def probability_errors(predicted: np.ndarray, judged: np.ndarray) -> dict[str, dict[str, float]]:
    """Mean absolute error and mean bias (predicted minus judged) of P(win), P(win gammon)
    and P(lose gammon): whether an agent's probabilities run high."""
    out = {}
    for k in (WIN, WIN_GAMMON, LOSE_GAMMON):
        d = predicted[:, k] - judged[:, k]
        out[OUTCOMES[k]] = {"mae": float(np.abs(d).mean()), "bias": float(d.mean())}
    return out


# --- decisions from recorded games -------------------------------------------------------


def recorded_decisions(pair) -> tuple[np.ndarray, list[GameContext]]:
    """The positions before the roll (side on roll in row 1) and their contexts of every
    turn but each game's first in the recorded games of a `PairResult` (`record=True`),
    kept where the side on roll may double (`GameContext.may_double`). A turn that ended
    the game with a double passed counts too (it has no play of its own: its position is
    the one the opponent's last play left)."""
    turns = recorded_turns(pair)
    return turns.boards, turns.contexts


@dataclass(frozen=True)
class RecordedTurns:
    """The cube decisions of recorded games (`recorded_turns`)."""

    boards: np.ndarray
    """int8 (N, 2, 25): the position before the roll, side on roll in row 1."""
    contexts: list[GameContext]
    """The side on roll's context, the cube before any double of that turn."""
    seats: np.ndarray
    """int (N,): the seat on roll."""
    doubled: np.ndarray
    """bool (N,): whether the side on roll doubled at that turn in the game."""
    games: np.ndarray
    """int (N,): the index of the decision's game among the results."""


def recorded_turns(pair, *, jacoby: bool = False) -> RecordedTurns:
    """`recorded_decisions` with each decision's seat on roll, whether it doubled there and
    its game, the money games' contexts under the Jacoby rule when `jacoby` (as the games
    were played)."""
    boards: list[np.ndarray] = []
    contexts: list[GameContext] = []
    seats: list[int] = []
    doubles: list[bool] = []
    games: list[int] = []
    matches: dict[tuple[int, int], MatchScore] = {}
    for g, result in enumerate(pair.results):
        record = result.record or {}
        match_to = int(record.get("match_to", 0))
        match = matches.setdefault((result.sample, result.copy), MatchScore(match_to))
        score = tuple(record.get("score", (0, 0)))

        turns: list[tuple[np.ndarray, int, bool, int, int]] = []  # board, seat, doubled, cube
        cube, owner = 1, -1
        start = (cube, owner)  # the cube when the turn began, before any double
        doubled = False  # a double since the last play
        last: dict | None = None  # the last play's record
        for turn in record.get("turns", []):
            action = turn.get("action")
            if action == "double":
                doubled = True
            elif action == "take":
                cube, owner = cube * 2, turn["player"]
            elif action == "beaver":
                cube, owner = turn["cube"], turn["player"]
            elif action == "drop" and last is not None:
                turns.append((_after(last).flip().board, 1 - turn["player"], True, *start))
            elif "dice" in turn:
                if last is not None:
                    board = engine.Position.from_id(turn["position_id"]).board
                    turns.append((board, turn["player"], doubled, *start))
                last, start, doubled = turn, (cube, owner), False
        for board, seat, did_double, cube, owner in turns:
            context = GameContext.of_side(
                seat,
                cube_value=cube,
                cube_owner=owner,
                score=score,
                match_to=match_to,
                crawford=match.crawford,
                jacoby=jacoby,
            )
            if context.may_double():
                boards.append(board)
                contexts.append(context)
                seats.append(seat)
                doubles.append(did_double)
                games.append(g)
        match.after_game(result.points, result.winner)
    return RecordedTurns(
        np.array(boards, dtype=np.int8).reshape(-1, 2, 25),
        contexts,
        np.array(seats, dtype=np.int64),
        np.array(doubles, dtype=bool),
        np.array(games, dtype=np.int64),
    )


def _after(turn: dict) -> engine.Position:
    """The position a recorded play left (its mover still in row 1)."""
    position = engine.Position.from_id(turn["position_id"])
    if not turn["play"]:
        return position
    return engine.Play.parse(turn["play"], position, tuple(turn["dice"])).position
