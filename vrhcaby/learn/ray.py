"""The Ray trainer: self-play spread over a Ray cluster, the learner in the driver.

Training. Self-play *workers* (Ray actors, one CPU each) play batched rounds of games with
`selfplay.SelfPlay`, exactly as the local trainer does; the *learner* stays in the driver and
applies `learner.Learner.update` to the episodes as they arrive. The learner publishes its
weights with one `ray.put` every `broadcast_every` learned games (a new *version*); each
task names the newest version's object-store reference and a worker reads the weights
only when the version changed, so the model is never pickled per task. A worker gets its
next task as soon as it hands in one, so playing and learning overlap; the price is
off-policy lag: episodes played with weights `lag` versions older than the learner's.
Batches more than `max_lag` versions behind are dropped (counted and logged). A worker
that dies is replaced by a fresh one; the games it had in progress are lost, logged as a
warning and counted (`lost_games`), and the run plays others in their place.

Ray is an optional dependency (``pip install 'vrhcaby[ray]'``), imported when a trainer
starts (`vrhcaby.play.ray.connect`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.learner import UpdateStats, scheduled, set_lr
from vrhcaby.learn.selfplay import SelfPlay
from vrhcaby.learn.trainer import RoundStats, Trainer
from vrhcaby.nn.net import NetConfig, build_model
from vrhcaby.play.ray import connect

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DistributedConfig:
    """How training is spread over a Ray cluster (the ``[ray]`` table of a run config)."""

    workers: int = 2
    """Self-play workers (Ray actors); --workers overrides it."""
    games_per_task: int = 0
    """Games one worker plays in lockstep per task (0 = td.batch_games)."""
    broadcast_every: int = 0
    """Learned games between weight broadcasts, K (0 = td.batch_games)."""
    max_lag: int = 4
    """Most weight versions an episode batch may lag the learner; older ones are dropped."""
    cpus_per_worker: float = 1.0
    """CPUs Ray reserves for each worker."""
    max_restarts: int = 20
    """Worker deaths tolerated in a run before it stops with an error."""

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"ray.workers must be at least 1, got {self.workers}")
        if self.games_per_task < 0 or self.broadcast_every < 0:
            raise ValueError("ray.games_per_task and ray.broadcast_every must be 0 or more")
        if self.max_lag < 0 or self.max_restarts < 0:
            raise ValueError("ray.max_lag and ray.max_restarts must be 0 or more")
        if self.cpus_per_worker <= 0:
            raise ValueError(f"ray.cpus_per_worker must be positive, got {self.cpus_per_worker}")


def _state_dict(weights: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k[len("model/") :]: torch.tensor(v) for k, v in weights.items()}


@dataclass
class Played:
    """One finished self-play task."""

    version: int
    episodes: Episodes
    seconds: float


class SelfPlayWorker:
    """A self-play process: its own copy of the network, refreshed when the version moves."""

    def __init__(self, net: dict[str, Any], variant: str, expected: bool = False) -> None:
        torch.set_num_threads(1)
        config = NetConfig.from_dict(net)
        self.model = build_model(config)
        self.selfplay = SelfPlay(self.model, config, variant, torch.device("cpu"), expected)
        self.version = -1

    def ready(self) -> bool:
        """True once the worker is up, its kernels compiled by a two-game warm-up, so that
        all workers start the run together."""
        self.selfplay.play(2, np.random.default_rng(0), 0.0)
        return True

    def play(self, version: int, weights: list, games: int, seed: int, epsilon: float) -> Played:
        """`games` games with the weights of `version` (`weights[0]`, an object reference,
        is read only when the version is new to this worker)."""
        if version != self.version:
            import ray

            self.model.load_state_dict(_state_dict(ray.get(weights[0])))
            self.version = version
        start = time.perf_counter()
        episodes = self.selfplay.play(games, np.random.default_rng(seed), epsilon)
        return Played(version, episodes, time.perf_counter() - start)


@dataclass
class _Task:
    slot: int
    games: int


class RayTrainer:
    """A backgammon `trainer.Trainer` whose self-play runs on Ray workers; the same
    round/state interface.

    The wrapped trainer keeps the model, optimizer, games count and dice generator (which
    seeds the tasks), so checkpoints, resume and evaluation are those of a local run.
    """

    def __init__(
        self, trainer: Trainer, config: DistributedConfig, address: str | None = None
    ) -> None:
        if not isinstance(trainer.game, Backgammon):
            raise ValueError(f"the Ray trainer learns backgammon, not {trainer.game.name!r}")
        self.ray = connect(address)
        self.trainer = trainer
        self.game: Backgammon = trainer.game
        self.config = config
        self.games_per_task = config.games_per_task or trainer.td.batch_games
        self.broadcast_every = config.broadcast_every or trainer.td.batch_games
        self.version = 0
        self._weights = self.ray.put(trainer.weights())
        self._actor = self.ray.remote(num_cpus=config.cpus_per_worker)(SelfPlayWorker)
        self.pending: dict[Any, _Task] = {}
        self.lost_games = 0
        self.dropped_games = 0
        self.restarts = 0
        self._scalars: dict[str, float] = {}
        self._played: dict[int, tuple[int, float]] = {}  # slot: (games, seconds) so far
        self.workers = [self._new_worker() for _ in range(config.workers)]
        self.ray.get([worker.ready.remote() for worker in self.workers])
        for slot in range(config.workers):
            self._submit(slot)

    @property
    def games(self) -> int:
        return self.trainer.games

    def _new_worker(self) -> Any:
        return self._actor.remote(
            self.trainer.net.to_dict(), self.trainer.variant, self.game.expected
        )

    def _start(self, slot: int) -> None:
        self.workers[slot] = self._new_worker()
        self._submit(slot)

    def _submit(self, slot: int) -> None:
        seed = int(self.trainer.rng.integers(2**63))
        ref = self.workers[slot].play.remote(
            self.version, [self._weights], self.games_per_task, seed, self.trainer.td.epsilon
        )
        self.pending[ref] = _Task(slot, self.games_per_task)

    def _next(self) -> tuple[int, Played]:
        """The next finished task (its worker already has a new one); replaces dead workers."""
        while True:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1)
            task = self.pending.pop(ready[0])
            try:
                played = self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError as exc:
                self.lost_games += task.games
                self.restarts += 1
                log.warning(
                    "self-play worker %d died (%s); %d games in progress lost "
                    "(%d lost in all); starting a new worker",
                    task.slot,
                    type(exc).__name__,
                    task.games,
                    self.lost_games,
                )
                if self.restarts > self.config.max_restarts:
                    raise RuntimeError(
                        f"{self.restarts} self-play worker deaths, more than "
                        f"ray.max_restarts={self.config.max_restarts}; stopping"
                    ) from exc
                self._start(task.slot)
                continue
            self._submit(task.slot)
            return task.slot, played

    def round(self) -> RoundStats:
        """Learn from arriving episodes until `broadcast_every` games (or the run's end) are
        learned, then broadcast the new weights."""
        trainer, td = self.trainer, self.trainer.td
        target = min(self.broadcast_every, trainer.total_games - trainer.games)
        stats: list[UpdateStats] = []
        learned = plies = evaluated = gammons = backgammons = 0
        lags: list[int] = []
        waited = busy = 0.0
        lr = lam = 0.0
        while learned < target:
            started = time.perf_counter()
            slot, played = self._next()
            waited += time.perf_counter() - started
            lag = self.version - played.version
            lags.append(lag)
            n = played.episodes.lengths.size
            games, seconds = self._played.get(slot, (0, 0.0))
            self._played[slot] = (games + n, seconds + played.seconds)
            if lag > self.config.max_lag:
                self.dropped_games += n
                log.info("dropped %d games played %d weight versions ago", n, lag)
                continue
            started = time.perf_counter()
            n = min(n, trainer.total_games - trainer.games)
            episodes = played.episodes.select(np.arange(n))
            progress = trainer.games / max(trainer.total_games, 1)
            lr = scheduled(td.lr, td.lr_end, progress)
            lam = scheduled(td.lam, td.lam_end, progress)
            set_lr(trainer.optimizer, lr)
            for chunk in np.array_split(np.arange(n), max(1, -(-n // td.games_per_update))):
                stats.append(trainer.learner.update(episodes.select(chunk), lam))
            trainer.games += n
            learned += n
            plies += episodes.plies
            evaluated += played.episodes.evaluated * n // played.episodes.lengths.size
            gammons += int((episodes.values >= 2).sum())
            backgammons += int((episodes.values >= 3).sum())
            busy += time.perf_counter() - started
        self.version += 1
        self._weights = self.ray.put(trainer.weights())
        update = UpdateStats.combined(stats)
        self._scalars = {
            "offpolicy/lag_mean": float(np.mean(lags)),
            "offpolicy/lag_max": float(max(lags)),
            "offpolicy/dropped_games": float(self.dropped_games),
            "workers/lost_games": float(self.lost_games),
            "workers/restarts": float(self.restarts),
            "learner/games_per_busy_s": learned / max(busy, 1e-9),
            "learner/busy_fraction": busy / max(busy + waited, 1e-9),
            **{
                f"workers/games_per_s/{slot}": games / max(seconds, 1e-9)
                for slot, (games, seconds) in sorted(self._played.items())
            },
        }
        return RoundStats(
            games=learned,
            plies=plies,
            evaluated=evaluated,
            gammon_rate=gammons / max(learned, 1),
            backgammon_rate=backgammons / max(learned, 1),
            lr=lr,
            lam=lam,
            update=update,
        )

    def scalars(self) -> dict[str, float]:
        """TensorBoard scalars of the last round: off-policy lag, dropped and lost games,
        worker restarts, each worker's games/s over the run so far and how busy the learner
        was."""
        return dict(self._scalars)

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        arrays, meta = self.trainer.state()
        meta["distributed"] = {
            "workers": self.config.workers,
            "version": self.version,
            "lost_games": self.lost_games,
            "dropped_games": self.dropped_games,
            "restarts": self.restarts,
        }
        return arrays, meta

    def close(self) -> None:
        """Stop the workers (their unfinished games are discarded)."""
        for worker in self.workers:
            self.ray.kill(worker)
        self.pending.clear()
