"""The trainer of one run: the network, its optimizer, the dice generator and the games
count; a round plays self-play games and learns from them, and its state is what a
checkpoint saves and a resume restores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import EvalConfig, TDConfig
from vrhcaby.learn.game import Game
from vrhcaby.learn.learner import Learner, UpdateStats, make_optimizer, scheduled, set_lr
from vrhcaby.nn import checkpoint
from vrhcaby.nn.encode import extends
from vrhcaby.nn.net import NetConfig


@dataclass
class RoundStats:
    """What one self-play round produced and learned."""

    games: int
    plies: int
    evaluated: int
    gammon_rate: float | None
    """Fraction of games won with a gammon or backgammon (None: a game without gammons)."""
    backgammon_rate: float | None
    lr: float
    lam: float
    update: UpdateStats
    charts: dict[str, float] = field(default_factory=dict)
    """The game's other charts of the round's games (six-dice: mean_total)."""


class Trainer:
    """The network, its optimizer, the dice generator and the games count of one run.

    `Trainer(net, td, variant, ...)` learns backgammon, `net` made `variant_net(net,
    variant)` (an acey-deucey run gets the variant inputs); `Trainer.for_game` learns any
    `Game`. `net` and `variant` are the game's.

    What a training run asks of any trainer (this, a network set's, a distillation's, Ray's
    self-play around one) beside its state and its steps: `is_set`, `takes_init_from`,
    `describe_network`, `scalars` and `close`.
    """

    is_set = False
    """Whether its checkpoints are in the network-set layout (`vrhcaby.nn.checkpoint`)."""
    takes_init_from = True
    """Whether a new run warm starts it from `init_from` (a set's TD trainer took its
    networks when it was made)."""

    def __init__(
        self,
        net: NetConfig,
        td: TDConfig,
        variant: str,
        total_games: int,
        seed: int,
        device: torch.device,
    ) -> None:
        self._setup(Backgammon(net, variant, backup=td.backup), td, total_games, seed, device)

    @classmethod
    def for_game(
        cls, game: Game, td: TDConfig, total_games: int, seed: int, device: torch.device
    ) -> Trainer:
        """A trainer of `game`."""
        trainer = cls.__new__(cls)
        trainer._setup(game, td, total_games, seed, device)
        return trainer

    def _setup(
        self, game: Game, td: TDConfig, total_games: int, seed: int, device: torch.device
    ) -> None:
        self.game = game
        self.net = game.net
        self.variant = game.variant
        self.td = td
        self.total_games = total_games
        self.device = device
        torch.manual_seed(seed)
        self.model = game.build_model().to(device)
        self.optimizer = make_optimizer(self.model, td)
        self.rng = np.random.default_rng(seed)
        self.games = 0
        self.selfplay = game.selfplay(self.model, device)
        self.learner = Learner(self.model, self.optimizer, game, device)

    def _chunks(self, episodes: int) -> list[np.ndarray]:
        """The episode indices of each update of a round, every pass."""
        parts = max(1, -(-episodes // self.td.games_per_update))
        chunks = []
        for _ in range(self.td.epochs):
            order = torch.randperm(episodes).numpy() if self.td.shuffle else np.arange(episodes)
            chunks += np.array_split(order, parts)
        return chunks

    def round(self) -> RoundStats:
        """Play one round of self-play games and learn from them."""
        progress = self.games / max(self.total_games, 1)
        lr = scheduled(self.td.lr, self.td.lr_end, progress)
        lam = scheduled(self.td.lam, self.td.lam_end, progress)
        set_lr(self.optimizer, lr)
        n = min(self.td.batch_games, self.total_games - self.games)
        episodes = self.selfplay.play(n, self.rng, self.td.epsilon)
        stats = []
        for chunk in self._chunks(episodes.lengths.size):
            stats.append(self.learner.update(episodes.select(chunk), lam))
        update = UpdateStats.combined(stats)
        self.games += n
        charts = self.game.charts(episodes)
        return RoundStats(
            games=n,
            plies=episodes.plies,
            evaluated=episodes.evaluated,
            gammon_rate=charts.pop("gammon_rate", None),
            backgammon_rate=charts.pop("backgammon_rate", None),
            lr=lr,
            lam=lam,
            update=update,
            charts=charts,
        )

    def evaluate(self, config: EvalConfig, run: dict[str, Any]) -> dict[str, Any]:
        """The game's evaluation of the current network (a JSON record)."""
        return self.game.evaluate(self.model, config, run)

    def describe_network(self, run: dict[str, Any]) -> str:
        """The network it trains, described for the logs (`run`: the run's config)."""
        return self.game.net.describe()

    def scalars(self) -> dict[str, float]:
        """TensorBoard scalars of its own beside a round's: none here (Ray's: its workers)."""
        return {}

    def close(self) -> None:
        """Release what it holds outside this process: nothing here (Ray's: its workers)."""

    # --- state for checkpoints ---------------------------------------------------------

    def weights(self) -> dict[str, np.ndarray]:
        """Model weights as numpy arrays named ``model/<layer>.<weight|bias>``."""
        return model_arrays(self.model)

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Everything needed to continue exactly: arrays and a JSON-able document
        (`vrhcaby.nn.checkpoint.contents`)."""
        return checkpoint.contents(
            self.game.name,
            net=(self.net.to_dict(), self.weights()),
            variant=self.variant,
            games=self.games,
            optimizer=optimizer_state(self.optimizer),
            torch_rng=torch.get_rng_state().numpy().copy(),
            rng=self.rng.bit_generator.state,
        )

    def warm_start(
        self,
        arrays: dict[str, np.ndarray],
        meta: dict[str, Any],
        split: torch.Generator | None = None,
    ) -> None:
        """Start from another backgammon run's network weights (not its optimizer, dice or
        games played), grown to this run's network (`grown_state`, new units split from
        the saved ones with `split`)."""
        if meta.get("game", "backgammon") != "backgammon" or self.game.name != "backgammon":
            raise ValueError("a warm start takes a backgammon network into a backgammon run")
        saved = NetConfig.from_dict(meta["net"])
        self.model.load_state_dict(grown_state(self.model, arrays, saved, self.net, split))

    def load_state(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Restore what `state` saved (weights, optimizer, RNGs, games played)."""
        saved_game = meta.get("game", "backgammon")
        if saved_game != self.game.name:
            raise ValueError(
                f"checkpoint learnt {saved_game!r} but the config asks for {self.game.name!r}"
            )
        saved_variant = meta.get("variant", self.variant)
        if saved_variant != self.variant:
            raise ValueError(
                f"checkpoint learnt {saved_variant!r} but the config asks for {self.variant!r}"
            )
        saved = type(self.net).from_dict(meta["net"])
        if saved != self.net:
            raise ValueError(
                f"checkpoint holds a {saved.describe()} network but the config asks for "
                f"{self.net.describe()}"
            )
        self.model.load_state_dict(
            {
                k[len("model/") :]: torch.from_numpy(v)
                for k, v in arrays.items()
                if k.startswith("model/")
            }
        )
        load_optimizer_state(self.optimizer, arrays, meta["optimizer"], self.device)
        torch.set_rng_state(torch.from_numpy(arrays["rng/torch"]))
        self.rng.bit_generator.state = meta["rng"]
        self.games = int(meta["games"])


