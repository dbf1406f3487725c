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
from vrhcaby.learn.distill import DistillConfig, LabelSet, load_labels
from vrhcaby.learn.selfplay import weights_from_model
from vrhcaby.learn.trainer import Trainer, load_optimizer_state, optimizer_state, set_weights
from vrhcaby.nn import checkpoint, onesided
from vrhcaby.nn.checkpoint import SET_CLASSES
from vrhcaby.nn.net import Evaluator, NetConfig, build_model
from vrhcaby.nn.netset import NetworkSet, from_networks

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
    `config.classes`)."""
    fitted, held = load_labels(folders, trainer.net, config)
    return Student("", trainer.model, fitted, held, seeded(seed))


class SetTrainer:
    """A network set's networks fitted together: their models, one Adam optimizer, the
    epochs done (`games`, as a `Trainer` counts); the state of a checkpoint in the
    network-set layout (`vrhcaby.nn.checkpoint`), which plays as a set wherever a
    network plays (`vrhcaby.nn.net.load_evaluator`)."""

    def __init__(
        self,
        nets: Mapping[str, NetConfig],
        fallback: Mapping[str, str],
        variant: str,
        lr: float,
        seed: int,
    ) -> None:
        checkpoint.check_classes(nets, dict(fallback))
        self.nets = dict(nets)
        self.fallback = dict(fallback)
        self.variant = variant
        self.device = torch.device("cpu")
        self.game = Backgammon(self.nets[self.answerer("contact")], self.variant)
        """The contact network's game: its `report` reads any backgammon evaluation."""
        torch.manual_seed(seed)
        self.models = {name: build_model(net) for name, net in self.nets.items()}
        params = [p for model in self.models.values() for p in model.parameters()]
        self.optimizer = torch.optim.Adam(params, lr=lr)
        self.games = 0

    @classmethod
    def of(cls, meta: dict[str, Any], variant: str, lr: float, seed: int) -> SetTrainer:
        """The trainer of the set a checkpoint's meta describes (fresh weights); a
        ValueError for a set whose race is the one-sided evaluator, which is not fitted
        to labels."""
        if any(onesided.is_onesided(d) for d in meta["networks"].values()):
            raise ValueError(
                "a set whose race network is the one-sided race evaluator cannot be fitted "
                "to labels: fit a set with a race network (or none) and put the one-sided "
                "one in afterwards (vrhcaby netset --race)"
            )
        nets = {name: NetConfig.from_dict(d) for name, d in meta["networks"].items()}
        return cls(nets, meta.get("fallback", {}), variant, lr, seed)

    def answerer(self, name: str) -> str:
        """The class whose network answers class `name`."""
        return name if name in self.nets else self.fallback[name]

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
                    folders, self.nets[name], replace(config, classes=served)
                )
                out.append(Student(name, model, fitted, held, seeded(seed)))
        return out

    def warm_start(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Start from a set's networks (`init_from`): the same classes and networks."""
        self._check(meta)
        for name, model in self.models.items():
            member, _ = checkpoint.set_member(arrays, meta, name)
            model.load_state_dict(
                {
                    key[len("model/") :]: torch.from_numpy(np.array(a, np.float32))
                    for key, a in member.items()
                    if key.startswith("model/")
                }
            )

    def _check(self, meta: dict[str, Any]) -> None:
        saved = {name: NetConfig.from_dict(d) for name, d in meta.get("networks", {}).items()}
        if saved != self.nets or meta.get("fallback", {}) != self.fallback:
            held = ", ".join(f"{n} {net.describe()}" for n, net in saved.items()) or "none"
            want = ", ".join(f"{n} {net.describe()}" for n, net in self.nets.items())
            raise ValueError(f"holds the networks {held}, but the run fits {want}")

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The networks (set layout), the optimizer, torch's RNG and the epochs done."""
        arrays = set_weights(self.models)
        optim_arrays, optim_meta = optimizer_state(self.optimizer)
        arrays.update(optim_arrays)
        arrays["rng/torch"] = torch.get_rng_state().numpy().copy()
        meta = {
            "game": "backgammon",
            "layout": checkpoint.SET_LAYOUT,
            "networks": {name: net.to_dict() for name, net in self.nets.items()},
            "fallback": dict(self.fallback),
            "variant": self.variant,
            "games": self.games,
            "optimizer": optim_meta,
        }
        return arrays, meta

    def load_state(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Restore what `state` saved."""
        self.warm_start(arrays, meta)
        load_optimizer_state(self.optimizer, arrays, meta["optimizer"], self.device)
        torch.set_rng_state(torch.from_numpy(arrays["rng/torch"]))
        self.games = int(meta["games"])

    def network_set(self, run: dict[str, Any]) -> NetworkSet:
        """The set as it plays now (`run`: the run's config, for the record)."""
        return from_networks(
            {
                name: Evaluator(self.nets[name], weights_from_model(model), self.variant, run)
                for name, model in self.models.items()
            },
            self.fallback,
        )

    def evaluate(self, config: EvalConfig, run: dict[str, Any]) -> dict[str, Any]:
        """The backgammon evaluation of the set (`Backgammon.evaluate_network`)."""
        return self.game.evaluate_network(self.network_set(run), config)


def is_set_checkpoint(path: str | Path) -> tuple[bool, dict[str, Any]]:
    """Whether checkpoint `path` (checked: a backgammon network or set) holds a set, and
    its meta."""
    _, meta = checkpoint.load(path, "backgammon", sets=True)
    return checkpoint.is_set(meta), meta
