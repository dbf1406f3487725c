"""Distillation: the fitting of `vrhcaby.learn.distill` on tiny label shards, and
distillation runs of `vrhcaby train` (checkpoints, resume, stops, bad input)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import torch
from corpus import lockstep_positions

import engine
from agents import load_agent
from engine.classify import BEAROFF1, BEAROFF2, CONTACT, CRASHED, NAMES
from vrhcaby.base.config import load_config
from vrhcaby.cli import train
from vrhcaby.learn import distill
from vrhcaby.learn.distill import (
    DistillConfig,
    fit_epoch,
    held_out,
    label_source,
    load_labels,
    shard_files,
)
from vrhcaby.learn.labels import LabelConfig, Shard, make_shard, shard_meta
from vrhcaby.learn.students import SHUFFLE
from vrhcaby.nn import checkpoint, netset, onesided
from vrhcaby.nn.bearoff_db import database
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, load_evaluator
from vrhcaby.play.tournament import play_pair
from vrhcaby.training import run as training_run

ROOT = Path(__file__).resolve().parents[1]
TEACHER = ROOT / "checkpoints" / "td-80.pt"
NET = NetConfig(encoding="tesauro", hidden=(80,))
EPOCHS = 3


@pytest.fixture(scope="module")
def labels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three tiny shards of td-80's 1-ply labels (shard 0 is held out at holdout_every 3)."""
    out = tmp_path_factory.mktemp("labels")
    config = LabelConfig(
        name="tiny",
        teacher=str(TEACHER),
        plies=1,
        filter=(4,),
        shards=3,
        games_per_shard=4,
        sample=0.5,
        out_dir=str(out),
    )
    teacher = load_evaluator(TEACHER)
    for index in range(config.shards):
        make_shard(config, index, teacher).save(config.shard_path(index), shard_meta(config, index))
    return config.folder


# --- the fitting -------------------------------------------------------------------------


def test_fitting_lowers_the_training_loss(labels: Path) -> None:
    config = DistillConfig(labels=(str(labels),), batch_size=32, lr=1e-2, lr_end=1e-2)
    fitted, held = load_labels([labels], NET, config)
    assert len(fitted) > 100 and len(held) > 20
    torch.manual_seed(0)
    model = build_model(NET)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    before = held_out(model, fitted, config).loss
    generator = torch.Generator().manual_seed(1)
    for epoch in range(8):
        fit_epoch(model, optimizer, fitted, config, epoch, generator)
    after = held_out(model, fitted, config)
    assert after.loss < 0.3 * before
    assert np.isfinite(after.teacher_0ply_error) and after.equity_error > 0


