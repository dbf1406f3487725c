"""The training entry points, run as users run them: in subprocesses, with the smoke config."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
import torch

from vrhcaby.cli import train
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import load_evaluator

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "tests" / "configs" / "smoke.toml")


def args_for(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "--config",
        SMOKE,
        "--no-progress",
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
        *extra,
    ]


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run_train(tmp_path: Path, *extra: str) -> Result:
    """`python train.py ...`, run in this process (saves starting torch each time)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = train.main(args_for(tmp_path, *extra))
    return Result(code, out.getvalue(), err.getvalue())


def final_weights(directory: Path) -> dict[str, np.ndarray]:
    arrays, meta = checkpoint.load(checkpoint.CheckpointDir(directory, "smoke").latest())
    assert meta["games"] == 96
    return {k: v for k, v in arrays.items() if k.startswith(("model/", "optim/"))}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("full")
    done = run_train(tmp)
    assert done.returncode == 0, done.stderr
    return tmp


def test_smoke_run_writes_checkpoints_and_logs(uninterrupted: Path) -> None:
    ck = checkpoint.CheckpointDir(uninterrupted / "ck", "smoke", keep=2)
    assert [p.name for p in ck.snapshots()] == ["smoke-g000000064.pt", "smoke-g000000096.pt"]
    _, meta = checkpoint.load(ck.latest())
    assert meta["config"]["net"]["hidden"] == [8] and meta["version"]
    assert Path(meta["run_dir"]).parent == uninterrupted / "runs"
    assert any(Path(meta["run_dir"]).glob("events.out.tfevents.*"))
    evaluator = load_evaluator(ck.latest())
    assert evaluator.net.hidden == (8,) and evaluator.variant == "standard"


def wait_for_checkpoint(process: subprocess.Popen, directory: Path) -> None:
    deadline = time.time() + 240
    while not list(directory.glob("smoke-g*.pt")):
        assert process.poll() is None, process.communicate()
        assert time.time() < deadline
        time.sleep(0.05)


