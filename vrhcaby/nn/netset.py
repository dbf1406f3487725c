"""A network set: one network per position class, the bear-off databases for the rest.

GNU Backgammon answers a position with the evaluator of its class (`engine.classify`): a
contact, a crashed or a race network, each with inputs of its own, and its databases in
a bear-off. A `NetworkSet` does the same over a batch of afterstates: it classifies them
all at once (`engine.classify.classify_boards`), runs each network once on its share (on
the whole batch when that share is at least `WHOLE` of it, cheaper than gathering), and
answers the finished games and the bear-offs with `vrhcaby.nn.lawful.obey_rules` (the
game's result, the bear-off databases' exact cubeless values, `vrhcaby.nn.bearoff_db`),
in place of any network's answer. It has an `Evaluator`'s methods (`probabilities`,
`probabilities_from`, `equity`: the same shapes, float32) and attributes (`variant`,
`config`, `net`), so it goes wherever one goes: the td agent at any depth, hints, cube
decisions, rollouts, tournaments, the external-player server. `vrhcaby.nn.net.load_evaluator`
returns one for a network-set checkpoint (the layout: `vrhcaby.nn.checkpoint`).

Every network's inputs are its own (a race network reads the ``race`` encoding,
`vrhcaby.nn.encode.race_features`). A class may have no network of its own and fall
back to another's (`fallback`, e.g. ``{"crashed": "contact"}``: GNU Backgammon's nets
before its crashed net); the fallback network then answers both classes in one call.

The members are `vrhcaby.nn.net.Evaluator`s, read here only through what they do
(`ClassNetwork`): this module sits below `vrhcaby.nn.net`, whose loader builds sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from engine.classify import BEAROFF1, BEAROFF2, CONTACT, CRASHED, NAMES, OVER, RACE, classify_boards
from engine.variants import VARIANTS
from vrhcaby.equity.outcomes import equity
from vrhcaby.nn import checkpoint, onesided
from vrhcaby.nn.checkpoint import SET_CLASSES
from vrhcaby.nn.lawful import obey_rules

#: The class code (`engine.classify`) each class of a set stands for.
CODES = {"contact": CONTACT, "crashed": CRASHED, "race": RACE}
#: The codes whose afterstates the rules and the databases answer, with no network.
DECIDED = (OVER, BEAROFF1, BEAROFF2)
#: The share of a batch from which its answerer answers the whole batch rather than its
#: rows: gathering 98% of a batch of afterstates (and their roots) cost more, measured
#: (bench/netset.py), than a network's answers to the other 2%, which are thrown away.
WHOLE = 0.9


class NetDescription(Protocol):
    """What a set reads of a member's `vrhcaby.nn.net.NetConfig`."""

    @property
    def variant_inputs(self) -> bool: ...

    def describe(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


class ClassNetwork(Protocol):
    """A set's member network: what it reads of a `vrhcaby.nn.net.Evaluator`."""

    @property
    def net(self) -> NetDescription: ...

    @property
    def weights(self) -> list[tuple[np.ndarray, np.ndarray]]: ...

    @property
    def variant(self) -> str: ...

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray: ...

    def probabilities_from(
        self, roots: np.ndarray, afterstates: np.ndarray, parent: np.ndarray
    ) -> np.ndarray: ...


def _decided(boards: np.ndarray) -> np.ndarray:
    """The five probabilities float32 (N, 5) of afterstates that are finished games or
    bear-offs: `obey_rules` puts the result or the databases' values in every row."""
    return obey_rules(boards, np.zeros((len(boards), 5), np.float32))


@dataclass
class NetworkSet:
    """One network per position class, evaluated as one `vrhcaby.nn.net.Evaluator`."""

    networks: dict[str, ClassNetwork]
    """The network of each class that has its own (names from `SET_CLASSES`)."""
    fallback: dict[str, str] = field(default_factory=dict)
    """Class -> the class whose network answers it, for each class without its own."""
    variant: str = "standard"
    """The game variant the networks play (a board of 25 columns: not acey-deucey)."""
    config: dict[str, Any] = field(default_factory=dict)
    """The run configuration stored in the set's checkpoint."""

    def __post_init__(self) -> None:
        checkpoint.check_classes(self.networks, self.fallback)
        if self.variant not in VARIANTS or VARIANTS[self.variant].enter_from_start:
            raise ValueError(f"a network set plays a 25-point board, not {self.variant!r:.40}")
        for name in SET_CLASSES:
            answerer = self.networks[self.answerer(name)]
            if name != "race" and onesided.is_onesided(answerer.net.to_dict()):
                raise ValueError(
                    f"network set class {name}: the one-sided race evaluator answers races only"
                )
        for name, network in self.networks.items():
            if network.net.variant_inputs:
                raise ValueError(
                    f"network set class {name}: an acey-deucey network "
                    f"({network.net.describe()}) cannot be in a set"
                )
        #: The answerers: each network, then None (the rules and the databases); and the
        #: index of the one that answers each class code.
        self._answerers: list[ClassNetwork | None] = [*self.networks.values(), None]
        self._answerer_of = np.zeros(len(NAMES), np.intp)
        self._answerer_of[list(DECIDED)] = len(self.networks)
        for name in SET_CLASSES:
            self._answerer_of[CODES[name]] = list(self.networks).index(self.answerer(name))

    def answerer(self, name: str) -> str:
        """The class whose network answers class `name`."""
        return name if name in self.networks else self.fallback[name]

    @property
    def net(self) -> NetDescription:
        """The contact network's description (the class most positions are in), for
        readers of an `Evaluator`'s `net`."""
        return self.networks[self.answerer("contact")].net

    def describe(self) -> str:
        """Each class and its network, e.g. ``contact 214-128-5 sigmoid (rich), ...``."""
        return ", ".join(
            f"{name} {self.networks[name].net.describe()}"
            if name in self.networks
            else f"{name} = {self.fallback[name]}"
            for name in SET_CLASSES
        )

    def _check(self, boards: np.ndarray, extra_turn: np.ndarray | None) -> np.ndarray:
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        if boards.ndim != 3 or boards.shape[1:] != (2, 25):
            raise ValueError(
                f"afterstates must have shape (N, 2, 25) for a network set, got {boards.shape}"
            )
        if extra_turn is not None:
            raise ValueError("extra_turn is for acey-deucey networks (variant inputs) only")
        return boards

    def _shares(self, boards: np.ndarray) -> list[tuple[ClassNetwork | None, np.ndarray | None]]:
        """Each answerer (a network; None: the rules and the databases) with the rows of
        `boards` it answers, those that have any. Rows None, first in the list only: the
        answerer of at least `WHOLE` of the batch, which answers all of it (the other
        shares' answers then replace its answers to their rows)."""
        if not len(boards):
            return []
        answerer = self._answerer_of[classify_boards(boards)]
        if (answerer == answerer[0]).all():  # one answerer (the common case): no counting
            return [(self._answerers[answerer[0]], None)]
        counts = np.bincount(answerer, minlength=len(self._answerers))
        top = int(np.argmax(counts))
        whole = counts[top] >= WHOLE * len(boards)
        shares: list[tuple[ClassNetwork | None, np.ndarray | None]] = []
        if whole:
            shares.append((self._answerers[top], None))
        for i, network in enumerate(self._answerers):
            if counts[i] and not (whole and i == top):
                shares.append((network, np.flatnonzero(answerer == i)))
        return shares

    def probabilities(
        self, afterstates: np.ndarray, extra_turn: np.ndarray | None = None
    ) -> np.ndarray:
        """Five outputs (N, 5) float32 for the side that just moved (row 1) of each board
        (N, 2, 25), from its class's network, the rules or the databases (`extra_turn`
        is for acey-deucey networks, which a set does not hold: it must be None)."""
        boards = self._check(afterstates, extra_turn)
        out = np.empty((len(boards), 5), np.float32)
        for network, rows in self._shares(boards):
            part = boards if rows is None else boards[rows]
            p = _decided(part) if network is None else network.probabilities(part)
            if rows is None:
                out = p  # a new array: the other shares' rows are written into it
            else:
                out[rows] = p
        return out

    def probabilities_from(
        self,
        roots: np.ndarray,
        afterstates: np.ndarray,
        parent: np.ndarray,
        extra_turn: np.ndarray | None = None,
    ) -> np.ndarray:
        """As `probabilities`, for afterstates played from `roots[parent]`: each network
        updates its first layer from the roots its share was played from (the
        incremental path of `Evaluator.probabilities_from`). That path holds whatever the
        root's class: a first layer is a sum over the board's cells, so a root of another
        class (a contact root of a race afterstate) is as good a start as any."""
        roots = self._check(roots, None)
        after = self._check(afterstates, extra_turn)
        parent = np.asarray(parent, np.int64)
        out = np.empty((len(after), 5), np.float32)
        for network, rows in self._shares(after):
            if rows is None:
                whole = network.probabilities_from if network is not None else None
                out = _decided(after) if whole is None else whole(roots, after, parent)
            elif network is None:
                out[rows] = _decided(after[rows])
            else:
                used = np.zeros(len(roots), bool)  # the share's roots, each row's among them
                used[parent[rows]] = True
                local = (np.cumsum(used) - 1)[parent[rows]]
                out[rows] = network.probabilities_from(roots[used], after[rows], local)
        return out

    def equity(self, afterstates: np.ndarray, extra_turn: np.ndarray | None = None) -> np.ndarray:
        """Cubeless money equity (N,) for the side that just moved (row 1) of each board."""
        return equity(self.probabilities(afterstates, extra_turn))


def from_networks(
    networks: Mapping[str, ClassNetwork], fallback: Mapping[str, str] | None = None
) -> NetworkSet:
    """The set of single `networks` (class -> a `vrhcaby.nn.net.Evaluator`, e.g. from
    `load_evaluator`), with `fallback` for the classes without one; ValueError (a
    `CheckpointError` for the classes) if one is a set, they play different variants, or
    the classes do not fit."""
    variants = {}
    for name, network in networks.items():
        if isinstance(network, NetworkSet):
            raise ValueError(f"network set class {name}: a network set, not a single network")
        variants[name] = network.variant
    if len(set(variants.values())) > 1:
        plays = ", ".join(f"{name} {variant}" for name, variant in variants.items())
        raise ValueError(f"a network set's networks play one variant, not {plays}")
    variant = next(iter(variants.values()), "standard")
    return NetworkSet(dict(networks), dict(fallback or {}), variant, {"variant": variant})


def save(networks: NetworkSet, path: str | Path) -> Path:
    """Write the set to checkpoint `path` atomically (the layout: `vrhcaby.nn.checkpoint`),
    which `vrhcaby.nn.net.load_evaluator` reads back; returns the path."""
    arrays, meta = checkpoint.contents(
        networks={
            name: (network.net.to_dict(), checkpoint.layer_arrays(network.weights))
            for name, network in networks.networks.items()
        },
        fallback=networks.fallback,
        config={**networks.config, "variant": networks.variant},
    )
    return checkpoint.save(path, arrays, meta)
