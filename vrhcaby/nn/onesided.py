"""The one-sided race evaluator: each side's distributions of the rolls it needs, combined.

Once contact is broken the two sides never meet again, so each side's future is its own:
how many rolls it needs to bear off all its checkers (which decides the race), to bear off
its first one (gammons) and to bring its last checker out of the opponent's home board
(backgammons). GNU Backgammon combines two such distributions from its one-sided bear-off
database for the bear-offs its two-sided database does not hold, and so does
`engine.bearoff.one_sided_outcome`. `OneSidedRace` extends that to every race: a side whose
checkers are all home reads the one-sided database (`vrhcaby.nn.bearoff_db`) exactly, any
other side a small network of that side alone (15 checkers on 24 points, far simpler than a
two-sided race), trained by fitted value iteration down to the database
(`vrhcaby.learn.onesided`): no game is played to learn it, and no guess of the other
side's plans enters it.

The network reads one side's row (25 cells, its own view; a race has no checker on the
bar) through `INPUTS`: four units per point as Tesauro's, and five sums over the points
(pips, checkers on the board, outside home, crossovers, in the opponent's home board).
Every input is a function of one point's count, so the first layer is a sum of one table
row per occupied point (`_tables`), which a kernel evaluates for the millions of
afterstates a round of training compares. Its outputs are, per distribution (`HEADS`),
`K` logits of "exactly n rolls" (softmax) and the distribution's mean in tens of rolls (so
that a play can be chosen by its mean without the softmax).

Four facts are exact and override the network: a side with a checker off has its first
at 0 rolls; a side with no checker in the opponent's home board has its clear at 0; a side
with every checker home is the database's; a side the network answers (a checker outside
home) needs at least one roll for each (a softmax is never exactly 0 there). The race's
probabilities then go through `vrhcaby.nn.lawful.obey_rules`, as every evaluator's do.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine import bearoff
from vrhcaby.base.jit import in_numpy, lazy_jit
from vrhcaby.equity.outcomes import equity
from vrhcaby.nn import checkpoint
from vrhcaby.nn.lawful import obey_rules

if TYPE_CHECKING:
    from vrhcaby.nn.bearoff_db import BearoffDB

K = 40
"""Length of each distribution: 0..39 rolls (a race of 200 pips needs about 28)."""
HEADS = ("rolls", "first", "clear")
"""The distributions: rolls to bear off all checkers, the first one, and to bring the last
checker out of the opponent's home board."""
POINTS = 24
_OPP_HOME = 18
"""The first index (point 19) of the opponent's home board, in a side's own view."""
MEAN_SCALE = 10.0
"""The mean outputs are in units of this many rolls."""


