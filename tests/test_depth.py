"""Networks of several hidden layers with an activation each, and depth growth that keeps
the function (`vrhcaby.learn.trainer.grown_state`'s Net2DeeperNet): every evaluation path
against a plain numpy forward pass, and the deepened shipped network against the saved one
evaluated by the existing code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from corpus import lockstep_positions

from agents import load_agent
from agents.search import ply_probabilities
from vrhcaby.equity.outcomes import equity
from vrhcaby.learn.selfplay import weights_from_model
from vrhcaby.learn.trainer import grown_state
from vrhcaby.nn import checkpoint, net, netset
from vrhcaby.nn.encode import get_encoding
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, load_evaluator

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "td-contact-gen3.pt"
MIXED = NetConfig("contact", (12, 9, 7), "sigmoid", activations=("sigmoid", "relu", "tanh"))


def plain_forward(config: NetConfig, weights: list, boards: np.ndarray) -> np.ndarray:
    """The five joint probabilities of `boards` by a plain float64 forward pass: the
    encoding, each layer's product and activation, the output sigmoids multiplied out,
    then what the rules decide."""
    functions: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "tanh": np.tanh,
        "relu": lambda x: np.maximum(x, 0),
    }
    x = get_encoding(config.encoding)[0](boards).astype(np.float64)
    names = [*config.layer_activations, "sigmoid"]
    assert len(names) == len(weights)
    for (w, b), name in zip(weights, names, strict=True):
        x = functions[name](x @ w.T.astype(np.float64) + b)
    win, wg, wbg, lg, lbg = x.T
    p = np.stack([win, win * wg, win * wg * wbg, (1 - win) * lg, (1 - win) * lg * lbg], 1)
    return obey_rules(boards, p.astype(np.float32))


def random_weights(config: NetConfig, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [
        (rng.normal(0, 0.5, (o, i)).astype(np.float32), rng.normal(0, 0.5, o).astype(np.float32))
        for i, o in zip(config.sizes[:-1], config.sizes[1:], strict=True)
    ]


def test_activations_describe_and_round_trip() -> None:
    assert MIXED.layer_activations == ("sigmoid", "relu", "tanh")
    assert MIXED.describe() == "256-12-9-7-5 sigmoid,relu,tanh (contact)"
    assert NetConfig.from_dict(MIXED.to_dict()) == MIXED
    assert MIXED.to_dict()["activations"] == ["sigmoid", "relu", "tanh"]
    # one activation for all: the same network, described and stored as before the field
    same = NetConfig("contact", (12, 9), "relu", activations=("relu", "relu"))
    assert same == NetConfig("contact", (12, 9), "relu")
    assert same.to_dict() == {"encoding": "contact", "hidden": [12, 9], "activation": "relu"}
    assert same.describe() == "256-12-9-5 relu (contact)"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"activations": ("sigmoid",)}, "names 1 layers' activations, but the network has 2"),
        ({"activations": ("relu", "sigmoid")}, "starts with 'relu', but activation"),
        ({"activations": ("sigmoid", "gelu")}, "unknown activation 'gelu'"),
    ],
)
def test_bad_activations_are_one_clear_error(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NetConfig("contact", (12, 9), "sigmoid", **changes)


def test_a_checkpoint_with_bad_activations_is_a_checkpoint_error(tmp_path: Path) -> None:
    arrays = checkpoint.layer_arrays(random_weights(MIXED, 0))
    description = {**MIXED.to_dict(), "activations": ["sigmoid", "swish", "tanh"]}
    checkpoint.save(tmp_path / "bad.pt", arrays, {"net": description})
    with pytest.raises(checkpoint.CheckpointError, match=r"bad\.pt.*unknown activation 'swish'"):
        load_evaluator(tmp_path / "bad.pt")


@pytest.mark.parametrize("numpy_only", [False, True])
def test_every_path_of_a_mixed_network_equals_a_plain_forward_pass(
    numpy_only: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The evaluator (kernels, or numpy alone as a cold command line runs it), its
    incremental first layer, the torch model and a checkpoint's round trip."""
    monkeypatch.setattr(net, "in_numpy", lambda rows: numpy_only)
    weights = random_weights(MIXED, 1)
    roots, after, parent = lockstep_positions(6, seed=2, max_turns=30)
    expected = plain_forward(MIXED, weights, after)
    evaluator = Evaluator(MIXED, weights)
    np.testing.assert_allclose(evaluator.probabilities(after), expected, atol=3e-6)
    np.testing.assert_allclose(
        evaluator.probabilities_from(roots, after, parent), expected, atol=3e-6
    )
    model = build_model(MIXED)
    model.load_state_dict(
        {
            k[len("model/") :]: torch.from_numpy(v)
            for k, v in checkpoint.layer_arrays(weights).items()
        }
    )
    with torch.no_grad():
        raw = net.joint(model(torch.from_numpy(MIXED.encode(after)))).numpy()
    np.testing.assert_allclose(obey_rules(after, raw), expected, atol=3e-6)
    checkpoint.save(
        tmp_path / "mixed.pt", checkpoint.layer_arrays(weights), {"net": MIXED.to_dict()}
    )
    loaded = load_evaluator(tmp_path / "mixed.pt")
    assert isinstance(loaded, Evaluator) and loaded.net == MIXED
    np.testing.assert_allclose(loaded.probabilities(after), expected, atol=3e-6)


