"""A training run as a library call: `TrainConfig` (the run's schema), the TD(λ) loop and
the distillation loop, their checkpoints (`RunRecord`) and their stop (`StopSignal`).

`configure(CONFIG, overrides, ...)` reads and checks a run's config and sets torch's threads,
and `run_training(cfg, device, ...)` runs it: what `vrhcaby train` (and `python train.py`)
does, and the pipeline's TD and fit stages too (`vrhcaby.training.stage train`). Read
top to bottom: the run configuration, the trainer (fresh or resumed from the newest
checkpoint), then the loop: a self-play round and its TD(λ) updates, logging, periodic
evaluation (backgammon: against fixed opponents; six-dice: the mean final total against
the exact optimum), checkpoints. Ctrl-C saves a checkpoint of the last completed round, so
a resumed run continues exactly (same dice, same weights). The algorithm itself lives in
`vrhcaby.learn` (`trainer.Trainer`), the game learnt in a `vrhcaby.learn.game.Game`
(`game` in the config); the ray backend moves backgammon self-play onto Ray workers and
keeps the learner here (`vrhcaby.learn.ray`).

A config with `distill.labels` is a distillation run instead (`vrhcaby.learn.distill`):
the network of `init_from` fitted, epoch by epoch, to the label shards of those folders
(`vrhcaby label` runs), with the same checkpoints, logs, evaluation and stops, all counted
in epochs (a checkpoint NAME-g<N>.pt holds the network after N epochs).

This module sits on its own floor (`vrhcaby.training`), above `vrhcaby.sixdice`, whose
game a config may name, and below `vrhcaby.cli`. Like the command it serves, it prints
its progress lines.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from agents import load_agent
from agents.td import CHECKPOINTS, find_checkpoint
from vrhcaby.base.config import format_table, load_config, to_dict
from vrhcaby.base.files import check_output_dir
from vrhcaby.base.process import cpu_count
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import EvalConfig, TDConfig
from vrhcaby.learn.distill import (
    DistillConfig,
    EpochScores,
    HeldOut,
    fit_epoch,
    held_out,
    label_source,
    learning_rate,
    shard_files,
    slow_layers,
    weighted_mean,
)
from vrhcaby.learn.game import Evaluation, Game
from vrhcaby.learn.ray import DistributedConfig, RayTrainer
from vrhcaby.learn.sets import NetSetConfig, SetTDTrainer, resolve
from vrhcaby.learn.starts import StartsConfig, load_starts
from vrhcaby.learn.students import SetTrainer, Student, is_set_checkpoint, single_student
from vrhcaby.learn.trainer import RoundStats, Trainer
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import NetConfig
from vrhcaby.play.ray import check_backend
from vrhcaby.sixdice.learner import SheetNetConfig, SixDice

GAMES = ("backgammon", "sixdice")


@dataclass(frozen=True)
class TrainConfig:
    """One training run."""

    name: str = "quick"
    """Run name: checkpoints are NAME-g<games>.pt and NAME-best.pt."""
    game: str = "backgammon"
    """The game learnt: backgammon, or sixdice (the six-dice scoring game, solitaire: its
    network is `sixdice`'s; `net`, `eval.opponents` and `ray` are backgammon's)."""
    seed: int = 1
    """Seed of the initial weights and of the self-play dice."""
    variant: str = "standard"
    """Game variant learnt: standard, nackgammon, nackgammon-seed, acey-deucey (its
    network gets the waiting-checker and extra-turn inputs by itself; its evaluation
    opponents must play it: random, heuristic, or another acey-deucey td network)."""
    games: int = 20_000
    """Self-play games to train for."""
    device: str = "cpu"
    """torch device for the updates (cpu, cuda, cuda:1); --device overrides it."""
    threads: int = 0
    """torch CPU threads (0 = torch's default, or with --backend ray on this machine alone
    the CPUs its self-play workers leave, or 1 for a distillation run)."""
    checkpoint_every: int = 5_000
    """Write a checkpoint every this many games (and at the end)."""
    keep: int = 3
    """Numbered checkpoints kept (the best is kept besides)."""
    checkpoint_dir: str = "checkpoints"
    """Where checkpoints go."""
    runs_dir: str = "runs"
    """Where TensorBoard logs go (runs/NAME__SEED__TIME)."""
    init_from: str = ""
    """Start a new run from this checkpoint's network (not its optimizer, dice or games):
    same hidden layers, and the same encoding or one that extends it, whose new inputs
    start at zero weight. Ignored by --resume."""
    net: NetConfig = field(default_factory=NetConfig)
    sixdice: SheetNetConfig = field(default_factory=SheetNetConfig)
    """The six-dice network (game = "sixdice")."""
    td: TDConfig = field(default_factory=TDConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ray: DistributedConfig = field(default_factory=DistributedConfig)
    """Used by --backend ray only."""
    distill: DistillConfig = field(default_factory=DistillConfig)
    """A distillation run when `distill.labels` names label folders: `init_from`'s network
    fitted to them for `distill.epochs` epochs (`games` and `td` are then unused, and
    `checkpoint_every` and `eval.every` count epochs)."""
    netset: NetSetConfig = field(default_factory=NetSetConfig)
    """A set run when `netset.train` names classes: a network set trained by TD(λ)
    self-play, its networks taken from `netset` and `init_from` (`vrhcaby.learn.sets`);
    `net` is then the network of a trained class that starts fresh."""
    starts: StartsConfig = field(default_factory=StartsConfig)
    """Where a backgammon TD run's self-play games start: the opening, or positions of one
    class that `starts.network`'s self-play reached (`vrhcaby.learn.starts`)."""

    def __post_init__(self) -> None:
        if self.game not in GAMES:
            raise ValueError(f"unknown game {self.game!r} (known: {', '.join(GAMES)})")
        if self.game == "sixdice" and self.variant != "standard":
            raise ValueError("the six-dice trainer learns the standard rules (variant standard)")
        if self.eval.judge_games and (self.game != "backgammon" or self.variant != "standard"):
            raise ValueError("eval.judge_games judges standard backgammon only")
        for key in ("games", "checkpoint_every", "keep"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be at least 1, got {getattr(self, key)}")
        if not re.fullmatch(r"\w[\w.+-]*", self.name):
            raise ValueError(
                f"name must be a file-name part (letters, digits, and . _ + - after the "
                f"first), got {self.name!r:.60}"
            )
        if self.seed < 0 or self.threads < 0:
            raise ValueError(f"seed and threads must be 0 or more, got {self.seed}, {self.threads}")
        if self.game == "backgammon" and self.eval.every and not self.eval.opponents:
            raise ValueError("eval.opponents must name at least one agent when eval.every > 0")
        if self.distill.labels:
            if self.game != "backgammon":
                raise ValueError("a distillation run fits a backgammon network (game backgammon)")
            if not self.init_from:
                raise ValueError(
                    "a distillation run (distill.labels) starts from a network: set init_from "
                    "to the teacher's checkpoint"
                )

        odd = self.game != "backgammon" or self.variant == "acey-deucey" or self.distilling
        if (self.netset.train or self.starts.network) and odd:
            raise ValueError(
                "netset.train and starts.network are for backgammon TD runs (not "
                "acey-deucey, not distillation)"
            )

    @property
    def distilling(self) -> bool:
        """Whether this is a distillation run (`distill.labels` names label folders)."""
        return bool(self.distill.labels)

    @property
    def best_by(self) -> str:
        """What picks the best checkpoint: `eval.best_by`, or for a distillation run
        without evaluations the held-out loss ("held_out_loss", lower is better)."""
        return "held_out_loss" if self.distilling and not self.eval.every else self.eval.best_by


def check_opponents(cfg: TrainConfig) -> None:
    """The evaluation opponents load (a bad spec or network fails now, not after the
    first interval of training)."""
    if cfg.game == "backgammon" and cfg.eval.every:
        for spec in cfg.eval.opponents:
            try:
                agent = load_agent(spec)
            except ValueError as exc:
                raise ValueError(f"eval.opponents: {exc}") from None
            if not agent.supports(cfg.variant):  # pubeval and gnubg play no acey-deucey
                raise ValueError(f"eval.opponents: {spec!r} cannot play variant {cfg.variant!r}")


def restore(what: str, path: Path, apply: Callable[[], None]) -> None:
    """Run `apply` (a trainer's `load_state` or `warm_start` from checkpoint `path`),
    turning what a checkpoint that passed `checkpoint.load` could still hold wrong into
    one line naming the file."""
    try:
        apply()
    except checkpoint.CheckpointError:
        raise
    except ValueError as exc:
        raise ValueError(f"{what} {path}: {exc}") from None
    except (KeyError, TypeError, IndexError, RuntimeError) as exc:
        raise checkpoint.CheckpointError(
            f"{path}: cannot be restored ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


def resolve_device(name: str) -> torch.device:
    """The torch device called `name`, or a ValueError if it is unknown or absent."""
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f"unknown device {name!r} (use cpu or cuda[:N])") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available here")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise ValueError(f"device {name!r} does not exist ({torch.cuda.device_count()} GPUs)")
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"unsupported device {name!r} (use cpu or cuda[:N])")
    return device


