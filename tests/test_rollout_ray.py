"""Rollouts on a real local Ray instance (two CPUs): the same trials as the local runner
whatever the number of workers, through the library and the command; and the one-line
errors of the Ray options without Ray or without `--backend ray`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
from agents.td import TDAgent
from vrhcaby.cli import rollout as command
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import Evaluator, NetConfig
from vrhcaby.play.rollout import CubeSetting, Settings, rollout_position


def random_weights(config: NetConfig, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [
        (rng.normal(0, 0.3, (o, i)).astype(np.float32), rng.normal(0, 0.3, o).astype(np.float32))
        for i, o in zip(config.sizes[:-1], config.sizes[1:], strict=True)
    ]


@pytest.fixture
def tiny_net(tmp_path: Path) -> str:
    config = NetConfig("tesauro", (8,), "sigmoid")
    arrays = {}
    for i, (w, b) in enumerate(random_weights(config, 5)):
        arrays[f"model/{2 * i}.weight"] = w
        arrays[f"model/{2 * i}.bias"] = b
    path = tmp_path / "tiny.pt"
    checkpoint.save(path, arrays, {"net": config.to_dict(), "config": {"variant": "standard"}})
    return str(path)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    return parser.parse_args(["rollout", *argv])


@pytest.mark.slow
def test_ray_rolls_out_the_local_trials_whatever_the_workers(ray):
    config = NetConfig("tesauro", (16,), "sigmoid")
    agent = TDAgent(Evaluator(config, random_weights(config, 3)), plies=0)
    settings = Settings(trials=80, chunk=12, truncate=8, seed=9)
    start = engine.Position.start().board
    cube = CubeSetting()
    local = rollout_position(start, agent, settings=settings, cube=cube)
    assert len(np.unique(local.raw, axis=0)) > 10  # the trials differ: the check can fail
    for workers in (1, 2, 0):
        remote = rollout_position(
            start, agent, settings=settings, backend="ray", jobs=workers, cube=cube
        )
        for field in ("raw", "luck", "plies", "stratum", "cubeful", "cubeful_luck"):
            np.testing.assert_array_equal(getattr(remote, field), getattr(local, field))


@pytest.mark.slow
def test_the_command_on_ray_prints_the_local_figures(ray, tiny_net, capsys):
    common = [
        "4HPwATDgc/ABMA",
        "31",
        "--agent",
        f"td:{tiny_net}",
        "--trials",
        "40",
        "--truncate",
        "6",
        "--candidates",
        "3",
        "--json",
    ]
    outputs = []
    for extra in (["--jobs", "1"], ["--backend", "ray", "--workers", "2"]):
        args = parse([*common, *extra])
        assert args.func(args) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]["plays"]) == 3


def test_without_ray_the_backend_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    args = parse(["4HPwATDgc/ABMA", "--backend", "ray"])
    with pytest.raises(ValueError, match=r"pip install 'vrhcaby\[ray\]'"):
        args.func(args)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--address", "auto"], "--address and --workers are for --backend ray"),
        (["--workers", "2"], "--address and --workers are for --backend ray"),
        (["--backend", "ray", "--workers", "-1"], "--workers must be 0 or more"),
    ],
)
def test_ray_options_are_checked_before_anything_runs(argv, message):
    args = parse(["4HPwATDgc/ABMA", *argv])
    with pytest.raises(ValueError, match=message):
        args.func(args)