def _point_units() -> np.ndarray:
    """(POINTS, 16, 9) float32: each input's value for a point's count (the `INPUTS`
    that concern that point): Tesauro's four units, then its shares of the five sums."""
    n = np.arange(16, dtype=np.float32)
    units = np.zeros((POINTS, 16, 9), np.float32)
    for i in range(POINTS):
        units[i, :, 0] = n >= 1
        units[i, :, 1] = n >= 2
        units[i, :, 2] = n >= 3
        units[i, :, 3] = np.maximum(n - 3, 0) / 2
        units[i, :, 4] = n * (i + 1) / 100.0  # pips
        units[i, :, 5] = n / 15.0  # checkers on the board
        units[i, :, 6] = n * (i >= 6) / 15.0  # outside home
        units[i, :, 7] = n * (i // 6) / 20.0  # crossovers still to make
        units[i, :, 8] = n * (i >= _OPP_HOME) / 5.0  # in the opponent's home board
    return units


_UNITS = _point_units()
INPUTS = 4 * POINTS + 5
"""The network's inputs: (n >= 1, n >= 2, n >= 3, (n - 3) / 2) per point, then pips / 100,
on board / 15, outside home / 15, crossovers / 20, in the opponent's home board / 5."""
OUTPUTS = checkpoint.ONESIDED_OUTPUTS
"""The logits of each distribution, then the three means."""
if len(HEADS) * K + len(HEADS) != OUTPUTS:
    raise AssertionError("checkpoint.ONESIDED_OUTPUTS does not fit the distributions")


def inputs(rows: np.ndarray) -> np.ndarray:
    """The network's inputs (N, INPUTS) float32 for one side's rows (N, 25)."""
    rows = np.asarray(rows)[:, :POINTS].astype(np.intp)
    per_point = _UNITS[np.arange(POINTS), rows]  # (N, 24, 9)
    return np.concatenate(
        [per_point[:, :, :4].reshape(len(rows), -1), per_point[:, :, 4:].sum(axis=1)], axis=1
    )


def _tables(w1: np.ndarray) -> np.ndarray:
    """(POINTS, 16, H) float32: the first layer's sum over a point's inputs, per count
    (zero for an empty point)."""
    point = w1[:, : 4 * POINTS].reshape(-1, POINTS, 4)  # (H, 24, 4)
    sums = w1[:, 4 * POINTS :]  # (H, 5)
    table = np.einsum("ink,hik->inh", _UNITS[:, :, :4], point)
    table += np.einsum("ink,hk->inh", _UNITS[:, :, 4:], sums)
    return np.ascontiguousarray(table, np.float32)


@lazy_jit
def _hidden_kernel(rows, table, bias, out):  # pragma: no cover - numba
    for r in range(rows.shape[0]):
        for h in range(bias.shape[0]):
            out[r, h] = bias[h]
        for i in range(table.shape[0]):
            n = rows[r, i]
            if n:
                for h in range(bias.shape[0]):
                    out[r, h] += table[i, n, h]
        for h in range(bias.shape[0]):
            out[r, h] = 1.0 / (1.0 + np.exp(-out[r, h]))


@lazy_jit
def _means_kernel(rows, table, bias, w, b, out):  # pragma: no cover - numba
    hidden = np.empty(bias.shape[0], np.float32)
    for r in range(rows.shape[0]):
        for h in range(bias.shape[0]):
            hidden[h] = bias[h]
        for i in range(table.shape[0]):
            n = rows[r, i]
            if n:
                for h in range(bias.shape[0]):
                    hidden[h] += table[i, n, h]
        for h in range(bias.shape[0]):
            hidden[h] = 1.0 / (1.0 + np.exp(-hidden[h]))
        for k in range(w.shape[0]):
            s = b[k]
            for h in range(bias.shape[0]):
                s += w[k, h] * hidden[h]
            out[r, k] = s


@lazy_jit
def _race_kernel(d, on_roll, mover, out):  # pragma: no cover - numba
    """`engine.bearoff.race_outcome` of afterstate i's sides, rows on_roll[i] and
    mover[i] of the distributions d (R, 3, K), at_least sums running along n."""
    k = d.shape[2]
    for i in range(on_roll.shape[0]):
        a, b = on_roll[i], mover[i]
        lose = lose_g = lose_bg = win_g = win_bg = 0.0
        below_b = np.zeros(3)  # the mover's P(head takes fewer than n rolls)
        below_a1 = d[a, 1, 0]  # the side on roll's P(first takes fewer than n + 1)
        below_a2 = d[a, 2, 0]
        for n in range(k):
            pa = d[a, 0, n]
            lose += pa * max(0.0, 1.0 - below_b[0])
            lose_g += pa * max(0.0, 1.0 - below_b[1])
            lose_bg += pa * max(0.0, 1.0 - below_b[2])
            for h in range(3):
                below_b[h] += d[b, h, n]
            if n + 1 < k:
                pb = d[b, 0, n]
                win_g += pb * max(0.0, 1.0 - below_a1)
                win_bg += pb * max(0.0, 1.0 - below_a2)
                below_a1 += d[a, 1, n + 1]
                below_a2 += d[a, 2, n + 1]
        out[i, 0] = min(1.0, max(0.0, 1.0 - lose))
        out[i, 1] = win_g
        out[i, 2] = min(win_bg, win_g)
        out[i, 3] = lose_g
        out[i, 4] = min(lose_bg, lose_g)


def _home(rows: np.ndarray) -> np.ndarray:
    """bool (N,): the rows whose checkers are all home (the one-sided database's)."""
    home: np.ndarray = np.logical_not(rows[:, bearoff.POINTS :].any(axis=1))
    return home


def _exact_facts(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bool (N,) each: a checker is off (first at 0 rolls), none is in the opponent's home
    board or on the bar (clear at 0 rolls)."""
    off: np.ndarray = rows[:, :25].sum(axis=1) < 15
    clear: np.ndarray = np.logical_not(rows[:, _OPP_HOME:].any(axis=1))
    return off, clear


def _delta0(n: int) -> np.ndarray:
    out = np.zeros((n, K), np.float32)
    out[:, 0] = 1.0
    return out


@dataclass
class OneSidedNet:
    """The network of one side alone: weights (out, in) and biases, float32."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    def __post_init__(self) -> None:
        hidden = self.b1.shape[0]
        shapes = [self.w1.shape, self.b1.shape, self.w2.shape, self.b2.shape]
        if shapes != [(hidden, INPUTS), (hidden,), (OUTPUTS, hidden), (OUTPUTS,)]:
            raise ValueError(
                f"one-sided race network of shapes {shapes} is not "
                f"{INPUTS}-{hidden}-{OUTPUTS} (inputs {INPUTS}, outputs {OUTPUTS})"
            )
        self._table = _tables(self.w1)
        self._bias = np.ascontiguousarray(self.b1, np.float32)
        self._w_means = np.ascontiguousarray(self.w2[-len(HEADS) :], np.float32)
        self._b_means = np.ascontiguousarray(self.b2[-len(HEADS) :], np.float32)

    @property
    def hidden(self) -> int:
        return int(self.b1.shape[0])

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(rows)[:, :POINTS], np.int8)

    def _hidden_numpy(self, rows: np.ndarray) -> np.ndarray:
        """The hidden layer (N, H) in plain numpy: a small batch while no kernel is
        compiled (`vrhcaby.base.jit.in_numpy`), so a one-off hint loads no numba."""
        x = self._bias + self._table[np.arange(POINTS), rows.astype(np.intp)].sum(axis=1)
        hidden: np.ndarray = 1.0 / (1.0 + np.exp(-x))
        return hidden

    def means(self, rows: np.ndarray) -> np.ndarray:
        """The network's mean rolls (N, 3) of each head for rows (N, 25)."""
        rows = self._rows(rows)
        if in_numpy(len(rows)):
            out = self._hidden_numpy(rows) @ self._w_means.T + self._b_means
            return out * MEAN_SCALE
        out = np.empty((len(rows), len(HEADS)), np.float32)
        _means_kernel(rows, self._table, self._bias, self._w_means, self._b_means, out)
        return out * MEAN_SCALE

    def distributions(self, rows: np.ndarray) -> np.ndarray:
        """The network's distributions (N, 3, K) float32 of each head for rows (N, 25)."""
        rows = self._rows(rows)
        if in_numpy(len(rows)):
            hidden = self._hidden_numpy(rows).astype(np.float32)
        else:
            hidden = np.empty((len(rows), self.hidden), np.float32)
            _hidden_kernel(rows, self._table, self._bias, hidden)
        logits = (hidden @ self.w2[: len(HEADS) * K].T + self.b2[: len(HEADS) * K]).reshape(
            -1, len(HEADS), K
        )
        logits -= logits.max(axis=2, keepdims=True)
        p = np.exp(logits)
        p[:, :, 0] = 0.0  # a side with a checker outside home needs a roll for anything
        p /= p.sum(axis=2, keepdims=True)
        return p

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(weight, bias) per linear layer, input side first."""
        return [(self.w1, self.b1), (self.w2, self.b2)]


@dataclass(frozen=True)
class OneSidedDescription:
    """What a network set reads of its members' descriptions (`netset.NetDescription`)."""

    hidden: int
    variant_inputs: bool = False

    def describe(self) -> str:
        return f"one-sided {INPUTS}-{self.hidden}-{OUTPUTS} sigmoid (race)"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "hidden": [self.hidden]}


