"""Expert iteration as one resumable run (`vrhcaby pipeline --config RECIPE`).

A recipe (`PipelineConfig`) names the whole method that made the shipped networks: a
bootstrap (a TD(λ) run of `bootstrap`, a `TrainConfig`, or a network given as `init_from`),
then generations of label → fit → judge → promote:

- **label**: the champion's own self-play labelled by its own search (`generations.label`,
  a `LabelConfig`; teacher and student are the champion, the seed the recipe's plus the
  generation's number);
- **fit**: the champion's network fitted to every label folder its search made
  (`generations.fit`, a distillation `TrainConfig`), its best checkpoint (lowest held-out
  loss) the new generation;
- **judge**: the new network's checker play on the judged set (`vrhcaby.play.judge`,
  the first `judge_decisions` of it) at each of `judge_plies`, and its cube error
  (`vrhcaby.play.cube_judge`) when `cube_judge` names a set; or, with `duel_games`, a
  duel against its teacher (`duel`: mirrored cubeless money games of the recipe's
  variant on the recipe's seed, `vrhcaby.play.tournament.play_pair` over `--jobs` or
  Ray), the only yardstick of a variant without GNU Backgammon's judged sets;
- **promote**: the new generation becomes the champion if and only if its judged cost at
  the first of `judge_plies` is below the champion's by at least `margin` (`promoted`),
  or, when the recipe duels, the lower end of the 95% interval of its points per game
  against the champion is above `margin` (`duel_promoted`); the run stops after
  `patience` generations in a row without a promotion, or after `count`.

The recipe's `variant` is played by every stage: the TD bootstrap, the label runs'
self-play and search (`LabelConfig.variant`: acey-deucey's own move generation and
extra rolls), the fits (an acey-deucey network reads the extra-roll flag of its labels)
and the duels. The judged sets are of standard backgammon: another variant is judged by
the duel.

Each label, TD or fit stage is a process of its own (`python -m vrhcaby.training.stage
label|train`, which does what `vrhcaby label` or `vrhcaby train` does, on a config the
pipeline writes under RUN_DIR/stages/, which either verb can run again by hand), so that
its CPU time, its local worker processes' included, is measured
(`resource.RUSAGE_CHILDREN`) and a kill of the pipeline ends it too (Linux's parent-death
signal). The judge runs in this process. RUN_DIR/pipeline.json, written atomically after
every step, says what was done, what is next, and what each stage cost in core-hours and
seconds; rerunning the command skips the stages done, a label stage resumes by shards, a
TD or fit stage from its newest checkpoint and a duel by chunks of games (each kept in
RUN_DIR/duels/genN/ as it ends). RUN_DIR/STATUS.md says the same for people,
RUN_DIR/generations.svg draws the judged cost per generation, and RUN_DIR/tb/ holds the
TensorBoard logs (each training stage's, and the pipeline's per-generation scalars under
tb/pipeline).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents import load_agent
from agents.base import ACEY_DEUCEY
from agents.td import find_checkpoint
from engine.variants import get_variant
from vrhcaby.base.config import flatten, to_dict
from vrhcaby.io.plot import points_svg
from vrhcaby.learn.config import EvalConfig
from vrhcaby.learn.distill import shard_files
from vrhcaby.learn.labels import LabelConfig, file_digest
from vrhcaby.nn import checkpoint
from vrhcaby.nn.checkpoint import write_atomic
from vrhcaby.nn.net import NetConfig
from vrhcaby.play.judge import Judged
from vrhcaby.play.tournament import MAX_GAMES, GameResult, PairSettings, play_pair
from vrhcaby.training.run import TrainConfig

STATE = "pipeline.json"
STATUS = "STATUS.md"
PICTURE = "generations.svg"
OUTPUTS = ("network", "folder")
"""The keys of a stage's record that name what it made (a judge stage's network is the
fit's, so it is forgotten with the fit)."""


def _no_evaluation() -> EvalConfig:
    return EvalConfig(every=0)


