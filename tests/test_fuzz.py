"""Hostile input, fuzzed: every checkpoint loader, the dice and position parsers, the
training settings and the command lines answer a bad value with one line naming what is
wrong (a ValueError in Python, exit status 2 on the command line), and a stopped command
keeps what it finished.

The expected answers come from the mutation itself (a test breaks a sound file in a known
way and looks for that reason) or from plain reference rules written here, never from the
code's own output. The long subprocess checks carry the `slow` marker.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from agents import load_agent
from vrhcaby.base.config import ConfigError, flatten, load_config
from vrhcaby.cli import main as cli
from vrhcaby.cli import train
from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import NetConfig, load_evaluator
from vrhcaby.sixdice.learner import SheetNetConfig, SixDice, load_net

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "tests" / "configs" / "smoke.toml")
START = "4HPwATDgc/ABMA"
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- checkpoints ------------------------------------------------------------------------


def training_state(game: str = "backgammon") -> tuple[dict, dict]:
    """A sound training checkpoint's contents: a tiny network after no games."""
    if game == "sixdice":
        trainer = Trainer.for_game(
            SixDice(SheetNetConfig((4,))), TDConfig(), 10, 1, torch.device("cpu")
        )
    else:
        trainer = Trainer(
            NetConfig("tesauro", (4,)),
            TDConfig(optimizer="adam"),
            "standard",
            10,
            1,
            torch.device("cpu"),
        )
        trainer.model(torch.ones(1, 198)).sum().backward()
        trainer.optimizer.step()  # some optimizer state to save
    arrays, meta = trainer.state()
    return arrays, {**meta, "config": {"variant": "standard"}, "run_dir": "runs/x"}


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> dict[str, tuple[dict, dict]]:
    return {game: training_state(game) for game in ("backgammon", "sixdice")}


def _without(d: dict, key: str) -> dict:
    return {k: v for k, v in d.items() if k != key}


def _set(arrays: dict, name: str, value) -> dict:
    return {**arrays, name: value}


