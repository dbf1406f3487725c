"""`vrhcaby train` (and `python train.py`): train a value network by TD(λ) self-play, the way
TD-Gammon was trained, or fit one to search labels (a distillation run).

    python train.py --config configs/quick.toml [--set td.lam=0.8 ...] [--device cuda]
    python train.py --config configs/quick.toml --resume      # continue after a stop
    python train.py --config configs/recipes/full.toml --backend ray --address auto --workers 16
    python train.py --config configs/recipes/sixdice.toml     # the six-dice scoring game

This module is the command line: the options, read into a checked config by
`vrhcaby.training.run.configure` (which sets torch's threads too). The run itself
(`TrainConfig`, the TD(λ) and distillation loops, their checkpoints and stops) lives in
`vrhcaby.training.run`; the names it had here are re-exported for scripts that import
them from this module. Ctrl-C saves a checkpoint of the last completed round, so
`--resume` continues exactly (same dice, same weights).
A config with `distill.labels` is a distillation run (`vrhcaby.learn.distill`).
"""

from __future__ import annotations

import argparse
import sys

import torch

from vrhcaby.cli.common import Parser, cpu_count
from vrhcaby.training.run import (  # re-exported: scripts import them from here
    Distillation,
    RunRecord,
    StopSignal,
    TrainConfig,
    check_opponents,
    code_version,
    distill,
    distillation,
    evaluate,
    find_inputs,
    make_game,
    make_trainer,
    resolve_device,
    resume,
    run_training,
    start_fresh,
    train,
)
from vrhcaby.training.run import configure as configure_run
from vrhcaby.training.run import learner_threads as threads_for

__all__ = [
    "Distillation",
    "RunRecord",
    "StopSignal",
    "TrainConfig",
    "add_arguments",
    "check_opponents",
    "code_version",
    "configure",
    "distill",
    "distillation",
    "evaluate",
    "find_inputs",
    "learner_threads",
    "main",
    "make_game",
    "make_trainer",
    "register",
    "resolve_device",
    "resume",
    "run",
    "run_training",
    "start_fresh",
    "train",
]


def learner_threads(cfg: TrainConfig, backend: str, address: str | None) -> int:
    """torch's CPU threads for the updates on this machine
    (`vrhcaby.training.run.learner_threads` of its CPUs)."""
    return threads_for(cfg, backend, address, cpu_count())


def configure(args: argparse.Namespace) -> tuple[TrainConfig, torch.device]:
    """The run's configuration (the file, then --set, --device, --workers) and its torch
    device, checked against the command line; torch's threads set; the config printed
    (`vrhcaby.training.run.configure`)."""
    return configure_run(
        args.config,
        list(args.set or []),
        device=args.device,
        backend=args.backend,
        address=args.address,
        workers=args.workers,
        cpus=cpu_count(),
    )


def run(args: argparse.Namespace) -> int:
    """A training run: its config and device (`configure`), then the run itself
    (`vrhcaby.training.run.run_training`)."""
    cfg, device = configure(args)
    return run_training(cfg, device, args.resume, args.backend, args.address, args.no_progress)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a training run (shared by `train.py` and `vrhcaby train`)."""
    parser.add_argument(
        "--config", metavar="TOML", help="config file, e.g. configs/quick.toml (else defaults)"
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override one config value, e.g. --set td.lam=0.8 (repeatable)",
    )
    parser.add_argument("--device", help="torch device: cpu, cuda, cuda:N (overrides the config)")
    parser.add_argument(
        "--resume", action="store_true", help="continue the run from its newest checkpoint"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local: the batched trainer in this process (default); ray: self-play workers "
        "on a Ray cluster, the learner here (needs vrhcaby[ray])",
    )
    parser.add_argument(
        "--address", help="Ray cluster to join (auto, HOST:PORT); default: start one here"
    )
    parser.add_argument("--workers", type=int, help="Ray self-play workers (overrides ray.workers)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a network by TD(lambda) self-play",
        description="Train a value network by batched TD(lambda) self-play: "
        'backgammon, or the six-dice scoring game with game = "sixdice" in the config.',
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def main(argv: list[str] | None = None, prog: str = "train.py") -> int:
    """The entry script's command line: the options of `vrhcaby train`, errors as one line."""
    parser = Parser(prog=prog, description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
