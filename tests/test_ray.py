"""The Ray backend on a real local Ray instance (two CPUs): training through `train.py`,
self-play workers against the local self-play, a killed worker, and tournaments that give
the local runner's games whatever the number of workers."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_agent
from vrhcaby.base.config import load_config
from vrhcaby.cli import tournament as tournament_command
from vrhcaby.cli import train
from vrhcaby.learn.selfplay import SelfPlay
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn import checkpoint
from vrhcaby.play.tournament import CHUNK, play_pair

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "tests" / "configs" / "smoke.toml")


def run_train(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "--config",
        SMOKE,
        "--no-progress",
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
        *extra,
    ]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = train.main(argv)
    return code, out.getvalue(), err.getvalue()


def smoke_trainer(games: int) -> Trainer:
    cfg = load_config(train.TrainConfig, SMOKE)
    return Trainer(cfg.net, cfg.td, cfg.variant, games, cfg.seed, torch.device("cpu"))


def test_without_ray_the_backend_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    code, _, err = run_train(tmp_path, "--backend", "ray")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "pip install 'vrhcaby[ray]'" in err
    assert not (tmp_path / "ck").exists()
    parser = argparse.ArgumentParser()
    tournament_command.register(parser.add_subparsers())
    args = parser.parse_args(["tournament", "pubeval", "heuristic", "--backend", "ray"])
    with pytest.raises(ValueError, match=r"pip install 'vrhcaby\[ray\]'"):
        tournament_command.run(args)


def test_ray_options_are_checked_before_anything_runs(tmp_path):
    for extra, message in [
        (["--workers", "2"], "--address and --workers are for --backend ray"),
        (["--address", "auto"], "--address and --workers are for --backend ray"),
        (["--set", "ray.workers=0"], "ray.workers must be at least 1"),
        (["--set", "ray.max_lag=-1"], "ray.max_lag"),
    ]:
        code, _, err = run_train(tmp_path, *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "ck").exists()
    parser = argparse.ArgumentParser()
    tournament_command.register(parser.add_subparsers())
    args = parser.parse_args(["tournament", "pubeval", "heuristic", "--workers", "2"])
    with pytest.raises(ValueError, match="--backend ray"):
        tournament_command.run(args)


def test_a_worker_plays_the_local_selfplay_games_with_the_broadcast_weights(ray):
    from vrhcaby.learn.ray import SelfPlayWorker

    trainer = smoke_trainer(64)
    with torch.no_grad():  # weights unlike the fresh ones a worker starts with
        for p in trainer.model.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    shared = ray.put(trainer.weights())
    for expected in (False, True):
        net = trainer.net.to_dict()
        worker = ray.remote(num_cpus=1)(SelfPlayWorker).remote(net, "standard", expected)
        played = ray.get(worker.play.remote(3, [shared], 12, 99, 0.0), timeout=120)
        local = SelfPlay(trainer.model, trainer.net, "standard", torch.device("cpu"), expected)
        want = local.play(12, np.random.default_rng(99))
        assert played.version == 3
        np.testing.assert_array_equal(played.episodes.lengths, want.lengths)
        np.testing.assert_array_equal(played.episodes.states, want.states)
        np.testing.assert_array_equal(played.episodes.values, want.values)
        assert (played.episodes.backups is None) == (not expected)
        if expected:
            np.testing.assert_allclose(played.episodes.backups, want.backups, atol=1e-6)
        ray.kill(worker)


@pytest.mark.slow
def test_training_on_ray_checkpoints_logs_and_resumes(ray, tmp_path):
    code, out, err = run_train(tmp_path, "--backend", "ray", "--workers", "2", "--set", "games=256")
    assert code == 0, err
    ck = checkpoint.CheckpointDir(tmp_path / "ck", "smoke")
    first_arrays, meta = checkpoint.load(ck.latest())
    assert meta["games"] == 256 and meta["config"]["ray"]["workers"] == 2
    assert meta["distributed"]["lost_games"] == 0 and meta["distributed"]["version"] >= 256 // 16
    start = smoke_trainer(256).weights()
    assert any(not np.array_equal(first_arrays[k], start[k]) for k in start)  # it learned

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(meta["run_dir"])
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"offpolicy/lag_mean", "offpolicy/dropped_games", "workers/lost_games"} <= tags
    assert {"workers/games_per_s/0", "workers/games_per_s/1", "losses/loss"} <= tags
    assert all(e.value <= 2 * 256 // 16 for e in events.Scalars("offpolicy/lag_max"))

    code, out, err = run_train(tmp_path, "--backend", "ray", "--resume", "--set", "games=320")
    assert code == 0, err
    assert "at 256 games" in out
    arrays, meta = checkpoint.load(ck.latest())
    assert meta["games"] == 320
    assert any(not np.array_equal(arrays[k], first_arrays[k]) for k in start)


def test_lag_is_bounded_and_a_killed_worker_is_replaced_and_counted(ray, caplog):
    from vrhcaby.learn.ray import DistributedConfig, RayTrainer

    trainer = RayTrainer(smoke_trainer(192), DistributedConfig(workers=2, max_lag=0))
    try:
        first = trainer.round()
        assert first.games == 16 and trainer.games == 16
        ray.kill(trainer.workers[0])
        with caplog.at_level(logging.WARNING, logger="vrhcaby.play.ray"):
            rounds = [trainer.round() for _ in range(11)]
        assert trainer.games == 192 and sum(r.games for r in rounds) == 176
        assert trainer.restarts == 1 and trainer.lost_games == 16
        died = [r.getMessage() for r in caplog.records if "died" in r.getMessage()]
        assert len(died) == 1 and "16 games in progress lost" in died[0]
        # with two workers and no lag allowed, the batch played alongside each learned one
        # comes back one version behind and is dropped
        assert trainer.dropped_games > 0 and trainer.dropped_games % 16 == 0
        assert trainer.state()[1]["distributed"]["restarts"] == 1
    finally:
        trainer.close()


def game_keys(pair) -> list[tuple]:
    return [
        (g.sample, g.copy, g.a_seat, g.winner, g.value, g.points)
        for g in sorted(pair.results, key=lambda g: (g.sample, g.copy))
    ]


def test_tournament_games_do_not_depend_on_backend_or_workers(ray):
    a, b = load_agent("pubeval"), load_agent("heuristic")
    games = 2 * (2 * CHUNK + 3)  # three chunks, the last one short
    local = play_pair(a, b, games=games, seed=11)
    one = play_pair(a, b, games=games, seed=11, backend="ray", workers=1)
    two = play_pair(a, b, games=games, seed=11, backend="ray", workers=2)
    other = play_pair(a, b, games=games, seed=12, backend="ray", workers=2)
    assert one.games == games and not one.interrupted
    assert game_keys(one) == game_keys(local) == game_keys(two) != game_keys(other)
    assert (one.ppg, one.wins, one.gammons) == (local.ppg, local.wins, local.gammons)


def test_tournament_command_on_ray_prints_the_local_results(ray, capsys):
    parser = argparse.ArgumentParser()
    tournament_command.register(parser.add_subparsers())
    common = ["tournament", "pubeval", "heuristic", "--games", "40", "--seed", "5", "--json"]
    assert tournament_command.run(parser.parse_args(common)) == 0
    local = json.loads(capsys.readouterr().out)
    ray_args = parser.parse_args([*common, "--backend", "ray", "--workers", "2"])
    assert tournament_command.run(ray_args) == 0
    assert json.loads(capsys.readouterr().out) == local
