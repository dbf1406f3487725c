"""A label run as a library call: a `LabelConfig`'s shards made, resumably, here, in
local processes or on Ray (`run_labels`); what `vrhcaby label` and the pipeline's label
stages (`vrhcaby.training.stage label`) run once they have read the config.

The run names its teacher and student networks (a shipped network's name such as
td-best, or a path) and its folder, OUT_DIR/NAME/shard-00000.npz, ... Shard k depends
only on the config and k (`vrhcaby.learn.labels.make_shard`), so the shards are the same
whatever the processes or the backend, and a run resumes: a shard already in the folder,
sound and made by this config, is kept (`survey`); a corrupt one is made again; one made
by another config (any setting but `shards` and `out_dir`) is an error, so that one
folder never mixes two runs' labels. SIGINT or SIGTERM stops after the shards finished
(each is written atomically). The label format and the labelling itself live in
`vrhcaby.learn.labels`; like the command it serves, this module prints its lines (the
corrupt shards made again, the summary, a progress bar on stderr).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.base import ACEY_DEUCEY
from agents.search import Ranker, ValueFunction
from agents.td import find_checkpoint, load_pruner
from vrhcaby.base.files import check_output_dir, check_output_file
from vrhcaby.base.process import StopSignals
from vrhcaby.learn.labels import (
    VISITED,
    LabelConfig,
    Shard,
    config_difference,
    file_digest,
    make_shard,
    opponent_agent,
    shard_meta,
)
from vrhcaby.nn.checkpoint import write_atomic
from vrhcaby.play.pool import SHARED, WorkerPool, caused_by_interrupt

_SHARD_FILE = re.compile(r"shard-(\d+)\.npz")


@dataclass(frozen=True)
class Parallel:
    """Where the shards are made: `jobs` local processes, or a Ray cluster (`backend`
    "ray", joined at `address`, `workers` tasks at a time, 0 for all its CPUs)."""

    jobs: int = 1
    backend: str = "local"
    address: str | None = None
    workers: int = 0


# ---- the run, its networks and its folder -------------------------------------------


def network(role: str, spec: str, variant: str = "standard") -> ValueFunction:
    """The evaluator of the teacher or the student: a shipped network's name or a path
    (`agents.td.find_checkpoint`), one that plays the run's `variant` (an acey-deucey
    network for acey-deucey, a board network for the others); a ValueError naming the
    role and the file otherwise."""
    from vrhcaby.nn.net import load_evaluator

    try:
        evaluator = load_evaluator(find_checkpoint(spec))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{role} {spec!r}: {exc}") from None
    plays = getattr(evaluator, "variant", "standard")
    if (plays == ACEY_DEUCEY) != (variant == ACEY_DEUCEY):
        raise ValueError(f"{role} {spec!r} plays {plays}; the labels are of {variant} play")
    return evaluator


def teacher_network(config: LabelConfig) -> ValueFunction:
    """The teacher's evaluator (`network`), or, when the config names an `ensemble`, the
    ensemble of the teacher's network set and its members' (`vrhcaby.nn.ensemble`, which
    loads each file once and refuses one that is no network set); a ValueError naming
    the network that is missing or unsound."""
    if not config.ensemble:
        return network("teacher", config.teacher, config.variant)
    from vrhcaby.nn.ensemble import ensemble_set

    paths = []
    for role, spec in [("teacher", config.teacher), *(("ensemble", s) for s in config.ensemble)]:
        try:
            paths.append(find_checkpoint(spec))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{role} {spec!r}: {exc}") from None
    try:
        return ensemble_set(paths)
    except (OSError, ValueError) as exc:
        raise ValueError(f"ensemble: {exc}") from None


def digests(config: LabelConfig) -> dict[str, str]:
    """The SHA-256 of each network the run names, by role (teacher, student, ensemble-1,
    ...): a folder's shards must have been made by the same files."""
    networks = {"teacher": file_digest(find_checkpoint(config.teacher))}
    if config.student:
        networks["student"] = file_digest(find_checkpoint(config.student))
    for i, spec in enumerate(config.ensemble, 1):
        networks[f"ensemble-{i}"] = file_digest(find_checkpoint(spec))
    return networks


def pruner(config: LabelConfig) -> Ranker | None:
    """The teacher's pruning network (`agents.td.pruner_file`) when the run prunes; a
    ValueError naming the file when it is missing or unsound."""
    if not config.prune:
        return None
    try:
        return load_pruner(find_checkpoint(config.teacher), config.prune).ranker
    except (OSError, ValueError) as exc:
        raise ValueError(f"teacher {config.teacher!r}'s pruning network: {exc}") from None