@dataclass(frozen=True)
class GenerationsConfig:
    """The generations: how each is labelled, fitted and judged, and when one is kept."""

    count: int = 3
    """Generations to run at most."""
    label: LabelConfig = field(default_factory=LabelConfig)
    """Each generation's label run; `name`, `teacher`, `student` and `out_dir` are set by
    the pipeline (the champion labels its own self-play, into RUN_DIR/labels/genN) and
    `seed` is this seed plus the generation's number."""
    fit: TrainConfig = field(default_factory=lambda: TrainConfig(name="fit", eval=_no_evaluation()))
    """Each generation's fit (its `distill` table); `name`, `init_from`, `distill.labels`,
    `checkpoint_dir` and `runs_dir` are set by the pipeline (the champion's network,
    fitted to every label folder of the champion's search), and so is `net` (the
    bootstrap's, or `init_from`'s when it is a single network)."""
    judge: str = "data/judge/gnubg-2ply.npz"
    """The judged set of checker plays (`vrhcaby.play.judge.Judged`), from the working
    directory or the checkout; standard backgammon only ("": none, the recipe duels)."""
    judge_decisions: int = 0
    """Judge on the set's first this many decisions (0: all of them)."""
    judge_plies: tuple[int, ...] = (0,)
    """Search depths each generation is judged at; the first one decides promotion."""
    cube_judge: str = ""
    """A judged set of cube decisions (`vrhcaby.play.cube_judge.CubeSet`, e.g.
    data/judge/gnubg-cube-2ply.npz) for a cube-error column ("": none)."""
    cube_decisions: int = 0
    """Judge the cube on the set's first this many decisions (0: all of them)."""
    cube_plies: tuple[int, ...] = (0, 1)
    """Cube look-aheads (`td?cube_plies=N`) the cube error is judged at: 0, Janowski on
    the 0-ply probabilities; 1, the cubeful one-ply search that `vrhcaby cube` answers
    with by default (every decision searched: the agent's cube window off). The first is
    the report's `cube_error`, all are `cube_errors`."""
    duel_games: int = 0
    """Judge each generation by this many mirrored cubeless money games (an even number)
    against its teacher, on the recipe's seed, instead of by the judged set (which is
    still reported when `judge` names one); 0: no duel."""
    margin: float = 0.0
    """A generation is promoted only if its judged cost is below its teacher's by at
    least this much (equity per decision); with `duel_games`, only if the lower end of
    the 95% interval of its points per game against its teacher is above this (points
    per game)."""
    patience: int = 1
    """Stop after this many generations in a row without a promotion."""
    carry_labels: bool = False
    """Fit each generation to every label folder of the run so far, earlier champions'
    included, each label with its own teacher's target (`distill.mix_teachers`); off, only
    the folders of the champion's own search. Session 18 found a new teacher's labels,
    mostly visited replies, alone make a worse 0-ply player, and with the older folders a
    better searcher (docs/distillation.md)."""

    def __post_init__(self) -> None:
        if self.count < 0 or self.patience < 1:
            raise ValueError(
                f"generations.count must be 0 or more and generations.patience at least 1, "
                f"got {self.count} and {self.patience}"
            )
        if not self.judge_plies or any(p not in (0, 1, 2) for p in self.judge_plies):
            raise ValueError(f"generations.judge_plies must be 0, 1 or 2, got {self.judge_plies}")
        if not self.cube_plies or any(p not in (0, 1, 2) for p in self.cube_plies):
            raise ValueError(f"generations.cube_plies must be 0, 1 or 2, got {self.cube_plies}")
        if self.judge_decisions < 0 or self.cube_decisions < 0 or not math.isfinite(self.margin):
            raise ValueError("judge_decisions and cube_decisions must be 0 or more")
        if self.margin < 0:
            raise ValueError(f"generations.margin must be 0 or more, got {self.margin}")
        if self.duel_games < 0 or self.duel_games % 2 or self.duel_games > MAX_GAMES:
            raise ValueError(
                f"generations.duel_games must be 0 or an even number up to {MAX_GAMES:,} "
                f"(mirrored pairs), got {self.duel_games}"
            )
        if not self.judge and not self.duel_games:
            raise ValueError(
                "generations.judge is empty and generations.duel_games 0: name a judged set "
                "or set duel_games, the yardstick that decides promotion"
            )
        if self.cube_judge and not self.judge:
            raise ValueError("generations.cube_judge needs generations.judge (standard play)")

    @property
    def by_duel(self) -> bool:
        """Whether the duel against the teacher decides promotion."""
        return bool(self.duel_games)


@dataclass(frozen=True)
class PipelineConfig:
    """One expert-iteration run (`vrhcaby pipeline --config RECIPE`)."""

    name: str = "pipeline"
    """The run's name (its stages' checkpoints are named after it)."""
    run_dir: str = "runs/pipeline"
    """The run's folder: its state, stages, checkpoints, labels, logs and picture."""
    variant: str = "standard"
    """The game every stage plays: standard, nackgammon, nackgammon-seed, acey-deucey.
    The judged sets are of standard play: another variant is judged by a duel
    (`generations.judge = ""`, `generations.duel_games`)."""
    seed: int = 1
    """Seed of the bootstrap, the fits and (plus the generation) the labels."""
    init_from: str = ""
    """Start the generations from this network (a path or a shipped network's name)
    instead of a TD bootstrap."""
    race: str = ""
    """A race network (a path or a shipped name, e.g. onesided-race) put with the first
    champion's network into a network set, as `vrhcaby netset --contact FIRST --race RACE`
    does; the set is then the first champion, and the fits fit its own networks and carry
    the race network as it is ("": the first champion alone)."""
    bootstrap: TrainConfig = field(default_factory=lambda: TrainConfig(name="bootstrap"))
    """The TD(λ) bootstrap when `init_from` is empty; its `name`, `seed`, `variant`,
    `checkpoint_dir` and `runs_dir` are set by the pipeline."""
    generations: GenerationsConfig = field(default_factory=GenerationsConfig)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"\w[\w.+-]*", self.name):
            raise ValueError(f"name must be a file-name part, got {self.name!r:.60}")
        try:
            get_variant(self.variant)
        except ValueError as exc:
            raise ValueError(f"variant: {exc}") from None
        gens = self.generations
        for key in ("judge", "cube_judge"):
            if self.variant != "standard" and getattr(gens, key):
                raise ValueError(
                    f"generations.{key}: the judged sets are of standard play, not "
                    f'{self.variant}; set it to "" and judge by generations.duel_games'
                )
        try:  # the label runs play the recipe's variant: their settings checked for it now
            replace(gens.label, variant=self.variant)
        except ValueError as exc:
            raise ValueError(f"generations.label: {exc}") from None
        if self.variant == ACEY_DEUCEY and self.race:
            raise ValueError(
                "race: acey-deucey has no race network (its boards hold waiting checkers)"
            )
        if self.bootstrap.game != "backgammon" or self.bootstrap.distilling:
            raise ValueError("bootstrap must be a backgammon TD run (no distill.labels)")
        if self.seed < 0:
            raise ValueError(f"seed must be 0 or more, got {self.seed}")

    @property
    def folder(self) -> Path:
        return Path(self.run_dir)