def grown_state(
    model: torch.nn.Module,
    arrays: dict[str, np.ndarray],
    saved: NetConfig,
    net: NetConfig,
    split: torch.Generator | None = None,
) -> dict[str, torch.Tensor]:
    """`model`'s (a fresh network of `net`) state with the weights ``model/...`` of a saved
    network of `saved` grown into it; a ValueError if `saved` cannot grow to `net`.

    The saved network may have narrower hidden layers (the same activations), fewer of
    them (below) and an encoding that `net`'s extends (`vrhcaby.nn.encode.extends`). New
    inputs start with no weight into the saved units. New hidden units start, by default,
    with zero outgoing weight and the model's own random incoming weights, so that the
    network first plays exactly as the saved one did; they then learn slowly, as a
    sigmoid unit of small random weights is almost constant and its outgoing weight
    starts at zero.

    With `split` (a generator) each new hidden unit is instead a copy of a saved unit drawn
    at random (Net2WiderNet, Chen et al. 2016): the same incoming weights and bias, its
    source's outgoing weights shared equally among the copies, so it computes a feature the
    saved network uses from the first step. Copies get a little noise on their incoming
    weights (1% of that layer's weight spread), which is all that tells them apart from
    their source under Adam; the network first plays almost as the saved one did.

    Depth: the hidden layers `net` has beyond the saved ones are inserted after the last
    saved (grown) one, before the output layer, each a ReLU layer, so that the network
    computes exactly the saved one's probabilities (with or without `split`):

    - one as wide as the layer below it, after a sigmoid or ReLU layer, is the identity
      (Net2DeeperNet, the same paper: weights the unit matrix, biases zero): the values
      below are never negative, so the ReLU passes them unchanged;
    - one of another width, at least twice the outputs, relays the output layer: its
      first units are ReLU(z) and ReLU(-z) of the output layer's pre-activations z (its
      weights and bias, and their negatives), and the new output layer takes their
      difference, z again, whatever the activation below. Its other units start with the
      model's random incoming weights and no outgoing weight. This adds a layer of the
      width (and the cost per evaluation) one chooses: 1,024 -> 128 costs an eighth of
      1,024 -> 1,024's product.

    No noise is added, as Net2Net adds none to a deeper layer: noise tells copies of one
    unit apart, and these units are no copies. Nor do they need noise to learn: every
    weight of the new layer has a gradient from the first step (its inputs are not zero;
    a ReLU unit of random weights is no constant, so the relay's spare units' outgoing
    weights have gradients too), and Adam moves each by about the learning rate at once
    (noise of a size that keeps the function, 0.1% of the identity's spread, is smaller
    than one step of a fit; measured: with 1% the probabilities of `td-contact-gen3.pt`
    deepened by the identity moved by 0.004 on average, 0.03 at most, before any fitting).
    """
    depth, outputs = len(saved.hidden), net.sizes[-1]
    below = net.layer_activations[:depth]
    grows = (
        below == saved.layer_activations
        and saved.variant_inputs == net.variant_inputs
        and len(saved.hidden) <= len(net.hidden)
        and all(a <= b for a, b in zip(saved.hidden, net.hidden, strict=False))
        and (
            saved.encoding == net.encoding
            or (not saved.variant_inputs and extends(net.encoding, saved.encoding))
        )
    )
    if not grows:
        raise ValueError(
            f"cannot start a {net.describe()} network from a {saved.describe()} one: "
            "the activations of the saved hidden layers must match, no layer may shrink or "
            "go, and the encoding must be the same or one that extends it"
        )
    added = range(depth, len(net.hidden))
    identity = [
        net.hidden[i] == net.hidden[i - 1] and net.layer_activations[i - 1] in ("sigmoid", "relu")
        for i in added
    ]
    if any(net.layer_activations[i] != "relu" for i in added) or any(
        net.hidden[i] < 2 * outputs and not same for i, same in zip(added, identity, strict=True)
    ):
        raise ValueError(
            f"cannot deepen a {saved.describe()} network to {net.describe()}: each added "
            "hidden layer is a ReLU layer, as wide as a sigmoid or ReLU layer below it (the "
            f"identity) or at least {2 * outputs} wide (a relay of the outputs)"
        )
    fresh = model.state_dict()
    old = {}
    for i in range(depth + 1):  # the saved layers and the output layer
        for kind in ("weight", "bias"):
            if f"model/{2 * i}.{kind}" not in arrays:
                raise ValueError(f"the checkpoint lacks weights model/{2 * i}.{kind}")
            old[f"{2 * i}.{kind}"] = torch.from_numpy(
                np.array(arrays[f"model/{2 * i}.{kind}"], np.float32)
            )
    # the saved layers grown in width, with an output layer as wide as the last of them
    shallow = {name: fresh[name] for name in old if int(name.split(".")[0]) < 2 * depth}
    shallow[f"{2 * depth}.weight"] = torch.zeros(outputs, net.hidden[depth - 1])
    shallow[f"{2 * depth}.bias"] = torch.zeros(outputs)
    if split is None:
        grown = _padded(shallow, old)
    else:
        grown = _split(shallow, old, [*saved.hidden, outputs], split)
    w_out, b_out = grown.pop(f"{2 * depth}.weight"), grown.pop(f"{2 * depth}.bias")
    for i, same in zip(added, identity, strict=True):
        width, w_name, b_name = net.hidden[i], f"{2 * i}.weight", f"{2 * i}.bias"
        if same:
            grown[w_name], grown[b_name] = torch.eye(width), torch.zeros(width)
            continue
        w, b = fresh[w_name].clone(), fresh[b_name].clone()
        w[:outputs], b[:outputs] = w_out, b_out
        w[outputs : 2 * outputs], b[outputs : 2 * outputs] = -w_out, -b_out
        grown[w_name], grown[b_name] = w, b
        w_out, b_out = torch.zeros(outputs, width), torch.zeros(outputs)
        w_out[:, :outputs] = torch.eye(outputs)
        w_out[:, outputs : 2 * outputs] = -torch.eye(outputs)
    grown[f"{2 * len(net.hidden)}.weight"], grown[f"{2 * len(net.hidden)}.bias"] = w_out, b_out
    return grown


