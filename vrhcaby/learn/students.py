"""What a distillation run (`vrhcaby train` with `distill.labels`) fits: one network, or
the networks of a network set (`vrhcaby.nn.netset`), each with its labels.

A `Student` is one network with the labels it is fitted to and the generator of their
order. A single network is a `vrhcaby.learn.trainer.Trainer`'s; a set's networks are a
`SetTrainer`'s, one student per class network, fitted to the labels of the classes it
answers (its own and those that fall back to it; the bear-offs, which the databases
answer, to none). Every student's generator is seeded by the run's seed and one Adam
optimizer holds all the networks (Adam is per parameter, and a step moves only the
parameters of the network whose batch made the gradient), so a set's network is fitted
exactly as a single-network run of its classes would fit it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import EvalConfig
from vrhcaby.learn.distill import CPU, DistillConfig, LabelSet, load_labels
from vrhcaby.learn.selfplay import weights_from_model
from vrhcaby.learn.trainer import (
    Trainer,
    grown_state,
    load_optimizer_state,
    model_arrays,
    optimizer_state,
)
from vrhcaby.nn import checkpoint, onesided
from vrhcaby.nn.checkpoint import SET_CLASSES
from vrhcaby.nn.net import Evaluator, NetConfig, build_model
from vrhcaby.nn.netset import ClassNetwork, NetworkSet, from_networks

#: Where a checkpoint keeps the state of a student's generator (a set's: ``/<class>``).
SHUFFLE = "rng/shuffle"


@dataclass
class Student:
    """One network a distillation run fits, its labels and the order it sees them in."""

    name: str
    """Its class in a network set ("" for a single network)."""
    model: torch.nn.Module
    fitted: LabelSet
    held: LabelSet
    generator: torch.Generator
    """Draws every epoch's order of its fitted labels, and nothing else."""

    @property
    def key(self) -> str:
        """Where checkpoints keep its generator's state."""
        return f"{SHUFFLE}/{self.name}" if self.name else SHUFFLE


def seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def single_student(
    trainer: Trainer, folders: tuple[str, ...], config: DistillConfig, seed: int
) -> Student:
    """The student of a single-network run: the trainer's network on every label (of
    `config.classes`), on the trainer's device."""
    fitted, held = load_labels(folders, trainer.net, config, trainer.device)
    return Student("", trainer.model, fitted, held, seeded(seed))


