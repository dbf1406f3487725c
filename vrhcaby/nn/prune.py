"""The pruning network read as a ranker: the cheap scorer of `agents.search.Pruner`.

A pruning network is an ordinary one-hidden-layer checkpoint with Tesauro's 198 inputs
and nothing else (`vrhcaby.learn.prune` fits one to a full network's outputs). Ranking a
roll's replies needs only an order, so `PruningNet.scores` skips what the full network's
`Evaluator.probabilities_from` adds for its values: the rules' certainties and the bear-off
databases (`vrhcaby.nn.lawful`), which cost about half as much again as the network itself;
the full network applies them to the replies it keeps (and the search keeps a reply that
ends the game whatever its score).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vrhcaby.nn.checkpoint import CheckpointError
from vrhcaby.nn.net import Evaluator, _layer1_full, _output, load_evaluator


class PruningNet:
    """Scores afterstates by a small network's cubeless money equity, fast."""

    def __init__(self, evaluator: Evaluator) -> None:
        net = evaluator.net
        if len(net.hidden) != 1 or net.encoding != "tesauro" or net.variant_inputs:
            raise ValueError(
                f"a pruning network has one hidden layer and Tesauro's inputs alone, "
                f"not {net.describe()}"
            )
        self.evaluator = evaluator
        self._activation = ("sigmoid", "tanh", "relu").index(net.activation)

    @classmethod
    def load(cls, path: str | Path) -> PruningNet:
        """The pruning network in checkpoint `path`; CheckpointError naming it if unsound."""
        evaluator = load_evaluator(path)
        if not isinstance(evaluator, Evaluator):
            raise CheckpointError(f"{path}: a network set is no pruning network")
        try:
            return cls(evaluator)
        except ValueError as exc:
            raise CheckpointError(f"{path}: {exc}") from None

    def scores(self, roots: np.ndarray, afterstates: np.ndarray, parent: np.ndarray) -> np.ndarray:
        """float64 (M,): the mover's cubeless equity of each afterstate (mover in row 1)
        played from `roots[parent]`, by the network alone."""
        e = self.evaluator
        roots = np.ascontiguousarray(roots, np.int8)
        after = np.ascontiguousarray(afterstates, np.int8)
        parent = np.ascontiguousarray(parent, np.int64)
        base = _layer1_full(roots, e._table, e._off, e._bias)  # the kernels of `Evaluator`
        w, b = e.weights[1]
        features = np.zeros((len(after), 0), np.float32)
        c = _output(
            base, after, parent, roots, e._table, e._off, features, e._extra, self._activation, w, b
        ).astype(np.float64)
        lose = 1 - c[:, 0]
        return 2 * c[:, 0] - 1 + c[:, 0] * c[:, 1] * (1 + c[:, 2]) - lose * c[:, 3] * (1 + c[:, 4])
