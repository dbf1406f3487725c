"""TD training of a network set (`vrhcaby.learn.sets`): a step against a plain reference
(only the trained class's network moves, only by its class's afterstates, bootstrapping
across classes and from the databases read directly), an exact resume, the race starts
(`vrhcaby.learn.starts`), a set run through `vrhcaby train`, and `vrhcaby netset`."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

import vrhcaby.cli.main as cli
from engine import bearoff
from engine.classify import CONTACT, CRASHED, RACE, classify_boards
from tests.test_td_targets import by_hand, episodes_of, row
from vrhcaby.equity.outcomes import outcome
from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.sets import Member, NetSetConfig, SetTDTrainer, resolve
from vrhcaby.learn.starts import StartsConfig, class_starts
from vrhcaby.nn import checkpoint
from vrhcaby.nn.bearoff_db import database
from vrhcaby.nn.net import NetConfig, joint, load_evaluator
from vrhcaby.nn.netset import NetworkSet

ROOT = Path(__file__).parents[1]
TD80 = ROOT / "checkpoints" / "td-80.pt"
CPU = torch.device("cpu")
CONTACT_NET = NetConfig(hidden=(5,))
RACE_NET = NetConfig(encoding="race", hidden=(4,))
SGD = TDConfig(batch_games=4, games_per_update=4, lam=0.0, lam_end=0.0, lr=0.5, lr_end=0.5)
#: Race positions on roll (row 1 on roll) that games can start from.
POOL = np.stack(
    [
        np.stack([row({12: 3, 8: 4, 6: 4, 4: 4}), row({11: 5, 9: 3, 5: 4, 2: 3})]),
        np.stack([row({10: 2, 6: 5, 3: 4}), row({9: 3, 7: 3, 5: 3, 1: 2})]),
    ]
).astype(np.int8)


def trainer(td: TDConfig = SGD, starts: np.ndarray | None = None, seed: int = 3) -> SetTDTrainer:
    """A set of small fresh networks: contact (frozen, also answering crashed) and race
    (trained)."""
    members = {"contact": Member(CONTACT_NET, None), "race": Member(RACE_NET, None)}
    return SetTDTrainer(
        members, {"crashed": "contact"}, ("race",), td, 100, seed, CPU, starts=starts
    )


def value_by_hand(t: SetTDTrainer, board: np.ndarray) -> np.ndarray:
    """The set's five probabilities of one afterstate, by hand: the rules and the
    databases (`by_hand`) over the output of the network of its class."""
    kind = classify_boards(board[None])[0]
    name = "race" if kind == RACE else "contact"
    net = t.model.nets[name]
    with torch.no_grad():
        raw = joint(t.model.networks[name](torch.from_numpy(net.encode(board[None]))))[0]
    return by_hand(board, raw.numpy())[0]


def flip(v: np.ndarray) -> np.ndarray:
    return np.array([1 - v[0], v[3], v[4], v[1], v[2]])


def test_a_step_moves_only_the_trained_network_by_its_own_class() -> None:
    t = trainer()
    episodes = t.selfplay.play(4, np.random.default_rng(5))
    valid = np.arange(episodes.states.shape[0])[:, None] < episodes.lengths[None, :]
    kinds = classify_boards(episodes.states[valid])
    assert (kinds == RACE).any() and np.isin(kinds, (CONTACT, CRASHED)).any()
    frozen = copy.deepcopy(t.model.networks["contact"].state_dict())

    # The reference: plain TD(0) on the race afterstates alone, each target the set's
    # value of the next afterstate (any class, the databases, the result) by hand.
    race = copy.deepcopy(t.model.networks["race"])
    predictions, targets = [], []
    final = outcome(episodes.values)
    for g, length in enumerate(episodes.lengths):
        for step in range(length - 1):
            board = episodes.states[step, g]
            if classify_boards(board[None])[0] != RACE:
                continue
            after = episodes.states[step + 1, g]
            following = final[g] if step + 1 == length - 1 else value_by_hand(t, after)
            targets.append(by_hand(board, flip(following))[0])
            raw = joint(race(torch.from_numpy(RACE_NET.encode(board[None]))))[0]
            allowed = torch.from_numpy(by_hand(board, np.ones(5))[0] != 0)
            predictions.append(torch.where(allowed, raw, torch.zeros_like(raw)))
    loss = 0.5 * sum(
        ((torch.tensor(y, dtype=torch.float32) - p) ** 2).sum()
        for p, y in zip(predictions, targets, strict=True)
    )
    (loss / len(targets)).backward()
    with torch.no_grad():
        for p in race.parameters():
            p -= SGD.lr * p.grad

    stats = t.learner.update(episodes, 0.0)
    assert stats.positions == len(targets)
    for key, value in race.state_dict().items():
        np.testing.assert_allclose(
            t.model.networks["race"].state_dict()[key].numpy(), value.numpy(), atol=2e-6
        )
    for key, value in frozen.items():
        assert torch.equal(t.model.networks["contact"].state_dict()[key], value), key
    assert not any(p.requires_grad for p in t.model.networks["contact"].parameters())


def test_a_race_before_a_bear_off_takes_the_database_value_as_target() -> None:
    # The mover (row 1) is home with 5 checkers; the other side brings its last checker
    # home: a two-sided bear-off, whose exact value the databases hold.
    before = np.stack([row({8: 1, 5: 2, 2: 1}), row({6: 2, 4: 2, 1: 1})]).astype(np.int8)
    bear_off = np.stack([row({6: 2, 4: 2, 1: 1}), row({5: 3, 2: 1})]).astype(np.int8)
    end = np.stack([row({6: 2, 4: 2}), row({})]).astype(np.int8)
    episodes = episodes_of([(np.stack([before, bear_off, end]), 1)])
    t = trainer()
    targets = t.learner.targets(episodes, 0.0)
    assert len(targets) == 1  # the bear-off itself is not fitted
    db = database()
    win = db.win[bearoff.row_index(bear_off[0]), bearoff.row_index(bear_off[1])]
    np.testing.assert_allclose(targets[0], [win, 0, 0, 0, 0], atol=1e-6)
    assert 0.05 < win < 0.95


def test_resume_is_exact(tmp_path: Path) -> None:
    td = TDConfig(
        batch_games=3, games_per_update=2, lam=0.5, optimizer="adam", lr=1e-2, lr_end=1e-3
    )
    whole = trainer(td, POOL)
    whole.round()
    whole.round()
    first = trainer(td, POOL)
    first.round()
    path = checkpoint.save(tmp_path / "half.pt", *first.state())
    again = trainer(td, POOL, seed=99)  # another seed: everything comes from the file
    again.load_state(*checkpoint.load(path, "backgammon", sets=True))
    again.round()
    for key, value in whole.weights().items():
        assert np.array_equal(again.weights()[key], value), key
    assert again.rng.bit_generator.state == whole.rng.bit_generator.state
    assert isinstance(load_evaluator(path), NetworkSet)


def test_games_start_from_the_pool() -> None:
    t = trainer(starts=POOL)
    episodes = t.selfplay.play(6, np.random.default_rng(1))
    first = episodes.states[0]
    assert np.isin(classify_boards(first), (RACE,)).all()
    for board in first:  # each game's first afterstate is a play from a pool position
        assert any((board[0] == start[0]).all() for start in POOL)


def test_race_starts_are_races_and_seeded() -> None:
    config = StartsConfig(network=str(TD80), games=12, seed=4)
    pool = class_starts(TD80, config)
    assert 0 < len(pool) <= 12 and pool.dtype == np.int8
    assert (classify_boards(pool) == RACE).all()
    assert (pool.reshape(len(pool), -1).sum(axis=1) <= 30).all()
    assert np.array_equal(pool, class_starts(TD80, config))
    other = class_starts(TD80, StartsConfig(network=str(TD80), games=12, seed=5))
    assert not np.array_equal(pool[: len(other)], other[: len(pool)])


def test_resolve_takes_networks_from_checkpoints_and_classes() -> None:
    members, fallback = resolve(
        NetSetConfig(contact=str(TD80), crashed="contact", train=("race",)), "", RACE_NET
    )
    assert fallback == {"crashed": "contact"}
    assert members["race"].net == RACE_NET and members["race"].weights is None
    assert members["contact"].net.hidden == (80,)
    with pytest.raises(ValueError, match=r"netset\.contact: no network"):
        resolve(NetSetConfig(train=("race",), crashed="race"), "", RACE_NET)
    with pytest.raises(ValueError, match="falls back to contact"):
        config = NetSetConfig(contact=str(TD80), crashed="contact", race="contact", train=("race",))
        resolve(config, "", RACE_NET)


def test_a_set_run_trains_and_resumes_from_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    args = [
        "train",
        "--no-progress",
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
        "--set",
        "name=race",
        "--set",
        "games=8",
        "--set",
        "checkpoint_every=4",
        "--set",
        "td.batch_games=4",
        "--set",
        "td.backup=expected",
        "--set",
        "net.encoding=race",
        "--set",
        "net.hidden=[4]",
        "--set",
        f"netset.contact={TD80}",
        "--set",
        "netset.crashed=contact",
        "--set",
        'netset.train=["race"]',
        "--set",
        f"starts.network={TD80}",
        "--set",
        "starts.games=6",
    ]
    assert cli.main(args) == 0
    networks = load_evaluator(tmp_path / "ck" / "race-g000000008.pt")
    assert isinstance(networks, NetworkSet)
    assert networks.fallback == {"crashed": "contact"}
    assert networks.networks["race"].net.encoding == "race"
    contact = load_evaluator(TD80)
    for (w, b), (w0, b0) in zip(networks.networks["contact"].weights, contact.weights, strict=True):
        assert np.array_equal(w, w0) and np.array_equal(b, b0)
    assert cli.main([*args, "--resume", "--set", "games=12"]) == 0
    assert "resumed" in capsys.readouterr().out


# --- vrhcaby netset -------------------------------------------------------------------


@pytest.fixture(scope="module")
def race_set(tmp_path_factory) -> Path:
    """A set checkpoint whose race network is its own (fresh) one."""
    path = tmp_path_factory.mktemp("sets") / "race-set.pt"
    return checkpoint.save(path, *trainer().state())


def test_netset_puts_a_set_together(tmp_path: Path, race_set: Path, capsys) -> None:
    out = tmp_path / "set.pt"
    argv = ["netset", "--contact", str(TD80), "--race", str(race_set), "--out", str(out)]
    assert cli.main(argv) == 0
    made = load_evaluator(out)
    assert isinstance(made, NetworkSet) and made.fallback == {"crashed": "contact"}
    source = load_evaluator(race_set)
    assert isinstance(source, NetworkSet)
    pairs = [(made.networks["contact"], load_evaluator(TD80))]
    pairs.append((made.networks["race"], source.networks["race"]))
    for mine, theirs in pairs:
        assert mine.net == theirs.net
        for (w, b), (w0, b0) in zip(mine.weights, theirs.weights, strict=True):
            assert np.array_equal(w, w0) and np.array_equal(b, b0)
    boards = POOL[:, ::-1]
    np.testing.assert_allclose(made.probabilities(boards), source.probabilities(boards))
    assert "race 228-4-5" in capsys.readouterr().out


def test_netset_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, capsys) -> None:
    arrays, meta = checkpoint.load(TD80)
    meta = {**meta, "net": {**meta["net"], "encoding": "race"}}  # 198 weights, 228 inputs
    wrong = checkpoint.save(tmp_path / "wrong.pt", arrays, meta)
    out = tmp_path / "set.pt"
    for race in (str(wrong), str(tmp_path / "missing.pt")):
        assert cli.main(["netset", "--contact", str(TD80), "--race", race, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith("vrhcaby netset: error:") and "race" in err
        assert not out.exists()
    out.write_bytes(b"keep")
    assert cli.main(["netset", "--contact", str(TD80), "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err and out.read_bytes() == b"keep"