def code_version() -> str:
    """Package version plus the git commit, when they can be found."""
    try:
        version = importlib.metadata.version("vrhcaby")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version}+g{commit}" if commit else version


def make_game(cfg: TrainConfig) -> Game:
    """The game the config learns."""
    if cfg.game == "sixdice":
        return SixDice(cfg.sixdice)
    return Backgammon(cfg.net, cfg.variant, cfg.td.backup)


def make_trainer(cfg: TrainConfig, game: Game, device: torch.device) -> Trainer:
    """A TD run's trainer: a network set's (`netset.train`) or `game`'s, its self-play
    games started from `starts` when it names a network."""
    starts = load_starts(cfg.starts.network, cfg.starts) if cfg.starts.network else None
    if cfg.netset.train:
        members, fallback = resolve(cfg.netset, cfg.init_from, cfg.net)
        return SetTDTrainer(
            members,
            fallback,
            cfg.netset.train,
            cfg.td,
            cfg.games,
            cfg.seed,
            device,
            cfg.variant,
            starts,
        )
    if starts is not None:
        game = Backgammon(cfg.net, cfg.variant, cfg.td.backup, starts)
    return Trainer.for_game(game, cfg.td, cfg.games, cfg.seed, device)


def new_run_dir(cfg: TrainConfig) -> Path:
    """Where a new run's TensorBoard logs go."""
    return Path(cfg.runs_dir) / f"{cfg.name}__{cfg.seed}__{int(time.time())}"