@dataclass
class Folder:
    """What a run's folder already holds, checked against the run's config."""

    done: dict[int, int] = field(default_factory=dict)
    """The sound shards of this config (those below `shards` only): index -> labels."""
    corrupt: dict[int, str] = field(default_factory=dict)
    """Shards below `shards` that cannot be read, with why: they are made again."""


def survey(config: LabelConfig, networks: dict[str, str] | None = None) -> Folder:
    """The shards in `config`'s folder; a ValueError (nothing is written) when one was made
    by another config or by other networks of the same names (`networks`' digests)."""
    folder = Folder()
    if not config.folder.is_dir():
        return folder
    for path in sorted(config.folder.iterdir()):
        match = _SHARD_FILE.fullmatch(path.name)
        if match is None:
            continue
        index = int(match.group(1))
        try:
            meta = Shard.meta(path)
            if not isinstance(meta, dict):
                raise ValueError("its meta is not a JSON object")
        except Exception as exc:  # anything np.load or json may raise on a damaged file
            if index < config.shards:
                folder.corrupt[index] = f"unreadable: {type(exc).__name__}"
            continue
        difference = config_difference(config, meta, networks)
        if difference is not None:
            raise ValueError(
                f"{path} was made by another config ({difference}); give this run its own "
                "name (--set name=...) or out_dir, never one folder for two configs"
            )
        if index >= config.shards:
            continue
        if meta.get("shard") != index:
            folder.corrupt[index] = f"its meta says shard {meta.get('shard')!r}"
            continue
        try:
            folder.done[index] = len(Shard.load(path).after)
        except ValueError as exc:
            folder.corrupt[index] = str(exc).removeprefix(f"{path}: ")
    return folder


# ---- making shards: here, in local processes, or on Ray ------------------------------


def one_thread() -> None:
    """One BLAS thread (and one torch thread, where torch is loaded) in this process, and
    in the processes it starts: `--jobs N` workers must not each start a thread per core,
    and every shard is computed the same way wherever it is made."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"  # for interpreters started from here (forkserver, Ray)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    import numpy

    libs = Path(numpy.__file__).parent
    for lib in [*libs.parent.glob("numpy.libs/*openblas*"), *libs.glob(".dylibs/*openblas*")]:
        try:
            blas = ctypes.CDLL(str(lib))
        except OSError:
            continue
        for symbol in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads"):
            if hasattr(blas, symbol):
                getattr(blas, symbol)(1)


@dataclass(frozen=True)
class ShardJob:
    """Making shards of one run (a `vrhcaby.play.ray.Job`: a chunk is a range of indices)."""

    config: LabelConfig
    teacher: ValueFunction
    student: ValueFunction | None
    pruner: Ranker | None = None
    """The teacher's pruning network, when the config prunes."""

    def make(self, index: int) -> tuple[int, Shard, float]:
        """Shard `index`, and the seconds it took."""
        start = time.perf_counter()
        shard = make_shard(self.config, index, self.teacher, self.student, self.pruner)
        return index, shard, time.perf_counter() - start

    def run(self, chunk: range) -> list[tuple[int, Shard, float]]:
        one_thread()
        return [self.make(index) for index in chunk]


def _worker_shard(index: int) -> tuple[int, Shard, float]:
    if not SHARED.get("one_thread"):
        one_thread()
        SHARED["one_thread"] = True
    return SHARED["job"].make(index)


@dataclass
class Tally:
    """The shards made by this run so far."""

    shards: int = 0
    remade: int = 0
    """Of them, shards that were corrupt."""
    labels: int = 0
    visited: int = 0
    """Of them, visited replies (role VISITED)."""
    decisions: int = 0
    positions: int = 0
    shard_seconds: float = 0.0

    def add(self, shard: Shard, seconds: float) -> None:
        self.shards += 1
        self.labels += len(shard.after)
        self.visited += int(((shard.role & VISITED) > 0).sum())
        self.decisions += len(shard.boards)
        self.positions += shard.positions
        self.shard_seconds += seconds


def make_shards(
    job: ShardJob,
    todo: list[int],
    parallel: Parallel,
    keep: Callable[[int, Shard, float], None],
) -> bool:
    """Make the shards `todo`, handing each (index, shard, seconds) to `keep` as it is
    finished: in this process (one job), in `parallel.jobs` local processes, or as Ray
    tasks. True when Ctrl-C (or SIGTERM) cut it short."""
    try:
        if parallel.backend == "ray":
            from vrhcaby.play.ray import connect, run_ray

            connect(parallel.address)
            chunks = [range(index, index + 1) for index in todo]

            def take(_: range, made: list[tuple[int, Shard, float]]) -> None:
                for m in made:
                    keep(*m)

            return run_ray(job, chunks, workers=parallel.workers, on_result=take)
        if parallel.jobs <= 1 or len(todo) <= 1:
            for index in todo:
                keep(*job.make(index))
        else:
            with WorkerPool(min(parallel.jobs, len(todo)), _worker_shard, job=job) as pool:
                for made in pool.imap_unordered(todo):
                    keep(*made)
    except KeyboardInterrupt:
        return True
    except SystemError as exc:  # an interrupt inside numba's unpickling (pool.caused_by_interrupt)
        if not caused_by_interrupt(exc):
            raise
        return True
    return False