class SetTrainer:
    """A network set's networks fitted together: their models, one Adam optimizer, the
    epochs done (`games`, as a `Trainer` counts); the state of a checkpoint in the
    network-set layout (`vrhcaby.nn.checkpoint`), which plays as a set wherever a
    network plays (`vrhcaby.nn.net.load_evaluator`).

    A one-sided race evaluator (`vrhcaby.nn.onesided`) in the set is carried as it is:
    it is no network of the set's inputs to fit, and the race it answers has no student.
    """

    is_set = True
    """Its checkpoints are in the network-set layout (as `Trainer.is_set`)."""
    takes_init_from = True
    """A new run warm starts it from `init_from` (as `Trainer.takes_init_from`)."""

    def describe_network(self, run: dict[str, Any]) -> str:
        """The set as it plays now, described (`run`: the run's config)."""
        return self.network_set(run).describe()

    def __init__(
        self,
        nets: Mapping[str, NetConfig],
        fallback: Mapping[str, str],
        variant: str,
        lr: float,
        seed: int,
        carried: Mapping[str, dict[str, Any]] | None = None,
        device: torch.device = CPU,
    ) -> None:
        self.carried = dict(carried or {})
        """Class -> the description of a one-sided race evaluator the set keeps unfitted."""
        checkpoint.check_classes([*nets, *self.carried], dict(fallback))
        self.nets = dict(nets)
        self.fallback = dict(fallback)
        self.variant = variant
        self.device = device
        self.game = Backgammon(self.nets[self.answerer("contact")], self.variant)
        """The contact network's game: its `report` reads any backgammon evaluation."""
        torch.manual_seed(seed)
        self.models = {name: build_model(net).to(device) for name, net in self.nets.items()}
        self.carried_arrays: dict[str, dict[str, np.ndarray]] = {}
        """The carried evaluators' ``model/...`` arrays (`warm_start` reads them)."""
        params = [p for model in self.models.values() for p in model.parameters()]
        self.optimizer = torch.optim.Adam(params, lr=lr)
        self.games = 0

    @classmethod
    def of(
        cls,
        meta: dict[str, Any],
        variant: str,
        lr: float,
        seed: int,
        grow: Mapping[str, NetConfig] | None = None,
        device: torch.device = CPU,
    ) -> SetTrainer:
        """The trainer of the set a checkpoint's meta describes (fresh weights, on
        `device`), its networks of the classes in `grow` of that shape instead
        (`warm_start` grows the set's into them); a ValueError for a class in `grow`
        without a network to fit."""
        grow = dict(grow or {})
        nets, carried = {}, {}
        for name, description in meta["networks"].items():
            if onesided.is_onesided(description):
                carried[name] = description
            else:
                nets[name] = grow.pop(name, NetConfig.from_dict(description))
        for name in grow:
            why = "the one-sided race evaluator" if name in carried else "no network of its own"
            raise ValueError(f"distill.grow: class {name}'s network in init_from is {why}")
        return cls(nets, meta.get("fallback", {}), variant, lr, seed, carried, device)

    def answerer(self, name: str) -> str:
        """The class whose network answers class `name`."""
        return name if name in self.nets or name in self.carried else self.fallback[name]

    def students(self, folders: tuple[str, ...], config: DistillConfig, seed: int) -> list[Student]:
        """One student per network that has labels to fit: those of the classes it
        answers (among `config.classes`, when it names some)."""
        out = []
        for name, model in self.models.items():
            served = tuple(
                c
                for c in SET_CLASSES
                if self.answerer(c) == name and (not config.classes or c in config.classes)
            )
            if served:
                fitted, held = load_labels(
                    folders, self.nets[name], replace(config, classes=served), self.device
                )
                out.append(Student(name, model, fitted, held, seeded(seed)))
        return out

    def warm_start(
        self,
        arrays: dict[str, np.ndarray],
        meta: dict[str, Any],
        split: torch.Generator | None = None,
    ) -> None:
        """Start from a set's networks (`init_from`, or a checkpoint of this run): the
        same classes, each network the run's or one that grows to it (`grown_state`, new
        units split from the saved ones with `split`), the carried evaluators as they
        are; a ValueError naming what does not fit."""
        saved = meta.get("networks", {})
        carried = {name for name, d in saved.items() if onesided.is_onesided(d)}
        if set(saved) != set(self.nets) | set(self.carried) or carried != set(self.carried):
            raise ValueError(
                f"holds the networks {self._describe(meta)}, but the run fits "
                f"{', '.join(f'{n} {net.describe()}' for n, net in self.nets.items())}"
            )
        if meta.get("fallback", {}) != self.fallback:
            raise ValueError(
                f"falls back {meta.get('fallback', {})}, but the run's set {self.fallback}"
            )
        for name, model in self.models.items():
            member, _ = checkpoint.set_member(arrays, meta, name)
            try:
                state = grown_state(
                    model, member, NetConfig.from_dict(saved[name]), self.nets[name], split
                )
            except ValueError as exc:
                raise ValueError(f"network set class {name}: {exc}") from None
            model.load_state_dict(state)
        for name in self.carried:
            member, _ = checkpoint.set_member(arrays, meta, name)
            self.carried_arrays[name] = {k: np.array(a) for k, a in member.items()}

    @staticmethod
    def _describe(meta: dict[str, Any]) -> str:
        """The networks a checkpoint's meta holds, in words."""
        words = []
        for name, d in meta.get("networks", {}).items():
            kind = (
                "one-sided race" if onesided.is_onesided(d) else NetConfig.from_dict(d).describe()
            )
            words.append(f"{name} {kind}")
        return ", ".join(words) or "none"

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The networks (set layout, the carried ones too), the optimizer, torch's RNG and
        the epochs done."""
        networks: dict[str, checkpoint.Network] = {
            name: (self.nets[name].to_dict(), model_arrays(model))
            for name, model in self.models.items()
        }
        for name, description in self.carried.items():
            networks[name] = (description, self.carried_arrays.get(name, {}))
        return checkpoint.contents(
            networks=networks,
            fallback=self.fallback,
            variant=self.variant,
            games=self.games,
            optimizer=optimizer_state(self.optimizer),
            torch_rng=torch.get_rng_state().numpy().copy(),
        )

    def load_state(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Restore what `state` saved."""
        self.warm_start(arrays, meta)
        load_optimizer_state(self.optimizer, arrays, meta["optimizer"], self.device)
        torch.set_rng_state(torch.from_numpy(arrays["rng/torch"]))
        self.games = int(meta["games"])

    def network_set(self, run: dict[str, Any]) -> NetworkSet:
        """The set as it plays now (`run`: the run's config, for the record)."""
        networks: dict[str, ClassNetwork] = {
            name: Evaluator(self.nets[name], weights_from_model(model), self.variant, run)
            for name, model in self.models.items()
        }
        for name, member in self.carried_arrays.items():
            networks[name] = onesided.from_arrays(member)
        return from_networks(networks, self.fallback)

    def evaluate(self, config: EvalConfig, run: dict[str, Any]) -> dict[str, Any]:
        """The backgammon evaluation of the set (`Backgammon.evaluate_network`)."""
        return self.game.evaluate_network(self.network_set(run), config)


def is_set_checkpoint(path: str | Path) -> tuple[bool, dict[str, Any]]:
    """Whether checkpoint `path` (checked: a backgammon network or set) holds a set, and
    its meta."""
    _, meta = checkpoint.load(path, "backgammon", sets=True)
    return checkpoint.is_set(meta), meta