def report(game: Game, latest_eval: dict[str, Any], cfg: TrainConfig) -> Evaluation:
    """What the latest evaluation (as kept in checkpoints: its games, then the record) means."""
    return game.report({k: v for k, v in latest_eval.items() if k != "games"}, cfg.eval)


def find_inputs(cfg: TrainConfig, config_file: str | None) -> TrainConfig:
    """`cfg` with its input files found as every verb finds them: `init_from` and the
    `netset` networks a checkpoint's path or a shipped network's name, from any folder
    (`agents.td.find_checkpoint`: `init_from = "td-best"`); each `distill.labels` folder
    from the working directory, else beside the config file, else in the checkout the
    code runs from (the distillation configs name `data/labels/...` there). What is found
    nowhere is kept as written, for the checks that follow to name."""

    def network(value: str) -> str:
        if not value or value in checkpoint.SET_CLASSES:
            return value
        try:
            return str(find_checkpoint(value))
        except checkpoint.CheckpointError:
            return value

    places = [Path(config_file).parent] if config_file else []
    places.append(CHECKPOINTS.parent)

    def folder(value: str) -> str:
        path = Path(value).expanduser()
        if path.is_absolute() or path.is_dir():
            return value
        return next((str(p / path) for p in places if (p / path).is_dir()), value)

    sets = cfg.netset
    return replace(
        cfg,
        init_from=network(cfg.init_from),
        netset=replace(
            sets,
            contact=network(sets.contact),
            crashed=network(sets.crashed),
            race=network(sets.race),
        ),
        distill=replace(cfg.distill, labels=tuple(folder(f) for f in cfg.distill.labels)),
    )


def learner_threads(cfg: TrainConfig, backend: str, address: str | None, cpus: int) -> int:
    """torch's CPU threads for the updates: `threads` when set; else one for a
    distillation run (its small batches run several times slower on two threads of a
    two-core machine than on one); else, when Ray starts its self-play workers on this
    machine (of `cpus` CPUs), the CPUs they leave (a learner with every core starves
    them); else torch's own default."""
    if cfg.threads:
        return cfg.threads
    if cfg.distilling:
        return 1
    if backend == "ray" and not address:
        return max(1, cpus - cfg.ray.workers)
    return torch.get_num_threads()


