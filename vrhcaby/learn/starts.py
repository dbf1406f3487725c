"""Where a run's self-play games start: a pool of positions of one class, reached by a
network's own self-play, so that a run that trains one class network of a set (the race
network) spends nearly all its games on positions of that class.

`class_starts` plays `games` greedy 0-ply self-play games of a network from the opening
(seeded) and keeps, of each game that gets there, the first position of the class on roll
(its board as the side on roll sees it): where that game's race began, say. A race never
turns back into contact, so every position a game reaches from a race start is a race, a
bear-off or the end. `load_starts` makes a run's pool once and caches it under
`vrhcaby.base.files.cache_dir` (keyed by the network file's contents and the settings),
so a resumed run starts its games from the same pool.

    python -m vrhcaby.learn.starts --network td-best --games 10000 --seed 1
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agents.td import find_checkpoint
from engine.classify import NAMES, classify_boards
from vrhcaby.base.files import cache_dir, read_arrays, write_npz
from vrhcaby.learn.selfplay import SelfPlay
from vrhcaby.nn.net import load_evaluator

log = logging.getLogger(__name__)

#: Classes a pool can hold: those a set's networks answer (`engine.classify.NAMES`).
POOL_CLASSES = ("race", "crashed", "contact")
#: Games played per self-play round while making a pool.
BATCH = 500


@dataclass(frozen=True)
class StartsConfig:
    """Where the self-play games of a run start (the ``[starts]`` table of a run config)."""

    network: str = ""
    """Checkpoint (or shipped name, `agents.td.find_checkpoint`) whose self-play reaches
    the start positions; "" = every game starts from the opening, as usual."""
    position_class: str = "race"
    """The class of the positions kept (race, crashed or contact)."""
    games: int = 10_000
    """Self-play games played to make the pool (each gives at most one position)."""
    seed: int = 1
    """Dice seed of those games."""

    def __post_init__(self) -> None:
        if self.position_class not in POOL_CLASSES:
            raise ValueError(
                f"unknown starts.position_class {self.position_class!r:.40} "
                f"(known: {', '.join(POOL_CLASSES)})"
            )
        if self.games < 1 or self.seed < 0:
            raise ValueError(
                f"starts.games must be at least 1 and starts.seed 0 or more, got "
                f"{self.games}, {self.seed}"
            )


def first_of_class(states: np.ndarray, lengths: np.ndarray, code: int) -> np.ndarray:
    """The board on roll (N, 2, 25) after the first afterstate of class `code` of each
    game of padded afterstates `states` (T, G, 2, 25) that has one (`lengths` (G,))."""
    steps, games = states.shape[:2]
    valid = np.arange(steps)[:, None] < lengths[None, :]
    classes = np.full((steps, games), -1, np.int64)
    classes[valid] = classify_boards(states[valid])
    hit = classes == code
    has = hit.any(axis=0)
    first = hit.argmax(axis=0)[has]
    return np.ascontiguousarray(states[first, np.flatnonzero(has), ::-1])


def class_starts(network_path: str | Path, config: StartsConfig) -> np.ndarray:
    """The pool of `config`: int8 boards (N, 2, 25) on roll, N at most `config.games`."""
    evaluator = load_evaluator(network_path)
    play = SelfPlay(
        None,  # type: ignore[arg-type]  # the network answers; there is no model
        evaluator.net,  # type: ignore[arg-type]
        evaluator.variant,
        torch.device("cpu"),
        network=lambda: evaluator,
    )
    rng = np.random.default_rng(config.seed)
    code = NAMES.index(config.position_class)
    parts, left = [], config.games
    while left:
        episodes = play.play(min(BATCH, left), rng)
        parts.append(first_of_class(episodes.states, episodes.lengths, code))
        left -= min(BATCH, left)
    return np.concatenate(parts).astype(np.int8)


def load_starts(network: str, config: StartsConfig) -> np.ndarray:
    """The pool of `config` (its `network` found as a td agent finds it), made once and
    then read from the cache; a ValueError if the pool would be empty."""
    path = find_checkpoint(network)
    key = hashlib.sha256(path.read_bytes())
    key.update(f"{config.position_class}/{config.games}/{config.seed}".encode())
    cached = cache_dir() / "starts" / f"{key.hexdigest()[:20]}.npz"
    if cached.is_file():
        try:
            return np.ascontiguousarray(read_arrays(cached)["boards"], np.int8)
        except (OSError, ValueError, KeyError):
            log.warning("%s is unreadable: making it again", cached)
    pool = class_starts(path, config)
    if not len(pool):
        raise ValueError(
            f"starts: {config.games} self-play games of {network} reached no "
            f"{config.position_class} position"
        )
    try:
        write_npz(cached, {"boards": pool}, compressed=True)
    except OSError as exc:
        log.warning("cannot cache the starts pool (%s): it is made again next time", exc)
    return pool


def main(argv: list[str] | None = None) -> int:
    """Make (or read) a pool and print its size and an example."""
    parser = argparse.ArgumentParser(prog="python -m vrhcaby.learn.starts", description=__doc__)
    parser.add_argument("--network", default="td-best")
    parser.add_argument("--class", dest="position_class", default="race")
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        config = StartsConfig(args.network, args.position_class, args.games, args.seed)
        pool = load_starts(args.network, config)
    except ValueError as exc:
        print(f"starts: error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(pool)} {config.position_class} starts from {args.games} games of {args.network}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
