"""The value network: its configuration, its outputs, and a numpy-only evaluator.

Convention (fixed for the project): the network reads an *afterstate*, a board with the
side that just moved in row 1 and the side to roll next in row 0, and returns five
probabilities for the side that just moved, as GNU Backgammon's nets do::

    P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose backgammon)

Gammons include backgammons. The output layer has five sigmoid units read as conditional
probabilities (win; gammon given a win; backgammon given a gammon win; gammon given a
loss; backgammon given a gammon loss), multiplied out by `joint`, so every output is
consistent by construction: P(wbg) <= P(wg) <= P(win) and P(lbg) <= P(lg) <= P(lose).

The arithmetic of the five outputs (`equity`, `invert`, `outcome`) lives in
`vrhcaby.equity.outcomes`; `joint`, the network's parametrisation of them, lives here.
The torch model is built by `build_model`, which imports torch only when called; the
evaluator (`load_evaluator`) runs in numpy alone so that the command line starts fast.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vrhcaby.base.jit import in_numpy, lazy_jit
from vrhcaby.equity.outcomes import OUTCOMES, equity
from vrhcaby.nn import checkpoint, onesided
from vrhcaby.nn.encode import (
    FEATURES,
    VARIANT_INPUTS,
    WAITING,
    encode_variant,
    get_encoding,
    variant_units,
    waiting_on_bar,
)
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.netset import ClassNetwork, NetworkSet

if TYPE_CHECKING:
    import torch

ACTIVATIONS = ("sigmoid", "tanh", "relu")
MAX_WEIGHTS = 100_000_000
"""The most weights (and biases) a network may have: 400 MB of float32, four times that
to train with Adam. The largest network here has 1.2 million; a width mistyped by a few
digits is refused when the config is read, not by an allocation after the games."""


def check_weights(sizes: tuple[int, ...]) -> None:
    """That a network of layer widths `sizes` (inputs first) has at most `MAX_WEIGHTS`
    weights; else a ValueError saying how many it would have."""
    weights = sum((a + 1) * b for a, b in itertools.pairwise(sizes))
    if weights > MAX_WEIGHTS:
        raise ValueError(
            f"a {'-'.join(map(str, sizes))} network would have {weights:,} weights, more "
            f"than the {MAX_WEIGHTS:,} a network may have"
        )


@dataclass(frozen=True)
class NetConfig:
    """Everything needed to rebuild a network; stored in every checkpoint."""

    encoding: str = "tesauro"
    """Input encoding name (see `vrhcaby.nn.encode.ENCODINGS`)."""
    hidden: tuple[int, ...] = (80,)
    """Hidden layer sizes, input side first."""
    activation: str = "sigmoid"
    """Hidden activation: sigmoid, tanh or relu (of the first hidden layer, and of every
    hidden layer unless `activations` says otherwise)."""
    variant_inputs: bool = False
    """Read acey-deucey boards (N, 2, 26) and add `vrhcaby.nn.encode.VARIANT_INPUTS` (waiting
    checkers per side, the mover rolls again); the trainer sets it for that variant only."""
    activations: tuple[str, ...] = ()
    """Each hidden layer's activation, input side first, when they differ (a network
    deepened by `vrhcaby.learn.trainer.grown_state`: a ReLU layer after a sigmoid one);
    its first is `activation`. Empty, or all equal: every layer `activation` (kept empty,
    so a network of one activation has one description, as before the field)."""

    def __post_init__(self) -> None:
        get_encoding(self.encoding)
        for name in (self.activation, *self.activations):
            if name not in ACTIVATIONS:
                raise ValueError(
                    f"unknown activation {name!r:.40} (known: {', '.join(ACTIVATIONS)})"
                )
        if not self.hidden or any(int(h) < 1 for h in self.hidden):
            raise ValueError(f"hidden sizes must be positive integers, got {self.hidden}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        activations = tuple(self.activations)
        if activations and len(activations) != len(self.hidden):
            raise ValueError(
                f"activations names {len(activations)} layers' activations, but the network "
                f"has {len(self.hidden)} hidden layers"
            )
        if activations and activations[0] != self.activation:
            raise ValueError(
                f"activations starts with {activations[0]!r}, but activation (the first "
                f"hidden layer's) is {self.activation!r}"
            )
        if len(set(activations)) == 1:
            activations = ()
        object.__setattr__(self, "activations", activations)
        check_weights(self.sizes)

    @property
    def layer_activations(self) -> tuple[str, ...]:
        """Each hidden layer's activation, input side first."""
        return self.activations or (self.activation,) * len(self.hidden)

    @property
    def inputs(self) -> int:
        """Width of the input layer."""
        return get_encoding(self.encoding)[1] + (len(VARIANT_INPUTS) if self.variant_inputs else 0)

    @property
    def columns(self) -> int:
        """Board columns the network reads: 25, or 26 with the acey-deucey waiting checkers."""
        return WAITING + 1 if self.variant_inputs else WAITING

    def encode(self, boards: np.ndarray, extra_turn: np.ndarray | None = None) -> np.ndarray:
        """The network's inputs (N, inputs) float32 for afterstate boards (N, 2, columns).

        `extra_turn` (N,) bool marks afterstates whose mover rolls again; only a network with
        variant inputs can see it, and None means none does.
        """
        if self.variant_inputs:
            return encode_variant(self.encoding, boards, extra_turn)
        return get_encoding(self.encoding)[0](boards)

    @property
    def sizes(self) -> tuple[int, ...]:
        """All layer widths, input to output."""
        return (self.inputs, *self.hidden, len(OUTCOMES))

    def describe(self) -> str:
        """Layer widths and activation, e.g. ``198-80-5 sigmoid (tesauro)``, or each hidden
        layer's when they differ, e.g. ``256-1024-1024-5 sigmoid,relu (contact)``."""
        variant = "+acey-deucey" if self.variant_inputs else ""
        activation = ",".join(self.activations) or self.activation
        return f"{'-'.join(map(str, self.sizes))} {activation} ({self.encoding}{variant})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able fields; `variant_inputs` and `activations` only when set, so other
        nets' dicts never change."""
        data = {**asdict(self), "hidden": list(self.hidden), "activations": list(self.activations)}
        if not self.variant_inputs:
            del data["variant_inputs"]
        if not self.activations:
            del data["activations"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NetConfig:
        activations = data.get("activations", [])
        if not isinstance(activations, list | tuple):
            raise ValueError(f"activations is not a list: {activations!r:.60}")
        return cls(
            encoding=str(data["encoding"]),
            hidden=tuple(data["hidden"]),
            activation=str(data["activation"]),
            variant_inputs=bool(data.get("variant_inputs", False)),
            activations=tuple(str(a) for a in activations),
        )


# --- the five outputs ----------------------------------------------------------------


def joint(conditional: Any) -> Any:
    """Five conditional probabilities (..., 5) -> the five joint outputs (numpy or torch)."""
    win = conditional[..., 0]
    win_gammon = win * conditional[..., 1]
    win_backgammon = win_gammon * conditional[..., 2]
    lose_gammon = (1 - win) * conditional[..., 3]
    lose_backgammon = lose_gammon * conditional[..., 4]
    columns = (win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)
    if isinstance(conditional, np.ndarray):
        return np.stack(columns, axis=-1)
    import torch

    return torch.stack(columns, dim=-1)


# --- torch model ---------------------------------------------------------------------


def build_model(config: NetConfig) -> torch.nn.Sequential:
    """A fresh torch MLP for `config`; its outputs are the five *conditional* probabilities.

    Pass them through `joint` to get the network's outputs. Layer names follow
    ``torch.nn.Sequential`` (``0.weight``, ``0.bias``, ``2.weight``, ...), which is also how
    the weights are named in checkpoints.
    """
    import torch

    activation = {"sigmoid": torch.nn.Sigmoid, "tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
    layers: list[torch.nn.Module] = []
    for width_in, width_out, name in zip(
        config.sizes[:-1], config.sizes[1:], (*config.layer_activations, "sigmoid"), strict=True
    ):
        layers.append(torch.nn.Linear(width_in, width_out))
        layers.append(activation[name]())
    return torch.nn.Sequential(*layers)


# --- numpy evaluator -----------------------------------------------------------------
#
# The first layer of a Tesauro-encoded net is a sum over the 50 (side, point-or-bar)
# cells and the two borne-off counts of a column block of the weights times that cell's
# units, and the units depend only on the cell's checker count. So the layer is a sum of
# 52 rows of a table indexed by (cell, count), built once from the weights; and a
# candidate afterstate differs from the board it was played from in a handful of cells, so
# its layer is the board's plus the changed cells' differences. Both kernels below are
# exact rewrites of the dense product (tested against torch) and several times cheaper.
# An acey-deucey net's waiting checkers are a 26th cell: its bar units (they count on the
# bar) plus its own waiting unit, both linear in the count.


@lazy_jit
def _layer1_full(boards, table, off_table, bias):  # pragma: no cover - numba
    n, width = boards.shape[0], bias.size
    out = np.empty((n, width), np.float32)
    for r in range(n):
        for k in range(width):
            out[r, k] = bias[k]
        for s in range(2):
            total = 0
            for i in range(boards.shape[2]):
                c = np.int64(boards[r, s, i])
                total += c
                if c:
                    for k in range(width):
                        out[r, k] += table[s, i, c, k]
            for k in range(width):
                out[r, k] += off_table[s, 15 - total, k]
    return out


@lazy_jit
def _layer1_delta(after, parent, roots, base, table, off_table):  # pragma: no cover - numba
    m, width = after.shape[0], base.shape[1]
    out = np.empty((m, width), np.float32)
    for r in range(m):
        p = parent[r]
        for k in range(width):
            out[r, k] = base[p, k]
        for s in range(2):
            total_after = 0
            total_root = 0
            for i in range(after.shape[2]):
                a = np.int64(after[r, s, i])
                b = np.int64(roots[p, s, i])
                total_after += a
                total_root += b
                if a != b:
                    for k in range(width):
                        out[r, k] += table[s, i, a, k] - table[s, i, b, k]
            if total_after != total_root:
                for k in range(width):
                    out[r, k] += (
                        off_table[s, 15 - total_after, k] - off_table[s, 15 - total_root, k]
                    )
    return out


#: Rows per block of the output kernel: their hidden units are activated together, in
#: SIMD lanes, while they are still in the cache.
_BLOCK = 32


@lazy_jit
def _output(
    layer, after, parent, roots, table, off_table, features, extra, activation, weight, bias
):  # pragma: no cover - numba
    """The hidden activation (0 sigmoid, 1 tanh, 2 relu), the output layer and its sigmoid.

    The hidden pre-activations are the rows of `layer` when `after` has no rows; otherwise
    those of afterstates `after` played from `roots[parent]`: the roots' rows of `layer`
    plus the changed cells' table differences, as `_layer1_delta` has them, never stored,
    plus `features[r] @ extra` (the inputs that are not board cells; none if no columns).
    Sigmoids use Cephes' polynomial expf (within an ulp or two of libm's), which numba
    vectorizes where it cannot vectorize a call to libm.
    """
    delta = after.shape[0] > 0
    n = after.shape[0] if delta else layer.shape[0]
    width, outputs, cells = layer.shape[1], weight.shape[0], after.shape[2]
    out = np.empty((n, outputs), np.float32)
    h = np.empty((_BLOCK, width), np.float32)
    z = np.empty((_BLOCK, outputs), np.float32)
    bits = np.empty(_BLOCK * max(width, outputs), np.int32)  # scratch for `sigmoid`
    changed = np.empty(cells, np.int64)
    one = np.float32(1.0)

    def sigmoid(x):  # in place, on a flat array
        scale = bits[: x.size].view(np.float32)
        for k in range(x.size):
            t = min(max(-x[k], np.float32(-87.0)), np.float32(88.0))
            m = np.floor(t * np.float32(1.44269504) + np.float32(0.5))
            y = t - m * np.float32(0.693359375) + m * np.float32(2.12194440e-4)
            x[k] = (
                (
                    (
                        (
                            (
                                (np.float32(1.9875691500e-4) * y + np.float32(1.3981999507e-3)) * y
                                + np.float32(8.3334519073e-3)
                            )
                            * y
                            + np.float32(4.1665795894e-2)
                        )
                        * y
                        + np.float32(1.6666665459e-1)
                    )
                    * y
                    + np.float32(5.0000001201e-1)
                )
                * (y * y)
                + y
                + one
            )
            bits[k] = (np.int32(m) + np.int32(127)) << np.int32(23)  # 2**m
        for k in range(x.size):
            x[k] = one / (one + x[k] * scale[k])

    for lo in range(0, n, _BLOCK):
        rows = min(n, lo + _BLOCK) - lo
        for q in range(rows):
            row = h[q]
            if not delta:
                for k in range(width):
                    row[k] = layer[lo + q, k]
                continue
            r = lo + q
            p = parent[r]
            for k in range(width):
                row[k] = layer[p, k]
            for s in range(2):
                count = 0
                total_after = 0
                total_root = 0
                for i in range(cells):
                    a = np.int64(after[r, s, i])
                    b = np.int64(roots[p, s, i])
                    changed[count] = i
                    count += a != b
                    total_after += a
                    total_root += b
                for c in range(count):
                    i = changed[c]
                    a = np.int64(after[r, s, i])
                    b = np.int64(roots[p, s, i])
                    for k in range(width):
                        row[k] += table[s, i, a, k] - table[s, i, b, k]
                if total_after != total_root:
                    for k in range(width):
                        row[k] += (
                            off_table[s, 15 - total_after, k] - off_table[s, 15 - total_root, k]
                        )
            for j in range(features.shape[1]):
                f = features[r, j]
                if f != 0:
                    for k in range(width):
                        row[k] += f * extra[j, k]
        hidden = h[:rows].reshape(-1)
        if activation == 0:
            sigmoid(hidden)
        elif activation == 1:
            for k in range(hidden.size):
                hidden[k] = np.tanh(hidden[k])
        else:
            for k in range(hidden.size):
                hidden[k] = max(hidden[k], np.float32(0.0))
        for q in range(rows):
            for j in range(outputs):
                total = bias[j]
                for k in range(width):
                    total += weight[j, k] * h[q, k]
                z[q, j] = total
        sigmoid(z[:rows].reshape(-1))
        out[lo : lo + rows] = z[:rows]
    return out


_NO_AFTERSTATES = np.zeros((0, 2, 25), np.int8)
_NO_PARENT = np.zeros(0, np.int64)


def _last_layer(
    layer: np.ndarray, activation: int, weight: np.ndarray, bias: np.ndarray
) -> np.ndarray:
    """The outputs of the last hidden layer's pre-activations `layer` (N, width)."""
    empty = np.zeros((2, 1, 16, 1), np.float32)
    return _output(
        np.ascontiguousarray(layer, np.float32),
        _NO_AFTERSTATES,
        _NO_PARENT,
        _NO_AFTERSTATES,
        empty,
        empty[0],
        empty[0, 0],
        empty[0, 0],
        activation,
        weight,
        bias,
    )


def _layer1_numpy(
    boards: np.ndarray, table: np.ndarray, off_table: np.ndarray, bias: np.ndarray
) -> np.ndarray:
    """`_layer1_full` in numpy: the table rows of every cell's count, summed."""
    counts = boards.astype(np.intp)
    cells = np.arange(boards.shape[2])
    layer = np.broadcast_to(bias, (boards.shape[0], bias.size)).copy()
    for s in (0, 1):
        layer += table[s, cells, counts[:, s]].sum(axis=1)
        layer += off_table[s, 15 - counts[:, s].sum(axis=1)]
    return layer


def _last_layer_numpy(
    layer: np.ndarray, activation: str, weight: np.ndarray, bias: np.ndarray
) -> np.ndarray:
    """`_last_layer` in numpy."""
    z = _np_activation(activation, layer.astype(np.float32)) @ weight.T
    z += bias
    return _np_activation("sigmoid", z)


def _np_activation(name: str, x: np.ndarray) -> np.ndarray:
    if name == "relu":
        return np.maximum(x, 0, out=x)
    if name == "tanh":
        return np.tanh(x, out=x)
    # 1 / (1 + exp(-x)) without overflow warnings for large |x|.
    x *= 0.5
    np.tanh(x, out=x)
    x += 1.0
    x *= 0.5
    return x


@dataclass
class Evaluator:
    """A trained network evaluated with numpy alone (no torch import)."""

    net: NetConfig
    """The network's own configuration."""
    weights: list[tuple[np.ndarray, np.ndarray]]
    """(weight (out, in), bias (out,)) float32 per linear layer, input side first."""
    variant: str = "standard"
    """The game variant the network was trained for."""
    config: dict[str, Any] = field(default_factory=dict)
    """The run configuration it was trained with (as stored in the checkpoint)."""

    def __post_init__(self) -> None:
        expected = list(zip(self.net.sizes[:-1], self.net.sizes[1:], strict=True))
        found = [(w.shape[1], w.shape[0]) for w, _ in self.weights]
        if found != expected:
            raise ValueError(
                f"weights have layer shapes {found}, but the network config "
                f"{self.net.describe()} needs {expected}"
            )
        w1, b1 = self.weights[0]
        hidden = w1.shape[0]
        units = np.zeros((16, 4), np.float32)
        for n in range(16):
            units[n] = (n >= 1, n >= 2, n >= 3, max(n - 3, 0) / 2.0)
        counts = np.arange(16, dtype=np.float32)
        self._table = np.zeros((2, self.net.columns, 16, hidden), np.float32)
        self._off = np.zeros((2, 16, hidden), np.float32)
        for side in (0, 1):
            block = w1[:, 98 * side : 98 * side + 96].reshape(hidden, 24, 4)
            self._table[side, :24] = np.einsum("nk,hik->inh", units, block)
            self._table[side, 24] = np.outer(counts / 2.0, w1[:, 98 * side + 96])
            self._off[side] = np.outer(counts / 15.0, w1[:, 98 * side + 97])
        self._bias = (b1 + w1[:, 196]).astype(np.float32)  # the constant "row 0 rolls" unit
        width = get_encoding(self.net.encoding)[1]
        self._features_of = FEATURES[self.net.encoding]
        extra = [w1[:, 198:width].T]  # the rows of `_features`: hand-made features, if any
        if self.net.variant_inputs:
            for side in (0, 1):
                self._table[side, WAITING] = self._table[side, 24] + np.outer(
                    counts / 15.0, w1[:, width + side]
                )
            extra.append(w1[None, :, width + 2])  # the "rolls again" unit
        self._extra = np.ascontiguousarray(np.concatenate(extra), np.float32)

    def _check(self, boards: np.ndarray, extra_turn: np.ndarray | None) -> np.ndarray:
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        shape = (2, self.net.columns)
        if boards.ndim != 3 or boards.shape[1:] != shape:
            raise ValueError(
                f"afterstates must have shape (N, {shape[0]}, {shape[1]}) for this "
                f"network, got {boards.shape}"
            )
        if extra_turn is not None and not self.net.variant_inputs:
            raise ValueError("extra_turn is for acey-deucey networks (variant inputs) only")
        return boards

    def _features(self, boards: np.ndarray, extra_turn: np.ndarray | None) -> np.ndarray:
        """The inputs that are not board cells (N, F), whose weights are `self._extra`: the
        hand-made features, and for acey-deucey the "rolls again" unit."""
        columns = []
        if self._features_of is not None:
            plain = waiting_on_bar(boards) if self.net.variant_inputs else boards
            columns.append(self._features_of(plain))
        if self.net.variant_inputs:
            columns.append(variant_units(boards, extra_turn)[:, 2:])
        if not columns:
            return np.zeros((boards.shape[0], 0), np.float32)
        return columns[0] if len(columns) == 1 else np.concatenate(columns, axis=1)

    def _extras(
        self, boards: np.ndarray, layer: np.ndarray, extra_turn: np.ndarray | None
    ) -> np.ndarray:
        if self._extra.shape[0]:
            layer += self._features(boards, extra_turn) @ self._extra
        return layer

    def _head(self, layer: np.ndarray) -> np.ndarray:
        """The five outputs of the first hidden layer's pre-activations `layer` (N, width):
        the other hidden layers in numpy (a matrix product), each with its activation,
        then the last one's activation and the output layer in one kernel."""
        x = layer
        *inner, last = self.net.layer_activations
        for (w, b), name in zip(self.weights[1:-1], inner, strict=True):
            x = _np_activation(name, x) @ w.T
            x += b
        w, b = self.weights[-1]
        if in_numpy(x.shape[0]):
            return joint(_last_layer_numpy(x, last, w, b))
        return joint(_last_layer(x, ACTIVATIONS.index(last), w, b))

    def probabilities(
        self, afterstates: np.ndarray, extra_turn: np.ndarray | None = None
    ) -> np.ndarray:
        """Five outputs (N, 5) float32 for the side that just moved (row 1) of each board,
        made to obey the rules and, in bear-offs, the databases (`vrhcaby.nn.lawful`).

        Boards are (N, 2, 25); for an acey-deucey network (`NetConfig.variant_inputs`,
        `variant` "acey-deucey") they are (N, 2, 26), column 25 the waiting checkers, and
        `extra_turn` (N,) bool may mark the afterstates whose mover rolls again (None: none).
        """
        boards = self._check(afterstates, extra_turn)
        layer1 = _layer1_numpy if in_numpy(boards.shape[0]) else _layer1_full
        layer = layer1(boards, self._table, self._off, self._bias)
        return obey_rules(boards, self._head(self._extras(boards, layer, extra_turn)))

    def probabilities_from(
        self,
        roots: np.ndarray,
        afterstates: np.ndarray,
        parent: np.ndarray,
        extra_turn: np.ndarray | None = None,
    ) -> np.ndarray:
        """As `probabilities`, for afterstates played from `roots[parent]` (same layout,
        mover in row 1): faster, since only the cells a play changed are recomputed."""
        roots = self._check(roots, None)
        after = self._check(afterstates, extra_turn)
        if in_numpy(after.shape[0]) or not after.shape[0]:  # `_output` reads no rows as roots
            return self.probabilities(after, extra_turn)
        base = _layer1_full(roots, self._table, self._off, self._bias)
        parent = np.ascontiguousarray(parent, dtype=np.int64)
        if len(self.weights) == 2:  # one hidden layer: the fused kernel
            w, b = self.weights[1]
            activation = ACTIVATIONS.index(self.net.activation)
            features = self._features(after, extra_turn)
            conditional = _output(
                base,
                after,
                parent,
                roots,
                self._table,
                self._off,
                features,
                self._extra,
                activation,
                w,
                b,
            )
            return obey_rules(after, joint(conditional))
        layer = _layer1_delta(after, parent, roots, base, self._table, self._off)
        return obey_rules(after, self._head(self._extras(after, layer, extra_turn)))

    def equity(self, afterstates: np.ndarray, extra_turn: np.ndarray | None = None) -> np.ndarray:
        """Cubeless money equity (N,) for the side that just moved (row 1) of each board."""
        return equity(self.probabilities(afterstates, extra_turn))


def weights_from_arrays(net: NetConfig, arrays: dict[str, np.ndarray]) -> list:
    """The evaluator's layer list from checkpoint arrays named ``model/<layer>.weight``."""
    layers = []
    for i in range(len(net.sizes) - 1):
        try:
            w = arrays[f"model/{2 * i}.weight"]
            b = arrays[f"model/{2 * i}.bias"]
        except KeyError as exc:
            raise checkpoint.CheckpointError(f"checkpoint lacks weights {exc}") from None
        layers.append((np.asarray(w, np.float32), np.asarray(b, np.float32)))
    return layers


def load_evaluator(path: str | Path) -> Evaluator | NetworkSet:
    """The backgammon network stored in checkpoint `path`, as a numpy `Evaluator`, or the
    `vrhcaby.nn.netset.NetworkSet` of a network-set checkpoint (one `Evaluator` per
    class): the validating loader of every command that plays or judges with a network
    (agents, tournaments, rollouts, the external-player server). Any file that is not a
    sound backgammon network or set is a `CheckpointError` naming it and what is wrong
    (for a set, the class too)."""
    arrays, meta = checkpoint.load(path, "backgammon", sets=True)
    if onesided.is_onesided(meta.get("net")):
        raise checkpoint.CheckpointError(
            f"{path}: a one-sided race network answers races only: put it in a network set "
            f"as its race network (vrhcaby netset --race {path})"
        )
    single = None if checkpoint.is_set(meta) else _net_config(path, meta.get("net"), "")
    config = dict(meta.get("config", {}))
    variant = checkpoint.variant_of(meta)  # one `checkpoint.load` knows
    if single is not None:
        return _evaluator(path, single, arrays, variant, config, "")
    networks: dict[str, ClassNetwork] = {}
    for name in meta["networks"]:
        label = f"network set class {name}: "
        member, member_meta = checkpoint.set_member(arrays, meta, name)
        if onesided.is_onesided(member_meta["net"]):
            networks[name] = _onesided(path, name, member, config, label)
            continue
        net = _net_config(path, member_meta["net"], label)
        networks[name] = _evaluator(path, net, member, variant, config, label)
    try:
        return NetworkSet(networks, dict(meta.get("fallback", {})), variant, config)
    except ValueError as exc:
        raise checkpoint.CheckpointError(f"{path}: {exc}") from None


def _onesided(
    path: str | Path, name: str, arrays: dict[str, np.ndarray], config: dict[str, Any], label: str
) -> onesided.OneSidedRace:
    """A set's one-sided race evaluator, or a CheckpointError naming the file and class."""
    if name != "race":
        raise checkpoint.CheckpointError(
            f"{path}: {label}a one-sided race network can only answer the race class"
        )
    try:
        return onesided.from_arrays(arrays, config)
    except (KeyError, ValueError) as exc:
        raise checkpoint.CheckpointError(f"{path}: {label}{exc}") from None


def load_member(path: str | Path, name: str) -> ClassNetwork:
    """The network that would answer class `name` of a set, from checkpoint `path`: a
    single network, a one-sided race network (race only), or the network of that class in
    a set (or of the class it falls back to); a CheckpointError naming the file."""
    _, meta = checkpoint.load(path, "backgammon", sets=True)
    if onesided.is_onesided(meta.get("net")):
        if name != "race":
            raise checkpoint.CheckpointError(
                f"{path}: a one-sided race network can only answer the race class, not {name}"
            )
        return onesided.load(path)
    loaded = load_evaluator(path)
    if isinstance(loaded, NetworkSet):
        return loaded.networks[name if name in loaded.networks else loaded.fallback[name]]
    return loaded


def _net_config(path: str | Path, description: Any, label: str) -> NetConfig:
    """The `NetConfig` a checkpoint describes, or a CheckpointError naming the file."""
    try:
        return NetConfig.from_dict(description)
    except (KeyError, TypeError, ValueError) as exc:
        raise checkpoint.CheckpointError(
            f"{path}: {label}bad network description ({exc})"
        ) from None


def _evaluator(
    path: str | Path,
    net: NetConfig,
    arrays: dict[str, np.ndarray],
    variant: str,
    config: dict[str, Any],
    label: str,
) -> Evaluator:
    """The `Evaluator` of network `net` from its arrays, or a CheckpointError naming the
    file (and, with `label`, the class of a set)."""
    try:
        return Evaluator(net, weights_from_arrays(net, arrays), variant, config)
    except ValueError as exc:
        raise checkpoint.CheckpointError(f"{path}: {label}{exc}") from None