def configure(
    config_file: str | None,
    overrides: Sequence[str] = (),
    *,
    device: str | None = None,
    backend: str = "local",
    address: str | None = None,
    workers: int | None = None,
    cpus: int | None = None,
) -> tuple[TrainConfig, torch.device]:
    """A run's configuration (the file, then `overrides`, then `device` and `workers`, the
    command line's `--device` and `--workers`) and its torch device, checked with the
    backend and the output folders; torch's threads set for a machine of `cpus` CPUs
    (default: those of this process, `vrhcaby.base.process.cpu_count`); the config
    printed. What `vrhcaby train` and the pipeline's TD and fit stages
    (`vrhcaby.training.stage train`) do before `run_training`; a ValueError of one line
    when something is wrong."""
    overrides = list(overrides)
    if device:
        overrides.append(f"device={device}")
    if workers is not None:
        overrides.append(f"ray.workers={workers}")
    cfg = find_inputs(load_config(TrainConfig, config_file, overrides), config_file)
    torch_device = resolve_device(cfg.device)
    check_output_dir(cfg.checkpoint_dir, "checkpoint_dir")
    check_output_dir(cfg.runs_dir, "runs_dir")
    if backend == "ray" and cfg.game != "backgammon":
        raise ValueError(f"--backend ray trains backgammon only, not game {cfg.game!r}")
    if backend == "ray" and (cfg.netset.train or cfg.starts.network):
        raise ValueError("netset.train and starts.network train with --backend local only")
    if cfg.distilling and backend != "local":
        raise ValueError("a distillation run fits in this process (--backend local)")
    check_backend(backend)
    if backend == "local" and (address or workers is not None):
        raise ValueError("--address and --workers are for --backend ray")
    cpus = cpu_count() if cpus is None else cpus
    torch.set_num_threads(learner_threads(cfg, backend, address, cpus))
    print(f"resolved config:\n{format_table(cfg)}", flush=True)
    return cfg, torch_device


@dataclass
class RunRecord:
    """What a run carries from round to round and writes into every checkpoint: where its
    logs go, the best evaluation score so far and the latest evaluation."""

    cfg: TrainConfig
    ckdir: checkpoint.CheckpointDir
    run_dir: Path
    best: float | None = None
    latest_eval: dict[str, Any] = field(default_factory=dict)

    def save(self, state: tuple[dict, dict], is_best: bool = False) -> Path:
        """Write a trainer's `state` as the checkpoint of its games, with this record."""
        arrays, meta = state
        meta = {
            **meta,
            "config": to_dict(self.cfg),
            "run_dir": str(self.run_dir),
            "best": self.best,
            "best_by": self.cfg.best_by,
            "evaluation": self.latest_eval,
            "version": code_version(),
        }
        return self.ckdir.save(meta["games"], arrays, meta, best=is_best)


def resume(
    cfg: TrainConfig,
    ckdir: checkpoint.CheckpointDir,
    trainer: Trainer | SetTrainer,
    students: Sequence[Student] = (),
) -> RunRecord:
    """Restore `trainer` (and a distillation run's `students`' generators) from the run's
    newest sound checkpoint; the record it saved."""
    path, arrays, meta, skipped = ckdir.latest_sound(sets=trainer.is_set)
    for reason in skipped:
        print(f"skipped {reason}", file=sys.stderr)
    if ("distill" in meta) != cfg.distilling:
        kinds = ("a TD run's", "a distillation run's")
        raise checkpoint.CheckpointError(
            f"{path}: {kinds['distill' in meta]} checkpoint, but the config asks for "
            f"{kinds[cfg.distilling][:-2]}"
        )
    restore("resume from", path, lambda: trainer.load_state(arrays, meta))

    def restore_shuffles() -> None:
        for student in students:
            student.generator.set_state(torch.from_numpy(arrays[student.key]))

    restore("resume from", path, restore_shuffles)
    record = RunRecord(
        cfg=cfg,
        ckdir=ckdir,
        run_dir=Path(meta.get("run_dir") or new_run_dir(cfg)),
        best=meta.get("best"),
        latest_eval=meta.get("evaluation", {}),
    )
    newest = " (the newest sound checkpoint)" if skipped else ""
    progress = f"after epoch {trainer.games}" if cfg.distilling else f"at {trainer.games} games"
    print(f"resumed {path} {progress}{newest}", flush=True)
    saved_by = meta.get("best_by", "ppg")
    if record.best is not None and saved_by != cfg.best_by:
        record.best = None  # a score on the other scale: the next evaluation is the best so far
        print(
            f"eval.best_by is now {cfg.best_by!r}, not {saved_by!r}: "
            "the next evaluation starts a new best",
            flush=True,
        )
    return record


