"""Supervised fitting of a network to search labels (`vrhcaby.learn.labels` shards): the
student learns to say at 0-ply what the teacher's 2-ply search says.

The data: every labelled afterstate of the shards of some runs, its inputs encoded for the
student's network (once, or each batch as it is drawn: `DistillConfig.encode_ahead`), its
target the teacher's probabilities. What the rules decide of an afterstate (a bear-off's
database value, a side that has borne off losing no gammon) is not fitted: the prediction
takes the decided value there, as the TD learner does (`vrhcaby.learn.learner`), so those
outputs give no gradient. Shards whose index is a multiple of `holdout_every` are held out
whole (their decisions come from other games than the fitted ones), and their loss says
when fitting stops helping.

The loss per afterstate is half the squared error of the five joint probabilities (the
TD learner's) plus `equity_weight` times half the squared error of the cubeless equity
the agents rank plays by.

Acey-deucey labels (boards (2, 26) and whether each mover rolls again) are fitted by an
acey-deucey network (`NetConfig.variant_inputs`), which reads both. The fit runs on any
torch device (`load_labels`' `device`: the labels' tensors live there with the model);
the order of the labels is drawn on the CPU, so a seed gives the same batches anywhere.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

import engine
from engine.classify import NAMES
from vrhcaby.equity.outcomes import equity
from vrhcaby.learn.labels import Shard
from vrhcaby.nn.checkpoint import SET_CLASSES
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import NetConfig, joint

#: The cubeless money equity as a linear form of the five joint probabilities.
_EQUITY = torch.tensor(equity(np.eye(5)) - equity(np.zeros((1, 5))), dtype=torch.float32)
_EQUITY_BASE = float(equity(np.zeros((1, 5)))[0])
CPU = torch.device("cpu")


@dataclass(frozen=True)
class DistillConfig:
    """How a student is fitted to label shards (the `[distill]` table of a train config)."""

    labels: tuple[str, ...] = ()
    """Folders of label shards (`vrhcaby label` runs); empty: not a distillation run."""
    epochs: int = 20
    """Passes over the fitted labels."""
    batch_size: int = 256
    """Labels per optimizer step."""
    lr: float = 1e-4
    """Adam's learning rate at the start ..."""
    lr_end: float = 1e-5
    """... falling geometrically to this at the last epoch."""
    holdout_every: int = 10
    """Shards whose index is a multiple of this are held out (0: none)."""
    equity_weight: float = 1.0
    """Weight of the equity error in the loss, beside the five probabilities'."""
    rank_weight: float = 0.0
    """Weight of the equity error relative to the decision's other labelled plays (what
    ranks plays: an error shared by all plays of a decision changes no choice)."""
    classes: tuple[str, ...] = ()
    """Fit only afterstates of these classes (`engine.classify_boards`; empty: all)."""
    shards: int = 0
    """Read only the shards whose index is below this in each folder (0: all of them), so
    that a fit can be repeated on the labels it saw while its label run grows."""
    grow: tuple[str, ...] = ()
    """Classes of an `init_from` network set whose networks are fitted as networks of the
    run's `[net]`, grown from the set's (wider hidden layers, an encoding that extends
    theirs: `vrhcaby.learn.trainer.grown_state`); the others keep their shape. A `[net]`
    with more hidden layers than the set's deepens them, keeping their function: each
    added layer a ReLU layer, the identity when as wide as the layer below
    (``hidden = [1024, 1024]``, ``activations = ["sigmoid", "relu"]`` from a 1,024-unit
    sigmoid network), else a relay of the outputs (``hidden = [1024, 128]``)."""
    warmup: int = 0
    """Optimizer steps (a network's batches, counted from the fit's first) of linear learning-rate
    warm-up: step k (0-based) learns at (k + 1) / warmup of its epoch's rate, so a grown
    network's new weights are not moved at full rate by the first, noisiest Adam steps
    (0: none)."""
    added_lr: float = 1.0
    """The learning rate of the hidden layers that depth growth adds (`grow`, or a single
    network's `[net]` deeper than `init_from`'s), as a share of the fit's: Adam moves each
    weight by about the rate whatever its gradient, so a 1,024-unit identity layer, whose
    inputs are all positive, moves every unit's value by about rate x 500 a step, far more
    than the saved layers' steps move theirs (docs/distillation.md, session 17)."""
    mix_teachers: bool = False
    """Fit folders labelled by different teachers or depths together (each label keeps its
    own teacher's target, and the rank term compares plays within one decision, which one
    teacher labelled), so that a new teacher's labels add to an older one's coverage
    instead of replacing it; off, such folders are refused as a likely mistake."""
    encode_ahead: bool = True
    """Encode every label's network inputs once, as the labels load (4 bytes an input: a
    contact label takes 1 KB, the fit of 7.8 million labels in session 29 held 10.8 GB); off,
    each batch's are encoded as it is drawn and only the int8 boards stay in memory (50
    bytes a label; that fit 2.7 GB), an epoch about a seventh slower: a fit of many labels
    on a small machine, or two fits side by side. The batches and the fit are the same
    either way."""

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError(
                f"epochs and batch_size must be at least 1, got {self.epochs}, {self.batch_size}"
            )
        if not 0 < self.lr_end <= self.lr:
            raise ValueError(f"need 0 < lr_end <= lr, got {self.lr_end}, {self.lr}")
        if not self.added_lr > 0:  # NaN too
            raise ValueError(f"added_lr must be above 0, got {self.added_lr}")
        if (
            min(self.holdout_every, self.shards, self.equity_weight, self.rank_weight, self.warmup)
            < 0
        ):
            raise ValueError(
                "holdout_every, shards, equity_weight, rank_weight and warmup must be 0 or more"
            )
        for name in self.classes:
            if name not in NAMES:
                known = ", ".join(dict.fromkeys(NAMES))
                raise ValueError(f"unknown distill class {name!r:.40} (known: {known})")
        for name in self.grow:
            if name not in SET_CLASSES:
                known = ", ".join(SET_CLASSES)
                raise ValueError(f"distill.grow: unknown class {name!r:.40} (classes: {known})")


