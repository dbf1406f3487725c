"""Checker play judged by GNU Backgammon's 0-ply network: the equity each play gives away.

A fixed set of positions with their rolls (every turn with more than one legal play in
some recorded games) is judged once: gnubg's 0-ply cubeless equity of every legal play.
Any agent then plays all of them, and each play costs the equity between gnubg's best
play and its own (0 when they agree). Why: two networks playing the same positions give
paired costs, which rank them far more precisely than points per game against pubeval
(20,000 games for ±0.018). gnubg 0-ply is a judge, not the truth: a play better than its
choice still counts as an error. Needs the `gnubg-nn` package.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

import engine
from vrhcaby.base.files import read_arrays, write_npz

CLASSES = ("contact", "crashed", "race", "bearoff")


def gnubg_equities(after: np.ndarray, plies: int = 0) -> np.ndarray:
    """gnubg's cubeless money equity at `plies` (0-ply: its nets and bear-off databases;
    2-ply: about 7 ms a position) of each afterstate (N, 2, 25) for its mover (row 1)."""
    from agents.gnubg import require_gnubg_nn

    gnubg_nn = require_gnubg_nn("judged plays")
    out = np.empty(len(after))
    for i, a in enumerate(after):
        w, wg, wbg, lg, lbg = gnubg_nn.probabilities(a[::-1].tolist(), plies)  # opponent on roll
        out[i] = 2 * (1 - w) - 1 + lg - wg + lbg - wbg
    return out


@dataclass(frozen=True)
class MoveCost:
    """What an agent's plays of a judged set cost, in equity per move."""

    mean: float
    se: float
    """Standard error of the mean over positions."""
    per_game: float
    """Total cost per game and side: the equity one side of a game gives away."""
    by_class: dict[str, float]
    """Mean cost in contact, race and bear-off positions (NaN where there are none)."""
    positions: int

    def to_json(self) -> dict:
        classes = {k: (None if np.isnan(v) else v) for k, v in self.by_class.items()}
        return {
            "mean": self.mean,
            "se": self.se,
            "per_game": self.per_game,
            **classes,
            "positions": self.positions,
        }


@dataclass(frozen=True)
class Judged:
    """Positions (the side on roll in row 1) and rolls, every legal play judged by gnubg."""

    boards: np.ndarray
    """int8 (N, 2, 25)."""
    dice: np.ndarray
    """int (N, 2)."""
    classes: np.ndarray
    """str (N,): contact, crashed, race or bearoff (`engine.Position.classify`)."""
    after: np.ndarray
    """int8 (M, 2, 25): every legal play's afterstate, position by position."""
    parent: np.ndarray
    """int (M,): the position of each afterstate."""
    equities: np.ndarray
    """float (M,): gnubg's 0-ply equity of each afterstate for its mover."""
    games: int
    """Games the positions came from."""
    sources: np.ndarray | None = None
    """str (N,): where each position came from (for example "gnubg-selfplay"), if known."""

    def save(self, path: Path) -> None:
        """Write the judged set to `path` (.npz, compressed, atomically)."""
        arrays = {f.name: getattr(self, f.name) for f in fields(self)}
        arrays["games"] = np.array(self.games)
        if self.sources is None:
            del arrays["sources"]
        write_npz(Path(path), arrays, compressed=True)

    @classmethod
    def load(cls, path: Path) -> Judged:
        """A judged set written by `save`; a ValueError naming the file if it is not one."""
        try:
            arrays = read_arrays(path)
            parts: dict[str, Any] = {f.name: arrays.get(f.name) for f in fields(cls)}
            parts["games"] = int(arrays["games"])
            judged = cls(**parts)
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"{path}: not a judged set ({exc})") from None
        if len(judged.equities) != len(judged.after) or (
            len(judged.parent) and judged.parent.max() >= len(judged.boards)
        ):
            raise ValueError(f"{path}: not a judged set (its arrays do not fit together)")
        return judged

    @classmethod
    def concat(cls, parts: list[Judged]) -> Judged:
        """One judged set of the positions of `parts`, in order."""
        offsets = np.cumsum([0] + [len(j.boards) for j in parts[:-1]])
        sources = None
        if all(j.sources is not None for j in parts):
            sources = np.concatenate([j.sources for j in parts])  # type: ignore[misc]
        return cls(
            boards=np.concatenate([j.boards for j in parts]),
            dice=np.concatenate([j.dice for j in parts]),
            classes=np.concatenate([j.classes for j in parts]),
            after=np.concatenate([j.after for j in parts]),
            parent=np.concatenate([j.parent + o for j, o in zip(parts, offsets, strict=True)]),
            equities=np.concatenate([j.equities for j in parts]),
            games=sum(j.games for j in parts),
            sources=sources,
        )

    @classmethod
    def from_positions(
        cls,
        boards: np.ndarray,
        dice: np.ndarray,
        games: int,
        *,
        judge=gnubg_equities,
        sources: np.ndarray | None = None,
    ) -> Judged:
        """Judge the legal plays of `boards` with `dice`, keeping positions with a choice
        (and their `sources`, if given)."""
        boards = np.asarray(boards, dtype=np.int8).reshape(-1, 2, 25)
        dice = np.asarray(dice, dtype=np.int64).reshape(-1, 2)
        after, parent = engine.batch_afterstates(boards, dice)
        choice = np.bincount(parent, minlength=len(boards)) > 1
        kept = choice[parent]
        boards, dice = boards[choice], dice[choice]
        after, parent = after[kept], (np.cumsum(choice) - 1)[parent[kept]]
        classes = np.array([engine.Position(b).classify() for b in boards])
        if sources is not None:
            sources = np.asarray(sources)[choice]
        return cls(boards, dice, classes, after, parent, judge(after), games, sources)

    def first(self, n: int) -> Judged:
        """The set of its first `n` positions (all of them when it has fewer), for a quick
        yardstick: their plays, in order; `games` is kept."""
        kept = self.parent < n
        sources = None if self.sources is None else self.sources[:n]
        return replace(
            self,
            boards=self.boards[:n],
            dice=self.dice[:n],
            classes=self.classes[:n],
            after=self.after[kept],
            parent=self.parent[kept],
            equities=self.equities[kept],
            sources=sources,
        )

    def cost(self, chosen: np.ndarray) -> np.ndarray:
        """Equity given away by each chosen afterstate (N, 2, 25), one per position; a
        ValueError if one is not a legal play of its position's roll."""
        counts = np.bincount(self.parent, minlength=len(self.boards))
        best = np.maximum.reduceat(self.equities, np.cumsum(counts) - counts)
        hit = np.flatnonzero((self.after == np.asarray(chosen)[self.parent]).all(axis=(1, 2)))
        if len(hit) != len(self.boards) or (self.parent[hit] != np.arange(len(hit))).any():
            raise ValueError("a chosen play is not one of its roll's legal plays")
        return best - self.equities[hit]

    def move_cost(self, chosen: np.ndarray) -> MoveCost:
        """The summary of `cost`."""
        return self.summary(self.cost(chosen))

    def summary(self, cost: np.ndarray) -> MoveCost:
        """Mean, standard error, per game and side, and by class of per-position costs."""
        by_class = {
            c: float(cost[self.classes == c].mean()) if (self.classes == c).any() else np.nan
            for c in CLASSES
        }
        return MoveCost(
            float(cost.mean()),
            float(cost.std() / np.sqrt(len(cost))),
            float(cost.sum() / (2 * self.games)),
            by_class,
            len(cost),
        )

    def play(self, agent) -> MoveCost:
        """The cost of an agent's plays (anything with `choose_boards(boards, dice)`)."""
        return self.move_cost(self.choose(agent))

    def choose(self, agent, chunk: int = 200) -> np.ndarray:
        """The agent's chosen afterstate of each position (`chosen_plays`)."""
        return chosen_plays(agent, self.boards, self.dice, chunk)