def start_fresh(
    cfg: TrainConfig, ckdir: checkpoint.CheckpointDir, trainer: Trainer | SetTrainer
) -> RunRecord:
    """A new run (none of its checkpoints may exist), warm started from `init_from`."""
    if ckdir.latest() is not None:
        raise ValueError(
            f"run {cfg.name!r} already has checkpoints in {ckdir.directory}; "
            "pass --resume to continue it or --set name=OTHER for a new run"
        )
    record = RunRecord(cfg=cfg, ckdir=ckdir, run_dir=new_run_dir(cfg))
    if not trainer.takes_init_from:  # a set's, its networks taken from netset, init_from
        print(f"network set: {trainer.describe_network(to_dict(cfg))}", flush=True)
    elif cfg.init_from:
        source = Path(cfg.init_from)
        warm = checkpoint.load(source, "backgammon", sets=trainer.is_set)
        # a distillation run grows a network by splitting its units (`grown_state`)
        split = torch.Generator().manual_seed(cfg.seed) if cfg.distilling else None
        restore("init_from", source, lambda: trainer.warm_start(*warm, split))
        print(f"started from the network of {cfg.init_from}", flush=True)
    return record


def log_round(
    writer: Any, trainer: Trainer | RayTrainer, stats: RoundStats, seconds: float
) -> dict[str, str]:
    """A round's TensorBoard scalars; its progress-bar fields."""
    g = trainer.games
    writer.add_scalar("losses/loss", stats.update.loss, g)
    writer.add_scalar("losses/td_error", stats.update.td_error, g)
    writer.add_scalar("losses/abs_td_error", stats.update.abs_td_error, g)
    writer.add_scalar("charts/games_per_s", stats.games / seconds, g)
    writer.add_scalar("charts/plies_per_s", stats.plies / seconds, g)
    writer.add_scalar("charts/positions_evaluated_per_s", stats.evaluated / seconds, g)
    writer.add_scalar("charts/learning_rate", stats.lr, g)
    writer.add_scalar("charts/lambda", stats.lam, g)
    charts = {
        "gammon_rate": stats.gammon_rate,
        "backgammon_rate": stats.backgammon_rate,
        **stats.charts,
    }
    for key, value in charts.items():
        if value is not None:
            writer.add_scalar(f"charts/{key}", value, g)
    for key, value in trainer.scalars().items():  # Ray's workers
        writer.add_scalar(key, value, g)
    return {
        "games/s": f"{stats.games / seconds:.0f}",
        "plies/s": f"{stats.plies / seconds:.0f}",
    }


def evaluate(record: RunRecord, trainer: Trainer | SetTrainer, writer: Any) -> bool:
    """Evaluate the network, log it and keep it as the record's latest; whether it is the
    best so far."""
    cfg, g = record.cfg, trainer.games
    record.latest_eval = {"games": g, **trainer.evaluate(cfg.eval, to_dict(cfg))}
    result = report(trainer.game, record.latest_eval, cfg)
    for key, value in result.scalars.items():
        writer.add_scalar(f"eval/{key}", value, g)
    is_best = record.best is None or result.score > record.best
    record.best = result.score if is_best else record.best
    return is_best


class StopSignal:
    """Ctrl-C or SIGTERM (a scheduler's stop): finish the round, save it and stop; a second
    one stops at once, saving the round's start. Raising inside the round could land in
    numba's or torch's machinery, which does not always let it through."""

    def __init__(self, step: str = "round") -> None:
        self.by: signal.Signals | None = None
        """The signal that asked to stop (None: none yet)."""
        self.step = step
        """What is finished before stopping (a round, an epoch)."""

    def __call__(self, signum: int, _frame: Any) -> None:
        if self.by is not None:
            raise KeyboardInterrupt
        self.by = signal.Signals(signum)
        print(f"{self.by.name}: stopping after this {self.step} (again: at once)", file=sys.stderr)

    @classmethod
    def install(cls, step: str = "round") -> tuple[StopSignal, dict[int, Any]]:
        """A stop signal handling SIGINT and SIGTERM (SIGINT too when a shell that started
        the run in the background told it to ignore it), and the handlers it replaced."""
        stop = cls(step)
        return stop, {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}

    def save(self, record: RunRecord, state: tuple[dict, dict], handlers: dict[int, Any]) -> int:
        """Save `state`, the last complete step, on the way out of a stopped run; its exit
        status (128 + the signal)."""
        stopped_by = self.by or signal.SIGINT
        for sig in handlers:  # from here on a signal cannot cut the last save short
            signal.signal(sig, signal.SIG_IGN)
        path = record.save(state)
        print(
            f"interrupted ({stopped_by.name}): saved {path}; continue with --resume",
            file=sys.stderr,
        )
        return 128 + stopped_by


