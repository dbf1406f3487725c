"""Training labels from the network's own search: positions of the student's 0-ply
self-play, each decision's candidate plays valued by the teacher's 2-ply search.

The method (expert iteration, as GNU Backgammon's later networks were "trained to play
like the 2-ply evaluation"): the student plays itself greedily at 0-ply (with a few random
plays for coverage); some of its decisions are labelled. For each, the teacher's 1-ply
search ranks the best `filter[0]` plays by 0-ply; a decision where the teacher's 1-ply
choice differs from the student's 0-ply choice is always labelled, one where they agree
with chance `keep_agreeing` (the disagreements are what the student has to learn). The
plays labelled (siblings) are the teacher's 2-ply candidates (the best `filter[1]` by
1-ply, among them its choice), the student's best `student_top` by 0-ply, and
`random_siblings` random legal plays (so that bad plays are seen as bad); each gets the
teacher's 2-ply probabilities for its mover (`agents.search.ply_probabilities`: the
databases and the rules' certainties at every leaf when the teacher is a network set or
obeys the rules, as every shipped evaluator does).

Visited replies (`LabelConfig.visited`): a student's one-ply search of a play compares,
for each of the opponent's 21 rolls, the reply the student values best, and the search's
max over replies picks the replies the student overvalues for the opponent (a winner's
curse that the labels of the student's own decisions do not reach). For a share of the
labelled decisions, the teacher's choice `a` is searched as the student's one-ply search
searches it (`agents.search.all_replies`: `every_roll`'s replies, the best of each roll
the one `ply_probabilities(student, [a], 1)` averages), and the student's best
`visited_top` replies of each roll are labelled by the teacher's search like every other
label: each (a, roll) is a decision of its own, the board `a` seen from the opponent and
the roll its dice, its rows marked VISITED. A roll whose best reply ends the game, or
that has no legal reply, is skipped. With `visited_student` the student's own one-ply
choice among the decision's labelled plays is searched too when it is not `a`: the
replies whose values mislead the student's search into that play (DAgger's states of
the learner's own mistakes).

Against an opponent (`LabelConfig.opponent`, an agent spec such as ``gnubg?plies=0``): the
student plays one side of each game and the opponent the other (the student rolls first
in the even games), and only the student's decisions are drawn, so the labels are of the
positions the student meets against that opponent, as tournaments against it reach
them, not only those of its own play. The opponent chooses moves and nothing else: every
target is still the teacher's search, so GNU Backgammon may be the opponent and teaches
nothing. It should choose without noise, so that a shard stays the same wherever it is
made.

A run plays one variant (`LabelConfig.variant`): the self-play starts from the variant's
layout. Nackgammon is backgammon from another start. Acey-deucey (`make_shard`'s other
branch) has its own move generation and extra rolls: the self-play chooses a 1-2 in two
stages as the agents do (the 1 and the 2, then the double), and the decisions labelled
are the turns of a roll other than a 1-2 whose bonus is due, and the choices of the
bonus double; each afterstate keeps whether its mover rolls again (`Shard.extra`, an
input of acey-deucey networks), and the teacher's search is its one-ply search
(`agents.search_ad.one_ply_ad`).

A shard is a fixed number of games, seeded by `(seed, shard)`: the same config makes the
same shard on any machine, and a stopped run resumes by making the shards that are not
on disk yet. Its file (`Shard.save`, compressed .npz, written atomically) holds Position
IDs of the labelled afterstates and float16 probabilities: about 25 bytes a label (an
acey-deucey shard holds its boards (2, 26) as they are, since a Position ID has no
waiting checkers).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

import engine
from agents import search
from agents.base import ACEY_DEUCEY
from agents.search import ValueFunction
from engine.dice import ROLLS
from engine.formats import position_ids
from engine.variants import get_variant
from vrhcaby.base.files import read_arrays, write_npz
from vrhcaby.equity.outcomes import equity
from vrhcaby.learn.config import MAX_LOCKSTEP

if TYPE_CHECKING:
    from agents.td import TDAgent

#: Bits of `Shard.role`: why a play was labelled.
STUDENT_TOP, TEACHER_SEARCHED, TEACHER_CHOICE, RANDOM, VISITED = 1, 2, 4, 8, 16
MAX_SHARDS = 1_000_000
"""The most shards of a run (a folder of a million files; the runs here made 400 to 640)."""
#: Afterstates valued at 2-ply in one call (memory: about 21 x 21 x 20 afterstates each).
CHUNK = 48


@dataclass(frozen=True)
class LabelConfig:
    """One label-generation run (`vrhcaby label --config ...`)."""

    name: str = "pilot"
    """Run name: the shards are OUT_DIR/NAME/shard-00000.npz, ..."""
    teacher: str = "td-best"
    """The teacher's checkpoint: a shipped network's name (td-best) or a path."""
    ensemble: tuple[str, ...] = ()
    """Other network sets averaged with the teacher's (`vrhcaby.nn.ensemble`: the mean of
    their contact and crashed networks' probabilities): the teacher's search then values
    every position by the ensemble, still pruned by the teacher's own pruning network
    (empty: the teacher alone)."""
    student: str = ""
    """Whose 0-ply self-play makes the positions ("" = the teacher's network)."""
    opponent: str = ""
    """An agent spec (`agents.load_agent`, such as ``gnubg?plies=0``) that plays the
    other side of every game instead of the student (module docstring), and only the
    student's decisions are labelled ("" = the student plays itself)."""
    plies: int = 2
    """The teacher's search depth (1 or 2)."""
    filter: tuple[int, ...] = (8, 3)
    """Candidates kept for 1-ply, then for 2-ply (as the td agent's filter)."""
    shards: int = 20
    """Shards to make (the run's length; raise it and resume to make more)."""
    games_per_shard: int = 100
    """Self-play games of one shard, played side by side."""
    sample: float = 0.25
    """Chance that a decision (a turn with a choice) is considered for labelling."""
    keep_agreeing: float = 0.3
    """Chance that a considered decision is labelled when the teacher's 1-ply choice is
    the student's 0-ply choice (a disagreement is always labelled)."""
    explore: float = 0.05
    """Chance that a turn of the self-play is a random legal play (coverage)."""
    student_top: int = 3
    """The student's best plays by 0-ply labelled in each decision."""
    random_siblings: int = 1
    """Random legal plays labelled in each decision."""
    visited: float = 0.0
    """Share of the labelled decisions whose visited replies are labelled too (module
    docstring): the opponent's replies to the teacher's choice that the student's one-ply
    search picks, each (choice, roll) a decision of its own (0: none, the shards as
    without this setting)."""
    visited_top: int = 1
    """The student's best replies by 0-ply labelled of each roll of a visited choice (1:
    the one its one-ply search picks; 2 or more let the rank term say which is better)."""
    visited_student: bool = False
    """Also search, in each visited decision, the student's own one-ply choice among the
    decision's labelled plays when it is not the teacher's (module docstring): the
    replies behind the student's one-ply mistakes (False: the teacher's choice alone)."""
    prune: int = 0
    """Replies kept per roll by the teacher's pruning network at every ply of its search
    (`agents.search.Pruner`, about 2.5 times faster at 2 plies); 0: every reply valued."""
    seed: int = 1
    """The dice and choices of shard k come from the seed (seed, k)."""
    variant: str = "standard"
    """The game played: standard, nackgammon, nackgammon-seed, or acey-deucey (its own
    rules; the teacher and student then acey-deucey networks, the search one ply, and no
    pruning)."""
    out_dir: str = "data/labels"
    """Where the run's folder of shards goes."""

    def __post_init__(self) -> None:
        if self.plies not in (1, 2):
            raise ValueError(f"plies must be 1 or 2, got {self.plies}")
        if len(self.filter) < self.plies or min(self.filter) < 1:
            raise ValueError(f"filter needs {self.plies} sizes of at least 1, got {self.filter}")
        for key in ("shards", "games_per_shard", "visited_top"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be at least 1, got {getattr(self, key)}")
        if self.shards > MAX_SHARDS:
            raise ValueError(f"shards must be at most {MAX_SHARDS:,}, got {self.shards:,}")
        if self.games_per_shard > MAX_LOCKSTEP:
            raise ValueError(
                f"games_per_shard must be at most {MAX_LOCKSTEP:,} (games side by side), "
                f"got {self.games_per_shard:,}"
            )
        for key in ("sample", "keep_agreeing", "explore", "visited"):
            if not 0 <= getattr(self, key) <= 1:
                raise ValueError(f"{key} must be between 0 and 1, got {getattr(self, key)}")
        if self.student_top < 0 or self.random_siblings < 0 or self.seed < 0 or self.prune < 0:
            raise ValueError("student_top, random_siblings, seed and prune must be 0 or more")
        get_variant(self.variant)  # a ValueError naming the known variants
        if self.variant == ACEY_DEUCEY and (self.plies != 1 or self.prune):
            raise ValueError(
                f"variant acey-deucey: its search is one ply without pruning (plies 1, prune "
                f"0), got plies {self.plies}, prune {self.prune}"
            )
        if self.visited_student and not self.visited:
            raise ValueError("visited_student needs visited above 0 (the decisions searched)")
        if self.variant == ACEY_DEUCEY and self.visited:
            raise ValueError(f"variant acey-deucey: visited must be 0, got {self.visited}")
        if self.variant == ACEY_DEUCEY and self.opponent:
            raise ValueError(f"variant acey-deucey: no opponent, got {self.opponent!r}")
        if self.variant == ACEY_DEUCEY and self.ensemble:
            raise ValueError(f"variant acey-deucey: no ensemble, got {list(self.ensemble)}")

    @property
    def folder(self) -> Path:
        return Path(self.out_dir) / self.name

    def shard_path(self, index: int) -> Path:
        return self.folder / f"shard-{index:05d}.npz"


@dataclass(frozen=True)
class Shard:
    """The labels of one shard: N labelled afterstates of D decisions."""

    after: np.ndarray
    """int8 (N, 2, 25): the labelled afterstates (mover in row 1, the other side to roll);
    (N, 2, 26) in acey-deucey, column 25 the waiting checkers."""
    probabilities: np.ndarray
    """float (N, 5): the teacher's n-ply probabilities of each for its mover."""
    zero_ply: np.ndarray
    """float (N, 5): the teacher's 0-ply probabilities (what the labels correct)."""
    decision: np.ndarray
    """int (N,): the decision (row of `boards`) each afterstate was played in."""
    role: np.ndarray
    """uint8 (N,): why it was labelled (bits STUDENT_TOP, TEACHER_SEARCHED, ...)."""
    boards: np.ndarray
    """int8 (D, 2, 25): each decision's board before the play, side on roll in row 1."""
    dice: np.ndarray
    """int (D, 2): its roll."""
    games: int
    """Self-play games the decisions came from."""
    positions: int
    """Afterstates valued by the teacher's networks (the shard's cost)."""
    extra: np.ndarray | None = None
    """Acey-deucey: bool (N,), whether the mover of each afterstate rolls again (None in
    the other variants)."""

    def save(self, path: Path, meta: dict) -> None:
        """Write the shard (Position IDs, or acey-deucey boards as they are; float16
        probabilities; compressed, atomically), with `meta` (the config, the shard's
        index) as JSON."""
        arrays: dict[str, np.ndarray] = {
            "probabilities": self.probabilities.astype(np.float16),
            "zero_ply": self.zero_ply.astype(np.float16),
            "decision": self.decision.astype(np.int32),
            "role": self.role.astype(np.uint8),
            "dice": self.dice.astype(np.int8),
            "games": np.array(self.games),
            "positions": np.array(self.positions),
            "meta": np.array(json.dumps(meta)),
        }
        if self.extra is None:
            arrays["after"] = np.array(position_ids(self.after), dtype="S14")
            arrays["boards"] = np.array(position_ids(self.boards), dtype="S14")
        else:
            arrays["after_ad"] = self.after.astype(np.int8)
            arrays["boards_ad"] = self.boards.astype(np.int8)
            arrays["extra"] = self.extra.astype(bool)
        write_npz(path, arrays, compressed=True)

    @classmethod
    def load(cls, path: Path) -> Shard:
        """A shard written by `save`; a ValueError naming the file if it is not one."""
        try:
            arrays = read_arrays(path)
            ad = "after_ad" in arrays
            shard = cls(
                after=arrays["after_ad"] if ad else _boards(arrays["after"]),
                probabilities=arrays["probabilities"].astype(np.float32),
                zero_ply=arrays["zero_ply"].astype(np.float32),
                decision=arrays["decision"].astype(np.int64),
                role=arrays["role"],
                boards=arrays["boards_ad"] if ad else _boards(arrays["boards"]),
                dice=arrays["dice"].astype(np.int64),
                games=int(arrays["games"]),
                positions=int(arrays["positions"]),
                extra=arrays["extra"].astype(bool) if ad else None,
            )
        except (OSError, KeyError, ValueError, EOFError) as exc:
            raise ValueError(f"{path}: not a label shard ({exc})") from None
        n = len(shard.after)
        width = 26 if shard.extra is not None else 25
        if not (
            shard.probabilities.shape == (n, 5)
            and len(shard.decision) == n
            and shard.after.shape[1:] == (2, width)
            and shard.boards.shape[1:] == (2, width)
            and (shard.extra is None or shard.extra.shape == (n,))
            and (n == 0 or shard.decision.max() < len(shard.boards))
        ):
            raise ValueError(f"{path}: not a label shard (its arrays do not fit together)")
        return shard

    @staticmethod
    def meta(path: Path) -> dict:
        """The JSON `meta` a shard was saved with."""
        return json.loads(str(read_arrays(path)["meta"]))


def _boards(ids: np.ndarray) -> np.ndarray:
    """int8 (N, 2, 25) boards of Position IDs (bytes)."""
    out = np.empty((len(ids), 2, 25), dtype=np.int8)
    for i, pid in enumerate(ids):
        out[i] = engine.board_from_position_id(pid.decode())
    return out


@dataclass(frozen=True)
class _Decisions:
    """The considered decisions of a shard's self-play, with all their candidates."""

    boards: np.ndarray
    dice: np.ndarray
    after: np.ndarray
    parent: np.ndarray
    student: np.ndarray
    """float (M,): the student's 0-ply equity of each candidate."""
    extra: np.ndarray | None = None
    """Acey-deucey: bool (M,), whether each candidate's mover rolls again."""


class Counted:
    """A value function that counts the afterstates it is asked about (a shard's cost)."""

    def __init__(self, inner: ValueFunction) -> None:
        self.inner = inner
        self.count = 0
        self.variant = getattr(inner, "variant", "standard")
        if hasattr(inner, "probabilities_from"):
            self.probabilities_from = self._from

    def probabilities(self, afterstates: np.ndarray, *extra: np.ndarray | None) -> np.ndarray:
        """The inner probabilities (an acey-deucey network's take the "rolls again" flags)."""
        self.count += len(afterstates)
        return self.inner.probabilities(afterstates, *extra)  # type: ignore[call-arg]

    def _from(
        self, roots: np.ndarray, after: np.ndarray, parent: np.ndarray, *extra: np.ndarray | None
    ) -> np.ndarray:
        self.count += len(after)
        return self.inner.probabilities_from(roots, after, parent, *extra)  # type: ignore[attr-defined]


@runtime_checkable
class Chooser(Protocol):
    """What plays the opponent's side of the self-play (`LabelConfig.opponent`): any agent."""

    def choose_boards(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The afterstate each board (B, 2, 25) reaches with its roll (B, 2)."""
        ...


@functools.cache
def opponent_agent(spec: str, variant: str = "standard") -> Chooser:
    """The agent of `LabelConfig.opponent` (loaded once a process, as shards are made one
    after another); a one-line ValueError naming the spec when it names no agent that
    plays `variant`."""
    from agents import load_agent

    try:
        agent = load_agent(spec)
    except ValueError as exc:
        raise ValueError(f"opponent {spec!r}: {exc}") from None
    if not agent.supports(variant) or not isinstance(agent, Chooser):
        raise ValueError(f"opponent {spec!r} does not play {variant} boards")
    return agent


def rolls(rng: np.random.Generator, n: int, opening: bool) -> np.ndarray:
    """`n` rolls (n, 2) for the games on the move; an opening roll is never a double
    (a double is rolled again), as the games' first turn is played."""
    dice = rng.integers(1, 7, size=(n, 2))
    while opening and (same := dice[:, 0] == dice[:, 1]).any():
        dice[same] = rng.integers(1, 7, size=(int(same.sum()), 2))
    return dice


def self_play(
    student: ValueFunction,
    games: int,
    config: LabelConfig,
    rng: np.random.Generator,
    opponent: Chooser | None = None,
) -> _Decisions:
    """Play `games` games of the student against itself at 0-ply, side by side, and keep the
    decisions drawn for labelling (chance `config.sample`) with every legal play, from the
    layout of `config.variant` (a board variant: standard or Nackgammon). With `opponent`,
    it plays the student's other side (the student rolls first in the even games) and only
    the student's decisions are kept."""
    boards = np.repeat(engine.Position.start(config.variant).board[None], games, axis=0)
    live = np.ones(games, dtype=bool)
    # True in the games where the student is on roll (always, without an opponent).
    students = np.ones(games, dtype=bool) if opponent is None else np.arange(games) % 2 == 0
    kept: list[tuple] = []
    first = True
    while live.any():
        idx = np.flatnonzero(live)
        dice, first = rolls(rng, len(idx), first), False
        b = boards[idx]
        after, parent = engine.batch_afterstates(b, dice)
        if not len(after):  # every game on the move is blocked: the turns pass
            boards[idx] = b[:, ::-1]
            if opponent is not None:
                students[idx] = ~students[idx]
            continue
        p = search.afterstate_probabilities(student, b, after, parent)
        scores = np.asarray(equity(p), dtype=np.float64)
        rows, drawn = _choose(scores, parent, len(idx), config, rng)
        chosen = b.copy()
        has = rows >= 0
        chosen[has] = after[rows[has]]
        if opponent is not None:
            theirs = ~students[idx]
            drawn &= ~theirs
            if theirs.any():
                chosen[theirs] = opponent.choose_boards(b[theirs], dice[theirs])
            students[idx] = theirs
        considered = np.flatnonzero(drawn)
        if len(considered):
            mask = np.isin(parent, considered)
            local = np.searchsorted(considered, parent[mask])
            kept.append((b[considered], dice[considered], after[mask], local, scores[mask]))
        over = engine.game_value(chosen) != 0
        boards[idx] = chosen[:, ::-1]
        live[idx[over]] = False
    return _gathered(kept)


def _gathered(kept: list[tuple]) -> _Decisions:
    """The decisions kept turn by turn as (boards, dice, afterstates, parent within the
    turn, student's equities[, extra]), as one `_Decisions`."""
    offsets = np.cumsum([0] + [len(k[0]) for k in kept[:-1]])
    return _Decisions(
        boards=np.concatenate([k[0] for k in kept]),
        dice=np.concatenate([k[1] for k in kept]),
        after=np.concatenate([k[2] for k in kept]),
        parent=np.concatenate([k[3] + o for k, o in zip(kept, offsets, strict=True)]),
        student=np.concatenate([k[4] for k in kept]),
        extra=np.concatenate([k[5] for k in kept]) if kept and len(kept[0]) > 5 else None,
    )


def _choose(
    scores: np.ndarray, parent: np.ndarray, n: int, config: LabelConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A greedy self-play choice with exploration: the row of each of `n` boards' best
    score (a random legal play with chance `config.explore` where there is a choice; -1
    for a board without a play), and the boards with a choice drawn for labelling
    (chance `config.sample`)."""
    counts = np.bincount(parent, minlength=n)
    explore = (counts > 1) & (rng.random(n) < config.explore)
    noise = np.where(explore[parent], rng.random(len(scores)) + 10, 0.0)
    rows = search.best_rows(scores + noise, parent, n)
    return rows, (counts > 1) & (rng.random(n) < config.sample)


def self_play_ad(
    student: TDAgent, games: int, config: LabelConfig, rng: np.random.Generator
) -> _Decisions:
    """Acey-deucey: `games` games of the student (a td agent) against itself at 0-ply, side
    by side, a 1-2 chosen in two stages as `AfterstateAgent.choose_turns_ad` does (the 1
    and the 2 valued with the bonus due, then the double valued with whether it earns
    another roll); the decisions drawn for labelling (chance `config.sample`) with every
    candidate: the turns of a roll, but not the 1 and 2 of a 1-2 whose bonus is due (their
    value is the double's choice, not a roll's), and the choices of a bonus double."""
    from engine.acey_deucey import (
        batch_afterstates_ad,
        batch_bonus_ad,
        game_value_ad,
        start_boards_ad,
    )

    boards = start_boards_ad(games)
    live = np.ones(games, dtype=bool)
    kept: list[tuple] = []
    first = True

    def stage(b: np.ndarray, dice: np.ndarray, after, parent, flag, labelled) -> np.ndarray:
        scores = np.asarray(student.score_ad(after, flag, parent, b), np.float64)
        rows, considered = _choose(scores, parent, len(b), config, rng)
        considered &= labelled
        if considered.any():
            chosen = np.flatnonzero(considered)
            mask = np.isin(parent, chosen)
            local = np.searchsorted(chosen, parent[mask])
            kept.append((b[chosen], dice[chosen], after[mask], local, scores[mask], flag[mask]))
        return rows

    while live.any():
        idx = np.flatnonzero(live)
        dice, first = rolls(rng, len(idx), first), False
        b = boards[idx]
        chosen, again = b.copy(), np.zeros(len(idx), bool)
        after, parent, due = batch_afterstates_ad(b, dice, bonus=False)
        if len(after):
            owes = np.bincount(parent, weights=due, minlength=len(idx)) > 0
            rows = stage(b, dice, after, parent, due, ~owes)
            has = rows >= 0
            chosen[has] = after[rows[has]]
            owed = np.flatnonzero(has)[due[rows[has]]]
            if owed.size:
                roots = chosen[owed]
                after, parent, extra = batch_bonus_ad(roots)
                bonus_dice = np.tile([1, 2], (owed.size, 1))
                rows = stage(roots, bonus_dice, after, parent, extra, np.ones(owed.size, bool))
                chosen[owed], again[owed] = after[rows], extra[rows]
        over = game_value_ad(chosen) != 0
        boards[idx] = np.where(again[:, None, None], chosen, chosen[:, ::-1])
        live[idx[over]] = False
    return _gathered(kept)


def make_shard(
    config: LabelConfig,
    index: int,
    teacher: ValueFunction,
    student: ValueFunction | None = None,
    pruner: search.Ranker | None = None,
) -> Shard:
    """The labels of shard `index` of the run `config` (deterministic in the config and
    the index): `config.games_per_shard` games of the student's self-play (default: the
    teacher's network; against `config.opponent` where one is named), the drawn decisions
    labelled by the teacher's search (pruned by the ranker `pruner`, the teacher's pruning
    network, when `config.prune` asks)."""
    if config.prune and pruner is None:
        raise ValueError("config.prune asks for the teacher's pruning network")
    prune = search.Pruner(pruner, config.prune) if config.prune and pruner else None
    rng = np.random.default_rng([config.seed, index])
    teacher = Counted(teacher)
    if config.variant == ACEY_DEUCEY:
        return _make_shard_ad(config, teacher, student, rng)
    opponent = opponent_agent(config.opponent, config.variant) if config.opponent else None
    d = self_play(student or teacher.inner, config.games_per_shard, config, rng, opponent)
    # The teacher's 1-ply look at the best filter[0] plays by its 0-ply.
    searched = search.filtered_search(
        teacher, d.after, d.parent, d.boards, 1, config.filter[:1], prune=prune
    )
    one_ply = np.where(searched.plies == 1, searched.values, -np.inf)
    labelled, roles, rows = _labelled(d, one_ply, config, rng)
    if config.plies == 2:
        p = np.empty((len(rows), 5))
        for s in range(0, len(rows), CHUNK):
            p[s : s + CHUNK] = search.ply_probabilities(
                teacher, d.after[rows[s : s + CHUNK]], 2, prune=prune
            )
    else:  # the filter's 1-ply values; those it did not reach (a random play) valued now
        p = searched.probabilities[rows]
        shallow = searched.plies[rows] < 1
        if shallow.any():
            p[shallow] = search.ply_probabilities(teacher, d.after[rows[shallow]], 1, prune=prune)
    zero_p = search.ply_probabilities(teacher, d.after[rows], 0, d.boards, d.parent[rows])
    shard = _shard(d, labelled, roles, rows, p, zero_p, config.games_per_shard, teacher.count)
    if not config.visited:
        return shard
    drawn = rng.random(len(shard.boards)) < config.visited
    return _with_visited(shard, drawn, config, teacher, student or teacher.inner, prune)


def _with_visited(
    shard: Shard,
    drawn: np.ndarray,
    config: LabelConfig,
    teacher: Counted,
    student: ValueFunction,
    prune: search.Pruner | None,
) -> Shard:
    """`shard` with the visited replies (module docstring) of its `drawn` decisions'
    teacher choices appended, labelled by the teacher's search: a decision per distinct
    (choice, roll), rows VISITED."""
    chosen = drawn[shard.decision] & ((shard.role & TEACHER_CHOICE) > 0)
    if config.visited_student:
        chosen |= _student_choices(shard, drawn, student)
    a = shard.after[chosen]
    a = a[engine.game_value(a) == 0]
    if not len(a):
        return shard
    r = search.all_replies(student, a[:, ::-1])
    rolls = len(ROLLS)
    top = r.after[search.best_rows(r.scores, r.parent, len(r.boards) * rolls)]
    passes = (top == np.repeat(r.boards, rolls, axis=0)).all(axis=(1, 2))
    skipped = passes | (engine.game_value(top) != 0)  # the roll's best reply
    kept = np.flatnonzero(search.top_k(r.scores, r.parent, config.visited_top) & ~skipped[r.parent])
    if not len(kept):
        return shard
    kept = kept[np.argsort(r.parent[kept], kind="stable")]
    groups, local = np.unique(r.parent[kept], return_inverse=True)
    boards = r.boards[groups // rolls]
    after = r.after[kept]
    p = np.empty((len(kept), 5))
    for s in range(0, len(kept), CHUNK):
        p[s : s + CHUNK] = search.ply_probabilities(
            teacher, after[s : s + CHUNK], config.plies, prune=prune
        )
    zero_p = search.ply_probabilities(teacher, after, 0, boards, local)
    n = len(shard.boards)
    return Shard(
        after=np.concatenate([shard.after, after]),
        probabilities=np.concatenate([shard.probabilities, p]),
        zero_ply=np.concatenate([shard.zero_ply, zero_p]),
        decision=np.concatenate([shard.decision, n + local]),
        role=np.concatenate([shard.role, np.full(len(kept), VISITED, np.uint8)]),
        boards=np.concatenate([shard.boards, boards]),
        dice=np.concatenate([shard.dice, ROLLS[groups % rolls]]),
        games=shard.games,
        positions=teacher.count,
    )


def _student_choices(shard: Shard, drawn: np.ndarray, student: ValueFunction) -> np.ndarray:
    """Mask of `shard`'s rows that are the student's one-ply choice (`ply_probabilities`
    at 1 ply, the value its `plies=1` search compares) among the plays labelled in each
    `drawn` decision as the student's best or the teacher's searched ones."""
    candidate = drawn[shard.decision] & ((shard.role & (STUDENT_TOP | TEACHER_SEARCHED)) > 0)
    rows = np.flatnonzero(candidate)
    mask = np.zeros(len(shard.after), dtype=bool)
    if not len(rows):
        return mask
    value = np.asarray(
        equity(search.ply_probabilities(student, shard.after[rows], 1)), dtype=np.float64
    )
    best = search.best_rows(value, shard.decision[rows], len(shard.boards))
    mask[rows[best[best >= 0]]] = True
    return mask


def _labelled(
    d: _Decisions, one_ply: np.ndarray, config: LabelConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which decisions are labelled (bool (D,): the teacher's 1-ply choice, by `one_ply`
    (-inf where it did not look), is not the student's 0-ply one, or by chance
    `keep_agreeing`), each candidate's roles (why it is labelled), and the rows labelled."""
    n = len(d.boards)
    teacher_1 = search.best_rows(one_ply, d.parent, n)
    student_0 = search.best_rows(d.student, d.parent, n)
    labelled = (teacher_1 != student_0) | (rng.random(n) < config.keep_agreeing)
    in_kept = labelled[d.parent]
    roles = np.zeros(len(d.after), dtype=np.uint8)
    roles[search.top_k(d.student, d.parent, config.student_top)] |= STUDENT_TOP
    searched_k = config.filter[1] if config.plies == 2 else 1
    roles[search.top_k(one_ply, d.parent, searched_k)] |= TEACHER_SEARCHED
    noise = rng.random(len(d.after))
    roles[search.top_k(noise, d.parent, config.random_siblings)] |= RANDOM
    return labelled, roles, np.flatnonzero(in_kept & (roles > 0))


def _shard(
    d: _Decisions,
    labelled: np.ndarray,
    roles: np.ndarray,
    rows: np.ndarray,
    p: np.ndarray,
    zero_p: np.ndarray,
    games: int,
    positions: int,
) -> Shard:
    """The shard of the labelled `rows` of `d`, their search probabilities `p` and 0-ply
    `zero_p`; the teacher's choice among each decision's searched rows marked."""
    searched_rows = (roles[rows] & TEACHER_SEARCHED) > 0
    value = np.where(searched_rows, np.asarray(equity(p), dtype=np.float64), -np.inf)
    choice = search.best_rows(value, d.parent[rows], len(d.boards))
    roles[rows[choice[choice >= 0]]] |= TEACHER_CHOICE
    decisions = np.flatnonzero(labelled)
    return Shard(
        after=d.after[rows],
        probabilities=p,
        zero_ply=zero_p,
        decision=np.searchsorted(decisions, d.parent[rows]),
        role=roles[rows],
        boards=d.boards[decisions],
        dice=d.dice[decisions],
        games=games,
        positions=positions,
        extra=None if d.extra is None else d.extra[rows],
    )


def _make_shard_ad(
    config: LabelConfig,
    teacher: Counted,
    student: ValueFunction | None,
    rng: np.random.Generator,
) -> Shard:
    """`make_shard` in acey-deucey: the student's self-play (`self_play_ad`), the
    teacher's one-ply search (`agents.search_ad.one_ply_ad`) of its best `filter[0]`
    candidates by 0-ply, then of the other labelled ones."""
    from agents.search_ad import one_ply_ad
    from agents.td import TDAgent

    agent = TDAgent(teacher)
    player = TDAgent(student) if student is not None else TDAgent(teacher.inner)
    d = self_play_ad(player, config.games_per_shard, config, rng)
    assert d.extra is not None
    zero = agent.probabilities_ad(d.after, d.extra, d.boards, d.parent)
    top = search.top_k(np.asarray(equity(zero), np.float64), d.parent, config.filter[0])
    p_top = _one_ply_chunks(one_ply_ad, agent, d.after[top], d.extra[top])
    one_ply = np.full(len(d.after), -np.inf)
    one_ply[top] = equity(p_top)
    labelled, roles, rows = _labelled(d, one_ply, config, rng)
    p = np.empty((len(d.after), 5))
    p[top] = p_top
    rest = rows[~np.isin(rows, top)]
    p[rest] = _one_ply_chunks(one_ply_ad, agent, d.after[rest], d.extra[rest])
    return _shard(
        d, labelled, roles, rows, p[rows], zero[rows], config.games_per_shard, teacher.count
    )


def _one_ply_chunks(search_one, agent, after: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """`search_one(agent, after, extra)` in chunks of `CHUNK` afterstates (memory)."""
    out = np.empty((len(after), 5))
    for s in range(0, len(after), CHUNK):
        out[s : s + CHUNK] = search_one(agent, after[s : s + CHUNK], extra[s : s + CHUNK])
    return out


def shard_meta(config: LabelConfig, index: int, networks: dict[str, str] | None = None) -> dict:
    """What a shard's file says of how it was made: the config, the shard's index and, in
    `networks`, the SHA-256 (`file_digest`) of the teacher's (and student's, and each
    ensemble member's) file."""
    meta = {"config": asdict(config), "shard": index, "version": 1}
    if networks:
        meta["networks"] = dict(networks)
    return meta


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, hex: which network, whatever its name, labelled a shard."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


#: The settings a run may change and still resume its folder: more shards (`shards`), or
#: the folder moved (`out_dir`). Every other one changes what a shard holds.
RESUMABLE = ("shards", "out_dir")


def config_difference(
    config: LabelConfig, meta: dict, networks: dict[str, str] | None = None
) -> str | None:
    """How the run a shard's `meta` (`Shard.meta`) records differs from `config` (and from
    the `networks` digests, where the shard records them), on one line naming the first
    setting (or the format version) that differs, RESUMABLE ones aside; None when the
    shard is one of `config`'s."""
    saved = shard_meta(config, 0)
    if meta.get("version") != saved["version"]:
        return f"format version {meta.get('version')!r} (this code writes {saved['version']})"
    here = json.loads(json.dumps(saved["config"]))  # tuples as the lists JSON reads back
    there = meta.get("config")
    if not isinstance(there, dict):
        return "no config recorded"
    missing = object()
    defaults = json.loads(json.dumps(asdict(LabelConfig())))  # what older shards did not record
    for key in [*here, *(k for k in there if k not in here)]:
        if key in RESUMABLE:
            continue
        mine, theirs = here.get(key, missing), there.get(key, defaults.get(key, missing))
        if mine != theirs:
            shown = ["(unset)" if v is missing else repr(v) for v in (theirs, mine)]
            return f"{key} = {shown[0]} in the shard, {shown[1]} in this run"
    for role, digest in (networks or {}).items():
        recorded = (meta.get("networks") or {}).get(role)
        if recorded is not None and recorded != digest:
            return f"another {role} network of the same name (SHA-256 {recorded[:12]}...)"
    return None
