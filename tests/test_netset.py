"""Network sets (`vrhcaby.nn.netset`): the race inputs against a plain reference, a set of
three copies of one network against that network, the set's checkpoint layout and its
bad files, and a set in the agent, `hint` and a rollout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numba  # noqa: F401  (loaded, every evaluation takes the kernels, whatever the batch)
import numpy as np
import pytest
import torch

import engine
import vrhcaby.cli.main as cli
from agents import load_agent
from engine.classify import BEAROFF1, BEAROFF2, CONTACT, CRASHED, OVER, RACE, classify_boards
from tests.corpus import random_board
from tests.test_net import random_positions
from vrhcaby.learn.selfplay import weights_from_model
from vrhcaby.nn import checkpoint, netset
from vrhcaby.nn.bearoff_db import database
from vrhcaby.nn.encode import ENCODINGS, encode_race, encode_tesauro, extends, race_features
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, joint, load_evaluator
from vrhcaby.play.rollout import Settings, rollout_position

ROOT = Path(__file__).parents[1]
BEST = ROOT / "checkpoints" / "td-best.pt"
START = "4HPwATDgc/ABMA"


def race_reference(board: np.ndarray) -> list[float]:
    """The 30 race units of one board, written out from the description checker by checker."""
    units: list[float] = []
    for side in (0, 1):
        off = 15 - int(board[side].sum())
        units += [float(off >= k) for k in range(1, 15)]
        crossings = 0
        for index in range(25):  # 0..23 = points 1..24, 24 = the bar
            point = index + 1
            boundaries = 0 if point <= 6 else 1 if point <= 12 else 2 if point <= 18 else 3
            if index == 24:
                boundaries = 4
            crossings += int(board[side, index]) * boundaries
        units.append(crossings / 10)
    return units


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    """Afterstates of every class: random games and random boards (bear-offs with gaps,
    bar checkers, stragglers)."""
    after = random_positions(12, seed=21)[1]
    rng = np.random.default_rng(22)
    scattered = np.stack([random_board(rng) for _ in range(600)])
    out = np.concatenate([after, scattered])
    classes = classify_boards(out)
    for code in (OVER, BEAROFF1, BEAROFF2, RACE, CRASHED, CONTACT):
        assert (classes == code).any(), code
    return out


def test_race_features_against_a_plain_reference(boards: np.ndarray) -> None:
    expected = np.array([race_reference(b) for b in boards], np.float32)
    np.testing.assert_array_equal(race_features(boards), expected)
    race = encode_race(boards)
    assert race.shape == (len(boards), ENCODINGS["race"][1]) == (len(boards), 228)
    np.testing.assert_array_equal(race[:, :198], encode_tesauro(boards))
    np.testing.assert_array_equal(race[:, 198:], expected)


def test_race_extends_tesauro_only() -> None:
    assert extends("race", "tesauro") and extends("race", "race")
    assert not extends("race", "rich") and not extends("contact", "race")
    assert extends("contact", "tesauro") and not extends("tesauro", "race")


def test_a_race_network_in_numpy_equals_torch(boards: np.ndarray) -> None:
    config = NetConfig("race", (9,), "sigmoid")
    torch.manual_seed(23)
    model = build_model(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)
        expected = obey_rules(boards, joint(model(torch.from_numpy(encode_race(boards))))).numpy()
    evaluator = Evaluator(config, weights_from_model(model))
    np.testing.assert_allclose(evaluator.probabilities(boards), expected, atol=2e-5)
    roots, after, parent = random_positions(6, seed=24)
    with torch.no_grad():
        expected = obey_rules(after, joint(model(torch.from_numpy(encode_race(after))))).numpy()
    np.testing.assert_allclose(
        evaluator.probabilities_from(roots, after, parent), expected, atol=2e-5
    )


@pytest.fixture(scope="module")
def single() -> Evaluator:
    evaluator = load_evaluator(BEST)
    assert isinstance(evaluator, Evaluator)
    return evaluator


@pytest.fixture(scope="module")
def copies(single: Evaluator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A set file of three copies of the shipped network."""
    path = tmp_path_factory.mktemp("netset") / "copies.pt"
    netset.save(netset.from_networks({name: single for name in netset.SET_CLASSES}), path)
    return path