def _nan_at(a: np.ndarray, value: float = np.nan) -> np.ndarray:
    a = a.copy()
    a.flat[a.size // 2] = value
    return a


#: (name, game, how to break (arrays, meta), words the one-line error must hold).
BREAKS = [
    (
        "nan weight",
        "backgammon",
        lambda a, m: (_set(a, "model/0.weight", _nan_at(a["model/0.weight"])), m),
        "non-finite",
    ),
    (
        "inf bias",
        "backgammon",
        lambda a, m: (_set(a, "model/2.bias", _nan_at(a["model/2.bias"], np.inf)), m),
        "non-finite",
    ),
    (
        "nan optimizer",
        "backgammon",
        lambda a, m: (_set(a, "optim/0/exp_avg", _nan_at(a["optim/0/exp_avg"])), m),
        "non-finite",
    ),
    (
        "1-D weight",
        "backgammon",
        lambda a, m: (_set(a, "model/0.weight", a["model/0.weight"][0]), m),
        "2-D weight",
    ),
    ("missing bias", "backgammon", lambda a, m: (_without(a, "model/2.bias"), m), "model/2.bias"),
    (
        "extra layer",
        "backgammon",
        lambda a, m: ({**a, "model/4.weight": a["model/2.weight"]}, m),
        "more layers",
    ),
    ("config a number", "backgammon", lambda a, m: (a, {**m, "config": 3}), "'config'"),
    ("net a string", "backgammon", lambda a, m: (a, {**m, "net": "198-4-5"}), "'net'"),
    (
        "hidden strings",
        "backgammon",
        lambda a, m: (a, {**m, "net": {**m["net"], "hidden": ["4"]}}),
        "'hidden'",
    ),
    (
        "hidden disagrees",
        "backgammon",
        lambda a, m: (a, {**m, "net": {**m["net"], "hidden": [5]}}),
        "description",
    ),
    ("games a string", "backgammon", lambda a, m: (a, {**m, "games": "many"}), "'games'"),
    ("game unknown", "backgammon", lambda a, m: (a, {**m, "game": "chess"}), "'game'"),
    (
        "variant a list",
        "backgammon",
        lambda a, m: (a, {**m, "config": {"variant": ["standard"]}}),
        "variant",
    ),
    (
        "text array",
        "backgammon",
        lambda a, m: (_set(a, "model/0.bias", np.array(["x"] * 4)), m),
        "not numbers",
    ),
    (
        "six-dice hidden disagrees",
        "sixdice",
        lambda a, m: (a, {**m, "net": {"hidden": [8]}}),
        "description",
    ),
    (
        "six-dice missing layer",
        "sixdice",
        lambda a, m: (_without(a, "model/body.2.weight"), m),
        "model/body.2.weight",
    ),
    (
        "six-dice nan",
        "sixdice",
        lambda a, m: (_set(a, "model/body.0.bias", _nan_at(a["model/body.0.bias"])), m),
        "non-finite",
    ),
]


def loaders(game: str) -> list:
    """Every way the project opens a `game` network file (each must refuse a bad one)."""
    if game == "sixdice":
        return [
            load_net,
            lambda p: checkpoint.load(p, "sixdice"),
            lambda p: checkpoint.load(p, training=True),
        ]
    return [
        load_evaluator,
        lambda p: load_agent(f"td:{p}"),
        lambda p: checkpoint.load(p, "backgammon"),
        lambda p: checkpoint.load(p, training=True),
    ]


def refused(load, path: Path, *words: str) -> str:
    with pytest.raises(checkpoint.CheckpointError) as info:
        load(path)
    message = str(info.value)
    assert len(message.splitlines()) == 1 and str(path) in message, message
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize(("name", "game", "breaks", "word"), BREAKS, ids=[b[0] for b in BREAKS])
def test_every_loader_refuses_a_broken_checkpoint(tmp_path, sound, name, game, breaks, word):
    arrays, meta = sound[game]
    checkpoint.load(checkpoint.save(tmp_path / "sound.pt", arrays, meta), training=True)
    path = checkpoint.save(tmp_path / "broken.pt", *breaks(dict(arrays), dict(meta)))
    for load in loaders(game):
        refused(load, path, word)


def test_files_that_are_no_checkpoint_are_refused_by_every_loader(tmp_path):
    npy = tmp_path / "weights.npy"
    np.save(npy, np.zeros((3, 3)))
    empty = tmp_path / "empty.pt"
    zipfile.ZipFile(empty, "w").close()
    no_meta = tmp_path / "no-meta.pt"
    with open(no_meta, "wb") as f:
        np.savez(f, x=np.zeros(2))
    text_member = tmp_path / "text.pt"
    with zipfile.ZipFile(text_member, "w") as z:
        z.writestr("meta", "{}")
    pickled = tmp_path / "torch.pt"
    torch.save({"model": torch.zeros(2)}, pickled)
    cases = [
        (npy, ".npy"),
        (empty, "meta"),
        (no_meta, "meta"),
        (text_member, "no array"),
        (pickled, "not"),
        (tmp_path, "directory"),
        (tmp_path / "none.pt", "not found"),
    ]
    for path, word in cases:
        for game in ("backgammon", "sixdice"):
            for load in loaders(game):
                with pytest.raises(checkpoint.CheckpointError) as info:
                    load(path)
                assert word in str(info.value) and len(str(info.value).splitlines()) == 1


def test_a_network_without_training_state_plays_but_cannot_resume(tmp_path, sound):
    arrays, meta = sound["backgammon"]
    weights = {k: v for k, v in arrays.items() if k.startswith("model/")}
    cases = {
        "no optimizer": (arrays, _without(meta, "optimizer")),
        "no torch rng": (_without(arrays, "rng/torch"), meta),
        "no dice rng": (arrays, _without(meta, "rng")),
        "no optimizer array": (_without(arrays, "optim/0/exp_avg"), meta),
        "only weights": (weights, {"net": meta["net"]}),
    }
    for name, (a, m) in cases.items():
        path = checkpoint.save(tmp_path / f"{name}.pt", a, m)
        assert load_evaluator(path).net == NetConfig("tesauro", (4,))
        refused(lambda p: checkpoint.load(p, training=True), path)


def test_a_network_description_the_code_cannot_build_is_refused(tmp_path, sound):
    arrays, meta = sound["backgammon"]
    cases = {
        "encoding": ({**meta, "net": {**meta["net"], "encoding": "braille"}}, "braille"),
        "inputs": ({**meta, "net": {**meta["net"], "encoding": "rich"}}, "198"),
        "activation": ({**meta, "net": {**meta["net"], "activation": "gelu"}}, "gelu"),
        "variant": ({**meta, "config": {"variant": "hypergammon"}}, "hypergammon"),
    }
    for name, (m, word) in cases.items():
        path = checkpoint.save(tmp_path / f"{name}.pt", arrays, m)
        for load in (load_evaluator, lambda p: load_agent(f"td:{p}")):
            refused(load, path, word)


@pytest.fixture(scope="module")
def sound_bytes(tmp_path_factory, sound) -> bytes:
    return checkpoint.save(
        tmp_path_factory.mktemp("sound") / "s.pt", *sound["backgammon"]
    ).read_bytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_checkpoint_with_random_damage_loads_or_is_one_line(tmp_path_factory, sound_bytes, data):
    """Mutation: bytes flipped, cut or inserted anywhere in a sound file."""
    raw = bytearray(sound_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        how = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if how == "flip":
            raw[at] ^= data.draw(st.integers(1, 255))
        elif how == "cut":
            del raw[at : at + data.draw(st.integers(1, 64))]
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    path = tmp_path_factory.mktemp("damaged") / "damaged.pt"
    path.write_bytes(bytes(raw))
    for load in loaders("backgammon"):
        try:
            loaded = load(path)
        except checkpoint.CheckpointError as exc:
            assert len(str(exc).splitlines()) == 1 and str(path) in str(exc)
        else:
            if isinstance(loaded, tuple):  # checkpoint.load: every number finite
                assert all(np.isfinite(a).all() for a in loaded[0].values() if a.dtype.kind == "f")


def test_resume_skips_unsound_snapshots_and_removes_stale_temporary_files(tmp_path, sound):
    arrays, meta = sound["backgammon"]
    ck = checkpoint.CheckpointDir(tmp_path, "run", keep=5)
    ck.save(32, arrays, {**meta, "games": 32}, best=False)
    ck.save(64, arrays, {**meta, "games": 64}, best=True)
    np.save(tmp_path / "x.npy", np.zeros(2))
    os.replace(tmp_path / "x.npy", tmp_path / "run-g000000096.pt")
    (tmp_path / "run-g000000128.pt").write_bytes(b"half a checkpoint")
    stale = [
        tmp_path / ".run-g000000160.pt.a1b2.tmp",
        tmp_path / ".run-best.pt.zz.tmp",
        tmp_path / ".best.old.tmp",
    ]
    kept = [tmp_path / ".other-g000000160.pt.a1b2.tmp", tmp_path / "notes.tmp"]
    for p in stale + kept:
        p.write_bytes(b"")
    path, _, got, skipped = ck.latest_sound()
    assert path.name == "run-g000000064.pt" and got["games"] == 64
    assert ["run-g000000128.pt" in skipped[0], "run-g000000096.pt" in skipped[1]] == [True] * 2
    assert sorted(ck.remove_stale()) == sorted(stale)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in stale)
    for p in ck.snapshots()[:2]:
        p.unlink()
    for p in ck.snapshots():
        p.write_bytes(b"junk")
    with pytest.raises(checkpoint.CheckpointError, match="no sound checkpoint of run 'run'"):
        ck.latest_sound()


# --- the commands that load checkpoints ---------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def one_line(code: int, err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    for word in words:
        assert word in lines[0], err


def test_every_command_answers_a_broken_checkpoint_with_one_line(tmp_path, sound):
    arrays, meta = sound["backgammon"]
    nan = checkpoint.save(
        tmp_path / "nan.pt", _set(arrays, "model/0.weight", _nan_at(arrays["model/0.weight"])), meta
    )
    npy = tmp_path / "w.npy"
    np.save(npy, np.zeros(3))
    six = checkpoint.save(tmp_path / "six.pt", *sound["sixdice"])
    for path, word in ((nan, "non-finite"), (npy, ".npy"), (six, "sixdice network")):
        for argv in (
            ["hint", START, "31", "--agent", f"td:{path}"],
            ["eval", START, "--agent", f"td:{path}"],
            ["tournament", f"td:{path}", "random", "--games", "2", "--jobs", "1"],
            ["rollout", START, "--evaluator", str(path), "--trials", "1"],
            ["rollout", START, "--agent", f"td:{path}", "--trials", "1"],
            ["external", "--port", "0", "--agent", f"td:{path}"],
        ):
            code, _, err = run_cli(argv)
            one_line(code, err, str(path), word)
    bad_six = checkpoint.save(
        tmp_path / "six-bad.pt",
        sound["sixdice"][0],
        {**sound["sixdice"][1], "net": {"hidden": [9]}},
    )
    for path in (bad_six, npy, nan):
        code, _, err = run_cli(["dice", "tournament", f"td:{path}", "greedy", "--games", "2"])
        one_line(code, err, str(path))


# --- training settings ------------------------------------------------------------------


def run_train(tmp_path: Path, *extra: str) -> tuple[int, str]:
    base = [
        "--config",
        SMOKE,
        "--no-progress",
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
    ]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = train.main([*base, *extra])
        except SystemExit as exc:  # argparse
            code = exc.code
    return code, err.getvalue()


BAD_SETTINGS = [
    (["--set", "threads=-1"], "threads"),
    (["--set", "eval.every=32", "--set", "eval.opponents=[]"], "eval.opponents"),
    (["--set", "eval.every=32", "--set", "eval.opponents=['nobody']"], "nobody"),
    (["--set", "eval.every=-32"], "eval.every"),
    (["--set", "eval.games=0"], "eval.games"),
    (["--config", str(ROOT / "configs")], "is a directory"),
    (["--set", f"checkpoint_dir={ROOT / 'README.md'}"], "checkpoint_dir"),
    (["--set", f"checkpoint_dir={ROOT / 'README.md' / 'deeper'}"], "checkpoint_dir"),
    (["--set", f"runs_dir={ROOT / 'README.md'}"], "runs_dir"),
    (["--set", "name="], "name"),
    (["--set", "name=a/b"], "name"),
    (["--set", "td.lr=nan"], "td.lr"),
    (["--set", "td.lr=inf"], "td.lr"),
    (["--set", "td.lr_end=-inf"], "td.lr_end"),
    (["--set", "td.lr=0"], "lr"),
    (["--set", "td.lr=1e300"], "lr"),
    (["--set", "eval.seed=-1"], "eval.seed"),
    (["--set", "td.epsilon=nan"], "td.epsilon"),
    (["--set", "td.lam=1.5"], "lam"),
    (["--set", "seed=-1"], "seed"),
    (["--set", "keep=0"], "keep"),
    (["--set", "games=0"], "games"),
    (["--set", "ray.cpus_per_worker=inf"], "ray.cpus_per_worker"),
    (["--set", f"init_from={ROOT / 'README.md'}"], "README.md"),
    (["--set", f"init_from={ROOT / 'checkpoints' / 'sixdice-td.pt'}"], "sixdice network"),
    (["--workers", "x"], "--workers"),
]


@pytest.mark.parametrize(("extra", "word"), BAD_SETTINGS, ids=[w for _, w in BAD_SETTINGS])
def test_a_bad_setting_is_one_line_before_the_first_game(tmp_path, extra, word):
    code, err = run_train(tmp_path, *extra)
    one_line(code, err, word)
    assert not (tmp_path / "ck").exists() and not (tmp_path / "runs").exists()


def test_resume_without_a_sound_checkpoint_is_one_line(tmp_path, sound):
    (tmp_path / "ck").mkdir()
    np.save(tmp_path / "ck" / "smoke-g000000032.npy", np.zeros(2))
    os.replace(tmp_path / "ck" / "smoke-g000000032.npy", tmp_path / "ck" / "smoke-g000000032.pt")
    arrays, meta = sound["backgammon"]
    checkpoint.save(tmp_path / "ck" / "smoke-g000000064.pt", arrays, _without(meta, "optimizer"))
    code, err = run_train(tmp_path, "--resume")
    one_line(code, err, "no sound checkpoint", "optimizer", ".npy")


FLOAT_KEYS = [k for k, v in flatten(train.TrainConfig()).items() if isinstance(v, float)]


@FAST
@given(st.sampled_from(FLOAT_KEYS), st.sampled_from(["nan", "inf", "-inf", "+inf", "-nan"]))
def test_no_float_setting_takes_a_non_finite_value(key, value):
    with pytest.raises(ConfigError, match=f"'{key}' must be a finite number"):
        load_config(train.TrainConfig, None, [f"{key}={value}"])


# --- dice, positions and plays ---------------------------------------------------------


def reference_dice(text: str) -> tuple[int, int] | None:
    """The documented syntax, read the plain way: spaces around ignored, then two ASCII
    digits 1-6 with at most one '-', ',' or space between them."""
    s = text.strip(" ")
    if len(s) == 3 and s[1] in "-, ":
        s = s[0] + s[2]
    if len(s) == 2 and all(c in "123456" for c in s):
        return int(s[0]), int(s[1])
    return None


DICE_TEXT = st.one_of(
    st.text(alphabet="0123456789-, /\t\u00a0\u0663\uff13xX+", max_size=6),
    st.text(max_size=5),
    st.sampled_from(
        [
            "31",
            "3-1",
            "3,1",
            "3 1",
            " 66 ",
            "-3-1",
            "3--1",
            "71",
            "٣١",
            "３１",
            "3\u00a01",
            "3\t1",
            "3/1",
            "31 ",
            "0 1",
            "+3+1",
        ]
    ),
)


@FAST
@given(DICE_TEXT)
def test_the_dice_parser_reads_exactly_the_documented_syntax(text):
    want = reference_dice(text)
    if want is not None:
        assert engine.parse_dice(text) == want
    else:
        with pytest.raises(ValueError) as info:
            engine.parse_dice(text)
        assert str(info.value).startswith("dice ") and engine.play.DICE_SYNTAX in str(info.value)


BAD_DICE = DICE_TEXT.filter(
    lambda t: reference_dice(t) is None and t.strip() and not t.startswith("-") and "\x00" not in t
)


@settings(max_examples=40, deadline=None)
@given(BAD_DICE)
def test_moves_hint_and_rollout_refuse_bad_dice_with_one_message(text):
    answers = []
    for verb, extra in (("moves", []), ("hint", ["--plies", "0"]), ("rollout", ["--trials", "1"])):
        code, _, err = run_cli([verb, START, text, *extra])
        one_line(code, err, "dice ")
        answers.append(err.strip().split(": error: ", 1)[1])
    assert answers[0] == answers[1] == answers[2]


@FAST
@given(
    st.one_of(
        st.none(),
        st.integers(),
        st.floats(),
        st.booleans(),
        st.binary(max_size=4),
        st.text(max_size=4),
        st.tuples(
            st.one_of(st.integers(-2, 9), st.floats(0, 7), st.booleans(), st.none()),
            st.one_of(st.integers(-2, 9), st.floats(0, 7), st.booleans(), st.none()),
        ),
        st.lists(st.integers(1, 6), max_size=4),
    )
)
def test_check_dice_takes_two_integers_from_1_to_6_only(dice):
    def die(d: object) -> bool:
        return isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6

    good = isinstance(dice, tuple | list) and len(dice) == 2 and all(map(die, dice))
    if good:
        assert engine.check_dice(dice) == tuple(dice)
    else:
        with pytest.raises(ValueError):
            engine.check_dice(dice)
        position = engine.Position.start()
        with pytest.raises(ValueError):
            engine.Play.parse("8/5 6/5", position, dice)
        with pytest.raises(ValueError):
            engine.legal_plays(position, dice)


def test_numpy_dice_are_integers_too():
    assert engine.check_dice(np.array([3, 1])) == (3, 1)
    assert engine.check_dice((np.int8(6), np.int64(6))) == (6, 6)
    with pytest.raises(ValueError, match="integer"):
        engine.check_dice(np.array([3.0, 1.0]))


@FAST
@given(
    st.one_of(
        st.none(),
        st.integers(),
        st.floats(),
        st.binary(),
        st.lists(st.text()),
        st.booleans(),
        st.dictionaries(st.text(), st.text()),
    )
)
def test_positions_and_plays_that_are_not_text_are_value_errors(value):
    with pytest.raises(ValueError, match="a position is text"):
        engine.parse_position(value)
    with pytest.raises(engine.InvalidPlayError, match="a play is text"):
        engine.Play.parse(value, engine.Position.start(), (3, 1))


# --- command lines ------------------------------------------------------------------------


def test_dice_may_follow_options():
    # The first evaluation in a process may run in numpy, later ones in the compiled
    # kernels, which differ in the sixth decimal: compare two answers after the first.
    run_cli(["hint", START, "31", "--plies", "0", "--json"])
    before = run_cli(["hint", START, "31", "--plies", "0", "--json"])
    after = run_cli(["hint", START, "--plies", "0", "--json", "31"])
    assert before[0] == after[0] == 0 and before[1] == after[1]
    assert json.loads(after[1])["dice"] == [3, 1]
    moves = run_cli(["moves", START, "--json", "3-1"])
    assert moves[0] == 0 and json.loads(moves[1])["dice"] == [3, 1]
    code, _, err = run_cli(["hint", START, "--plies", "0", "31", "52"])
    one_line(code, err, "unrecognized arguments: 52")


BAD_FLAGS = [
    ["hint", START, "31", "--plies", "x"],
    ["hint", START, "31", "--plies", "5"],
    ["hint", START, "--candidates", "1.5"],
    ["rollout", START, "--trials", "many"],
    ["rollout", START, "--jobs", ""],
    ["tournament", "random", "pubeval", "--games", "1e3"],
    ["moves", START, "31", "--bogus"],
    ["external", "--port", "eighty"],
    ["dice", "tournament", "random", "--games", "x"],
    ["cube", START, "--max-cube", "big"],
    ["train", "--workers", "x"],
]


@pytest.mark.parametrize("argv", BAD_FLAGS)
def test_a_bad_flag_is_the_error_line_alone(argv):
    code, out, err = run_cli(argv)
    one_line(code, err, "error:")
    assert "usage:" not in err and out == ""


def test_tournament_out_must_be_a_directory(tmp_path):
    file = tmp_path / "results.txt"
    file.write_text("mine")
    for out in (file, file / "deeper"):
        code, _, err = run_cli(["tournament", "random", "pubeval", "--out", str(out)])
        one_line(code, err, "--out", "is a file")
    assert file.read_text() == "mine"


# --- signals: finished work is kept, 130 after SIGINT, 143 after SIGTERM ------------------


def background(argv: list[str], **kw) -> subprocess.Popen:
    """`vrhcaby ARGV` as a non-interactive shell starts a background job: SIGINT ignored."""
    return subprocess.Popen(
        [sys.executable, "-m", "vrhcaby.cli.main", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        **kw,
    )


def test_two_sigints_during_a_tournament_lose_nothing(tmp_path):
    out = tmp_path / "out"
    proc = background(
        [
            "tournament",
            "random",
            "heuristic",
            "pubeval",
            "--games",
            "100000",
            "--jobs",
            "1",
            "--no-progress",
            "--out",
            str(out),
            "--json",
        ]
    )
    time.sleep(8)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    results = json.loads((out / "results.json").read_text())
    assert results == json.loads(stdout)
    (pair,) = results["pairs"]
    lines = (out / "games.jsonl").read_text().splitlines()
    games = [json.loads(line) for line in lines]
    assert pair["interrupted"] and pair["games"] == len(games) > 0
    pairs = sorted((g["sample"], g["copy"]) for g in games)  # complete mirrored pairs only
    assert pairs == sorted({(s, c) for s, _ in pairs for c in (0, 1)})
    assert not list(out.glob(".*.tmp"))


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_rollout_reports_the_trials_it_finished(how):
    proc = background(
        [
            "rollout",
            START,
            "--trials",
            "100000",
            "--jobs",
            "1",
            "--json",
            "--agent",
            "pubeval",
            "--no-luck",
        ]
    )
    time.sleep(12)
    proc.send_signal(how)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + how, stderr
    done = int(stderr.split("over the ")[1].split()[0])
    result = json.loads(stdout)
    assert 0 < done < 100000 and result["settings"].startswith(f"{done} trials")
    assert result["rollout"]["trials"] == done


@pytest.mark.slow
def test_the_external_server_stops_on_sigint_in_the_background():
    proc = background(["external", "--port", "0", "--agent", "td"])
    assert "Waiting for connections" in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130


# --- the slow part: more of the same, and a real run resumed past a spoilt checkpoint ------


def test_every_short_dice_string_is_read_as_the_reference_reads_it():
    alphabet = "0123456789-, /\t\u00a0\u0663\uff13x+"
    texts = [""] + [a + b + c for a in alphabet for b in alphabet + "" for c in ("", *alphabet)]
    for text in texts:
        want = reference_dice(text)
        try:
            got = engine.parse_dice(text)
        except ValueError as exc:
            assert want is None and str(exc) == f"dice {text!r}: write {engine.play.DICE_SYNTAX}"
        else:
            assert got == want, text


@pytest.mark.slow
def test_many_damaged_checkpoints_load_or_are_one_line(tmp_path, sound_bytes):
    """Seeded mutation, 3,000 files: every loader either loads or says why in one line."""
    rng = np.random.default_rng(19)
    path = tmp_path / "damaged.pt"
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(3000):
        raw = bytearray(sound_bytes)
        for _ in range(int(rng.integers(1, 5))):
            at = int(rng.integers(0, len(raw)))
            kind = rng.integers(3)
            if kind == 0:
                raw[at] ^= int(rng.integers(1, 256))
            elif kind == 1:
                del raw[at : at + int(rng.integers(1, 65))]
            else:
                raw[at:at] = rng.bytes(int(rng.integers(1, 17)))
        path.write_bytes(bytes(raw))
        for load in loaders("backgammon"):
            try:
                load(path)
                outcomes["loaded"] += 1
            except checkpoint.CheckpointError as exc:
                assert len(str(exc).splitlines()) == 1 and str(path) in str(exc)
                outcomes["refused"] += 1
    assert outcomes["refused"] > 1000


@pytest.mark.slow
def test_a_run_resumes_from_the_newest_sound_checkpoint(tmp_path):
    code, err = run_train(tmp_path, "--set", "games=32")
    assert code == 0, err
    ck = tmp_path / "ck"
    np.save(ck / "spoilt.npy", np.zeros(2))
    os.replace(ck / "spoilt.npy", ck / "smoke-g000000064.pt")
    stale = ck / ".smoke-g000000096.pt.k1ll3d.tmp"
    stale.write_bytes(b"half")
    base = [
        "--config",
        SMOKE,
        "--no-progress",
        "--set",
        f"checkpoint_dir={ck}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
        "--set",
        "games=64",
        "--resume",
    ]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert train.main(base) == 0
    assert "skipped" in err.getvalue() and "smoke-g000000064.pt" in err.getvalue()
    assert f"removed {stale}" in err.getvalue() and not stale.exists()
    assert "at 32 games (the newest sound checkpoint)" in out.getvalue()
    _, meta = checkpoint.load(ck / "smoke-g000000064.pt", training=True)
    assert meta["games"] == 64


@pytest.mark.slow
def test_a_spoilt_optimal_table_cache_is_computed_again(tmp_path, monkeypatch):
    from vrhcaby.sixdice import players as sixdice

    want = sixdice.optimal_table()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cached = sixdice.optimal_table_path()
    cached.parent.mkdir(parents=True)
    for junk in (b"half a table", None):
        if junk is None:  # a table of the right shape whose checksum does not fit
            np.savez(cached, table=np.full_like(want, np.nan), checksum=np.zeros(1, np.uint32))
        else:
            cached.write_bytes(junk)
        np.testing.assert_array_equal(sixdice.optimal_table(), want)
        with np.load(cached) as saved:
            np.testing.assert_array_equal(saved["table"], want)


# --- long inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["moves", "A" * 100_000, "31"],
        ["hint", "4HPwATDgc/ABMA:" + "Q" * 50_000, "31"],
        ["show", "XGID=" + "-" * 100_000],
        ["moves", "4HPwATDgc/ABMA", "3" * 100_000],
        ["hint", "4HPwATDgc/ABMA", "31", "--agent", "x" * 100_000],
    ],
    ids=["position", "match-id", "xgid", "dice", "agent"],
)
def test_a_huge_input_is_quoted_by_a_short_prefix(argv):
    code, _, err = run_cli(argv)
    one_line(code, err)
    assert len(err) < 400, len(err)


def test_the_parsers_quote_a_short_prefix_of_what_they_read():
    from engine.formats import parse_position

    huge = "Z" * 10_000
    for parse in (parse_position, lambda t: engine.Play.parse(t, engine.Position.start(), (3, 1))):
        with pytest.raises(ValueError) as info:
            parse(huge)
        assert len(str(info.value)) < 200 and "10000 characters" in str(info.value)