def _padded(
    fresh: dict[str, torch.Tensor], old: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The saved weights `old` in the corner of the fresh ones: new units keep their fresh
    incoming weights, and no unit gets anything from a new unit or input."""
    weights = {}
    for name, tensor in fresh.items():
        grown = tensor.clone()
        grown[: old[name].shape[0]] = 0.0
        grown[tuple(slice(0, n) for n in old[name].shape)] = old[name]
        weights[name] = grown
    return weights


def _split(
    fresh: dict[str, torch.Tensor],
    old: dict[str, torch.Tensor],
    old_widths: list[int],
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """The saved weights `old` (layers of `old_widths` units, the outputs last) grown to
    the shapes of `fresh` by copying units (`grown_state`)."""
    weights = {}
    inputs = None  # the previous layer's units' sources (None: the encoding's inputs)
    for layer, old_width in enumerate(old_widths):
        w_name, b_name = f"{2 * layer}.weight", f"{2 * layer}.bias"
        width, fan_in = fresh[w_name].shape
        new = width - old_width
        source = torch.cat(
            [torch.arange(old_width), torch.randint(old_width, (new,), generator=generator)]
        )
        w = old[w_name][source]  # each unit's incoming weights are its source's
        if inputs is None:  # new inputs feed nothing yet
            w = torch.cat([w, torch.zeros(width, fan_in - w.shape[1])], 1)
        else:  # the weight from a saved unit is shared equally among its copies
            copies = torch.bincount(inputs, minlength=old[w_name].shape[1]).to(torch.float32)
            w = w[:, inputs] / copies[inputs]
        spread = 0.01 * float(old[w_name].std())
        w[old_width:] += torch.randn((new, fan_in), generator=generator) * spread
        weights[w_name], weights[b_name] = w.contiguous(), old[b_name][source].clone()
        inputs = source
    return weights


def model_arrays(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """A model's weights as numpy arrays, named as a checkpoint of one network names them
    (``model/<layer>.<weight|bias>``; `vrhcaby.nn.checkpoint.contents` puts a set's under
    their classes), whether TD or distillation trains it."""
    return {f"model/{k}": v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


def optimizer_state(optimizer: torch.optim.Optimizer) -> tuple[dict[str, np.ndarray], dict]:
    """An optimizer's state for a checkpoint: its tensors as arrays ``optim/<param>/<key>``
    and a JSON-able document of the rest (`load_optimizer_state` restores it)."""
    arrays = {}
    optim = optimizer.state_dict()
    optim_meta: dict[str, Any] = {"param_groups": optim["param_groups"], "state": {}}
    for idx, entry in optim["state"].items():
        optim_meta["state"][str(idx)] = {}
        for key, value in entry.items():
            if torch.is_tensor(value) and value.ndim > 0:
                arrays[f"optim/{idx}/{key}"] = value.detach().cpu().numpy().copy()
                optim_meta["state"][str(idx)][key] = "array"
            else:
                optim_meta["state"][str(idx)][key] = float(value)
    return arrays, optim_meta


def load_optimizer_state(
    optimizer: torch.optim.Optimizer,
    arrays: dict[str, np.ndarray],
    optim_meta: dict[str, Any],
    device: torch.device,
) -> None:
    """Restore what `optimizer_state` saved (its arrays among `arrays`)."""
    state: dict[int, dict[str, Any]] = {}
    for idx, entry in optim_meta["state"].items():
        state[int(idx)] = {
            key: torch.from_numpy(arrays[f"optim/{idx}/{key}"]).to(device)
            if kind == "array"
            else torch.tensor(kind)
            for key, kind in entry.items()
        }
    optimizer.load_state_dict({"state": state, "param_groups": optim_meta["param_groups"]})