def test_a_set_of_copies_is_the_network_and_the_databases(
    single: Evaluator, copies: Path, boards: np.ndarray
) -> None:
    found = load_evaluator(copies)
    assert isinstance(found, netset.NetworkSet) and found.variant == "standard"
    assert found.net.describe() == single.net.describe()
    classes = classify_boards(boards)
    bear = np.isin(classes, (BEAROFF1, BEAROFF2))
    got = found.probabilities(boards)
    assert got.dtype == np.float32 and got.shape == (len(boards), 5)
    expected = single.probabilities(boards)
    # the same weights, row for row; only BLAS's products of the hand-made features may
    # round a row of a smaller batch (a class's share) differently in the last bit
    np.testing.assert_allclose(got, expected, rtol=0, atol=3e-7)
    np.testing.assert_array_equal(
        got[bear], database().probabilities(boards[bear]).astype(np.float32)
    )
    contact = boards[classes == CONTACT]  # one class: the whole batch goes to its network
    np.testing.assert_array_equal(found.probabilities(contact), single.probabilities(contact))
    np.testing.assert_array_equal(found.equity(contact), single.equity(contact))
    roots, after, parent = random_positions(12, seed=25)
    assert len(set(classify_boards(after).tolist())) >= 3
    np.testing.assert_array_equal(  # the fused kernel is row by row: exactly the network's
        found.probabilities_from(roots, after, parent),
        single.probabilities_from(roots, after, parent),
    )


def thinned(roots: np.ndarray, after: np.ndarray, parent: np.ndarray, keep: int):
    """The afterstates with only every `keep`-th contact one left (a mixed batch)."""
    contact = np.flatnonzero(classify_boards(after) == CONTACT)
    rows = np.sort(np.concatenate([np.setdiff1d(np.arange(len(after)), contact), contact[::keep]]))
    return roots, after[rows], parent[rows]


def test_each_class_goes_to_its_own_network(boards: np.ndarray) -> None:
    networks = {
        "contact": load_evaluator(BEST),
        "crashed": load_evaluator(ROOT / "checkpoints" / "td-rich.pt"),
        "race": load_evaluator(ROOT / "checkpoints" / "td-80.pt"),
    }
    found = netset.from_networks(networks)
    played = random_positions(8, seed=26)
    # both ways of answering: the contact network on the whole batch (at least `WHOLE` of
    # it is contact) with the other shares written over, and every share on its rows
    for keep in (1, 20):
        roots, after, parent = thinned(*played, keep)
        batch = thinned(boards[:1], boards, np.zeros(len(boards), np.int64), keep)[1]
        contact = [(classify_boards(b) == CONTACT).mean() >= netset.WHOLE for b in (batch, after)]
        assert contact == [keep == 1] * 2
        classes, after_classes = classify_boards(batch), classify_boards(after)
        got, fast = found.probabilities(batch), found.probabilities_from(roots, after, parent)
        for name, network in networks.items():
            rows = classes == netset.CODES[name]
            np.testing.assert_allclose(got[rows], network.probabilities(batch[rows]), atol=3e-7)
            rows = after_classes == netset.CODES[name]
            assert rows.any()
            np.testing.assert_allclose(fast[rows], network.probabilities(after[rows]), atol=2e-6)
        decided = np.isin(classes, netset.DECIDED)
        np.testing.assert_array_equal(got[decided], networks["race"].probabilities(batch[decided]))
    shared = netset.from_networks(
        {"contact": networks["contact"], "race": networks["race"]}, {"crashed": "contact"}
    )
    assert "crashed = contact" in shared.describe()
    classes = classify_boards(boards)
    rows = np.isin(classes, (CONTACT, CRASHED))
    np.testing.assert_allclose(
        shared.probabilities(boards)[rows], networks["contact"].probabilities(boards[rows]),
        atol=3e-7,
    )  # fmt: skip


def test_a_set_round_trips_with_its_fallback(tmp_path: Path) -> None:
    contact, race = load_evaluator(BEST), load_evaluator(ROOT / "checkpoints" / "td-80.pt")
    path = netset.save(
        netset.from_networks({"contact": contact, "race": race}, {"crashed": "contact"}),
        tmp_path / "set.pt",
    )
    found = load_evaluator(path)
    assert isinstance(found, netset.NetworkSet)
    assert found.fallback == {"crashed": "contact"} and set(found.networks) == {"contact", "race"}
    for name, original in (("contact", contact), ("race", race)):
        member = found.networks[name]
        assert isinstance(member, Evaluator) and member.net == original.net
        for (w, b), (w0, b0) in zip(member.weights, original.weights, strict=True):
            np.testing.assert_array_equal(w, w0)
            np.testing.assert_array_equal(b, b0)