@pytest.mark.parametrize(
    "how",
    [signal.SIGINT, signal.SIGTERM, pytest.param(signal.SIGKILL, marks=pytest.mark.slow)],
)
def test_killed_run_resumes_to_the_same_weights(
    tmp_path: Path, uninterrupted: Path, how: signal.Signals
) -> None:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), *args_for(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_checkpoint(process, tmp_path / "ck")
    os.kill(process.pid, how)
    _, err = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    if how != signal.SIGKILL:  # saved where it stopped
        assert process.returncode == 128 + how and "--resume" in err, err
    latest = checkpoint.CheckpointDir(tmp_path / "ck", "smoke").latest()
    stopped_at = checkpoint.load(latest)[1]["games"]
    assert stopped_at < 96
    resumed = run_train(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"at {stopped_at} games" in resumed.stdout
    got, want = final_weights(tmp_path / "ck"), final_weights(uninterrupted / "ck")
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def one_line_error(result: Result, text: str) -> None:
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], result.stderr


def test_bad_input_is_one_line_and_overwrites_nothing(tmp_path: Path, uninterrupted: Path) -> None:
    one_line_error(run_train(tmp_path, "--set", "td.lamda=1"), "unknown config key 'td.lamda'")
    one_line_error(run_train(tmp_path, "--set", "games=many"), "'games' must be int")
    one_line_error(run_train(tmp_path, "--device", "tpu"), "device")
    one_line_error(run_train(tmp_path, "--device", "cuda:7"), "cuda:7")
    one_line_error(run_train(tmp_path, "--resume"), "nothing to resume")
    backup = run_train(tmp_path, "--set", "td.backup=onestep")
    one_line_error(backup, "unknown td.backup 'onestep'")
    acey = ["--set", "variant=acey-deucey", "--set", "td.backup=expected"]
    one_line_error(run_train(tmp_path, *acey), "not available for acey-deucey")
    judged = ["--set", "variant=nackgammon", "--set", "eval.judge_games=10"]
    one_line_error(run_train(tmp_path, *judged), "judges standard backgammon only")
    missing = run_train(tmp_path, "--config", str(tmp_path / "none.toml"))
    one_line_error(missing, "not found")
    existing = uninterrupted / "ck"
    before = {p: p.read_bytes() for p in existing.iterdir()}
    other_dirs = ["--set", f"checkpoint_dir={existing}", "--set", f"runs_dir={tmp_path / 'r'}"]
    one_line_error(run_train(tmp_path, *other_dirs), "already has checkpoints")
    bigger = run_train(tmp_path, *other_dirs, "--resume", "--set", "net.hidden=[9]")
    one_line_error(bigger, "198-8-5")
    corrupt = tmp_path / "ck2"
    corrupt.mkdir()
    (corrupt / "smoke-g000000001.pt").write_bytes(b"not a checkpoint")
    one_line_error(
        run_train(tmp_path, "--set", f"checkpoint_dir={corrupt}", "--resume"), "not a readable"
    )
    assert {p: p.read_bytes() for p in existing.iterdir()} == before


def test_a_resumed_run_that_changes_best_by_starts_a_new_best(tmp_path: Path) -> None:
    evaluated = ["--set", "eval.every=32", "--set", "eval.games=2"]
    first = run_train(tmp_path, *evaluated, "--set", "games=32")
    assert first.returncode == 0, first.stderr
    ck = checkpoint.CheckpointDir(tmp_path / "ck", "smoke")
    _, meta = checkpoint.load(ck.best_path)
    assert meta["best_by"] == "ppg" and meta["best"] == meta["evaluation"]["pubeval"]["ppg"]
    by_cost = ["--set", "eval.best_by=move_cost", "--set", "eval.judge_games=2"]
    resumed = run_train(tmp_path, *evaluated, *by_cost, "--set", "games=64", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "eval.best_by is now 'move_cost', not 'ppg'" in resumed.stdout
    _, meta = checkpoint.load(ck.best_path)
    assert meta["games"] == 64 and meta["best_by"] == "move_cost"
    assert meta["best"] == -meta["evaluation"]["move_cost"]["mean"]


def test_a_warm_start_grows_a_finished_run_into_a_richer_network(
    tmp_path: Path, uninterrupted: Path
) -> None:
    saved = checkpoint.CheckpointDir(uninterrupted / "ck", "smoke").latest()
    rich = ["--set", "net.encoding=rich", "--set", "games=32", "--set", f"init_from={saved}"]
    grown = run_train(tmp_path, *rich)
    assert grown.returncode == 0, grown.stderr
    assert f"started from the network of {saved}" in grown.stdout
    arrays, meta = checkpoint.load(checkpoint.CheckpointDir(tmp_path / "ck", "smoke").latest())
    assert arrays["model/0.weight"].shape == (8, 214) and meta["config"]["init_from"] == str(saved)
    narrower = run_train(tmp_path, "--set", "name=w", "--set", "net.hidden=[7]", *rich[4:])
    one_line_error(narrower, "cannot start a 198-7-5")
    one_line_error(
        run_train(tmp_path, "--set", "name=n", "--set", f"init_from={tmp_path / 'no.pt'}"), "no.pt"
    )


def test_vrhcaby_train_has_the_same_options() -> None:
    parser = argparse.ArgumentParser()
    train.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["train", "--config", SMOKE, "--set", "a=1", "--resume"])
    assert args.func is train.run and args.set == ["a=1"] and args.resume
    direct = argparse.ArgumentParser()
    train.add_arguments(direct)
    assert train.main.__module__ == "vrhcaby.cli.train"
    assert {a.dest for a in direct._actions} >= {"config", "set", "device", "resume"}


def test_learner_threads_leave_local_ray_workers_their_cpus(monkeypatch) -> None:
    monkeypatch.setattr(train, "cpu_count", lambda: 8)
    cfg = train.TrainConfig()
    assert train.learner_threads(cfg, "ray", None) == 8 - cfg.ray.workers
    assert train.learner_threads(replace(cfg, ray=replace(cfg.ray, workers=12)), "ray", None) == 1
    assert train.learner_threads(replace(cfg, threads=3), "ray", None) == 3
    default = torch.get_num_threads()
    assert train.learner_threads(cfg, "ray", "auto") == default  # workers on other machines
    assert train.learner_threads(cfg, "local", None) == default