class RecipeChanged(ValueError):
    """The recipe differs from the one the run folder was started with."""


# ---- the state of a run ---------------------------------------------------------------


@dataclass
class State:
    """What `pipeline.json` holds: the recipe, the stages and the generations."""

    path: Path
    recipe: dict[str, Any]
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Stage name -> its record: status (running, done), outputs, core_hours, seconds."""
    generations: list[dict[str, Any]] = field(default_factory=list)
    """Generation 0 (the bootstrap) and each judged generation: network, judged costs,
    cube error, labels, epochs, core-hours, promoted."""
    next: str = ""
    """The stage to run next ("" when the run is over)."""
    stopped: str = ""
    """Why the run ended ("" while it is not over)."""
    champion: str = ""
    """The network of the last promoted generation (the first champion until one is)."""

    @classmethod
    def open(cls, cfg: PipelineConfig, force: bool = False) -> State:
        """The run folder's state, or a fresh one; a `RecipeChanged` naming the first
        changed key when the folder was started with another recipe (unless `force`)."""
        path = cfg.folder / STATE
        recipe = to_dict(cfg)
        if not path.exists():
            return cls(path, recipe)
        try:
            saved = json.loads(path.read_text())
            stages, generations = saved["stages"], saved["generations"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a pipeline state ({type(exc).__name__})") from None
        if not force:  # a key the saved recipe lacks (a newer one) had its default
            old = {**flatten(to_dict(PipelineConfig())), **flatten(saved.get("recipe", {}))}
            new = flatten(recipe)
            for key in sorted(old.keys() | new.keys()):
                if old.get(key) != new.get(key):
                    raise RecipeChanged(
                        f"recipe key {key} changed since {cfg.folder} was started "
                        f"({old.get(key)!r} -> {new.get(key)!r}); pass --force to go on "
                        "with the new recipe, or give the run another run_dir"
                    )
        return cls(path, recipe, stages, generations)

    def forget_missing(self) -> list[str]:
        """Forget the first finished stage whose output (a network file, or a label
        folder with all its shards) is not on disk, and every stage after it, so that
        they run again: a run folder moved to another machine without its checkpoints
        or with only some of its labels resumes from what it has (a label stage makes
        only its missing shards) instead of failing or fitting on part of the labels in
        a later stage. The names forgotten."""
        names = list(self.stages)
        for i, name in enumerate(names):
            record = self.stages[name]
            if record.get("status") == "done" and not _outputs_on_disk(record):
                for later in names[i:]:
                    del self.stages[later]
                return names[i:]
        return []

    def save(self) -> None:
        """Write the state atomically, then STATUS.md."""
        document = {
            "recipe": self.recipe,
            "stages": self.stages,
            "generations": self.generations,
            "next": self.next,
            "stopped": self.stopped,
            "champion": self.champion,
            "core_hours": sum(s.get("core_hours", 0.0) for s in self.stages.values()),
        }
        write_atomic(self.path, json.dumps(document, indent=1) + "\n")
        write_atomic(self.path.parent / STATUS, status_text(document))


def _outputs_on_disk(record: dict[str, Any]) -> bool:
    """Whether a finished stage's network and label folder are there, the folder
    with every shard the stage made (those a fit reads: `shard_files`)."""
    if not all(Path(record[key]).exists() for key in OUTPUTS if key in record):
        return False
    if "folder" in record and "shards" in record:
        try:
            return len(shard_files([record["folder"]], below=record["shards"])) == record["shards"]
        except ValueError:  # no shard at all
            return False
    return True


def _blank(value: Any) -> str:
    return "" if value is None else str(value)


def status_text(document: dict[str, Any]) -> str:
    """The run's state for people: the stages, the generations, what is next."""
    lines = ["# Pipeline status", ""]
    lines.append(f"Next: {document['next'] or '(nothing: the run is over)'}")
    lines.append(f"Champion: {document['champion'] or '(none yet)'}")
    if document["stopped"]:
        lines.append(f"Stopped: {document['stopped']}")
    lines += [f"Core-hours so far: {document['core_hours']:.4f}", "", "## Stages", ""]
    lines += ["| stage | status | core-hours | seconds |", "|-|-|-|-|"]
    for name, stage in document["stages"].items():
        lines.append(
            f"| {name} | {stage['status']} | {stage.get('core_hours', 0.0):.4f} | "
            f"{stage.get('seconds', 0.0):.1f} |"
        )
    lines += ["", "## Generations", ""]
    duels = any(g.get("duel") for g in document["generations"])
    head = "| generation | judged cost | cube error (mp) |" + (" duel vs teacher (ppg) |" * duels)
    lines += [
        head + " labels | epochs | core-hours | promoted |",
        "|-|-|-|-|-|-|-" + "|-" * duels + "|",
    ]
    for g in document["generations"]:
        judged = ", ".join(f"{p}-ply {c:.5f}" for p, c in g["judged"].items())
        cube = ", ".join(f"{p}-ply {e:.2f}" for p, e in (g.get("cube_errors") or {}).items())
        if not cube and g.get("cube_error") is not None:  # a run judged before cube_errors
            cube = f"{g['cube_error']:.2f}"
        duel = f" {duel_text(g.get('duel'))} |" if duels else ""
        lines.append(
            f"| {g['generation']} | {judged} | {cube} |{duel} {_blank(g['labels'])} | "
            f"{_blank(g['epochs'])} | {g.get('core_hours', 0.0):.4f} | {g.get('promoted', '')} |"
        )
    return "\n".join(lines) + "\n"