def shipped_contact() -> tuple[dict[str, np.ndarray], NetConfig]:
    arrays, meta = checkpoint.load(SHIPPED, "backgammon", sets=True)
    member, member_meta = checkpoint.set_member(arrays, meta, "contact")
    return member, NetConfig.from_dict(member_meta["net"])


def deepened(
    saved: NetConfig, member: dict, wider: int = 0, split: int | None = None, added: int = 0
):
    """The saved network grown by `wider` units (split with seed `split`) and deepened by a
    ReLU layer (as wide, or `added` units wide), as an `Evaluator`."""
    width = saved.hidden[0] + wider
    deep = NetConfig(
        saved.encoding, (width, added or width), "sigmoid", activations=("sigmoid", "relu")
    )
    torch.manual_seed(0)
    model = build_model(deep)
    generator = None if split is None else torch.Generator().manual_seed(split)
    model.load_state_dict(grown_state(model, member, saved, deep, generator))
    return Evaluator(deep, weights_from_model(model))


@pytest.mark.parametrize("split", [None, 3])
def test_deepening_the_shipped_network_keeps_its_probabilities(split: int | None) -> None:
    """A ReLU identity layer after the 1,024 sigmoid units: the same probabilities (to
    float32 rounding) on the boards and afterstates of random games, by both paths."""
    member, saved = shipped_contact()
    grown = deepened(saved, member, split=split)
    assert grown.net.describe() == "256-1024-1024-5 sigmoid,relu (contact)"
    reference = load_evaluator(SHIPPED).networks["contact"]  # type: ignore[union-attr]
    roots, after, parent = lockstep_positions(8, seed=5)
    for boards in (roots, after):
        np.testing.assert_allclose(
            grown.probabilities(boards), reference.probabilities(boards), atol=1e-6
        )
    np.testing.assert_allclose(
        grown.probabilities_from(roots, after, parent), reference.probabilities(after), atol=1e-6
    )


def test_widen_then_deepen_starts_near_the_saved_network() -> None:
    """Units split from the saved ones (with their 1% noise), then the identity: near."""
    member, saved = shipped_contact()
    grown = deepened(saved, member, wider=64, split=4)
    reference = load_evaluator(SHIPPED).networks["contact"]  # type: ignore[union-attr]
    after = lockstep_positions(6, seed=6)[1]
    gap = np.abs(grown.probabilities(after) - reference.probabilities(after))
    assert gap.mean() < 0.002 and 0 < gap.max() < 0.03