def test_every_shipped_network_still_loads_as_one_network() -> None:
    for path in sorted((ROOT / "checkpoints").glob("td*.pt")):
        is_set = checkpoint.is_set(checkpoint.load(path, "backgammon", sets=True)[1])
        assert isinstance(load_evaluator(path), netset.NetworkSet if is_set else Evaluator), path


def write_set(path: Path, networks: dict, fallback: dict | None = None, **arrays) -> Path:
    """A set file by hand: `networks` class -> (NetConfig, weights of an Evaluator)."""
    out = {}
    meta: dict = {"game": "backgammon", "layout": checkpoint.SET_LAYOUT, "networks": {},
                  "config": {"variant": "standard"}}  # fmt: skip
    if fallback is not None:
        meta["fallback"] = fallback
    for name, (net, weights) in networks.items():
        meta["networks"][name] = net.to_dict()
        for i, (w, b) in enumerate(weights):
            out[f"set/{name}/model/{2 * i}.weight"] = w
            out[f"set/{name}/model/{2 * i}.bias"] = b
    checkpoint.save(path, {**out, **arrays}, meta)
    return path


@pytest.fixture(scope="module")
def small() -> tuple[NetConfig, list]:
    net = NetConfig("tesauro", (6,), "sigmoid")
    rng = np.random.default_rng(27)
    weights = [
        (rng.normal(0, 0.3, (o, i)).astype(np.float32), np.zeros(o, np.float32))
        for i, o in zip(net.sizes[:-1], net.sizes[1:], strict=True)
    ]
    return net, weights


def bad_sets(small: tuple[NetConfig, list]) -> list[tuple[str, dict, dict | None, str]]:
    net, weights = small
    race = NetConfig("race", (6,), "sigmoid")  # 228 inputs, but the weights have 198
    three = {name: (net, weights) for name in netset.SET_CLASSES}
    return [
        ("missing", {"contact": (net, weights), "race": (net, weights)}, None,
         "network set lacks the crashed network"),
        ("unknown", {**three, "bearoff": (net, weights)}, None,
         "network set class 'bearoff' is unknown"),
        ("input-size", {**three, "race": (race, weights)}, None,
         "network set class race: weights have layer shapes"),
        ("fallback", {"contact": (net, weights), "race": (net, weights)},
         {"crashed": "bearoff"}, "network set class crashed falls back to 'bearoff'"),
        ("layers", {**three, "crashed": (net, weights[:1])}, None,
         "network set class crashed: lacks weights"),
    ]  # fmt: skip


def test_bad_sets_are_one_line_naming_the_class(small, tmp_path: Path) -> None:
    for label, networks, fallback, message in bad_sets(small):
        path = write_set(tmp_path / f"{label}.pt", networks, fallback)
        with pytest.raises(checkpoint.CheckpointError) as caught:
            load_evaluator(path)
        text = str(caught.value)
        assert text.startswith(str(path)) and message in text and "\n" not in text, text
    net, weights = small
    stray = write_set(
        tmp_path / "stray.pt", {name: (net, weights) for name in netset.SET_CLASSES},
        **{"set/bearoff/model/0.weight": weights[0][0]},
    )  # fmt: skip
    with pytest.raises(checkpoint.CheckpointError, match="belongs to no class"):
        load_evaluator(stray)
    unknown = tmp_path / "layout.pt"
    checkpoint.save(unknown, {}, {"layout": "stack", "networks": {}})
    with pytest.raises(checkpoint.CheckpointError, match="names no known layout: 'stack'"):
        load_evaluator(unknown)


def test_a_set_is_not_a_single_network(copies: Path) -> None:
    """Loaders of one network (`init_from`, `--resume`) name what they found instead."""
    with pytest.raises(checkpoint.CheckpointError, match="holds a network set"):
        checkpoint.load(copies, "backgammon")
    with pytest.raises(checkpoint.CheckpointError, match="holds a network set"):
        checkpoint.load(copies, training=True)