# ---- the run ------------------------------------------------------------------------


def run_labels(
    config: LabelConfig,
    parallel: Parallel = Parallel(),
    *,
    summary_file: str | None = None,
    progress: bool = True,
    job_type: Callable[..., ShardJob] = ShardJob,
) -> int:
    """Make the run's missing shards (`job_type(config, teacher, student, pruner)` makes
    them) and print the summary line (also written as JSON to `summary_file`); a
    ValueError, before anything is written, when the run's inputs or outputs are wrong.
    After SIGINT or SIGTERM the shards finished are kept and the exit status is 130 or
    143 (`StopSignals`), else 0."""
    check_output_dir(config.folder, "out_dir")
    if summary_file:
        check_output_file(summary_file, "--json")
    teacher = teacher_network(config)
    student = network("student", config.student, config.variant) if config.student else None
    ranker = pruner(config)
    if config.opponent:
        opponent_agent(config.opponent, config.variant)  # a bad spec fails here, in one line
    networks = digests(config)
    folder = survey(config, networks)
    try:
        config.folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot make the folder {config.folder}: {exc.strerror}") from None
    for index, why in sorted(folder.corrupt.items()):
        print(f"{config.shard_path(index)} is corrupt ({why}): making it again", file=sys.stderr)
    todo = [k for k in range(config.shards) if k not in folder.done]
    one_thread()

    from tqdm import tqdm

    bar = tqdm(unit=" labels", desc=config.name, disable=not progress, file=sys.stderr)
    bar.set_postfix_str(f"shards {len(folder.done)}/{config.shards}")
    tally = Tally()
    start = time.perf_counter()
    with StopSignals() as stop:

        def keep(index: int, shard: Shard, seconds: float) -> None:
            with stop.holding():  # a signal now must not cut a shard's file short
                shard.save(config.shard_path(index), shard_meta(config, index, networks))
            tally.add(shard, seconds)
            tally.remade += index in folder.corrupt
            bar.update(len(shard.after))
            bar.set_postfix_str(f"shards {len(folder.done) + tally.shards}/{config.shards}")
            if stop.received:
                raise KeyboardInterrupt

        try:
            job = job_type(config, teacher, student, ranker)
            interrupted = make_shards(job, todo, parallel, keep)
        finally:
            bar.close()
        seconds = time.perf_counter() - start
        summary = summarise(config, folder, tally, seconds, interrupted)
        print(summary["line"])
        if interrupted:
            print("interrupted: run the same command again to continue", file=sys.stderr)
        if summary_file:
            write_atomic(summary_file, json.dumps(summary, indent=2) + "\n")
    return stop.status or (130 if interrupted else 0)


def summarise(
    config: LabelConfig, folder: Folder, tally: Tally, seconds: float, interrupted: bool
) -> dict[str, Any]:
    """The run's summary: what this run made, and what the folder now holds."""
    held = len(folder.done) + tally.shards
    labels = sum(folder.done.values()) + tally.labels
    rate = tally.labels / seconds if seconds > 0 else 0.0
    visited = f" ({tally.visited:,} of the labels visited replies)" if config.visited else ""
    line = (
        f"{config.name}: made {_count(tally.shards, 'shard')} ({tally.remade} of them again), "
        f"skipped {len(folder.done)} already made; {_count(tally.labels, 'label')} of "
        f"{_count(tally.decisions, 'decision')}{visited}, {tally.positions:,} teacher positions "
        f"evaluated, {seconds:.1f} s, {rate:.1f} labels/s; {config.folder} holds {held} of "
        f"{_count(config.shards, 'shard')}, {_count(labels, 'label')}"
    )
    return {
        "line": line,
        "folder": str(config.folder),
        "config": shard_meta(config, 0)["config"],
        "shards_made": tally.shards,
        "shards_remade": tally.remade,
        "shards_skipped": len(folder.done),
        "labels": tally.labels,
        "visited_labels": tally.visited,
        "decisions": tally.decisions,
        "teacher_positions": tally.positions,
        "seconds": seconds,
        "labels_per_second": rate,
        "shards_held": held,
        "labels_held": labels,
        "interrupted": interrupted,
    }


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