@dataclass(frozen=True)
class LabelSet:
    """Labelled afterstates ready to fit: inputs, targets, and what the rules decide."""

    after: np.ndarray
    """int8 (N, 2, 25), or (N, 2, 26) in acey-deucey."""
    extra: np.ndarray | None
    """bool (N,): whether each mover rolls again (acey-deucey networks), else None."""
    net: NetConfig
    """The student's network, whose encoding `inputs` gives."""
    encoded: torch.Tensor | None
    """float32 (N, F): every afterstate's inputs, encoded ahead; None: `inputs` encodes
    the rows asked for (`DistillConfig.encode_ahead`)."""
    targets: torch.Tensor
    """float32 (N, 5): the teacher's probabilities."""
    decided: torch.Tensor
    """float32 (N, 5): what the rules decide of each output, NaN where they leave it open."""
    zero_ply: np.ndarray
    """float32 (N, 5): the teacher's own 0-ply probabilities."""
    decision: torch.Tensor
    """int64 (N,): the decision each afterstate was played in, numbered across shards
    (the rows of a decision are consecutive)."""

    def __len__(self) -> int:
        return len(self.after)

    def inputs(self, rows: torch.Tensor | slice) -> torch.Tensor:
        """float32 (len(rows), F): the student's encoding of the afterstates `rows`, on the
        device of the set's tensors."""
        if self.encoded is not None:
            return self.encoded[rows]
        pick = rows if isinstance(rows, slice) else rows.cpu().numpy()
        extra = None if self.extra is None else self.extra[pick]
        inputs = np.asarray(self.net.encode(self.after[pick], extra), np.float32)
        return torch.from_numpy(inputs).to(self.targets.device)


def shard_files(folders: Sequence[str | Path], below: int = 0) -> list[Path]:
    """The shard files of label runs, in order (those whose index is below `below`, when
    it is not 0); a ValueError naming a folder without any."""
    files = []
    for folder in folders:
        if not Path(folder).is_dir():
            raise ValueError(f"label folder {folder} not found")
        found = sorted(Path(folder).glob("shard-*.npz"))
        if below:
            found = [f for f in found if _index(f) < below]
        if not found:
            raise ValueError(f"no label shards in {folder}")
        files += found
    return files


def _index(file: Path) -> int:
    """A shard file's index (shard-00042.npz: 42)."""
    return int(file.stem.split("-")[-1])