def chosen_plays(agent, boards: np.ndarray, dice: np.ndarray, chunk: int = 200) -> np.ndarray:
    """The afterstate (N, 2, 25) the agent plays from each board with its roll, asked
    `chunk` positions at a time (a 2-ply search of thousands at once would hold
    gigabytes)."""
    return np.concatenate(
        [
            agent.choose_boards(boards[s : s + chunk], dice[s : s + chunk])
            for s in range(0, len(boards), chunk)
        ]
    )


def recorded_positions(
    agent, opponent, games: int, seed: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Boards (side on roll in row 1) and rolls of every turn of `games` cubeless money
    games of `agent` against `opponent` (mirrored dice, `seed`), and the games played."""
    from vrhcaby.play.tournament import PairSettings, play_pair

    pair = play_pair(
        agent, opponent, games=games, seed=seed, settings=PairSettings(cube=False, record=True)
    )
    boards, dice = [], []
    for result in pair.results:
        for turn in (result.record or {}).get("turns", []):
            if "dice" in turn:
                boards.append(engine.Position.from_id(turn["position_id"]).board)
                dice.append(turn["dice"])
    return np.array(boards, dtype=np.int8), np.array(dice, dtype=np.int64), len(pair.results)


def judged_games(agent, opponent, games: int, seed: int) -> Judged:
    """The positions with a choice of `games` games of `agent` against `opponent`, judged."""
    return Judged.from_positions(*recorded_positions(agent, opponent, games, seed))


class JudgedSet(Protocol):
    """What `build_in_parts` needs of a judged set (`Judged`, `cube_judge.CubeSet`)."""

    @property
    def boards(self) -> np.ndarray: ...

    def save(self, path: Path) -> None: ...


S = TypeVar("S", bound=JudgedSet)


def build_in_parts(
    out: Path,
    boards: np.ndarray,
    judge: Callable[[slice], S],
    load: Callable[[Path], S],
    concat: Callable[[list[S]], S],
    *,
    size: int = 100,
) -> S:
    """A judged set of `boards` built part by part and written to `out`: `judge(rows)`
    judges the rows of one part of `size`, saved at once in `.parts/` beside `out`, so
    that a build stopped midway (the judge takes minutes a part) resumes where it stopped:
    a saved part whose boards are those rows is taken as it is (`load`), one that is not,
    or cannot be read, is judged again. At the end `concat(parts)` is written to `out` and
    the parts removed. Progress on stdout, a line a part judged."""
    parts_dir = out.parent / ".parts"
    parts = []
    start = time.perf_counter()
    for i in range(0, len(boards), size):
        file = parts_dir / f"{out.stem}-{i // size:03d}.npz"
        rows = slice(i, i + size)
        if file.exists():
            try:
                part = load(file)
                if np.array_equal(part.boards, boards[rows]):
                    parts.append(part)
                    continue
            except ValueError:
                pass
        part = judge(rows)
        part.save(file)
        parts.append(part)
        done = min(i + size, len(boards))
        print(f"  {done}/{len(boards)} decisions judged, {time.perf_counter() - start:.0f} s")
    whole = concat(parts)
    whole.save(out)
    shutil.rmtree(parts_dir)
    return whole
