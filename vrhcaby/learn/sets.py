"""TD(λ) self-play training of a network set (`vrhcaby.nn.netset`): some of its class
networks learn, the others stay as they are.

A set run (`vrhcaby train` with ``netset.train`` naming classes) plays its self-play games
with the whole set, as it plays anywhere (`NetworkSet`: each afterstate valued by the
network of its class, the bear-offs and finished games by the databases and the rules).
Its updates are a single network's (`vrhcaby.learn.learner.Learner`) with two changes:

- the values the λ-returns bootstrap from are the set's, so a trained class's targets
  cross class boundaries (a contact position's target is the race network's value of the
  race it turned into), and a bear-off or finished game takes its exact value
  (`obey_rules`), which no network fits;
- the loss is taken over the afterstates whose class a trained network answers only
  (`SetGame.fits`): each trained network learns from its own class, and the networks
  not trained (frozen: no gradient, no optimizer state) stay the same bit for bit.

`SetModel` is the set as one torch module: it classifies the boards it is given and runs
each class network on its share. `SetTDTrainer` is a `Trainer` of a `SetGame`; its
checkpoints are in the network-set layout (`vrhcaby.nn.checkpoint`), so they load as sets
wherever a network loads, and `--resume` continues them exactly.

Where each class network starts (`NetSetConfig`): a checkpoint of its own (a single
network, or a set's network of that class), another class it falls back to, the run's
`init_from` set, or (a trained class) a fresh network of the run's `net`. `assemble`
puts a set together from existing checkpoints the same way (`vrhcaby netset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.classify import NAMES, classify_boards
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import EvalConfig, TDConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.learner import Learner
from vrhcaby.learn.selfplay import SelfPlay, weights_from_model
from vrhcaby.learn.trainer import Trainer, load_optimizer_state, model_arrays, optimizer_state
from vrhcaby.nn import checkpoint, onesided
from vrhcaby.nn.checkpoint import SET_CLASSES
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, load_member
from vrhcaby.nn.netset import CODES, ClassNetwork, NetworkSet, from_networks


@dataclass(frozen=True)
class NetSetConfig:
    """A set run's networks (the ``[netset]`` table of a run config): where each class's
    network comes from, and which are trained."""

    contact: str = ""
    """The contact network: a checkpoint (a single network, or a set whose contact network
    it is), or "" (the `init_from` set's; a trained class without one: a fresh `net`)."""
    crashed: str = ""
    """The crashed network, as `contact`; or a class name ("contact"): it falls back to
    that class's network."""
    race: str = ""
    """The race network, as `crashed`."""
    train: tuple[str, ...] = ()
    """The classes whose networks learn (empty: not a set run); the others are frozen."""

    def __post_init__(self) -> None:
        for name in self.train:
            if name not in SET_CLASSES:
                raise ValueError(
                    f"netset.train: unknown class {name!r:.40} (classes: {', '.join(SET_CLASSES)})"
                )
        if len(set(self.train)) != len(self.train):
            raise ValueError(f"netset.train names a class twice: {list(self.train)}")

    def source(self, name: str) -> str:
        """Where class `name`'s network comes from (the field of that name)."""
        return str(getattr(self, name))


@dataclass
class Member:
    """A class network of a set run: its description and starting weights."""

    net: NetConfig
    weights: dict[str, np.ndarray] | None
    """``model/<layer>.<weight|bias>`` arrays it starts from; None: fresh."""


def _member_of(path: str, name: str) -> Member:
    """Class `name`'s network in checkpoint `path` (a single network, or a set's)."""
    arrays, meta = checkpoint.load(path, "backgammon", sets=True)
    if checkpoint.is_set(meta):
        held = meta["networks"]
        answers = name if name in held else meta.get("fallback", {}).get(name, name)
        if answers not in held:
            raise ValueError(f"netset.{name}: {path} holds no {name} network")
        arrays, meta = checkpoint.set_member(arrays, meta, answers)
    if onesided.is_onesided(meta["net"]):
        raise ValueError(
            f"netset.{name}: {path}'s {name} network is the one-sided race evaluator, which a "
            "set run cannot hold (TD trains networks of both sides); train with a race "
            "network and put the one-sided one in afterwards (vrhcaby netset --race)"
        )
    weights = {k: np.array(v, np.float32) for k, v in arrays.items() if k.startswith("model/")}
    return Member(NetConfig.from_dict(meta["net"]), weights)


def resolve(
    config: NetSetConfig, init_from: str, net: NetConfig
) -> tuple[dict[str, Member], dict[str, str]]:
    """The networks of a set run (class -> `Member`) and its fallback table, from
    `config`, the run's `init_from` (a set checkpoint, or "") and its `net`; a ValueError
    (a `CheckpointError` for the classes) naming what does not fit."""
    start: dict[str, Any] = {}
    if init_from:
        _, meta = checkpoint.load(init_from, "backgammon", sets=True)
        if not checkpoint.is_set(meta):
            raise ValueError(f"init_from {init_from}: a set run starts from a set, not one network")
        start = meta
    members: dict[str, Member] = {}
    fallback: dict[str, str] = {}
    for name in SET_CLASSES:
        source = config.source(name)
        if source in SET_CLASSES:
            fallback[name] = source
        elif source:
            members[name] = _member_of(source, name)
        elif start and name in start["networks"]:
            members[name] = _member_of(init_from, name)
        elif start:
            fallback[name] = start.get("fallback", {})[name]
        elif name in config.train:
            members[name] = Member(net, None)
        else:
            raise ValueError(
                f"netset.{name}: no network (name a checkpoint or a class, or set init_from)"
            )
    checkpoint.check_classes(members, fallback)
    for name in config.train:
        if name not in members:
            raise ValueError(
                f"netset.train: {name} falls back to {fallback[name]}: train that class instead"
            )
    return members, fallback


def answerers(nets: dict[str, NetConfig], fallback: dict[str, str]) -> np.ndarray:
    """The network (index into `nets`) answering each class code (`engine.classify`);
    -1 for the codes the rules and the databases answer."""
    out = np.full(len(NAMES), -1, np.intp)
    for name in SET_CLASSES:
        out[CODES[name]] = list(nets).index(fallback.get(name, name))
    return out


class SetModel(torch.nn.Module):
    """A network set as one torch module: boards (N, 2, 25) int8 in, each row's class
    network's raw outputs (N, 5) out (`vrhcaby.nn.net.joint` makes them probabilities),
    zeros for the rows the rules and the databases answer (`obey_rules` replaces them).
    The networks not in `trained` are frozen (no gradients)."""

    def __init__(
        self, nets: dict[str, NetConfig], fallback: dict[str, str], trained: tuple[str, ...]
    ) -> None:
        super().__init__()
        self.nets = nets
        self.fallback = fallback
        self.networks = torch.nn.ModuleDict({name: build_model(net) for name, net in nets.items()})
        for name, model in self.networks.items():
            model.requires_grad_(name in trained)
        self.answerer = answerers(nets, fallback)

    def forward(self, boards: torch.Tensor) -> torch.Tensor:
        b = boards.cpu().numpy()
        answerer = self.answerer[classify_boards(b)]
        out = torch.zeros((len(b), 5), device=boards.device)
        for i, (name, model) in enumerate(self.networks.items()):
            rows = np.flatnonzero(answerer == i)
            if rows.size:
                x = torch.from_numpy(self.nets[name].encode(b[rows])).to(boards.device)
                out = out.index_put((torch.from_numpy(rows).to(boards.device),), model(x))
        return out

    def network_set(self, variant: str, run: dict[str, Any] | None = None) -> NetworkSet:
        """The set as it plays now, numpy (`vrhcaby.nn.netset.NetworkSet`)."""
        return from_networks(
            {
                name: Evaluator(self.nets[name], weights_from_model(model), variant, run or {})
                for name, model in self.networks.items()
            },
            self.fallback,
        )


class SetGame(Backgammon):
    """Backgammon learnt by a network set: the set plays, the `trained` class networks
    learn from the afterstates of the classes they answer (`fits`). `starts`: boards on
    roll the self-play games start from (`vrhcaby.learn.starts`), or None."""

    def __init__(
        self,
        nets: dict[str, NetConfig],
        fallback: dict[str, str],
        trained: tuple[str, ...],
        variant: str = "standard",
        backup: str = "sampled",
        starts: np.ndarray | None = None,
    ) -> None:
        super().__init__(nets[fallback.get("contact", "contact")], variant, backup, starts)
        checkpoint.check_classes(nets, fallback)
        self.nets = nets
        self.fallback = fallback
        self.trained = trained
        #: Whether each class code's afterstates are fitted.
        self._learns = np.array([name in trained for name in nets] + [False])[
            answerers(nets, fallback)
        ]

    def build_model(self) -> SetModel:
        return SetModel(self.nets, self.fallback, self.trained)

    def selfplay(self, model: torch.nn.Module, device: torch.device) -> SelfPlay:
        assert isinstance(model, SetModel)
        return SelfPlay(
            model,
            self.net,
            self.variant,
            device,
            self.expected,
            network=lambda: model.network_set(self.variant),
            starts=self.starts,
        )

    def inputs(self, episodes: Episodes, valid: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(episodes.states[valid]))

    def fits(self, states: np.ndarray) -> np.ndarray:
        """bool (N,): the afterstates (N, 2, 25) whose class a trained network answers."""
        return self._learns[classify_boards(states)]

    def evaluate(
        self, model: torch.nn.Module, config: EvalConfig, run: dict[str, Any]
    ) -> dict[str, Any]:
        assert isinstance(model, SetModel)
        return self.evaluate_network(model.network_set(self.variant, run), config)

    def describe(self) -> str:
        """Each class's network, and which learn."""
        parts = []
        for name in SET_CLASSES:
            if name in self.nets:
                learns = " (trained)" if name in self.trained else ""
                parts.append(f"{name} {self.nets[name].describe()}{learns}")
            else:
                parts.append(f"{name} = {self.fallback[name]}")
        return ", ".join(parts)


class SetTDTrainer(Trainer):
    """A `Trainer` of a `SetGame`: the set's model, an optimizer of the trained networks'
    parameters only, checkpoints in the network-set layout. `members` give each class
    network's starting weights (`resolve`)."""

    game: SetGame
    model: SetModel
    is_set = True
    takes_init_from = False

    def describe_network(self, run: dict[str, Any]) -> str:
        """The set's networks, those trained and those kept, described."""
        return self.game.describe()

    def __init__(
        self,
        members: dict[str, Member],
        fallback: dict[str, str],
        trained: tuple[str, ...],
        td: TDConfig,
        total_games: int,
        seed: int,
        device: torch.device,
        variant: str = "standard",
        starts: np.ndarray | None = None,
    ) -> None:
        nets = {name: m.net for name, m in members.items()}
        game = SetGame(nets, fallback, trained, variant, td.backup, starts)
        self._setup(game, td, total_games, seed, device)
        self.learner = Learner(self.model, self.optimizer, game, device, fits=game.fits)
        for name, member in members.items():
            if member.weights is not None:
                self._load_network(name, member.weights)

    def _load_network(self, name: str, weights: dict[str, np.ndarray]) -> None:
        model = self.model.networks[name]
        try:
            model.load_state_dict(
                {key: torch.from_numpy(weights[f"model/{key}"]) for key in model.state_dict()}
            )
        except (KeyError, RuntimeError) as exc:
            raise ValueError(
                f"netset.{name}: weights do not fit {self.model.nets[name].describe()} "
                f"({type(exc).__name__})"
            ) from None

    def weights(self) -> dict[str, np.ndarray]:
        """Every class network's weights, ``set/<class>/model/<layer>.<weight|bias>``."""
        return checkpoint.set_arrays(
            {name: model_arrays(model) for name, model in self.model.networks.items()}
        )

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The networks, the classes trained, the optimizer, both RNGs and the games played
        (`vrhcaby.nn.checkpoint.contents`)."""
        return checkpoint.contents(
            networks={
                name: (self.game.nets[name].to_dict(), model_arrays(model))
                for name, model in self.model.networks.items()
            },
            fallback=self.game.fallback,
            trained=self.game.trained,
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
        raise ValueError("a set run takes its networks from netset and init_from (`resolve`)")

    def load_state(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Restore what `state` saved: the same classes, networks and trained classes."""
        if not checkpoint.is_set(meta) or "rng" not in meta:
            raise ValueError("not a set TD run's checkpoint")
        saved = {name: NetConfig.from_dict(d) for name, d in meta["networks"].items()}
        same = (
            saved == self.game.nets
            and meta.get("fallback", {}) == self.game.fallback
            and tuple(meta.get("trained", ())) == self.game.trained
        )
        if not same:
            held = ", ".join(f"{n} {c.describe()}" for n, c in saved.items())
            raise ValueError(
                f"checkpoint holds the set {held} (trained {meta.get('trained')}), but the "
                f"run trains {self.game.describe()}"
            )
        for name in self.game.nets:
            member, _ = checkpoint.set_member(arrays, meta, name)
            self._load_network(name, member)
        load_optimizer_state(self.optimizer, arrays, meta["optimizer"], self.device)
        torch.set_rng_state(torch.from_numpy(arrays["rng/torch"]))
        self.rng.bit_generator.state = meta["rng"]
        self.games = int(meta["games"])

    def network_set(self, run: dict[str, Any] | None = None) -> NetworkSet:
        """The set as it plays now."""
        return self.model.network_set(self.variant, run)


def assemble(sources: Mapping[str, str]) -> NetworkSet:
    """The set of each class's source (`SET_CLASSES`, every one named): a checkpoint (a
    single network, or a set, whose network of that class is taken) or the name of
    another class, which answers it (a fallback). A ValueError (`CheckpointError` for a
    file) naming the class and what is wrong: a missing or unsound file, a class without
    a network, networks that cannot make one set (other variants, acey-deucey). The set's
    config records each class's source (``assembled``) and the run that made the network
    it took (``assembled_runs``: the source's config name, or for a network taken from an
    assembled set the run that set records for it), so its recipe stays known."""
    unknown = sorted(set(sources) - set(SET_CLASSES))
    if unknown:
        raise ValueError(f"unknown class {unknown[0]!r:.40} (classes: {', '.join(SET_CLASSES)})")
    networks: dict[str, ClassNetwork] = {}
    fallback: dict[str, str] = {}
    record: dict[str, str] = {}
    runs: dict[str, str] = {}
    for name in SET_CLASSES:
        source = sources.get(name, "")
        if not source:
            raise ValueError(f"network set class {name}: no source (a checkpoint or a class)")
        record[name] = source
        if source in SET_CLASSES:
            fallback[name] = source
            continue
        try:
            networks[name] = load_member(source, name)
        except checkpoint.CheckpointError as exc:
            raise checkpoint.CheckpointError(f"network set class {name}: {exc}") from None
        config = getattr(networks[name], "config", {})
        # A network taken from an assembled set keeps the run that made it.
        made = config.get("assembled_runs", {}).get(name) or config.get("name", "")
        runs[name] = str(made)
    networks_set = from_networks(networks, fallback)
    networks_set.config["assembled"] = record
    networks_set.config["assembled_runs"] = runs
    return networks_set