def duel_text(duel: dict[str, Any] | None) -> str:
    """A duel's figures in words: points per game [95% interval] over the games ("" for
    none)."""
    if not duel:
        return ""
    lo, hi = duel["ci95"]
    return f"{duel['ppg']:+.3f} [{lo:+.3f}, {hi:+.3f}] over {duel['games']:,} games"


# ---- running a stage ------------------------------------------------------------------


@dataclass(frozen=True)
class Resources:
    """Where the stages run: label and duel processes or Ray, the torch device of the
    bootstrap and the fits."""

    jobs: int = 1
    backend: str = "local"
    address: str | None = None
    device: str = ""
    no_progress: bool = True


def _children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _die_with_parent() -> None:
    """In a stage's process before it runs: be killed when the pipeline dies (Linux's
    parent-death signal; elsewhere nothing), so a SIGKILL leaves no stage running."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def write_toml(path: Path, config: Any) -> Path:
    """Write a config dataclass as a TOML file (atomically) that `load_config` reads back
    as the same config."""
    lines: list[str] = []

    def table(values: dict[str, Any], prefix: str) -> None:
        if prefix:
            lines.append(f"\n[{prefix}]")
        nested = {k: v for k, v in values.items() if isinstance(v, dict)}
        for key, value in values.items():
            if key not in nested:
                lines.append(f"{key} = {_toml_value(value)}")
        for key, value in nested.items():
            table(value, f"{prefix}.{key}" if prefix else key)

    table(to_dict(config), "")
    return write_atomic(path, "\n".join(lines) + "\n")


@contextlib.contextmanager
def _forwarding(child: Callable[[], subprocess.Popen | None]) -> Iterator[list[int]]:
    """While a stage runs, SIGINT and SIGTERM to the pipeline are passed on to it, each
    once (the stage runs in a session of its own, so a terminal's Ctrl-C reaches the
    pipeline alone, as a `kill -INT` of the pipeline's process does: a second one stops
    a training run at once, as it would by itself); the signals received are listed."""
    received: list[int] = []

    def forward(signum: int, _frame: Any) -> None:
        received.append(signum)
        process = child()
        if process is not None and process.poll() is None:
            process.send_signal(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield received
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


class Stopped(Exception):
    """A stage ended by a signal or with an error: the pipeline stops (its exit status)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


#: The td spec options of the cube judged at each depth: every decision searched, every
#: reply valued (the search itself, not the agent's windowed and pruned economy).
FULL_SEARCH = "cube_window=off&cube_prune=off"

#: The stage processes' entry point, on this floor (`vrhcaby.training.stage`).
STAGE = "vrhcaby.training.stage"


