"""One writer of checkpoints (`vrhcaby.nn.checkpoint.contents`): every writer of the
project lays out the same state as the code before it did, byte for byte.

The references in ``tests/data/checkpoints`` were written by the writers as they were
before `contents` (at commit 1c7cb5a: `Trainer.state`, `SetTDTrainer.state`,
`SetTrainer.state`, `netset.save`, `onesided.save`), from the states `write_states` builds.
Those states involve no float arithmetic that could differ between machines (seeded
draws, copies, no optimizer step), so the same state must give the same members: the
same names in the same order, the same bytes, the same meta document."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.sets import Member, SetTDTrainer
from vrhcaby.learn.students import SetTrainer
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn import checkpoint, netset, onesided
from vrhcaby.nn.net import Evaluator, NetConfig

REFERENCE = Path(__file__).resolve().parent / "data" / "checkpoints"
FILES = ("onesided.pt", "set.pt", "set-trainer.pt", "trainer.pt", "set-td-trainer.pt")


def write_states(out: Path) -> None:
    """Write each writer's checkpoint of a fixed state into `out` (the references: with
    the code before `contents`)."""
    rng = np.random.default_rng(0)
    shapes = [(8, onesided.INPUTS), (8,), (onesided.OUTPUTS, 8), (onesided.OUTPUTS,)]
    race = onesided.OneSidedNet(*(rng.normal(0, 0.3, s).astype(np.float32) for s in shapes))
    onesided.save(race, out / "onesided.pt", {"name": "reference"})
    contact_net = NetConfig("tesauro", (4,), "sigmoid")
    layers = [((4, 198), (4,)), ((5, 4), (5,))]
    weights = [
        (rng.normal(0, 0.3, w).astype(np.float32), rng.normal(0, 0.3, b).astype(np.float32))
        for w, b in layers
    ]
    contact = Evaluator(contact_net, weights, "standard", {"name": "contact"})
    networks: dict[str, netset.ClassNetwork] = {
        "contact": contact,
        "race": onesided.load(out / "onesided.pt"),
    }
    netset.save(netset.from_networks(networks, {"crashed": "contact"}), out / "set.pt")

    arrays, meta = checkpoint.load(out / "set.pt", "backgammon", sets=True)
    fitting = SetTrainer.of(meta, "standard", 1e-3, 1)
    fitting.warm_start(arrays, meta)
    fitting.games = 3
    checkpoint.save(out / "set-trainer.pt", *fitting.state())

    td = TDConfig()
    trainer = Trainer(
        NetConfig("tesauro", (6,), "sigmoid"), td, "standard", 64, 5, torch.device("cpu")
    )
    trainer.games = 32
    checkpoint.save(out / "trainer.pt", *trainer.state())

    member, _ = checkpoint.set_member(arrays, meta, "contact")
    members = {
        "contact": Member(contact_net, member),
        "race": Member(NetConfig("race", (4,)), None),
    }
    set_td = SetTDTrainer(
        members, {"crashed": "contact"}, ("race",), td, 64, 6, torch.device("cpu")
    )
    checkpoint.save(out / "set-td-trainer.pt", *set_td.state())


def members(path: Path) -> list[tuple[str, bytes]]:
    """A checkpoint's members in order: each array's .npy bytes, the meta document parsed."""
    with zipfile.ZipFile(path) as z:
        out = []
        for name in z.namelist():
            data = z.read(name)
            if name == "meta.npy":
                meta = json.loads(np.load(io.BytesIO(data)).tobytes())
                data = json.dumps(meta, sort_keys=True).encode()
            out.append((name, data))
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("states")
    write_states(out)
    return out


@pytest.mark.parametrize("name", FILES)
def test_each_writer_lays_out_the_state_as_before(written: Path, name: str) -> None:
    got, want = members(written / name), members(REFERENCE / name)
    assert [n for n, _ in got] == [n for n, _ in want]
    for (member, a), (_, b) in zip(got, want, strict=True):
        assert a == b, f"{name}: member {member} differs"


def test_a_set_member_comes_back_as_assembled() -> None:
    rng = np.random.default_rng(3)
    one = {"model/0.weight": rng.random((2, 3)), "model/0.bias": rng.random(2)}
    arrays, meta = checkpoint.contents(
        networks={"contact": ({"hidden": [2]}, one)}, fallback={"race": "contact"}
    )
    assert list(arrays) == ["set/contact/model/0.weight", "set/contact/model/0.bias"]
    back, description = checkpoint.set_member(arrays, meta, "contact")
    assert description["net"] == {"hidden": [2]} and meta["fallback"] == {"race": "contact"}
    for key, value in one.items():
        assert back[key] is value


def test_a_checkpoint_holds_one_network_or_one_set() -> None:
    net: checkpoint.Network = ({"hidden": [2]}, {})
    with pytest.raises(ValueError, match="give net or networks"):
        checkpoint.contents()
    with pytest.raises(ValueError, match="give net or networks"):
        checkpoint.contents(net=net, networks={"contact": net})