#: What a shard's label config (`vrhcaby.learn.labels.LabelConfig`) says of its targets:
#: shards that differ in these label different things and are not fitted together.
TARGET_KEYS = ("teacher", "plies")


def label_source(files: Sequence[Path], mix: bool = False) -> dict[str, Any]:
    """The teacher and search depth (`TARGET_KEYS`) that every shard of `files` was
    labelled by; a ValueError naming a file that is not a shard, or two that differ. With
    `mix` shards may differ, and each key maps to the list of its values (first seen
    first) when they do."""
    source: dict[str, Any] | None = None
    first = None
    seen: dict[str, list[Any]] = {key: [] for key in TARGET_KEYS}
    for file in files:
        try:
            config = Shard.meta(file)["config"]
            found = {key: config[key] for key in TARGET_KEYS}
        except (OSError, KeyError, TypeError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{file}: not a label shard ({type(exc).__name__})") from None
        for key in TARGET_KEYS:
            if found[key] not in seen[key]:
                seen[key].append(found[key])
        if source is None:
            source, first = found, file
        elif found != source and not mix:
            key = next(k for k in TARGET_KEYS if found[k] != source[k])
            raise ValueError(
                f"label shards with different {key}: {first} has {source[key]!r:.60}, "
                f"{file} has {found[key]!r:.60} (distill.mix_teachers = true fits them together)"
            )
    if mix and source is not None:
        return {key: values[0] if len(values) == 1 else values for key, values in seen.items()}
    return source or {}


def load_labels(
    folders: Sequence[str | Path],
    net: NetConfig,
    config: DistillConfig,
    device: torch.device = CPU,
) -> tuple[LabelSet, LabelSet]:
    """The fitted and the held-out labels of the shards in `folders`, encoded for `net`,
    their tensors on `device`; a ValueError when the shards' boards are not the network's
    (acey-deucey labels need an acey-deucey network, and the other way round)."""
    fitted: list[Shard] = []
    held: list[Shard] = []
    for file in shard_files(folders, config.shards):
        index = _index(file)
        keep = config.holdout_every and index % config.holdout_every == 0
        shard = Shard.load(file)
        if shard.after.shape[2] != net.columns:
            plays = "acey-deucey" if shard.extra is not None else "backgammon"
            raise ValueError(f"{file}: labels of {plays}, not of the network's variant")
        (held if keep else fitted).append(shard)
    return _label_set(fitted, net, config, device), _label_set(held, net, config, device)


def _label_set(
    shards: list[Shard], net: NetConfig, config: DistillConfig, device: torch.device
) -> LabelSet:
    extra = None
    if shards:
        after = np.concatenate([s.after for s in shards])
        target = np.concatenate([s.probabilities for s in shards]).astype(np.float32)
        zero = np.concatenate([s.zero_ply for s in shards]).astype(np.float32)
        offsets = np.cumsum([0] + [len(s.boards) for s in shards[:-1]])
        decision = np.concatenate([s.decision + o for s, o in zip(shards, offsets, strict=True)])
        if net.variant_inputs:
            extra = np.concatenate([s.extra for s in shards if s.extra is not None])
    else:
        after, target = np.zeros((0, 2, net.columns), np.int8), np.zeros((0, 5), np.float32)
        zero, decision = target, np.zeros(0, np.int64)
    if config.classes and len(after):
        keep = np.isin(np.asarray(NAMES)[engine.classify_boards(after)], config.classes)
        after, target, zero, decision = after[keep], target[keep], zero[keep], decision[keep]
        extra = None if extra is None else extra[keep]
    decided = obey_rules(after, np.full((len(after), 5), np.nan, np.float32))
    encoded = None
    if config.encode_ahead:
        encoded = torch.from_numpy(np.asarray(net.encode(after, extra), np.float32)).to(device)
    return LabelSet(
        after=after,
        extra=extra,
        net=net,
        encoded=encoded,
        targets=torch.from_numpy(np.nan_to_num(target)).to(device),
        decided=torch.from_numpy(np.asarray(decided, np.float32)).to(device),
        zero_ply=zero,
        decision=torch.from_numpy(decision.astype(np.int64)).to(device),
    )


def predictions(model: torch.nn.Module, data: LabelSet, rows: torch.Tensor | slice) -> torch.Tensor:
    """The model's joint probabilities of `data`'s rows, the rules' values where they decide."""
    raw = joint(model(data.inputs(rows)))
    fixed = data.decided[rows]
    return torch.where(torch.isnan(fixed), raw, fixed)


def loss(
    model: torch.nn.Module, data: LabelSet, rows: torch.Tensor | slice, config: DistillConfig
) -> torch.Tensor:
    """The mean loss (module docstring) of `data`'s rows, with gradients."""
    return _loss_of(predictions(model, data, rows), data, rows, config)


def _loss_of(
    p: torch.Tensor, data: LabelSet, rows: torch.Tensor | slice, config: DistillConfig
) -> torch.Tensor:
    """The mean loss of `data`'s rows whose `predictions` are `p`."""
    diff = p - data.targets[rows]
    per_row = 0.5 * (diff * diff).sum(dim=1)
    if config.equity_weight or config.rank_weight:
        error = diff @ _EQUITY.to(diff.device)
        per_row = per_row + config.equity_weight * 0.5 * error**2
        if config.rank_weight:
            relative = error - _group_mean(error, data.decision[rows])
            per_row = per_row + config.rank_weight * 0.5 * relative**2
    return per_row.mean()


def _group_mean(x: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    """Each row's mean of `x` over the rows of its group."""
    _, index = torch.unique(group, return_inverse=True)
    n = int(index.max()) + 1 if len(index) else 0
    total = torch.zeros(n, dtype=x.dtype, device=x.device).index_add_(0, index, x)
    count = torch.zeros(n, dtype=x.dtype, device=x.device).index_add_(0, index, torch.ones_like(x))
    return (total / count)[index]


@dataclass(frozen=True)
class HeldOut:
    """A model's scores on held-out labels (`held_out`), one home for their names: the
    checkpoint's ``distill.scores``, the TensorBoard charts and the log line read them."""

    loss: float
    """The loss (module docstring)."""
    equity_error: float
    """The mean absolute equity error of the model against the labels."""
    teacher_0ply_error: float
    """The same of the teacher's 0-ply."""
    choice_cost: float
    """The labels' equity given away per decision by choosing among its labelled plays by
    the model's equity (`choice_cost`), the cheap stand-in for the judged benchmark."""
    teacher_0ply_cost: float
    """The same choosing by the teacher's 0-ply equity."""

    @classmethod
    def mean(cls, parts: Sequence[tuple[HeldOut, int]]) -> HeldOut:
        """Each score's `weighted_mean` over `parts` by their counts of labels (several
        students' held-out sets as one)."""
        return cls(
            *(weighted_mean([(getattr(s, f.name), n) for s, n in parts]) for f in fields(cls))
        )

    def as_dict(self) -> dict[str, float]:
        """The scores by name, as a checkpoint's ``distill.scores`` records them."""
        return asdict(self)


@dataclass(frozen=True)
class EpochScores:
    """An epoch of a distillation run: its training loss, the students' `HeldOut` scores
    as one (`HeldOut.mean`), and a set's held-out loss of each class network."""

    train_loss: float
    held: HeldOut
    class_losses: dict[str, float] = field(default_factory=dict)

    @property
    def fit_loss(self) -> float:
        """The loss that says when fitting stops helping: the held-out one, or the
        training loss when nothing is held out."""
        return self.held.loss if math.isfinite(self.held.loss) else self.train_loss

    def as_dict(self) -> dict[str, float]:
        """The scores as a checkpoint's ``distill.scores`` records them: ``train_loss``,
        the `HeldOut` scores by name, ``held_out_loss_<class>``."""
        losses = {f"held_out_loss_{name}": loss for name, loss in self.class_losses.items()}
        return {"train_loss": self.train_loss, **self.held.as_dict(), **losses}


def weighted_mean(values: Sequence[tuple[float, int]]) -> float:
    """The mean of values weighted by their counts (NaN: no counts)."""
    total = sum(n for _, n in values)
    return sum(v * n for v, n in values if n) / total if total else float("nan")


@torch.no_grad()
def held_out(model: torch.nn.Module, data: LabelSet, config: DistillConfig) -> HeldOut:
    """For the log, on `data`, the model's `HeldOut` scores against the labels and the
    teacher's 0-ply's (NaN for no labels)."""
    if not len(data):
        return HeldOut.mean([])
    predicted = predictions(model, data, slice(None))  # once: the loss and the scores
    p = predicted.cpu().numpy()
    target = equity(data.targets.cpu().numpy())
    zero = equity(data.zero_ply)
    decision = data.decision.cpu().numpy()
    return HeldOut(
        loss=float(_loss_of(predicted, data, slice(None), config)),
        equity_error=float(np.abs(equity(p) - target).mean()),
        teacher_0ply_error=float(np.abs(zero - target).mean()),
        choice_cost=choice_cost(equity(p), target, decision),
        teacher_0ply_cost=choice_cost(zero, target, decision),
    )


def choice_cost(scores: np.ndarray, values: np.ndarray, decision: np.ndarray) -> float:
    """Mean over decisions of the best `values` minus the `values` of the row of the best
    `scores` (rows of one decision consecutive)."""
    start = np.flatnonzero(np.r_[True, decision[1:] != decision[:-1]])
    best = np.maximum.reduceat(values, start)
    order = np.lexsort((-scores, decision))  # each decision's best score first
    first = order[np.flatnonzero(np.r_[True, decision[order][1:] != decision[order][:-1]])]
    return float((best - values[first]).mean())


def learning_rate(config: DistillConfig, epoch: int) -> float:
    """Epoch `epoch`'s (0-based) learning rate: geometric from `lr` to `lr_end`."""
    if config.epochs == 1:
        return config.lr
    return config.lr * (config.lr_end / config.lr) ** (epoch / (config.epochs - 1))


def step_rate(config: DistillConfig, epoch: int, step: int) -> float:
    """The learning rate of optimizer step `step` (0-based, counted from the fit's first),
    one of epoch `epoch`'s: the epoch's `learning_rate`, times (step + 1) / warmup during
    the `DistillConfig.warmup` steps of warm-up."""
    rate = learning_rate(config, epoch)
    if step < config.warmup:
        rate *= (step + 1) / config.warmup
    return rate


def slow_layers(
    optimizer: torch.optim.Optimizer, model: torch.nn.Module, layers: range, scale: float
) -> None:
    """Move the parameters of `model`'s hidden layers `layers` (0 the first) into a
    parameter group of their own, which `fit_epoch` gives `scale` times the fit's learning
    rate (`DistillConfig.added_lr`); nothing for no layers. Done before the first step
    and before a resume loads the optimizer's state, so that the groups are the same."""
    moved = [p for i in layers for p in model[2 * i].parameters()]  # type: ignore[index]
    if not moved:
        return
    ids = {id(p) for p in moved}
    for group in optimizer.param_groups:
        group["params"] = [p for p in group["params"] if id(p) not in ids]
    optimizer.add_param_group({"params": moved, "lr_scale": scale})


def fit_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    data: LabelSet,
    config: DistillConfig,
    epoch: int,
    generator: torch.Generator,
) -> float:
    """One pass over `data` at epoch `epoch`'s learning rate (`step_rate`: warmed up over
    the fit's first steps, every epoch having as many steps as `data` has batches; a
    parameter group's ``lr_scale`` times it, `slow_layers`), the decisions in a random
    order (from `generator`), each decision's rows together; the mean training loss."""
    _, index = torch.unique(data.decision.cpu(), return_inverse=True)
    rank = torch.randperm(int(index.max()) + 1 if len(index) else 0, generator=generator)
    order = torch.argsort(rank[index], stable=True).to(data.targets.device)
    total = 0.0
    first = epoch * -(-len(data) // config.batch_size)  # the steps of the epochs before
    for s in range(0, len(data), config.batch_size):
        rate = step_rate(config, epoch, first + s // config.batch_size)
        for group in optimizer.param_groups:
            group["lr"] = rate * group.get("lr_scale", 1.0)
        rows = order[s : s + config.batch_size]
        batch_loss = loss(model, data, rows, config)
        optimizer.zero_grad(set_to_none=True)
        batch_loss.backward()
        optimizer.step()
        total += float(batch_loss.detach()) * len(rows)
    return total / max(len(data), 1)