def run_stage(state: State, name: str, argv: list[str], log: Path) -> None:
    """Run one stage's process (`python -m vrhcaby.training.stage ARGV`, what
    `vrhcaby label` or `vrhcaby train` would do with the same options), its output
    appended to `log`; its CPU time (its processes' and their workers') and seconds added
    to the stage's record, saved whether it ends or not; a `Stopped` if it does not end
    well."""
    record = state.stages.setdefault(name, {"status": "running", "core_hours": 0.0, "seconds": 0.0})
    process: subprocess.Popen | None = None
    log.parent.mkdir(parents=True, exist_ok=True)
    # the signals are passed on from before the record says "running": one that comes as
    # it is saved is the stage's (it gets it as it starts), not the pipeline's own
    with open(log, "a") as out, _forwarding(lambda: process) as received:
        record["status"] = "running"
        record["attempts"] = record.get("attempts", 0) + 1
        state.next = name
        state.save()
        cpu, wall = _children_seconds(), time.perf_counter()
        out.write(f"$ python -m {STAGE} {' '.join(argv)}\n")
        out.flush()
        process = subprocess.Popen(
            [sys.executable, "-m", STAGE, *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        if received:  # a signal came while the stage was starting: it gets it now
            process.send_signal(received[-1])
        status = process.wait()
    record["core_hours"] += (_children_seconds() - cpu) / 3600
    record["seconds"] += time.perf_counter() - wall
    state.save()
    if received or status:
        code = 128 + received[0] if received else status
        last = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
        raise Stopped(code, f"stage {name} ended with status {status} ({last[0]:.200}); see {log}")
    print(f"{name}: done in {record['seconds']:.1f} s", flush=True)


def finish_stage(state: State, name: str, **outputs: Any) -> dict[str, Any]:
    """Mark a stage done with its outputs, and save."""
    record = state.stages.setdefault(name, {"core_hours": 0.0, "seconds": 0.0})
    record.update(outputs, status="done")
    state.save()
    return record


def _done(state: State, name: str) -> bool:
    return state.stages.get(name, {}).get("status") == "done"


def _resume_flag(cfg: TrainConfig) -> list[str]:
    ckdir = checkpoint.CheckpointDir(cfg.checkpoint_dir, cfg.name, cfg.keep)
    return ["--resume"] if ckdir.latest() is not None else []


# ---- the stages -----------------------------------------------------------------------


def bootstrap(cfg: PipelineConfig, state: State, res: Resources) -> tuple[str, TrainConfig]:
    """The first champion: `init_from`'s network, or a TD run's best (else last)
    checkpoint; and the fits' config, whose network is the champion's (a set's own
    networks are fitted, and `net` is then only the shape of the classes it grows)."""
    fit = cfg.generations.fit
    if cfg.init_from:
        path = find_checkpoint(cfg.init_from)
        _, meta = checkpoint.load(path, "backgammon", sets=True)
        if "net" in meta:  # a single network, not a set
            fit = replace(fit, net=NetConfig.from_dict(meta["net"]))
        return str(path), fit
    folder = cfg.folder
    td = replace(
        cfg.bootstrap,
        name=f"{cfg.name}-bootstrap",
        seed=cfg.seed,
        variant=cfg.variant,
        checkpoint_dir=str(folder / "checkpoints"),
        runs_dir=str(folder / "tb"),
    )
    fit = replace(fit, net=td.net)
    name = "bootstrap"
    if not _done(state, name):
        config = write_toml(folder / "stages" / f"{name}.toml", td)
        argv = ["train", "--config", str(config), "--no-progress", *_resume_flag(td)]
        if res.device:
            argv += ["--device", res.device]
        run_stage(state, name, argv, folder / "logs" / f"{name}.log")
        ckdir = checkpoint.CheckpointDir(td.checkpoint_dir, td.name, td.keep)
        best = ckdir.best_path if ckdir.best_path.exists() else ckdir.latest()
        finish_stage(state, name, network=str(best), games=td.games)
    return str(state.stages[name]["network"]), fit


def assemble(cfg: PipelineConfig, state: State, first: str) -> str:
    """The first champion with the recipe's race network, as a network set (in this
    process: `vrhcaby.learn.sets.assemble`); `first` itself when the recipe names none."""
    name = "assemble"
    if not cfg.race:
        return first
    if not _done(state, name):
        from vrhcaby.learn.sets import assemble as assemble_set
        from vrhcaby.nn import netset

        cpu, wall = time.process_time(), time.perf_counter()
        sources = {"contact": first, "crashed": "contact", "race": str(find_checkpoint(cfg.race))}
        networks = assemble_set(sources)
        out = cfg.folder / "checkpoints" / f"{cfg.name}-gen0-set.pt"
        networks.config.setdefault("name", out.stem)
        netset.save(networks, out)
        hours = (time.process_time() - cpu) / 3600
        finish_stage(
            state, name, network=str(out), core_hours=hours, seconds=time.perf_counter() - wall
        )
    return str(state.stages[name]["network"])


def label(
    cfg: PipelineConfig, state: State, res: Resources, generation: int, teacher: str
) -> dict[str, Any]:
    """Generation `generation`'s labels: the champion's search on its own self-play."""
    name = f"gen{generation}/label"
    config = replace(
        cfg.generations.label,
        name=f"gen{generation}",
        teacher=teacher,
        student=teacher,
        seed=cfg.generations.label.seed + cfg.seed + generation,
        variant=cfg.variant,
        out_dir=str(cfg.folder / "labels"),
    )
    if not _done(state, name):
        path = write_toml(cfg.folder / "stages" / f"gen{generation}-label.toml", config)
        argv = ["label", "--config", str(path), "--no-progress", "--backend", res.backend]
        summary = cfg.folder / "logs" / f"gen{generation}-label.json"
        argv += ["--json", str(summary)]
        argv += ["--address", res.address] if res.address else []
        argv += ["--jobs", str(res.jobs)] if res.backend == "local" else []
        run_stage(state, name, argv, cfg.folder / "logs" / f"gen{generation}-label.log")
        made = json.loads(summary.read_text())
        finish_stage(
            state,
            name,
            folder=str(config.folder),
            teacher=teacher,
            labels=made["labels_held"],
            shards=made["shards_held"],
        )
    return state.stages[name]


def fit(
    cfg: PipelineConfig,
    state: State,
    res: Resources,
    generation: int,
    teacher: str,
    base: TrainConfig,
) -> dict[str, Any]:
    """Generation `generation`'s fit on `res.device`: the champion's network fitted to
    every label folder of the champion's search (this generation's and those of
    generations it taught and that were refused), or with `generations.carry_labels` to
    every label folder of the run so far."""
    name = f"gen{generation}/fit"
    carry = cfg.generations.carry_labels
    folders = [
        s["folder"]
        for key, s in state.stages.items()
        if key.endswith("/label")
        and s["status"] == "done"
        and (carry or s.get("teacher") == teacher)
    ]
    run = replace(
        base,
        name=f"{cfg.name}-gen{generation}",
        seed=cfg.seed,
        variant=cfg.variant,
        init_from=teacher,
        checkpoint_dir=str(cfg.folder / "checkpoints"),
        runs_dir=str(cfg.folder / "tb"),
        distill=replace(
            base.distill, labels=tuple(folders), mix_teachers=carry or base.distill.mix_teachers
        ),
    )
    if not _done(state, name):
        path = write_toml(cfg.folder / "stages" / f"gen{generation}-fit.toml", run)
        argv = ["train", "--config", str(path), "--no-progress", *_resume_flag(run)]
        argv += ["--device", res.device] if res.device else []
        run_stage(state, name, argv, cfg.folder / "logs" / f"gen{generation}-fit.log")
        ckdir = checkpoint.CheckpointDir(run.checkpoint_dir, run.name, run.keep)
        best = ckdir.best_path if ckdir.best_path.exists() else ckdir.latest()
        finish_stage(
            state, name, network=str(best), epochs=run.distill.epochs, label_folders=folders
        )
    return state.stages[name]


def judged_set(cfg: GenerationsConfig) -> Judged:
    """The judged set of checker plays, cut to its first `judge_decisions`."""
    judged = Judged.load(_data_file(cfg.judge))
    return judged.first(cfg.judge_decisions) if cfg.judge_decisions else judged


def _data_file(name: str) -> Path:
    path = Path(name)
    if path.exists() or path.is_absolute():
        return path
    return Path(__file__).resolve().parents[2] / path


@dataclass(frozen=True)
class Duel:
    """What a generation's duel is played against and how: its teacher's network, the
    recipe's variant and seed, the run's `Resources`, and where its games are kept."""

    teacher: str
    variant: str
    seed: int
    res: Resources = Resources()
    folder: str = ""
    """Where each chunk of games is kept as it ends (`keep_chunk`), so that a duel cut
    short resumes from the chunks finished (`kept_games`); "": nowhere."""


def judge(cfg: GenerationsConfig, network: str, duel: Duel | None = None) -> dict[str, Any]:
    """A network's judged cost (mean and standard error) at each of `judge_plies` when
    `judge` names a set, its cube error in millipoints per decision when `cube_judge`
    does, and with `duel` (and `duel_games`) its duel against the teacher (`duel_games`)."""
    costs: dict[str, float] = {}
    errors: dict[str, float] = {}
    out: dict[str, Any] = {"judged": costs, "judged_se": errors, "decisions": 0}
    if duel is not None and cfg.duel_games:
        out["duel"] = play_duel(network, duel, cfg.duel_games)
    if not cfg.judge:
        return out
    judged = judged_set(cfg)
    for plies in cfg.judge_plies:
        cost = judged.cost(judged.choose(load_agent(f"td:{network}?plies={plies}")))
        costs[str(plies)] = float(cost.mean())
        errors[str(plies)] = float(cost.std() / np.sqrt(len(cost)))
    out["decisions"] = len(judged.boards)
    if cfg.cube_judge:
        from vrhcaby.play.cube_judge import CubeSet

        cubes = CubeSet.load(_data_file(cfg.cube_judge))
        if cfg.cube_decisions:
            cubes = cubes.first(cfg.cube_decisions)
        cube_errors = {
            str(plies): float(
                1000
                * cubes.errors(
                    *cubes.answers(load_agent(f"td:{network}?cube_plies={plies}&{FULL_SEARCH}"))
                ).total.mean()
            )
            for plies in cfg.cube_plies
        }
        out["cube_errors"] = cube_errors
        out["cube_error"] = cube_errors[str(cfg.cube_plies[0])]
    return out


def play_duel(network: str, duel: Duel, games: int) -> dict[str, Any]:
    """`games` mirrored cubeless money games of `network` against `duel.teacher` in
    `duel.variant` on `duel.seed` (the tournaments' `play_pair`, over `--jobs` processes
    or Ray): the candidate's points per game and its 95% interval, wins, gammons and
    backgammons (candidate first). With `duel.folder`, each chunk of games is kept there
    as it ends and a duel cut short (Ctrl-C, SIGKILL) plays only the chunks it lacks when
    it is run again, to the same figures as a duel played straight through. A
    KeyboardInterrupt when Ctrl-C cut it short."""
    res = duel.res
    if res.backend == "ray":
        from vrhcaby.play.ray import connect

        connect(res.address)
    kept: list[GameResult] = []
    keep: Callable[[range, list[GameResult]], None] | None = None
    if duel.folder:
        folder = Path(duel.folder)
        head = {
            "candidate": file_digest(find_checkpoint(network)),
            "teacher": file_digest(find_checkpoint(duel.teacher)),
            "variant": duel.variant,
            "seed": duel.seed,
        }
        kept = kept_games(folder, head)
        keep = functools.partial(keep_chunk, folder)
    # Cubeless: the agents are still asked whether to resign, at 0 plies here as before the
    # spec's cube looked ahead (quicker, and a duel resumed plays its chunks alike).
    result = play_pair(
        load_agent(f"td:{network}?cube_plies=0"),
        load_agent(f"td:{duel.teacher}?cube_plies=0"),
        games=games,
        seed=duel.seed,
        settings=PairSettings(variant=duel.variant, cube=False, mirrored=True),
        jobs=res.jobs,
        backend=res.backend,
        done=kept,
        on_chunk=keep,
    )
    if result.interrupted:
        raise KeyboardInterrupt
    return {
        "opponent": duel.teacher,
        "games": result.games,
        "ppg": result.ppg,
        "ci95": list(result.ci95),
        "wins": list(result.wins),
        "gammons": list(result.gammons),
        "backgammons": list(result.backgammons),
    }


#: What a duel's folder holds: DUEL_HEAD (what the duel is: its networks' digests, its
#: variant and seed) and a file per chunk of games finished, chunk-<first sample>.json.
DUEL_HEAD = "duel.json"
_CHUNK = re.compile(r"chunk-\d+\.json")


def keep_chunk(folder: Path, chunk: range, games: list[GameResult]) -> None:
    """Keep a chunk of a duel's games (all of them finished) in `folder`, atomically."""
    rows = [{k: int(v) for k, v in asdict(g).items() if k != "record"} for g in games]
    document = {"samples": [chunk.start, chunk.stop], "games": rows}
    write_atomic(folder / f"chunk-{chunk.start:08d}.json", json.dumps(document) + "\n")


def kept_games(folder: Path, head: dict[str, Any]) -> list[GameResult]:
    """The games of the chunks that the duel `head` describes kept in `folder`; a chunk
    file that cannot be read is left out (its chunk is played again). A folder of another
    duel (another head: other networks, variant or seed) has its chunks removed, and the
    folder is given `head`."""
    try:
        same = json.loads((folder / DUEL_HEAD).read_text()) == head
    except (OSError, ValueError):
        same = False
    paths = sorted(p for p in folder.glob("chunk-*.json") if _CHUNK.fullmatch(p.name))
    if not same:
        for path in paths:
            path.unlink()
        write_atomic(folder / DUEL_HEAD, json.dumps(head) + "\n")
        return []
    games: list[GameResult] = []
    for path in paths:
        try:
            games += [GameResult(**row) for row in json.loads(path.read_text())["games"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return games


def judge_stage(
    state: State, name: str, cfg: GenerationsConfig, network: str, duel: Duel | None = None
) -> dict[str, Any]:
    """A judge stage in this process: its CPU time (its duel's worker processes'
    included) and seconds recorded."""
    if _done(state, name):
        return state.stages[name]
    cpu, wall = time.process_time() + _children_seconds(), time.perf_counter()
    state.next = name
    result = judge(cfg, network, duel)
    hours = (time.process_time() + _children_seconds() - cpu) / 3600
    return finish_stage(
        state, name, core_hours=hours, seconds=time.perf_counter() - wall, network=network, **result
    )


def promoted(cost: float, teacher_cost: float, margin: float) -> bool:
    """The promotion rule on the judged set: a generation replaces its teacher if and only
    if its judged cost is below the teacher's by at least `margin`."""
    return cost < teacher_cost - margin


def duel_promoted(ci95: tuple[float, float] | list[float], margin: float) -> bool:
    """The promotion rule of a duel: a generation replaces its teacher if and only if the
    lower end of the 95% interval of its points per game against the teacher is above
    `margin` (it beat the teacher by more than `margin`, beyond the dice's noise)."""
    return ci95[0] > margin


def check_inputs(cfg: PipelineConfig) -> None:
    """The files the recipe names exist (`init_from`, the judged sets): a ValueError naming
    the key, before the run folder is made."""
    for key in ("init_from", "race"):
        if getattr(cfg, key):
            try:
                find_checkpoint(getattr(cfg, key))
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
    for key, name in (("judge", cfg.generations.judge), ("cube_judge", cfg.generations.cube_judge)):
        if name and not _data_file(name).is_file():
            raise ValueError(f"generations.{key}: no file {name}")
    if cfg.init_from:
        _, meta = checkpoint.load(find_checkpoint(cfg.init_from), "backgammon", sets=True)
        plays = checkpoint.variant_of(meta)
        if (plays == ACEY_DEUCEY) != (cfg.variant == ACEY_DEUCEY):
            raise ValueError(
                f"init_from: {cfg.init_from} plays {plays}, the recipe plays {cfg.variant}"
            )


def run_pipeline(cfg: PipelineConfig, res: Resources = Resources(), force: bool = False) -> int:
    """Run (or resume) the recipe's stages; 0 when the run is over, else the status of the
    stage that stopped it (130 after Ctrl-C, 143 after SIGTERM)."""
    check_inputs(cfg)
    state = State.open(cfg, force)
    forgotten = state.forget_missing()
    if forgotten:
        print(
            f"{cfg.folder}: the output of {forgotten[0]} is not on disk: running it and "
            f"the {len(forgotten) - 1} stage(s) after it again",
            file=sys.stderr,
        )
    state.recipe = to_dict(cfg)
    cfg.folder.mkdir(parents=True, exist_ok=True)
    state.save()
    try:
        status = _generations(cfg, state, res)
    except Stopped as stop:
        print(f"stopped: {stop}; run the same command again to continue", file=sys.stderr)
        return stop.status
    except KeyboardInterrupt:  # in a judge stage, which runs here
        print("interrupted: run the same command again to continue", file=sys.stderr)
        return 128 + signal.SIGINT
    write_atomic(cfg.folder / PICTURE, picture(state.generations, cfg.name))
    print(f"{cfg.name}: {state.stopped}; see {cfg.folder / STATUS}")
    return status


def _generations(cfg: PipelineConfig, state: State, res: Resources) -> int:
    gens = cfg.generations
    first, base = bootstrap(cfg, state, res)
    champion = state.champion = assemble(cfg, state, first)
    zero = judge_stage(state, "gen0/judge", gens, champion)
    made = [state.stages.get(name, {}) for name in ("bootstrap", "assemble")]
    state.generations = [_generation(0, zero, [*made, zero], True)]
    first_plies = str(gens.judge_plies[0])
    teacher_cost = zero["judged"].get(first_plies, math.nan)
    stale = 0
    for k in range(1, gens.count + 1):
        labelled = label(cfg, state, res, k, champion)
        fitted = fit(cfg, state, res, k, champion, base)
        duel = Duel(champion, cfg.variant, cfg.seed, res, str(cfg.folder / "duels" / f"gen{k}"))
        judged = judge_stage(state, f"gen{k}/judge", gens, fitted["network"], duel)
        cost = judged["judged"].get(first_plies, math.nan)
        if gens.by_duel:
            keep = duel_promoted(judged["duel"]["ci95"], gens.margin)
        else:
            keep = promoted(cost, teacher_cost, gens.margin)
        generation = _generation(k, judged, [labelled, fitted, judged], keep, champion)
        generation.update(labels=labelled["labels"], epochs=fitted["epochs"])
        state.generations.append(generation)
        _log_generation(cfg, generation)
        if keep:
            champion, teacher_cost, stale = fitted["network"], cost, 0
            state.champion = champion
        else:
            stale += 1
        if stale >= gens.patience:
            state.stopped = f"{stale} generation(s) without gain (patience {gens.patience})"
            break
    else:
        state.stopped = f"{gens.count} generations run"
    state.next = ""
    state.save()
    return 0


def _generation(
    k: int,
    judged: dict[str, Any],
    stages: list[dict[str, Any]],
    promoted: bool,
    teacher: str | None = None,
) -> dict[str, Any]:
    """A generation's line of the report; its core-hours are those of `stages`, what it
    took to make and judge it."""
    return {
        "generation": k,
        "network": judged["network"],
        "teacher": teacher,
        "judged": judged["judged"],
        "judged_se": judged["judged_se"],
        "cube_error": judged.get("cube_error"),
        "cube_errors": judged.get("cube_errors"),
        "duel": judged.get("duel"),
        "labels": None,
        "epochs": None,
        "core_hours": sum(s.get("core_hours", 0.0) for s in stages),
        "promoted": promoted,
    }


def _log_generation(cfg: PipelineConfig, generation: dict[str, Any]) -> None:
    """A generation's TensorBoard scalars (RUN_DIR/tb/pipeline)."""
    from torch.utils.tensorboard import SummaryWriter

    k = generation["generation"]
    with SummaryWriter(str(cfg.folder / "tb" / "pipeline")) as writer:
        for plies, cost in generation["judged"].items():
            writer.add_scalar(f"eval/judged_cost_{plies}ply", cost, k)
        if generation["cube_error"] is not None:
            writer.add_scalar("eval/cube_error_millipoints", generation["cube_error"], k)
        for plies, error in (generation["cube_errors"] or {}).items():
            writer.add_scalar(f"eval/cube_error_{plies}ply_millipoints", error, k)
        if generation["duel"]:
            writer.add_scalar("eval/duel_ppg_vs_teacher", generation["duel"]["ppg"], k)
        writer.add_scalar("charts/labels", generation["labels"] or 0, k)
        writer.add_scalar("charts/core_hours", generation["core_hours"], k)
        writer.add_scalar("charts/promoted", float(generation["promoted"]), k)


def picture(generations: list[dict[str, Any]], name: str) -> str:
    """The judged cost per generation (at the first depth judged), as an SVG picture; for
    a recipe that judges by duels, each generation's points per game against its teacher
    with the 95% interval."""
    if any(g.get("duel") for g in generations):
        dueled = [g for g in generations if g.get("duel")]
        return points_svg(
            [f"gen{g['generation']}" + ("" if g["promoted"] else " (refused)") for g in dueled],
            [g["duel"]["ppg"] for g in dueled],
            [(g["duel"]["ci95"][1] - g["duel"]["ci95"][0]) / 2 for g in dueled],
            {"level": 0.0},
            f"{name}: points per game against the teacher, 95% intervals",
            "points per game",
        )
    first = next(iter(generations[0]["judged"])) if generations else "0"
    return points_svg(
        [f"gen{g['generation']}" + ("" if g["promoted"] else " (refused)") for g in generations],
        [g["judged"][first] for g in generations],
        [g["judged_se"][first] for g in generations],
        {},
        f"{name}: equity lost per decision at {first} ply, judged by GNU Backgammon",
        "equity per decision",
    )


def status(cfg: PipelineConfig) -> str:
    """The run's STATUS.md (a line saying it has not started, when it has not)."""
    path = cfg.folder / STATUS
    return path.read_text() if path.exists() else f"{cfg.folder}: not started\n"