def test_a_set_is_made_of_single_standard_networks(single: Evaluator, copies: Path) -> None:
    acey = load_evaluator(ROOT / "checkpoints" / "td-acey-deucey.pt")
    nack = load_evaluator(ROOT / "checkpoints" / "td-nackgammon.pt")
    with pytest.raises(ValueError, match="one variant"):
        netset.from_networks({"contact": single, "crashed": single, "race": nack})
    with pytest.raises(ValueError, match="25-point board"):
        netset.from_networks({name: acey for name in netset.SET_CLASSES})
    with pytest.raises(ValueError, match="a network set, not a single network"):
        netset.from_networks({"contact": load_evaluator(copies), "crashed": single, "race": single})
    with pytest.raises(ValueError, match="extra_turn"):
        load_evaluator(copies).probabilities(engine.Position.start().board[None], np.ones(1, bool))


def test_a_failed_build_overwrites_nothing(single: Evaluator, tmp_path: Path) -> None:
    out = netset.save(
        netset.from_networks({n: single for n in netset.SET_CLASSES}), tmp_path / "s.pt"
    )
    before = out.read_bytes()
    with pytest.raises(checkpoint.CheckpointError, match="lacks the race network"):
        netset.save(netset.from_networks({"contact": single, "crashed": single}), out)
    assert out.read_bytes() == before


@pytest.mark.parametrize("verb", ["hint", "rollout"])
def test_the_command_line_names_a_bad_set_and_exits_2(verb: str, small, tmp_path: Path) -> None:
    _, networks, fallback, message = bad_sets(small)[2]
    path = write_set(tmp_path / "bad.pt", networks, fallback)
    argv = {
        "hint": ["hint", START, "31", "--agent", f"td:{path}"],
        "rollout": ["rollout", START, "--evaluator", str(path), "--trials", "2", "--no-progress"],
    }[verb]
    done = subprocess.run(
        [sys.executable, "-m", "vrhcaby.cli.main", *argv], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0], done.stderr


def test_the_td_agent_hint_and_a_rollout_take_a_set(
    single: Evaluator, copies: Path, capsys, monkeypatch
) -> None:
    position = engine.Position.from_id(START)
    for plies in (0, 1, 2):
        agent = load_agent(f"td:{copies}?plies={plies}")
        assert isinstance(agent.evaluator, netset.NetworkSet)
        same = load_agent(f"td:{BEST}?plies={plies}")
        assert agent.choose_play(position, (3, 1)) == same.choose_play(position, (3, 1))
        np.testing.assert_allclose(  # what the cube decisions read
            agent.before_roll(position.board[None], plies),
            same.before_roll(position.board[None], plies),
            atol=1e-6,
        )
    monkeypatch.setattr(cli, "COMMANDS", ("hint",))
    outputs = []
    for path in (copies, BEST):
        code = cli.main(["hint", START, "31", "--agent", f"td:{path}", "--json", "--cubeless"])
        assert code == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0].replace(str(copies), "") == outputs[1].replace(str(BEST), "")
    monkeypatch.setattr(cli, "COMMANDS", ("rollout",))
    argv = ["rollout", START, "--agent", f"td:{copies}", "--trials", "4", "--no-progress"]
    assert cli.main([*argv, "--json"]) == 0 and '"trials": 4' in capsys.readouterr().out
    settings = Settings(trials=16, seed=3, truncate=4)
    results = [
        rollout_position(position.board, load_agent(f"td:{path}"), settings=settings)
        for path in (copies, BEST)
    ]
    np.testing.assert_allclose(results[0].raw, results[1].raw, atol=1e-6)
    np.testing.assert_allclose(results[0].luck, results[1].luck, atol=1e-6)


def test_a_zero_ply_hint_with_a_set_loads_neither_torch_nor_numba(copies: Path) -> None:
    code = (
        "import sys, vrhcaby.cli.main as cli; cli.COMMANDS = ('hint',); "
        f"rc = cli.main(['hint', '{START}', '31', '--agent', 'td:{copies}', '--json']); "
        "loaded = [m for m in ('torch', 'numba') if m in sys.modules]; "
        "assert not loaded, f'{loaded} imported'; sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
