"""An ensemble of networks: the mean of their five probabilities, as one set member.

Networks fitted on the same labels from different lines (generation 9 and the expert
iteration's `td-contact-ei.pt`) err in different places, and their mean errs less where
the one-ply search looks: on the judged set the ensemble of those two searches better at
1 ply than at 0 (docs/distillation.md, session 25), which neither does alone. It costs one
evaluation per member, so it serves as a teacher (`bench/ensemble.py relabel`: its values
relabel a fit's label folders), not as a player.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vrhcaby.nn.net import load_evaluator
from vrhcaby.nn.netset import ClassNetwork, NetDescription, NetworkSet

#: The classes whose networks an ensemble averages (the race class keeps the first set's
#: evaluator: the one-sided race evaluator, the same in every shipped set).
AVERAGED = ("contact", "crashed")


class Ensemble:
    """Members answering one class together: the mean of their probabilities. Reads as a
    `ClassNetwork` (its description and weights those of the first member)."""

    def __init__(self, members: Sequence[ClassNetwork]) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one network")
        self.members = tuple(members)

    @property
    def net(self) -> NetDescription:
        return self.members[0].net

    @property
    def weights(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return self.members[0].weights

    @property
    def variant(self) -> str:
        return self.members[0].variant

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """The members' mean probabilities (N, 5) float32 of `afterstates`."""
        total = sum(m.probabilities(afterstates).astype(np.float64) for m in self.members)
        return np.asarray(total / len(self.members), np.float32)

    def probabilities_from(
        self, roots: np.ndarray, afterstates: np.ndarray, parent: np.ndarray
    ) -> np.ndarray:
        """As `probabilities`, each member on its incremental path from `roots[parent]`."""
        total = sum(
            m.probabilities_from(roots, afterstates, parent).astype(np.float64)
            for m in self.members
        )
        return np.asarray(total / len(self.members), np.float32)


def ensemble_set(paths: Sequence[str | Path]) -> NetworkSet:
    """The network set of the first checkpoint in `paths` whose contact network (and
    crashed one, where the set has its own) is the `Ensemble` of every set's; a ValueError
    when one is not a network set with a contact network."""
    if not paths:
        raise ValueError("an ensemble needs at least one network")
    sets = []
    for path in paths:
        each = load_evaluator(path)
        if not isinstance(each, NetworkSet) or "contact" not in each.networks:
            raise ValueError(f"{path}: not a network set with a contact network")
        sets.append(each)
    first = sets[0]
    networks = dict(first.networks)
    for name in AVERAGED:
        if name in networks:
            members = [s.networks[s.answerer(name)] for s in sets]
            networks[name] = Ensemble(members)
    return NetworkSet(networks, dict(first.fallback), first.variant, dict(first.config))