def test_warmup_rises_linearly_then_follows_the_schedule(labels: Path) -> None:
    """`distill.warmup`: each optimizer step's learning rate, as the optimizer had it when
    stepping, over three epochs of a warm-up that ends inside the second, against the
    formula: the epoch's geometric rate times (step + 1) / warmup while warming up."""
    config = DistillConfig(batch_size=64, epochs=3, lr=1e-3, lr_end=1e-4, warmup=8)
    fitted, _ = load_labels([labels], NET, config)
    batches = -(-len(fitted) // config.batch_size)
    assert batches < config.warmup < 2 * batches  # it ends inside the second epoch
    torch.manual_seed(0)
    model = build_model(NET)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    rates: list[float] = []
    optimizer.register_step_pre_hook(lambda opt, *_: rates.append(opt.param_groups[0]["lr"]))
    generator = torch.Generator().manual_seed(1)
    for epoch in range(config.epochs):
        fit_epoch(model, optimizer, fitted, config, epoch, generator)
    want = []
    for epoch in range(config.epochs):
        epoch_rate = 1e-3 * (1e-4 / 1e-3) ** (epoch / 2)
        for batch in range(batches):
            step = epoch * batches + batch
            want.append(epoch_rate * min(1.0, (step + 1) / 8))
    np.testing.assert_allclose(rates, want, rtol=1e-12)
    assert rates[0] == pytest.approx(1e-3 / 8) and rates[9] == pytest.approx(1e-3 * 0.1**0.5)
    with pytest.raises(ValueError, match="warmup must be 0 or more"):
        DistillConfig(warmup=-1)


def test_held_out_scores_of_parts_average_to_the_whole(labels: Path) -> None:
    """Scores that are means over labels (the loss, the equity errors), weighted by the
    parts' labels (`HeldOut.mean`, how a set's students are reported as one), are those of
    the whole; the choice costs, means over decisions, are checked by a plain loop."""
    config = DistillConfig(labels=(str(labels),))
    fitted, _ = load_labels([labels], NET, config)
    torch.manual_seed(0)
    model = build_model(NET)
    decision = fitted.decision.numpy()
    cut = int(np.flatnonzero(decision != decision[len(decision) // 2])[-1]) + 1

    def part(rows: slice) -> distill.LabelSet:  # every per-label field cut to `rows`
        kept = [getattr(fitted, f.name) for f in fields(distill.LabelSet)]
        return distill.LabelSet(*(k if k is None or k is NET else k[rows] for k in kept))

    parts = [part(rows) for rows in (slice(0, cut), slice(cut, None))]
    whole = held_out(model, fitted, config)
    mean = distill.HeldOut.mean([(held_out(model, p, config), len(p)) for p in parts])
    for name in ("loss", "equity_error", "teacher_0ply_error"):
        assert getattr(mean, name) == pytest.approx(getattr(whole, name), rel=1e-5)
    assert mean.as_dict().keys() == {f.name for f in fields(distill.HeldOut)}
    values = distill.equity(fitted.targets.numpy())
    scores = distill.equity(distill.predictions(model, fitted, slice(None)).detach().numpy())
    costs = []
    for d in np.unique(decision):
        rows = np.flatnonzero(decision == d)
        costs.append(values[rows].max() - values[rows[np.argmax(scores[rows])]])
    assert whole.choice_cost == pytest.approx(float(np.mean(costs)), abs=1e-6)
    assert np.isnan(distill.HeldOut.mean([]).loss)


def test_classes_keep_the_labels_of_their_class_only(labels: Path) -> None:
    every, _ = load_labels([labels], NET, DistillConfig(holdout_every=3))
    names = {code: name for code, name in enumerate(NAMES)}
    kinds = [names[int(k)] for k in engine.classify_boards(every.after)]
    for chosen in (("contact",), ("race", "bearoff")):
        config = DistillConfig(holdout_every=3, classes=chosen)
        fitted, _ = load_labels([labels], NET, config)
        assert len(fitted) == sum(kind in chosen for kind in kinds) > 0
        assert {names[int(k)] for k in engine.classify_boards(fitted.after)} <= set(chosen)
    with pytest.raises(ValueError, match="unknown distill class 'races'"):
        DistillConfig(classes=("races",))


def test_shards_keeps_the_first_shards_of_each_folder(labels: Path) -> None:
    """`distill.shards` reads the shards whose index is below it, so a fit repeats on the
    labels it saw while its label run grows; every shard otherwise."""
    every = DistillConfig(holdout_every=0)
    first_two = DistillConfig(holdout_every=0, shards=2)
    fitted_all, _ = load_labels([labels], NET, every)
    fitted_two, _ = load_labels([labels], NET, first_two)
    shard_2 = Shard.load(labels / "shard-00002.npz")
    assert 0 < len(fitted_two) == len(fitted_all) - len(shard_2.after)
    assert len(load_labels([labels], NET, DistillConfig(holdout_every=0, shards=9))[0]) == len(
        fitted_all
    )
    with pytest.raises(ValueError, match="shards"):
        DistillConfig(shards=-1)


def reference_loss(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    after: np.ndarray,
    target: np.ndarray,
    weight: float,
) -> torch.Tensor:
    """The loss by hand, row by row: the rules' values put in as constants (the bear-off
    databases' whole row; no gammon for a side that has borne off, no backgammon in a race
    for a side with nothing left in the winner's home board or on the bar)."""
    rows = []
    for i in range(len(after)):
        c = model(inputs[i : i + 1])[0]
        p = [c[0], c[0] * c[1], c[0] * c[1] * c[2], (1 - c[0]) * c[3], (1 - c[0]) * c[3] * c[4]]
        zero = torch.tensor(0.0)
        kind = engine.classify_boards(after[i : i + 1])[0]
        if kind in (BEAROFF1, BEAROFF2):
            p = [torch.tensor(float(v)) for v in database().probabilities(after[i : i + 1])[0]]
        else:
            if after[i, 1].sum() < 15:  # the mover has borne off: it loses no gammon
                p[3] = p[4] = zero
            if after[i, 0].sum() < 15:
                p[1] = p[2] = zero
            if kind not in (CONTACT, CRASHED):
                if not after[i, 1, 18:25].any():
                    p[4] = zero
                if not after[i, 0, 18:25].any():
                    p[2] = zero
        t = [float(v) for v in target[i]]
        squares = sum((p[k] - t[k]) ** 2 for k in range(5))
        eq = 2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4] - (2 * t[0] - 1 + t[1] - t[3] + t[2] - t[4])
        rows.append(0.5 * squares + weight * 0.5 * eq**2)
    return torch.stack(rows).mean()


def grads(model: torch.nn.Module, value: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad()
    value.backward()
    return [
        p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()
    ]


def test_outputs_the_rules_decide_give_no_gradient(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    homes = np.zeros((200, 2, 25), np.int8)  # every checker in its home board: bear-offs
    for board, counts in zip(homes, rng.integers(1, 16, (200, 2)), strict=True):
        for side in (0, 1):
            np.add.at(board[side], rng.integers(0, 6, counts[side]), 1)
    _, after, _ = lockstep_positions(6, seed=5)
    after = np.concatenate([homes, after])
    after = after[(after.sum(axis=2) > 0).all(axis=1)]  # no finished games
    bearoff = np.isin(engine.classify_boards(after), (BEAROFF1, BEAROFF2))
    partly = ~bearoff & (after.sum(axis=2) < 15).any(axis=1)  # a side has borne off
    pick = [rng.choice(np.flatnonzero(m), 40) for m in (bearoff, partly, ~bearoff & ~partly)]
    after = after[np.concatenate(pick)]
    target = rng.random((len(after), 5)) * [1, 0.3, 0.1, 0.2, 0.05]
    shard = Shard(
        after=after,
        probabilities=target,
        zero_ply=target,
        decision=np.arange(len(after)),
        role=np.ones(len(after), np.uint8),
        boards=after,
        dice=np.ones((len(after), 2), np.int64),
        games=1,
        positions=len(after),
    )
    (tmp_path / "l").mkdir()
    shard.save(tmp_path / "l" / "shard-00001.npz", {"config": {"teacher": "x", "plies": 2}})
    config = DistillConfig(labels=(str(tmp_path / "l"),), holdout_every=0, equity_weight=0.7)
    data, held = load_labels([tmp_path / "l"], NET, config)
    assert len(data) == 120 and not len(held)
    torch.manual_seed(3)
    model = build_model(NET)
    target32 = target.astype(np.float16).astype(np.float32)  # as the shard stores them
    everything = torch.arange(len(data))
    got = distill.loss(model, data, everything, config)
    inputs = torch.from_numpy(np.asarray(NET.encode(after, None), np.float32))
    want = reference_loss(model, inputs, after, target32, 0.7)
    assert float(got.detach()) == pytest.approx(float(want.detach()), rel=1e-5)
    for g, w in zip(grads(model, got), grads(model, want), strict=True):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-7)
    only_bearoffs = distill.loss(model, data, torch.arange(40), config)
    assert float(only_bearoffs.detach()) > 0
    assert all(float(g.abs().max()) == 0 for g in grads(model, only_bearoffs))


# --- distillation runs -------------------------------------------------------------------


def write_config(tmp_path: Path, labels: Path, **changes: str) -> Path:
    settings = {
        "name": '"fit"',
        "seed": "3",
        "init_from": f'"{TEACHER}"',
        "checkpoint_dir": f'"{tmp_path / "ck"}"',
        "runs_dir": f'"{tmp_path / "runs"}"',
        "checkpoint_every": "1",
        "keep": "5",
        **changes,
    }
    lines = [f"{key} = {value}" for key, value in settings.items()]
    lines += ["[net]", 'encoding = "tesauro"', "hidden = [80]"]
    lines += ["[distill]", f'labels = ["{labels}"]', f"epochs = {EPOCHS}", "batch_size = 16"]
    lines += ["lr = 1e-3", "lr_end = 1e-4", "holdout_every = 3"]
    path = tmp_path / "fit.toml"
    tmp_path.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def run_train(config: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = train.main(["--config", str(config), "--no-progress", *extra])
    return code, out.getvalue(), err.getvalue()


def saved(directory: Path, epochs: int) -> dict[str, np.ndarray]:
    path = directory / f"fit-g{epochs:09d}.pt"
    arrays, meta = checkpoint.load(path, training=True, sets=True)
    assert meta["games"] == epochs
    return arrays


@pytest.fixture(scope="module")
def uninterrupted(labels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("full")
    code, out, err = run_train(write_config(tmp, labels))
    assert code == 0, err
    assert "started from the network of" in out and f"epoch {EPOCHS}/{EPOCHS}" in out
    return tmp


def test_a_run_writes_epoch_checkpoints_and_the_best_by_held_out_loss(uninterrupted: Path) -> None:
    ck = checkpoint.CheckpointDir(uninterrupted / "ck", "fit")
    assert [p.name for p in ck.snapshots()] == [f"fit-g{e:09d}.pt" for e in range(1, EPOCHS + 1)]
    losses = {}
    for path in ck.snapshots():
        _, meta = checkpoint.load(path, training=True)
        scores = meta["distill"]["scores"]
        assert scores["train_loss"] > 0 and scores["equity_error"] > 0
        assert meta["distill"]["labels"] == {"teacher": str(TEACHER), "plies": 1}
        losses[meta["games"]] = scores["loss"]
    _, best = checkpoint.load(ck.best_path)
    assert best["best_by"] == "held_out_loss"
    assert best["distill"]["scores"]["loss"] == min(losses.values()) == -best["best"]
    weights = saved(uninterrupted / "ck", EPOCHS)["model/0.weight"]
    assert not np.array_equal(weights, checkpoint.load(TEACHER)[0]["model/0.weight"])
    assert any(Path(best["run_dir"]).glob("events.out.tfevents.*"))


def test_the_written_network_loads_and_plays(uninterrupted: Path) -> None:
    path = uninterrupted / "ck" / "fit-best.pt"
    assert load_evaluator(path).net == NET
    result = play_pair(load_agent(f"td:{path}"), load_agent("random"), games=2, seed=1)
    assert result.games == 2


def assert_same_run(directory: Path, reference: Path) -> None:
    got, want = saved(directory, EPOCHS), saved(reference, EPOCHS)
    assert got.keys() == want.keys() and SHUFFLE in got
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_a_resumed_run_is_the_uninterrupted_one(
    tmp_path: Path, labels: Path, uninterrupted: Path
) -> None:
    shutil.copytree(uninterrupted / "ck", tmp_path / "ck")
    for epoch in range(2, EPOCHS + 1):
        (tmp_path / "ck" / f"fit-g{epoch:09d}.pt").unlink()
    code, out, err = run_train(write_config(tmp_path, labels), "--resume")
    assert code == 0, err
    assert "after epoch 1" in out
    assert_same_run(tmp_path / "ck", uninterrupted / "ck")


def test_encoding_each_batch_fits_as_encoding_ahead(
    tmp_path: Path, labels: Path, uninterrupted: Path
) -> None:
    """A fit that encodes each batch as it is drawn is the fit that encodes ahead, bit for
    bit, and either may resume the other's run (a fit that ran out of memory resumes with
    the setting off)."""
    config = write_config(tmp_path, labels)
    lazy = DistillConfig(labels=(str(labels),), holdout_every=3, encode_ahead=False)
    fitted, held = load_labels([labels], NET, lazy)
    assert fitted.encoded is None and len(fitted) and len(held)
    rows = torch.tensor([len(fitted) - 1, 0, 3])
    plain = torch.from_numpy(np.asarray(NET.encode(fitted.after[[-1, 0, 3]], None), np.float32))
    assert torch.equal(fitted.inputs(rows), plain)
    shutil.copytree(uninterrupted / "ck", tmp_path / "ck")
    for epoch in range(2, EPOCHS + 1):
        (tmp_path / "ck" / f"fit-g{epoch:09d}.pt").unlink()
    code, out, err = run_train(config, "--resume", "--set", "distill.encode_ahead=false")
    assert code == 0 and "after epoch 1" in out, err
    assert_same_run(tmp_path / "ck", uninterrupted / "ck")


def test_ctrl_c_saves_the_epoch_and_resumes_exactly(
    tmp_path: Path, labels: Path, uninterrupted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(model, optimizer, data, config, epoch, generator):
        if epoch == 1:  # during the second epoch
            os.kill(os.getpid(), signal.SIGINT)
        return fit_epoch(model, optimizer, data, config, epoch, generator)

    config = write_config(tmp_path, labels)
    with monkeypatch.context() as patch:
        patch.setattr(training_run, "fit_epoch", interrupted)
        code, _, err = run_train(config)
    assert code == 128 + signal.SIGINT and "--resume" in err, err
    latest = checkpoint.CheckpointDir(tmp_path / "ck", "fit").latest()
    assert latest is not None and latest.name == "fit-g000000002.pt"
    code, out, err = run_train(config, "--resume")
    assert code == 0 and "after epoch 2" in out, err
    assert_same_run(tmp_path / "ck", uninterrupted / "ck")


def one_line_error(result: tuple[int, str, str], text: str) -> None:
    code, _, err = result
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and text in lines[0], err


def test_bad_input_is_one_line(tmp_path: Path, labels: Path, uninterrupted: Path) -> None:
    config = write_config(tmp_path, labels)
    one_line_error(run_train(config, "--set", 'init_from=""'), "set init_from")
    one_line_error(run_train(config, "--set", f"init_from={tmp_path / 'no.pt'}"), "no.pt")
    missing = f"distill.labels=[{str(tmp_path / 'none')!r}]"
    one_line_error(run_train(config, "--set", missing), "not found")
    (tmp_path / "empty").mkdir()
    empty = f"distill.labels=[{str(tmp_path / 'empty')!r}]"
    one_line_error(run_train(config, "--set", empty), "no label shards")
    other = tmp_path / "other"
    other.mkdir()
    shard = Shard.load(labels / "shard-00001.npz")
    shard.save(other / "shard-00004.npz", {"config": {"teacher": "td-best", "plies": 1}})
    mixed = f"distill.labels=[{str(labels)!r}, {str(other)!r}]"
    one_line_error(run_train(config, "--set", mixed), "different teacher: ")
    (other / "shard-00005.npz").write_bytes(b"no shard")
    broken = f"distill.labels=[{str(other)!r}]"
    one_line_error(run_train(config, "--set", broken), "not a label shard")
    one_line_error(run_train(config, "--resume"), "nothing to resume")
    one_line_error(run_train(config, "--set", "net.hidden=[40]"), "cannot start a 198-40-5")
    finished = write_config(tmp_path, labels, checkpoint_dir=f'"{uninterrupted / "ck"}"')
    one_line_error(run_train(finished), "already has checkpoints")


def test_mix_teachers_fits_folders_of_two_teachers_together(tmp_path: Path, labels: Path) -> None:
    """Refused by default, the two folders are fitted together with `mix_teachers`: every
    shard read, both teachers and depths recorded, one decision's labels from one teacher."""
    other = tmp_path / "other"
    other.mkdir()
    shard = Shard.load(labels / "shard-00001.npz")
    shard.save(other / "shard-00004.npz", {"config": {"teacher": "td-best", "plies": 2}})
    alone = label_source(shard_files([labels], 0))
    assert alone == {"teacher": str(TEACHER), "plies": 1}
    files = shard_files([labels, other], 0)
    with pytest.raises(ValueError, match="mix_teachers"):
        label_source(files)
    assert label_source(files, mix=True) == {
        "teacher": [str(TEACHER), "td-best"],
        "plies": [1, 2],
    }
    mixed = f"distill.labels=[{str(labels)!r}, {str(other)!r}]"
    config = write_config(tmp_path, labels)
    code, out, err = run_train(config, "--set", mixed, "--set", "distill.mix_teachers=true")
    assert code == 0, err
    one, _ = load_labels([labels], NET, DistillConfig(labels=(str(labels),), holdout_every=3))
    both, _ = load_labels([labels, other], NET, DistillConfig(labels=(), holdout_every=3))
    assert len(both) == len(one) + len(shard.after)  # shard 4 is fitted (4 % 3 != 0)
    assert f"{len(both)} fitted" in out and "from 4 shards" in out
    _, meta = checkpoint.load(tmp_path / "ck" / f"fit-g{EPOCHS:09d}.pt", training=True)
    assert meta["distill"]["labels"] == {"teacher": [str(TEACHER), "td-best"], "plies": [1, 2]}
    assert meta["distill"]["fitted"] == len(both)


# --- network sets ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def network_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """td-80's network as a set's contact and race networks, crashed falling back."""
    teacher = load_evaluator(TEACHER)
    assert isinstance(teacher, Evaluator)
    path = tmp_path_factory.mktemp("set") / "set.pt"
    netset.save(
        netset.from_networks({"contact": teacher, "race": teacher}, {"crashed": "contact"}), path
    )
    return path


@pytest.fixture(scope="module")
def set_run(labels: Path, network_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("setrun")
    code, _, err = run_train(write_config(tmp, labels, init_from=f'"{network_set}"'))
    assert code == 0, err
    return tmp


def test_a_set_is_fitted_class_by_class_as_single_runs_of_its_classes(
    tmp_path: Path, labels: Path, set_run: Path
) -> None:
    """Each network of the set ends as a single-network run on the labels of the classes
    it answers ends; the bear-offs train none of them."""
    got = saved(set_run / "ck", EPOCHS)
    for name, classes in (("contact", '["contact", "crashed"]'), ("race", '["race"]')):
        config = write_config(tmp_path / name, labels)
        code, _, err = run_train(config, "--set", f"distill.classes={classes}")
        assert code == 0, err
        want = saved(tmp_path / name / "ck", EPOCHS)
        for key in ("model/0.weight", "model/0.bias", "model/2.weight", "model/2.bias"):
            np.testing.assert_array_equal(got[f"set/{name}/{key}"], want[key], err_msg=key)
    _, meta = checkpoint.load(set_run / "ck" / f"fit-g{EPOCHS:09d}.pt", training=True, sets=True)
    shards = [Shard.load(labels / f"shard-0000{i}.npz") for i in (1, 2)]
    kinds = engine.classify_boards(np.concatenate([s.after for s in shards]))
    networked = np.isin(kinds, [NAMES.index(c) for c in ("contact", "crashed", "race")])
    assert meta["distill"]["fitted"] == networked.sum() < len(kinds)


def test_a_fitted_set_loads_plays_and_resumes_exactly(
    tmp_path: Path, labels: Path, network_set: Path, set_run: Path
) -> None:
    best = set_run / "ck" / "fit-best.pt"
    assert isinstance(load_evaluator(best), netset.NetworkSet)
    result = play_pair(load_agent(f"td:{best}"), load_agent("random"), games=2, seed=1)
    assert result.games == 2
    shutil.copytree(set_run / "ck", tmp_path / "ck")
    for epoch in range(2, EPOCHS + 1):
        (tmp_path / "ck" / f"fit-g{epoch:09d}.pt").unlink()
    code, out, err = run_train(
        write_config(tmp_path, labels, init_from=f'"{network_set}"'), "--resume"
    )
    assert code == 0 and "after epoch 1" in out, err
    got, want = saved(tmp_path / "ck", EPOCHS), saved(set_run / "ck", EPOCHS)
    assert got.keys() == want.keys() and f"{SHUFFLE}/race" in got
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.fixture(scope="module")
def onesided_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """td-80's network for contact (crashed falling back) and a one-sided race evaluator
    of random weights."""
    rng = np.random.default_rng(5)
    shapes = [(8, onesided.INPUTS), (8,), (onesided.OUTPUTS, 8), (onesided.OUTPUTS,)]
    race = onesided.OneSidedNet(*(rng.normal(0, 0.3, s).astype(np.float32) for s in shapes))
    folder = tmp_path_factory.mktemp("onesided")
    onesided.save(race, folder / "race.pt")
    teacher = load_evaluator(TEACHER)
    assert isinstance(teacher, Evaluator)
    networks = {"contact": teacher, "race": onesided.load(folder / "race.pt")}
    return netset.save(netset.from_networks(networks, {"crashed": "contact"}), folder / "set.pt")


def test_a_set_with_the_one_sided_race_fits_its_network_and_carries_the_race(
    tmp_path: Path, labels: Path, onesided_set: Path
) -> None:
    """The contact network is fitted as a single run of the contact and crashed labels
    is; the one-sided race evaluator is in every checkpoint bit for bit, and the run
    resumes exactly."""
    config = write_config(tmp_path / "set", labels, init_from=f'"{onesided_set}"')
    code, _, err = run_train(config)
    assert code == 0, err
    got = saved(tmp_path / "set" / "ck", EPOCHS)
    single = write_config(tmp_path / "single", labels)
    code, _, err = run_train(single, "--set", 'distill.classes=["contact", "crashed"]')
    assert code == 0, err
    want = saved(tmp_path / "single" / "ck", EPOCHS)
    for key in ("model/0.weight", "model/0.bias", "model/2.weight", "model/2.bias"):
        np.testing.assert_array_equal(got[f"set/contact/{key}"], want[key], err_msg=key)
    scores = [
        checkpoint.load(tmp_path / run / "ck" / f"fit-g{EPOCHS:09d}.pt")[1]["distill"]["scores"]
        for run in ("set", "single")
    ]
    names = ["train_loss", "loss", "equity_error", "teacher_0ply_error", "choice_cost"]
    assert set(scores[1]) == {*names, "teacher_0ply_cost"}  # the JSON's field names
    assert set(scores[0]) == {*scores[1], "held_out_loss_contact"}
    assert scores[0]["held_out_loss_contact"] == scores[0]["loss"] == scores[1]["loss"]
    start, _ = checkpoint.load(onesided_set, "backgammon", sets=True)
    race = [key for key in start if key.startswith("set/race/")]
    assert len(race) == 4
    for key in race:
        np.testing.assert_array_equal(got[key], start[key], err_msg=key)
    best = load_evaluator(tmp_path / "set" / "ck" / "fit-best.pt")
    assert isinstance(best, netset.NetworkSet)
    assert isinstance(best.networks["race"], onesided.OneSidedRace)
    (tmp_path / "set" / "ck" / f"fit-g{EPOCHS:09d}.pt").unlink()
    code, out, err = run_train(config, "--resume")
    assert code == 0 and f"after epoch {EPOCHS - 1}" in out, err
    resumed = saved(tmp_path / "set" / "ck", EPOCHS)
    for key in got:
        np.testing.assert_array_equal(resumed[key], got[key], err_msg=key)


def test_grow_fits_a_wider_network_split_from_the_sets(
    tmp_path: Path, labels: Path, onesided_set: Path
) -> None:
    """`distill.grow`: the contact network becomes the run's `[net]` (80 -> 96 hidden
    units), its new units copies of saved ones, so the set first values positions almost
    as before; the fit then moves it, and the race evaluator stays as it was."""
    from vrhcaby.learn.students import SetTrainer

    arrays, meta = checkpoint.load(onesided_set, "backgammon", sets=True)
    wide = NetConfig(encoding="tesauro", hidden=(96,))
    trainer = SetTrainer.of(meta, "standard", 1e-3, 1, {"contact": wide})
    trainer.warm_start(arrays, meta, torch.Generator().manual_seed(3))
    grown = trainer.network_set({})
    before = load_evaluator(onesided_set)
    assert grown.networks["contact"].net == wide
    boards = lockstep_positions(30, seed=4)[1]
    np.testing.assert_allclose(grown.probabilities(boards), before.probabilities(boards), atol=0.01)
    assert np.abs(grown.probabilities(boards) - before.probabilities(boards)).max() > 0
    config = write_config(tmp_path, labels, init_from=f'"{onesided_set}"')
    changes = ["--set", "net.hidden=[96]", "--set", 'distill.grow=["contact"]']
    code, _, err = run_train(config, *changes)
    assert code == 0, err
    fitted = saved(tmp_path / "ck", EPOCHS)
    assert fitted["set/contact/model/0.weight"].shape == (96, 198)
    for key in [k for k in arrays if k.startswith("set/race/")]:
        np.testing.assert_array_equal(fitted[key], arrays[key], err_msg=key)
    assert (
        np.abs(
            load_evaluator(tmp_path / "ck" / "fit-best.pt").probabilities(boards)
            - grown.probabilities(boards)
        ).max()
        > 0.001
    )


def test_grow_deepens_the_sets_network_from_the_same_function(
    tmp_path: Path, labels: Path, onesided_set: Path
) -> None:
    """`distill.grow` to a `[net]` of two hidden layers: the contact network gains a ReLU
    identity layer (the set starts with its probabilities), the fit with a warm-up moves
    it, and the fitted set loads and plays with the race evaluator carried."""
    from vrhcaby.learn.students import SetTrainer

    arrays, meta = checkpoint.load(onesided_set, "backgammon", sets=True)
    deep = NetConfig("tesauro", (80, 80), "sigmoid", activations=("sigmoid", "relu"))
    trainer = SetTrainer.of(meta, "standard", 1e-3, 1, {"contact": deep})
    trainer.warm_start(arrays, meta, torch.Generator().manual_seed(3))
    grown = trainer.network_set({})
    before = load_evaluator(onesided_set)
    boards = lockstep_positions(30, seed=4)[1]
    np.testing.assert_allclose(grown.probabilities(boards), before.probabilities(boards), atol=1e-6)
    config = write_config(tmp_path, labels, init_from=f'"{onesided_set}"')
    changes = ["--set", "net.hidden=[80, 80]", "--set", 'net.activations=["sigmoid", "relu"]']
    changes += ["--set", 'distill.grow=["contact"]', "--set", "distill.warmup=20"]
    changes += ["--set", "distill.added_lr=0.1"]
    code, _, err = run_train(config, *changes)
    assert code == 0, err
    fitted = saved(tmp_path / "ck", EPOCHS)
    _, meta = checkpoint.load(tmp_path / "ck" / f"fit-g{EPOCHS:09d}.pt", training=True, sets=True)
    groups = meta["optimizer"]["param_groups"]  # the added layer's weight and bias: slower
    assert [len(g["params"]) for g in groups] == [4, 2] and groups[1]["lr_scale"] == 0.1
    assert groups[1]["lr"] == pytest.approx(0.1 * 1e-4) == pytest.approx(0.1 * groups[0]["lr"])
    (tmp_path / "ck" / f"fit-g{EPOCHS:09d}.pt").unlink()
    code, out, err = run_train(config, *changes, "--resume")
    assert code == 0 and f"after epoch {EPOCHS - 1}" in out, err
    resumed = saved(tmp_path / "ck", EPOCHS)
    for key in fitted:
        np.testing.assert_array_equal(resumed[key], fitted[key], err_msg=key)
    assert fitted["set/contact/model/2.weight"].shape == (80, 80)
    assert not np.array_equal(fitted["set/contact/model/2.weight"], np.eye(80))
    for key in [k for k in arrays if k.startswith("set/race/")]:
        np.testing.assert_array_equal(fitted[key], arrays[key], err_msg=key)
    best = tmp_path / "ck" / "fit-best.pt"
    assert load_evaluator(best).networks["contact"].net == deep  # type: ignore[union-attr]
    assert (
        np.abs(load_evaluator(best).probabilities(boards) - before.probabilities(boards)).max()
        > 1e-3
    )
    assert play_pair(load_agent(f"td:{best}"), load_agent("random"), games=2, seed=1).games == 2


def test_grow_names_what_it_cannot_grow(tmp_path: Path, labels: Path, onesided_set: Path) -> None:
    config = write_config(tmp_path, labels, init_from=f'"{onesided_set}"')
    wider = ["--set", "net.hidden=[96]"]
    one_line_error(run_train(config, *wider, "--set", 'distill.grow=["race"]'), "one-sided")
    one_line_error(
        run_train(config, *wider, "--set", 'distill.grow=["crashed"]'), "no network of its own"
    )
    one_line_error(run_train(config, *wider, "--set", 'distill.grow=["bearoff"]'), "unknown class")
    narrower = ["--set", "net.hidden=[40]", "--set", 'distill.grow=["contact"]']
    one_line_error(run_train(config, *narrower), "cannot start a 198-40-5")
    single = write_config(tmp_path / "single", labels)
    one_line_error(run_train(single, *wider, "--set", 'distill.grow=["contact"]'), "is not one")


def test_with_evaluations_the_best_is_the_evaluations(tmp_path: Path, labels: Path) -> None:
    config = write_config(tmp_path, labels)
    evaluated = [
        "--set",
        "eval.every=2",
        "--set",
        "eval.games=2",
        "--set",
        'eval.opponents=["random"]',
    ]
    code, out, err = run_train(config, *evaluated)
    assert code == 0, err
    assert "ppg vs random" in out and "epoch 3/3" in out
    _, best = checkpoint.load(tmp_path / "ck" / "fit-best.pt")
    assert best["best_by"] == "ppg" and best["evaluation"]["games"] in (2, 3)
    assert best["best"] == best["evaluation"]["random"]["ppg"]
    assert train.learner_threads(load_config(train.TrainConfig, config), "local", None) == 1