def test_a_deepened_set_plays_and_searches_as_the_shipped_one(tmp_path: Path) -> None:
    """Saved as a set with the shipped race evaluator, loaded back: the agent's 0-ply
    plays are the shipped network's best, and 1-ply values agree."""
    member, saved = shipped_contact()
    shipped = load_evaluator(SHIPPED)
    assert isinstance(shipped, netset.NetworkSet)
    networks = {**shipped.networks, "contact": deepened(saved, member)}
    path = netset.save(netset.from_networks(networks, shipped.fallback), tmp_path / "deep.pt")
    deep = load_evaluator(path)
    assert "256-1024-1024-5 sigmoid,relu" in deep.describe()  # type: ignore[union-attr]
    roots, after, _ = lockstep_positions(4, seed=7, max_turns=40)
    dice = np.random.default_rng(8).integers(1, 7, (len(roots), 2))
    chosen = load_agent(f"td:{path}").choose_boards(roots, dice)  # type: ignore[attr-defined]
    best = load_agent(f"td:{SHIPPED}").choose_boards(roots, dice)  # type: ignore[attr-defined]
    np.testing.assert_allclose(
        equity(shipped.probabilities(chosen)), equity(shipped.probabilities(best)), atol=1e-5
    )
    some = after[:: max(1, len(after) // 40)]
    np.testing.assert_allclose(
        ply_probabilities(deep, some, 1), ply_probabilities(shipped, some, 1), atol=1e-5
    )


def test_a_relay_layer_keeps_the_probabilities_of_any_network() -> None:
    """A narrower added layer relays the output layer's logits (ReLU(z), ReLU(-z)): the
    shipped network deepened by 128 units, and a tanh network (which no identity keeps)
    deepened twice, against the saved network and a plain forward pass."""
    member, saved = shipped_contact()
    grown = deepened(saved, member, added=128)
    assert grown.net.describe() == "256-1024-128-5 sigmoid,relu (contact)"
    reference = load_evaluator(SHIPPED).networks["contact"]  # type: ignore[union-attr]
    roots, after, parent = lockstep_positions(6, seed=9)
    np.testing.assert_allclose(
        grown.probabilities(after), reference.probabilities(after), atol=1e-6
    )
    np.testing.assert_allclose(
        grown.probabilities_from(roots, after, parent), reference.probabilities(after), atol=1e-6
    )
    tanh = NetConfig("tesauro", (12,), "tanh")
    weights = random_weights(tanh, 3)
    deep = NetConfig("tesauro", (12, 16, 16), "tanh", activations=("tanh", "relu", "relu"))
    model = build_model(deep)
    model.load_state_dict(grown_state(model, checkpoint.layer_arrays(weights), tanh, deep))
    grown_weights = weights_from_model(model)
    assert np.abs(grown_weights[1][0][10:]).max() > 0  # its spare units: random inputs ...
    np.testing.assert_array_equal(grown_weights[2][0], np.eye(16))  # then the identity
    assert np.abs(grown_weights[3][0][:, 10:]).max() == 0  # ... and no weight to the outputs
    np.testing.assert_allclose(
        plain_forward(deep, grown_weights, after), plain_forward(tanh, weights, after), atol=1e-6
    )


@pytest.mark.parametrize(
    ("hidden", "activations", "message"),
    [
        ((80, 8), ("sigmoid", "relu"), "each added hidden layer is a ReLU layer.*at least 10"),
        ((80, 80), ("sigmoid", "tanh"), "each added hidden layer is a ReLU layer"),
        ((80,), ("relu",), "the activations of the saved hidden layers must match"),
        ((64, 64), ("sigmoid", "relu"), "no layer may shrink"),
    ],
)
def test_what_cannot_deepen_is_named(hidden: tuple, activations: tuple, message: str) -> None:
    saved = NetConfig("tesauro", (80,), "sigmoid")
    arrays = checkpoint.layer_arrays(random_weights(saved, 2))
    target = NetConfig("tesauro", hidden, activations[0], activations=activations)
    with pytest.raises(ValueError, match=message):
        grown_state(build_model(target), arrays, saved, target)