def train(
    record: RunRecord,
    trainer: Trainer | RayTrainer,
    local: Trainer,
    writer: Any,
    no_progress: bool,
) -> int:
    """The loop: self-play, learn, log, evaluate, checkpoint, until the run's games are
    played or a signal stops it (its exit status: 0, or 128 + the signal)."""
    from tqdm import tqdm

    cfg = record.cfg
    bar = tqdm(total=cfg.games, initial=trainer.games, unit="game", disable=no_progress)
    next_eval = cfg.eval.every * (trainer.games // cfg.eval.every + 1) if cfg.eval.every else 0
    next_save = cfg.checkpoint_every * (trainer.games // cfg.checkpoint_every + 1)
    state = trainer.state()
    stop, handlers = StopSignal.install()
    try:
        while trainer.games < cfg.games and stop.by is None:
            state = trainer.state()  # what Ctrl-C saves: the start of this round
            started = time.perf_counter()
            stats = trainer.round()
            postfix = log_round(writer, trainer, stats, time.perf_counter() - started)
            bar.update(stats.games)
            g = trainer.games
            is_best = False
            if next_eval and (g >= next_eval or g >= cfg.games):
                is_best = evaluate(record, local, writer)
                next_eval += cfg.eval.every
            if record.latest_eval:
                postfix.update(report(local.game, record.latest_eval, cfg).postfix)
            bar.set_postfix(postfix)
            if is_best or g >= next_save or g >= cfg.games:
                record.save(trainer.state(), is_best)
                next_save = cfg.checkpoint_every * (g // cfg.checkpoint_every + 1)
        if stop.by is not None:
            state = trainer.state()  # the round is complete
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        bar.close()
        return stop.save(record, state, handlers)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    bar.close()
    return 0


# --- distillation runs ----------------------------------------------------------------


@dataclass
class Distillation:
    """A distillation run's fitting: the trainer (the networks, their Adam optimizer, and
    the epochs done as its games count) and the students it fits (one, or one per network
    of a set: `vrhcaby.learn.students`)."""

    config: DistillConfig
    trainer: Trainer | SetTrainer
    students: list[Student]
    source: dict[str, Any]
    """What labelled the shards (`vrhcaby.learn.distill.label_source`)."""
    scores: EpochScores | None = None
    """The last epoch's training loss and held-out scores (None before the first)."""

    @property
    def fitted(self) -> int:
        return sum(len(s.fitted) for s in self.students)

    def state(self) -> tuple[dict, dict]:
        """The trainer's state with the generators' and what the run fits (a checkpoint)."""
        arrays, meta = self.trainer.state()
        for student in self.students:
            arrays[student.key] = student.generator.get_state().numpy().copy()
        meta["distill"] = {
            "labels": self.source,
            "fitted": self.fitted,
            "held_out": sum(len(s.held) for s in self.students),
            "scores": self.scores.as_dict() if self.scores else {},
        }
        return arrays, meta

    def epoch(self) -> EpochScores:
        """Fit every student one epoch; its scores (means over all labels), kept."""
        losses, held = [], []
        for s in self.students:
            loss = fit_epoch(
                s.model,
                self.trainer.optimizer,
                s.fitted,
                self.config,
                self.trainer.games,
                s.generator,
            )
            losses.append((loss, len(s.fitted)))
            held.append((held_out(s.model, s.held, self.config), len(s.held)))
        self.trainer.games += 1
        by_class = zip(self.students, held, strict=True) if self.trainer.is_set else ()
        self.scores = EpochScores(
            weighted_mean(losses),
            HeldOut.mean(held),
            {s.name: scores.loss for s, (scores, _) in by_class},
        )
        return self.scores


def distillation(cfg: TrainConfig, game: Game, device: torch.device) -> Distillation:
    """A distillation run's trainer and students on `device`, their generators seeded by
    `seed`, the labels checked: label folders with shards, all labelled by one teacher at
    one depth unless `distill.mix_teachers`.
    A network set as `init_from` makes a set's trainer (the config's `net` is the shape
    of the networks of the classes in `distill.grow`, and otherwise unused)."""
    files = shard_files(cfg.distill.labels, cfg.distill.shards)
    source = label_source(files, cfg.distill.mix_teachers)
    d = cfg.distill
    is_set, meta = is_set_checkpoint(cfg.init_from)
    trainer: Trainer | SetTrainer
    if is_set:
        grow = dict.fromkeys(d.grow, cfg.net)
        trainer = SetTrainer.of(meta, cfg.variant, d.lr, cfg.seed, grow, device)
        students = trainer.students(d.labels, d, cfg.seed)
    elif d.grow:
        raise ValueError(
            f"distill.grow names classes of a network set, but init_from {cfg.init_from!r:.80} "
            "is not one"
        )
    else:
        adam = replace(cfg.td, optimizer="adam", lr=d.lr, lr_end=d.lr_end)
        trainer = Trainer.for_game(game, adam, d.epochs, cfg.seed, device)
        students = [single_student(trainer, d.labels, d, cfg.seed)]
    saved = meta.get("networks", {}) if is_set else {"": meta.get("net", {})}
    nets = trainer.nets if isinstance(trainer, SetTrainer) else {"": cfg.net}
    for s in students:  # the layers depth growth adds learn at distill.added_lr
        depth = len(saved.get(s.name, {}).get("hidden", nets[s.name].hidden))
        added = range(depth, len(nets[s.name].hidden))
        slow_layers(trainer.optimizer, s.model, added, d.added_lr)
    fitted = sum(len(s.fitted) for s in students)
    if not fitted:
        raise ValueError(
            f"no labels to fit in {', '.join(d.labels)} (distill.holdout_every = "
            f"{d.holdout_every}, distill.classes = {list(d.classes)})"
        )
    held = sum(len(s.held) for s in students)
    of = ", ".join(f"{s.name} {len(s.fitted)}" for s in students) if is_set else ""
    print(
        f"labels of {source.get('teacher')!s:.60} at {source.get('plies')}-ply: "
        f"{fitted} fitted{f' ({of})' if of else ''}, {held} held out, from {len(files)} shards",
        flush=True,
    )
    return Distillation(d, trainer, students, source)


def note_teacher(cfg: TrainConfig, source: dict[str, Any]) -> None:
    """A note when the student does not start from a network that labelled the shards."""
    named = source.get("teacher")
    teachers = set()
    for name in named if isinstance(named, list) else [named]:
        with contextlib.suppress(ValueError):
            teachers.add(find_checkpoint(str(name)).resolve())
    if Path(cfg.init_from).resolve() not in teachers:
        print(
            f"note: init_from {cfg.init_from} is not the labels' teacher {named!s:.60}",
            file=sys.stderr,
        )


def log_epoch(writer: Any, run: Distillation, scores: EpochScores, seconds: float) -> str:
    """An epoch's TensorBoard scalars (at the epochs done); its line of the log."""
    e = run.trainer.games
    lr = learning_rate(run.config, e - 1)
    speed = run.fitted / seconds
    held = scores.held
    writer.add_scalar("losses/loss", scores.train_loss, e)
    for name, loss in scores.class_losses.items():
        writer.add_scalar(f"losses/held_out_loss_{name}", loss, e)
    writer.add_scalar("losses/held_out_loss", held.loss, e)
    for name, value in held.as_dict().items():
        if name != "loss":
            writer.add_scalar(f"charts/{name}", value, e)
    writer.add_scalar("charts/labels_per_s", speed, e)
    writer.add_scalar("charts/learning_rate", lr, e)
    return (
        f"loss {scores.train_loss:.6f}, held out {held.loss:.6f}, held-out "
        f"|equity error| {held.equity_error:.4f} (teacher 0-ply "
        f"{held.teacher_0ply_error:.4f}), choice cost {held.choice_cost:.5f} "
        f"(teacher 0-ply {held.teacher_0ply_cost:.5f}), {speed:.0f} labels/s, lr {lr:.3g}"
    )


def is_best_fit(record: RunRecord, scores: EpochScores) -> bool:
    """Whether an epoch's `EpochScores.fit_loss` is the lowest so far, kept (negated,
    higher is better) as the record's best."""
    loss = scores.fit_loss
    is_best = record.best is None or -loss > record.best
    record.best = -loss if is_best else record.best
    return is_best


def distill(record: RunRecord, run: Distillation, writer: Any) -> int:
    """The loop of a distillation run: fit an epoch, log it, evaluate, checkpoint, until
    `distill.epochs` are done or a signal stops it (its exit status: 0, or 128 + the
    signal). The best checkpoint is the evaluation's best when `eval.every` is set, else
    the one of the lowest held-out loss."""
    cfg, trainer = record.cfg, run.trainer
    epochs = run.config.epochs
    state = run.state()
    stop, handlers = StopSignal.install("epoch")
    try:
        while trainer.games < epochs and stop.by is None:
            state = run.state()  # what a second Ctrl-C saves: the start of this epoch
            started = time.perf_counter()
            scores = run.epoch()
            seconds = time.perf_counter() - started
            e = trainer.games
            line = f"epoch {e}/{epochs}: {log_epoch(writer, run, scores, seconds)}"
            if not cfg.eval.every:
                is_best = is_best_fit(record, scores)
            elif e % cfg.eval.every == 0 or e >= epochs:
                is_best = evaluate(record, trainer, writer)
                postfix = report(trainer.game, record.latest_eval, cfg).postfix
                line += "".join(f", {key} {value}" for key, value in postfix.items())
            else:
                is_best = False
            print(line + (" (best)" if is_best else ""), flush=True)
            if is_best or e % cfg.checkpoint_every == 0 or e >= epochs:
                record.save(run.state(), is_best)
        if stop.by is not None:
            state = run.state()  # the epoch is complete
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        return stop.save(record, state, handlers)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return 0


def run_distillation(
    cfg: TrainConfig,
    ckdir: checkpoint.CheckpointDir,
    game: Game,
    device: torch.device,
    resume_run: bool = False,
) -> int:
    """A distillation run on `device`: its labels and trainer (fresh from `init_from`, or
    resumed with its shuffling generator), the loop, the logs closed."""
    run = distillation(cfg, game, device)
    for stale in ckdir.remove_stale():
        print(f"removed {stale}, left by a write that was killed", file=sys.stderr)
    if resume_run:
        record = resume(cfg, ckdir, run.trainer, run.students)
    else:
        record = start_fresh(cfg, ckdir, run.trainer)
        note_teacher(cfg, run.source)

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(record.run_dir), purge_step=run.trainer.games or None)
    writer.add_text("config", format_table(cfg), run.trainer.games)
    writer.add_text("network", run.trainer.describe_network(to_dict(cfg)), run.trainer.games)
    try:
        status = distill(record, run, writer)
    finally:
        writer.close()
    if status:
        return status
    print(
        f"done: {run.trainer.games} epochs; checkpoints in {ckdir.directory}, "
        f"logs in {record.run_dir}"
    )
    return 0


def run_training(
    cfg: TrainConfig,
    device: torch.device,
    resume_run: bool = False,
    backend: str = "local",
    address: str | None = None,
    no_progress: bool = False,
) -> int:
    """A training run of a checked `cfg` on `device`: the trainer (fresh, or resumed from
    the newest checkpoint when `resume_run`), the loop, and the shutdown (logs closed, Ray
    workers stopped); its exit status (0, or 128 + the signal that stopped it)."""
    ckdir = checkpoint.CheckpointDir(cfg.checkpoint_dir, cfg.name, cfg.keep)
    game = make_game(cfg)
    check_opponents(cfg)
    if cfg.distilling:
        return run_distillation(cfg, ckdir, game, device, resume_run)
    local = make_trainer(cfg, game, device)
    for stale in ckdir.remove_stale():
        print(f"removed {stale}, left by a write that was killed", file=sys.stderr)
    record = resume(cfg, ckdir, local) if resume_run else start_fresh(cfg, ckdir, local)
    trainer: Trainer | RayTrainer = local
    if backend == "ray":  # self-play on the cluster; the learner stays here
        trainer = RayTrainer(local, cfg.ray, address)

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(record.run_dir), purge_step=trainer.games or None)
    writer.add_text("config", format_table(cfg), trainer.games)
    writer.add_text("network", local.describe_network(to_dict(cfg)), trainer.games)
    try:
        status = train(record, trainer, local, writer, no_progress)
    finally:
        writer.close()
        trainer.close()
    if status:
        return status
    print(
        f"done: {trainer.games} games; checkpoints in {ckdir.directory}, logs in {record.run_dir}"
    )
    return 0
