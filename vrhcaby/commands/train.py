"""`vrhcaby train`: the same run as `python train.py`, with the same options."""

from __future__ import annotations

import argparse


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
        description="Train a value network by batched TD(lambda) self-play (see train.py): "
        'backgammon, or the six-dice scoring game with game = "sixdice" in the config.',
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import train  # the top-level script; imported here so other commands skip torch

    return train.run(args)
