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

A shard is a fixed number of games, seeded by `(seed, shard)`: the same config makes the
same shard on any machine, and a stopped run resumes by making the shards that are not
on disk yet. Its file (`Shard.save`, compressed .npz, written atomically) holds Position
IDs of the labelled afterstates and float16 probabilities: about 25 bytes a label.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import engine
from agents import search
from agents.search import ValueFunction
from engine.formats import position_ids
from vrhcaby.base.files import read_arrays, write_npz
from vrhcaby.equity.outcomes import equity
from vrhcaby.learn.config import MAX_LOCKSTEP

#: Bits of `Shard.role`: why a play was labelled.
STUDENT_TOP, TEACHER_SEARCHED, TEACHER_CHOICE, RANDOM = 1, 2, 4, 8
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
    student: str = ""
    """Whose 0-ply self-play makes the positions ("" = the teacher's network)."""
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
    prune: int = 0
    """Replies kept per roll by the teacher's pruning network at every ply of its search
    (`agents.search.Pruner`, about 2.5 times faster at 2 plies); 0: every reply valued."""
    seed: int = 1
    """The dice and choices of shard k come from the seed (seed, k)."""
    out_dir: str = "data/labels"
    """Where the run's folder of shards goes."""

    def __post_init__(self) -> None:
        if self.plies not in (1, 2):
            raise ValueError(f"plies must be 1 or 2, got {self.plies}")
        if len(self.filter) < self.plies or min(self.filter) < 1:
            raise ValueError(f"filter needs {self.plies} sizes of at least 1, got {self.filter}")
        for key in ("shards", "games_per_shard"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be at least 1, got {getattr(self, key)}")
        if self.shards > MAX_SHARDS:
            raise ValueError(f"shards must be at most {MAX_SHARDS:,}, got {self.shards:,}")
        if self.games_per_shard > MAX_LOCKSTEP:
            raise ValueError(
                f"games_per_shard must be at most {MAX_LOCKSTEP:,} (games side by side), "
                f"got {self.games_per_shard:,}"
            )
        for key in ("sample", "keep_agreeing", "explore"):
            if not 0 <= getattr(self, key) <= 1:
                raise ValueError(f"{key} must be between 0 and 1, got {getattr(self, key)}")
        if self.student_top < 0 or self.random_siblings < 0 or self.seed < 0 or self.prune < 0:
            raise ValueError("student_top, random_siblings, seed and prune must be 0 or more")

    @property
    def folder(self) -> Path:
        return Path(self.out_dir) / self.name

    def shard_path(self, index: int) -> Path:
        return self.folder / f"shard-{index:05d}.npz"


@dataclass(frozen=True)
class Shard:
    """The labels of one shard: N labelled afterstates of D decisions."""

    after: np.ndarray
    """int8 (N, 2, 25): the labelled afterstates (mover in row 1, the other side to roll)."""
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

    def save(self, path: Path, meta: dict) -> None:
        """Write the shard (Position IDs, float16 probabilities; compressed, atomically),
        with `meta` (the config, the shard's index) as JSON."""
        write_npz(
            path,
            {
                "after": np.array(position_ids(self.after), dtype="S14"),
                "probabilities": self.probabilities.astype(np.float16),
                "zero_ply": self.zero_ply.astype(np.float16),
                "decision": self.decision.astype(np.int32),
                "role": self.role.astype(np.uint8),
                "boards": np.array(position_ids(self.boards), dtype="S14"),
                "dice": self.dice.astype(np.int8),
                "games": np.array(self.games),
                "positions": np.array(self.positions),
                "meta": np.array(json.dumps(meta)),
            },
            compressed=True,
        )

    @classmethod
    def load(cls, path: Path) -> Shard:
        """A shard written by `save`; a ValueError naming the file if it is not one."""
        try:
            arrays = read_arrays(path)
            shard = cls(
                after=_boards(arrays["after"]),
                probabilities=arrays["probabilities"].astype(np.float32),
                zero_ply=arrays["zero_ply"].astype(np.float32),
                decision=arrays["decision"].astype(np.int64),
                role=arrays["role"],
                boards=_boards(arrays["boards"]),
                dice=arrays["dice"].astype(np.int64),
                games=int(arrays["games"]),
                positions=int(arrays["positions"]),
            )
        except (OSError, KeyError, ValueError, EOFError) as exc:
            raise ValueError(f"{path}: not a label shard ({exc})") from None
        n = len(shard.after)
        if not (
            shard.probabilities.shape == (n, 5)
            and len(shard.decision) == n
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


class Counted:
    """A value function that counts the afterstates it is asked about (a shard's cost)."""

    def __init__(self, inner: ValueFunction) -> None:
        self.inner = inner
        self.count = 0
        self.variant = getattr(inner, "variant", "standard")
        if hasattr(inner, "probabilities_from"):
            self.probabilities_from = self._from

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        self.count += len(afterstates)
        return self.inner.probabilities(afterstates)

    def _from(self, roots: np.ndarray, after: np.ndarray, parent: np.ndarray) -> np.ndarray:
        self.count += len(after)
        return self.inner.probabilities_from(roots, after, parent)  # type: ignore[attr-defined]


def self_play(
    student: ValueFunction, games: int, config: LabelConfig, rng: np.random.Generator
) -> _Decisions:
    """Play `games` games of the student against itself at 0-ply, side by side, and keep the
    decisions drawn for labelling (chance `config.sample`) with every legal play."""
    boards = np.repeat(engine.Position.start().board[None], games, axis=0)
    live = np.ones(games, dtype=bool)
    kept: list[tuple] = []
    first = True
    while live.any():
        idx = np.flatnonzero(live)
        dice = rng.integers(1, 7, size=(len(idx), 2))
        if first:  # the opening roll is never a double
            while (same := dice[:, 0] == dice[:, 1]).any():
                dice[same] = rng.integers(1, 7, size=(int(same.sum()), 2))
            first = False
        b = boards[idx]
        after, parent = engine.batch_afterstates(b, dice)
        if not len(after):  # every game on the move is blocked: the turns pass
            boards[idx] = b[:, ::-1]
            continue
        p = search.afterstate_probabilities(student, b, after, parent)
        scores = np.asarray(equity(p), dtype=np.float64)
        counts = np.bincount(parent, minlength=len(idx))
        explore = (counts > 1) & (rng.random(len(idx)) < config.explore)
        noise = np.where(explore[parent], rng.random(len(after)) + 10, 0.0)
        rows = search.best_rows(scores + noise, parent, len(idx))
        chosen = b.copy()
        has = rows >= 0
        chosen[has] = after[rows[has]]
        considered = np.flatnonzero((counts > 1) & (rng.random(len(idx)) < config.sample))
        if len(considered):
            mask = np.isin(parent, considered)
            local = np.searchsorted(considered, parent[mask])
            kept.append((b[considered], dice[considered], after[mask], local, scores[mask]))
        over = engine.game_value(chosen) != 0
        boards[idx] = chosen[:, ::-1]
        live[idx[over]] = False
    offsets = np.cumsum([0] + [len(k[0]) for k in kept[:-1]])
    return _Decisions(
        boards=np.concatenate([k[0] for k in kept]),
        dice=np.concatenate([k[1] for k in kept]),
        after=np.concatenate([k[2] for k in kept]),
        parent=np.concatenate([k[3] + o for k, o in zip(kept, offsets, strict=True)]),
        student=np.concatenate([k[4] for k in kept]),
    )


def make_shard(
    config: LabelConfig,
    index: int,
    teacher: ValueFunction,
    student: ValueFunction | None = None,
    pruner: search.Ranker | None = None,
) -> Shard:
    """The labels of shard `index` of the run `config` (deterministic in the config and
    the index): `config.games_per_shard` games of the student's self-play (default: the
    teacher's network), the drawn decisions labelled by the teacher's search (pruned by
    the ranker `pruner`, the teacher's pruning network, when `config.prune` asks)."""
    if config.prune and pruner is None:
        raise ValueError("config.prune asks for the teacher's pruning network")
    prune = search.Pruner(pruner, config.prune) if config.prune and pruner else None
    rng = np.random.default_rng([config.seed, index])
    teacher = Counted(teacher)
    d = self_play(student or teacher.inner, config.games_per_shard, config, rng)
    n = len(d.boards)
    # The teacher's 1-ply look at the best filter[0] plays by its 0-ply.
    searched = search.filtered_search(
        teacher, d.after, d.parent, d.boards, 1, config.filter[:1], prune=prune
    )
    one_ply = np.where(searched.plies == 1, searched.values, -np.inf)
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
    rows = np.flatnonzero(in_kept & (roles > 0))
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
    searched_rows = (roles[rows] & TEACHER_SEARCHED) > 0
    value = np.where(searched_rows, np.asarray(equity(p), dtype=np.float64), -np.inf)
    choice = search.best_rows(value, d.parent[rows], n)
    roles[rows[choice[choice >= 0]]] |= TEACHER_CHOICE
    zero_p = search.ply_probabilities(teacher, d.after[rows], 0, d.boards, d.parent[rows])
    decisions = np.flatnonzero(labelled)
    return Shard(
        after=d.after[rows],
        probabilities=p,
        zero_ply=zero_p,
        decision=np.searchsorted(decisions, d.parent[rows]),
        role=roles[rows],
        boards=d.boards[decisions],
        dice=d.dice[decisions],
        games=config.games_per_shard,
        positions=teacher.count,
    )


def shard_meta(config: LabelConfig, index: int, networks: dict[str, str] | None = None) -> dict:
    """What a shard's file says of how it was made: the config, the shard's index and, in
    `networks`, the SHA-256 (`file_digest`) of the teacher's (and student's) file."""
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
    for role, digest in (networks or {}).items():
        recorded = (meta.get("networks") or {}).get(role)
        if recorded is not None and recorded != digest:
            return f"another {role} network of the same name (SHA-256 {recorded[:12]}...)"
    missing = object()
    defaults = json.loads(json.dumps(asdict(LabelConfig())))  # what older shards did not record
    for key in [*here, *(k for k in there if k not in here)]:
        if key in RESUMABLE:
            continue
        mine, theirs = here.get(key, missing), there.get(key, defaults.get(key, missing))
        if mine != theirs:
            shown = ["(unset)" if v is missing else repr(v) for v in (theirs, mine)]
            return f"{key} = {shown[0]} in the shard, {shown[1]} in this run"
    return None