def _padded(table: np.ndarray) -> np.ndarray:
    out = np.zeros((len(table), K), np.float32)
    out[:, : table.shape[1]] = table
    return out


@dataclass
class OneSidedRace:
    """Races valued from each side's one-sided distributions: the database where a side
    is home, the network elsewhere, and the exact facts of the module's docstring."""

    network: OneSidedNet
    variant: str = "standard"
    config: dict[str, Any] = field(default_factory=dict)
    """How it was made (the training run's configuration and figures)."""

    @functools.cached_property
    def _db(self) -> BearoffDB:
        """The database, read when a race first needs it (a set is loaded for contact
        positions too, and a hint of one reads no table)."""
        from vrhcaby.nn import bearoff_db

        return bearoff_db.database()

    def means(self, rows: np.ndarray) -> np.ndarray:
        """Mean rolls (N, 3) of each head for one side's rows (N, 25): what a side playing
        alone minimises, head by head, to choose its play."""
        rows = np.asarray(rows)
        out = np.zeros((len(rows), len(HEADS)))
        home = _home(rows)
        if (~home).any():
            out[~home] = self.network.means(rows[~home])
        if home.any():  # the mean of each row read, not of the whole table: a hint is one
            db, index = self._db, bearoff.row_index(rows[home])
            rolls = np.arange(db.rolls.shape[1], dtype=np.float64)
            out[home, 0] = db.rolls[index] @ rolls
            out[home, 1] = db.first[index] @ rolls
        off, clear = _exact_facts(rows)
        out[off, 1] = 0.0
        out[clear, 2] = 0.0
        return out

    def distributions(self, rows: np.ndarray) -> np.ndarray:
        """The distributions (N, 3, K) float32 of each head (`HEADS`) for rows (N, 25)."""
        rows = np.asarray(rows)
        out = np.zeros((len(rows), len(HEADS), K), np.float32)
        home = _home(rows)
        if (~home).any():
            out[~home] = self.network.distributions(rows[~home])
        if home.any():
            db = self._db
            index = bearoff.row_index(rows[home])
            out[home, 0] = _padded(db.rolls[index])
            out[home, 1] = _padded(db.first[index])
        off, clear = _exact_facts(rows)
        out[off, 1] = _delta0(int(off.sum()))
        out[clear, 2] = _delta0(int(clear.sum()))
        return out

    def tables(self, rows: np.ndarray) -> np.ndarray:
        """What `engine.bearoff.race_outcome` reads of each side's row (N, 4, K) float32."""
        d = self.distributions(rows)
        return bearoff.side_tables(d[:, 0], d[:, 1], d[:, 2])

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """The five probabilities (N, 5) float32 of the side that just moved (row 1) of
        race afterstates (N, 2, 25), the two sides' races taken as independent (a side
        on roll repeated in consecutive rows, as the plays of one position are, valued
        once)."""
        after = np.asarray(afterstates)
        if not len(after):
            return np.zeros((0, 5), np.float32)
        new = np.ones(len(after), bool)
        new[1:] = (after[1:, 0] != after[:-1, 0]).any(axis=1)
        return self._outcome(after[new, 0], np.cumsum(new) - 1, after)

    def _outcome(self, waiting: np.ndarray, index: np.ndarray, after: np.ndarray) -> np.ndarray:
        """`race_outcome` of the sides on roll `waiting` (W, 25) (afterstate i's is row
        `index[i]`) and the afterstates' movers."""
        if in_numpy(len(after)):
            on_roll = self.tables(waiting)[index]
            out: np.ndarray = bearoff.race_outcome(on_roll, self.tables(after[:, 1]))
        else:
            d = self.distributions(np.concatenate([waiting, after[:, 1]]))
            mover = np.arange(len(waiting), len(waiting) + len(after))
            out = np.empty((len(after), 5), np.float32)
            _race_kernel(d, np.ascontiguousarray(index, np.int64), mover, out)
        return obey_rules(np.ascontiguousarray(after, np.int8), out)  # as every evaluator's

    def probabilities_from(
        self, roots: np.ndarray, afterstates: np.ndarray, parent: np.ndarray
    ) -> np.ndarray:
        """As `probabilities`, for afterstates played from `roots[parent]`: a race
        afterstate's side on roll is its root's (a play that hits leaves contact), so
        each root's is valued once."""
        roots, after = np.asarray(roots), np.asarray(afterstates)
        parent = np.asarray(parent)
        if not len(after) or not (after[:, 0] == roots[parent, 0]).all():
            return self.probabilities(after)
        return self._outcome(roots[:, 0], parent, after)

    def equity(self, afterstates: np.ndarray) -> np.ndarray:
        return equity(self.probabilities(afterstates))

    @property
    def net(self) -> OneSidedDescription:
        return OneSidedDescription(self.network.hidden)

    @property
    def weights(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return self.network.layers()


KIND = checkpoint.ONESIDED


def save(net: OneSidedNet, path: str | Path, config: dict[str, Any] | None = None) -> Path:
    """Write the network to checkpoint `path` atomically (`vrhcaby.nn.checkpoint`'s
    format, weights ``model/0`` and ``model/2``; meta ``net`` ``{"kind": "onesided"}`` and
    the run's `config`), which `load` reads back and a set can hold as its race network."""
    description = OneSidedDescription(net.hidden).to_dict()
    arrays, meta = checkpoint.contents(
        net=(description, checkpoint.layer_arrays(net.layers())), config=dict(config or {})
    )
    return checkpoint.save(path, arrays, meta)


def is_onesided(description: Any) -> bool:
    """Whether a checkpoint's network description is a one-sided race network's."""
    return isinstance(description, dict) and description.get("kind") == KIND


def from_arrays(
    arrays: dict[str, np.ndarray], config: dict[str, Any] | None = None
) -> OneSidedRace:
    """The race evaluator of a checkpoint's ``model/...`` arrays; ValueError (shapes) or
    KeyError (a missing layer) if they are not a one-sided network's."""
    layers = [
        np.asarray(arrays[f"model/{i}.{part}"], np.float32)
        for i in (0, 2)
        for part in ("weight", "bias")
    ]
    return OneSidedRace(OneSidedNet(*layers), config=dict(config or {}))


def load(path: str | Path) -> OneSidedRace:
    """The race evaluator of a checkpoint written by `save`; a CheckpointError naming the
    file if it is not one."""
    arrays, meta = checkpoint.load(path, "backgammon")
    if not is_onesided(meta.get("net")):
        raise checkpoint.CheckpointError(f"{path}: not a one-sided race network")
    try:
        return from_arrays(arrays, meta.get("config", {}))
    except (KeyError, ValueError) as exc:
        raise checkpoint.CheckpointError(f"{path}: {exc}") from None
