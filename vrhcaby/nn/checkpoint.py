"""Checkpoint files: one atomic, torch-free file per snapshot; the last K kept plus the best.

Format. A checkpoint is a zip archive in numpy's ``.npz`` layout (whatever its name ends
with; the project uses ``.pt``): every tensor is a plain ``.npy`` member (model weights as
``model/<name>``, optimizer state as ``optim/...``, RNG state as ``rng/...``) and one
member ``meta`` holds a JSON document (network config, run config, games played, code
version, RNG and optimizer scalars). Why not ``torch.save``: its pickles reference torch
classes, so reading one needs ``import torch`` (over a second) and trusts arbitrary
pickled code; this layout opens with ``numpy.load(allow_pickle=False)`` in milliseconds,
so the command line and the agents evaluate a network without torch.

A *network set* (`vrhcaby.nn.netset`) is a checkpoint of the same format with one network
per position class: meta entry ``layout`` is ``"network-set"`` (`SET_LAYOUT`),
``networks`` a table from class (`SET_CLASSES`) to that network's description, and
``fallback`` (optional) a table from a class without a network of its own to the class
whose network answers it; class ``c``'s weights are ``set/c/model/<name>``. Each class
is checked as a single network is (`load` with ``sets=True``).

Every writer (a trainer's state, a distillation's, `vrhcaby netset`, the one-sided and
pruned networks) lays its parts out through `contents`, so a state has one layout and the
same state makes the same members.

Writes are atomic (`write_atomic`, which other result files use too): a temporary file in
the same directory, flushed and fsynced, then renamed over the target, so a crash never
leaves a half-written checkpoint. `load` checks what it reads: every loader of the project
goes through it, so a file that is not a sound checkpoint is one line naming it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from engine.variants import VARIANTS
from vrhcaby.base.files import MAX_ARRAY_BYTES as MAX_BYTES
from vrhcaby.base.files import NPY_MAGIC, read_arrays

FORMAT = "vrhcaby-checkpoint-1"

#: The variants each game's networks may be trained for.
GAME_VARIANTS = {"backgammon": tuple(VARIANTS), "sixdice": ("standard",)}
ACEY_DEUCEY = "acey-deucey"


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable or not what the caller needs."""


def save(path: str | Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> Path:
    """Write `arrays` and the JSON-able `meta` to `path` atomically; returns the path."""
    document = json.dumps({"format": FORMAT, **meta}, sort_keys=True)
    members = {name: np.asarray(a) for name, a in arrays.items()}
    members["meta"] = np.frombuffer(document.encode(), dtype=np.uint8)
    return write_atomic(path, lambda f: np.savez(f, allow_pickle=False, **members))


Network = tuple[Mapping[str, Any], Mapping[str, np.ndarray]]
"""A network as a checkpoint holds it: its description (meta ``net``) and its arrays, named
as a single network's checkpoint names them (``model/<layer>.<weight|bias>``)."""


def contents(
    game: str = "backgammon",
    *,
    net: Network | None = None,
    networks: Mapping[str, Network] | None = None,
    fallback: Mapping[str, str] | None = None,
    trained: Sequence[str] | None = None,
    variant: str | None = None,
    games: int | None = None,
    optimizer: tuple[Mapping[str, np.ndarray], Mapping[str, Any]] | None = None,
    torch_rng: np.ndarray | None = None,
    rng: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A checkpoint's arrays and meta document (`save` writes them) from its parts, the one
    place that lays them out: a `game`'s single network `net`, or a network set of
    `networks` (class -> network) with its `fallback` table and the classes a TD run
    `trained`; then what a training checkpoint adds: the `variant` learnt, the `games`
    played (or epochs fitted), the `optimizer`'s state (its ``optim/...`` arrays and its
    document), torch's RNG state (`torch_rng`, ``rng/torch``), the dice generator's
    (`rng`), and the run's `config`. A part left None is left out. The arrays keep this
    order (the network's, the optimizer's, torch's RNG), so the same state makes the same
    file."""
    meta: dict[str, Any] = {"game": game}
    if net is not None and networks is None:
        meta["net"] = dict(net[0])
        arrays = dict(net[1])
    elif networks is not None and net is None:
        meta["layout"] = SET_LAYOUT
        meta["networks"] = {name: dict(description) for name, (description, _) in networks.items()}
        meta["fallback"] = dict(fallback or {})
        if trained is not None:
            meta["trained"] = list(trained)
        arrays = set_arrays({name: member for name, (_, member) in networks.items()})
    else:
        raise ValueError("a checkpoint holds one network or one network set: give net or networks")
    for key, value in {"variant": variant, "games": games, "rng": rng, "config": config}.items():
        if value is not None:
            meta[key] = value
    if optimizer is not None:
        arrays.update(optimizer[0])
        meta["optimizer"] = dict(optimizer[1])
    if torch_rng is not None:
        arrays["rng/torch"] = torch_rng
    return arrays, meta


def layer_arrays(
    layers: Iterable[tuple[np.ndarray, np.ndarray]], game: str = "backgammon"
) -> dict[str, np.ndarray]:
    """A `game`'s network's arrays named as its checkpoint names them (`LAYOUTS`) from its
    linear layers' (weight, bias), input side first."""
    name = LAYOUTS[game][0]
    return {
        f"{name.format(2 * i)}.{part}": array
        for i, layer in enumerate(layers)
        for part, array in zip(("weight", "bias"), layer, strict=True)
    }


def write_atomic(path: str | Path, write: Callable[[BinaryIO], object] | str) -> Path:
    """Write a file atomically: `write` (text, or a function writing to a binary file)
    goes to a temporary file in the same directory, flushed and fsynced, then renamed
    over `path`, so a reader or a crash sees the old file or the new one, never part of
    one. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(write, str):
                f.write(write.encode())
            else:
                write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; these files are for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


#: How each game names its network's linear layers (`.weight` and `.bias` follow), input
#: side first, and how many outputs the last one has.
LAYOUTS = {"backgammon": ("model/{}", 5), "sixdice": ("model/body.{}", 1)}


def load(
    path: str | Path, game: str | None = None, *, training: bool = False, sets: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and meta document stored in `path`, checked: the one loader of every
    checkpoint (agents, tournaments, rollouts, `train --resume`, `init_from`).

    Always: a readable zip archive in this format whose numbers are all finite. With
    `game` ("backgammon" or "sixdice"): a network of that game, its description of the
    right types and its weights (2-D, each with its bias, layer widths chaining and
    agreeing with the description). With `sets` a backgammon network set (see the
    module) passes too, each of its classes checked so. With `training`: a network (or with
    `sets` a set) of the game it says it learnt (or `game`), and the optimizer, the RNG
    states and the games played, all `--resume` needs. Anything else is a `CheckpointError`,
    one line naming the file and what is wrong.
    """
    path = Path(path)
    if not path.is_file():
        what = "a directory, not a file" if path.is_dir() else "not found"
        raise CheckpointError(f"{path}: checkpoint {what}")
    arrays = _read(path)
    try:
        meta = json.loads(arrays.pop("meta").tobytes().decode())
    except KeyError:
        raise CheckpointError(f"{path}: not a vrhcaby checkpoint (no meta entry)") from None
    except (UnicodeDecodeError, ValueError):
        raise CheckpointError(f"{path}: not a vrhcaby checkpoint (unreadable meta entry)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a vrhcaby checkpoint (unknown format)")
    try:
        _check_arrays(arrays)
        _check_meta(meta)
        learnt = game or meta.get("game", "backgammon")
        if is_set(meta) and sets and learnt == "backgammon" and (game or training):
            _check_set(arrays, meta)
        elif game is not None or training:
            _check_network(arrays, meta, game or meta.get("game", "backgammon"), variant_of(meta))
        if training:
            _check_training(arrays, meta)
    except CheckpointError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    return arrays, meta


#: Where a network's trained numbers live: weights, optimizer state, a set's networks.
#: These must be float32 or float64 (integer weights would load and play nonsense).
FLOAT_ENTRIES = ("model/", "optim/", "set/")


def _read(path: Path) -> dict[str, np.ndarray]:
    """Every member of the archive at `path`, each header checked before its data is
    read (`vrhcaby.base.files.read_arrays`): a forged shape (10^16 numbers, say) is
    refused, not allocated."""
    try:
        with open(path, "rb") as f:
            if f.read(len(NPY_MAGIC)) == NPY_MAGIC:
                raise CheckpointError(
                    f"{path}: not a vrhcaby checkpoint (a bare .npy array, no zip archive)"
                )
        return read_arrays(path, MAX_BYTES)
    except CheckpointError:
        raise
    except ValueError as exc:
        raise CheckpointError(f"{path}: not a readable vrhcaby checkpoint: {exc}") from None
    except OSError as exc:
        raise CheckpointError(
            f"{path}: not a readable vrhcaby checkpoint ({type(exc).__name__})"
        ) from None


def _check_arrays(arrays: dict[str, np.ndarray]) -> None:
    for name, a in arrays.items():
        if a.dtype.kind not in "biuf":
            raise CheckpointError(f"entry {name} holds {a.dtype} values, not numbers")
        if name.startswith(FLOAT_ENTRIES) and a.dtype not in (np.float32, np.float64):
            raise CheckpointError(
                f"entry {name} holds {a.dtype} values: a network's numbers are float32 or float64"
            )
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise CheckpointError(f"entry {name} holds non-finite numbers (NaN or infinity)")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_meta(meta: dict[str, Any]) -> None:
    """The types of the entries the loaders read, where present."""
    for key in ("net", "config", "optimizer", "rng", "evaluation"):
        if key in meta and not isinstance(meta[key], dict):
            raise CheckpointError(f"meta entry {key!r} is not a table: {meta[key]!r:.60}")
    for key in ("game", "variant", "run_dir", "best_by"):
        if key in meta and not isinstance(meta[key], str):
            raise CheckpointError(f"meta entry {key!r} is not a string: {meta[key]!r:.60}")
    if "game" in meta and meta["game"] not in LAYOUTS:
        raise CheckpointError(f"meta entry 'game' names no known game: {meta['game']!r:.60}")
    if "layout" in meta and meta["layout"] != SET_LAYOUT:
        raise CheckpointError(f"meta entry 'layout' names no known layout: {meta['layout']!r:.60}")
    if "games" in meta and not (_is_int(meta["games"]) and meta["games"] >= 0):
        raise CheckpointError(f"meta entry 'games' is not a count: {meta['games']!r:.60}")
    best = meta.get("best")
    if best is not None and not (isinstance(best, int | float) and math.isfinite(best)):
        raise CheckpointError(f"meta entry 'best' is not a finite number: {best!r:.60}")
    game = meta.get("game", "backgammon")
    named = {
        "variant": meta.get("variant"),
        "config.variant": meta.get("config", {}).get("variant"),
    }
    for key, variant in named.items():
        if variant is None:
            continue
        if not isinstance(variant, str):
            raise CheckpointError(f"meta entry {key} is not a string: {variant!r:.60}")
        if variant not in GAME_VARIANTS[game]:
            known = ", ".join(GAME_VARIANTS[game])
            raise CheckpointError(
                f"trained for an unknown variant {variant!r:.40} (meta entry {key}; {game} "
                f"variants: {known})"
            )
    if None not in named.values() and len(set(named.values())) > 1:
        raise CheckpointError(
            f"meta entries variant {named['variant']!r} and config.variant "
            f"{named['config.variant']!r} disagree"
        )


def variant_of(meta: dict[str, Any]) -> str:
    """The variant a checkpoint's network was trained for (checked by `load`)."""
    return str(meta.get("config", {}).get("variant", meta.get("variant", "standard")))


def _check_variant_inputs(net: dict[str, Any], variant: str) -> None:
    """An acey-deucey network reads the waiting checkers (``variant_inputs``) and only an
    acey-deucey network does: a standard network labelled acey-deucey would be handed
    boards it cannot read, and the reverse could not play the other variants."""
    if bool(net.get("variant_inputs", False)) != (variant == ACEY_DEUCEY):
        what = "with" if net.get("variant_inputs") else "without"
        raise CheckpointError(
            f"a network of variant {variant} {what} the acey-deucey inputs (network "
            "'variant_inputs'): acey-deucey networks, and only they, have them"
        )


def _check_network(
    arrays: dict[str, np.ndarray], meta: dict[str, Any], game: str, variant: str
) -> None:
    """A `game` network of `variant`: its description and weights agree (the input width,
    which only the encoding knows, is checked by whoever rebuilds the network)."""
    saved = meta.get("game", "backgammon")
    if saved != game:
        label = {"sixdice": "six-dice"}.get(game, game)
        raise CheckpointError(f"holds a {saved} network, not a {label} checkpoint")
    if is_set(meta):
        held = meta.get("networks")
        classes = ", ".join(held) if isinstance(held, dict) else "?"
        raise CheckpointError(f"holds a network set ({classes:.60}), not a single network")
    net = meta.get("net")
    if not isinstance(net, dict):
        raise CheckpointError("has no network description (meta entry 'net')")
    hidden = net.get("hidden")
    if not (isinstance(hidden, list) and hidden and all(_is_int(h) and h > 0 for h in hidden)):
        raise CheckpointError(f"network 'hidden' is not a list of positive widths: {hidden!r:.60}")
    name, outputs = LAYOUTS[game]
    if game == "backgammon" and net.get("kind") == ONESIDED:
        outputs = ONESIDED_OUTPUTS
    elif game == "backgammon":
        for key in ("encoding", "activation"):
            if not isinstance(net.get(key), str):
                raise CheckpointError(f"network {key!r} is not a string: {net.get(key)!r:.60}")
        if not isinstance(net.get("variant_inputs", False), bool):
            raise CheckpointError("network 'variant_inputs' is not true or false")
        _check_variant_inputs(net, variant)
    widths = [*hidden, outputs]
    inputs = None
    for i, width in enumerate(widths):
        layer = name.format(2 * i)
        w, b = arrays.get(f"{layer}.weight"), arrays.get(f"{layer}.bias")
        if w is None or b is None:
            missing = f"{layer}.weight" if w is None else f"{layer}.bias"
            raise CheckpointError(f"lacks weights {missing} of its {len(widths)} layers")
        if w.ndim != 2 or b.ndim != 1:
            raise CheckpointError(
                f"{layer} has weight shape {w.shape} and bias shape {b.shape}: "
                "a layer is a 2-D weight and a 1-D bias"
            )
        if w.shape[0] != width or b.shape[0] != width or (inputs and w.shape[1] != inputs):
            raise CheckpointError(
                f"{layer} has weight shape {w.shape} and bias shape {b.shape}, but its "
                f"description ({len(hidden)} hidden layers {hidden}, {outputs} outputs) needs "
                f"({width}, {inputs or 'inputs'}) and ({width},)"
            )
        inputs = width
    extra = f"{name.format(2 * len(widths))}.weight"
    if extra in arrays:
        raise CheckpointError(f"has more layers than its description ({extra})")


ONESIDED = "onesided"
"""The ``kind`` of a one-sided race network (`vrhcaby.nn.onesided`): a side alone, its
distributions of rolls out (3 x 40 logits and 3 means), no encoding or activation named."""
ONESIDED_OUTPUTS = 123

SET_LAYOUT = "network-set"
"""Meta entry ``layout`` of a network set."""
SET_CLASSES = ("contact", "crashed", "race")
"""The position classes a network set answers with networks (`engine.classify`'s names);
the rules and the bear-off databases answer the others."""


def is_set(meta: dict[str, Any]) -> bool:
    """Whether a checkpoint's meta document describes a network set."""
    return meta.get("layout") == SET_LAYOUT


def set_prefix(name: str) -> str:
    """Where class `name`'s arrays live in a network set: ``set/<name>/``."""
    return f"set/{name}/"


def set_arrays(members: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """A network set's arrays: each class's network (arrays named as a single network's
    checkpoint names them) under ``set/<class>/`` (`set_member` takes one back out)."""
    return {
        f"{set_prefix(name)}{key}": array
        for name, member in members.items()
        for key, array in member.items()
    }


def set_member(
    arrays: dict[str, np.ndarray], meta: dict[str, Any], name: str
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Class `name`'s network in a network set as a single network's checkpoint holds it:
    its arrays (``model/...``) and a meta document with its description (``net``)."""
    prefix = set_prefix(name)
    member = {key[len(prefix) :]: a for key, a in arrays.items() if key.startswith(prefix)}
    return member, {"game": "backgammon", "net": meta["networks"][name]}


def check_classes(held: Iterable[str], fallback: dict[str, Any]) -> None:
    """That networks of the classes `held` and the `fallback` table (class -> the class
    whose network answers it) cover every one of `SET_CLASSES`, each once, with known
    names; else a `CheckpointError` naming the class and what is wrong."""
    held = list(held)
    known = ", ".join(SET_CLASSES)
    for name in [*held, *fallback]:
        if name not in SET_CLASSES:
            raise CheckpointError(f"network set class {name!r:.40} is unknown (classes: {known})")
    for name, target in fallback.items():
        if name in held:
            raise CheckpointError(
                f"network set class {name} has a network and a fallback ({target!r:.40})"
            )
        if target not in held:
            raise CheckpointError(
                f"network set class {name} falls back to {target!r:.40}, which holds no "
                f"network of its own (networks: {', '.join(held) or 'none'})"
            )
    for name in SET_CLASSES:
        if name not in held and name not in fallback:
            raise CheckpointError(
                f"network set lacks the {name} network (and no fallback names a class for it)"
            )


def _check_set(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """A backgammon network set (see the module): its classes complete and each network
    sound; every array belongs to a class that holds a network."""
    if meta.get("game", "backgammon") != "backgammon":
        raise CheckpointError(f"holds a network set of {meta['game']}: sets are for backgammon")
    networks, fallback = meta.get("networks"), meta.get("fallback", {})
    if not isinstance(networks, dict) or not networks:
        raise CheckpointError("network set has no table of networks (meta entry 'networks')")
    if not isinstance(fallback, dict):
        raise CheckpointError(f"network set entry 'fallback' is not a table: {fallback!r:.60}")
    check_classes(networks, fallback)
    for name, net in networks.items():
        if not isinstance(net, dict):
            raise CheckpointError(f"network set class {name}: description is not a table")
        try:
            _check_network(*set_member(arrays, meta, name), "backgammon", variant_of(meta))
        except CheckpointError as exc:
            raise CheckpointError(f"network set class {name}: {exc}") from None
    prefixes = tuple(set_prefix(name) for name in networks)
    for key in arrays:
        if key.startswith("set/") and not key.startswith(prefixes):
            raise CheckpointError(f"network set entry {key:.60} belongs to no class it holds")


def _check_training(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """What `--resume` restores besides the weights."""
    if not _is_int(meta.get("games")):
        raise CheckpointError(
            "lacks the games played (meta entry 'games'): not a training checkpoint"
        )
    optim = meta.get("optimizer")
    if not isinstance(optim, dict):
        raise CheckpointError("lacks the optimizer state: not a training checkpoint")
    groups, state = optim.get("param_groups"), optim.get("state")
    if not (isinstance(groups, list) and groups and all(isinstance(g, dict) for g in groups)):
        raise CheckpointError("optimizer 'param_groups' is not a list of tables")
    if not isinstance(state, dict):
        raise CheckpointError("optimizer 'state' is not a table")
    for group in groups:
        for key, value in group.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise CheckpointError(f"optimizer setting {key!r} is not finite: {value}")
    for idx, entry in state.items():
        if not isinstance(entry, dict):
            raise CheckpointError(f"optimizer state {idx!r} is not a table")
        for key, kind in entry.items():
            if kind == "array":
                if f"optim/{idx}/{key}" not in arrays:
                    raise CheckpointError(f"lacks the optimizer's array optim/{idx}/{key}")
            elif not (isinstance(kind, int | float) and math.isfinite(kind)):
                raise CheckpointError(f"optimizer state {idx}/{key} is not a finite number")
    torch_rng = arrays.get("rng/torch")
    if torch_rng is None or torch_rng.dtype != np.uint8 or torch_rng.ndim != 1:
        raise CheckpointError("lacks the torch RNG state (rng/torch, 1-D bytes)")
    if is_set(meta):  # a set is fitted to labels (`vrhcaby train`'s distillation): no dice
        return
    rng = meta.get("rng")
    if not (isinstance(rng, dict) and isinstance(rng.get("bit_generator"), str)):
        raise CheckpointError("lacks the dice RNG state (meta entry 'rng')")


class CheckpointDir:
    """The checkpoints of one run: ``NAME-g<games>.pt`` files, the last `keep` kept, and
    ``NAME-best.pt``, a copy of the one with the best evaluation so far."""

    def __init__(self, directory: str | Path, name: str, keep: int = 3) -> None:
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        self.directory = Path(directory)
        self.name = name
        self.keep = keep
        self._pattern = re.compile(rf"^{re.escape(name)}-g(\d+)\.pt$")

    @property
    def best_path(self) -> Path:
        return self.directory / f"{self.name}-best.pt"

    def snapshots(self) -> list[Path]:
        """This run's numbered checkpoints, oldest first."""
        if not self.directory.is_dir():
            return []
        found = []
        for p in self.directory.iterdir():
            m = self._pattern.match(p.name)
            if m:
                found.append((int(m.group(1)), p))
        return [p for _, p in sorted(found)]

    def latest(self) -> Path | None:
        """The newest numbered checkpoint, or None."""
        snaps = self.snapshots()
        return snaps[-1] if snaps else None

    def latest_sound(
        self, sets: bool = False
    ) -> tuple[Path, dict[str, np.ndarray], dict[str, Any], list[str]]:
        """The newest numbered checkpoint that `load` accepts as a training checkpoint (of
        a network set too with `sets`): its path, arrays and meta, and one line per newer
        one skipped (a crash or a full disk can spoil a file that was renamed into place).
        CheckpointError if there is none, naming what was wrong with each."""
        skipped = []
        for path in reversed(self.snapshots()):
            try:
                arrays, meta = load(path, training=True, sets=sets)
            except CheckpointError as exc:
                skipped.append(str(exc))
                continue
            return path, arrays, meta, skipped
        if not skipped:
            raise CheckpointError(
                f"nothing to resume: no checkpoint of run {self.name!r} in {self.directory}"
            )
        raise CheckpointError(
            f"nothing to resume: no sound checkpoint of run {self.name!r} ({'; '.join(skipped)})"
        )

    def remove_stale(self) -> list[Path]:
        """Delete the temporary files that writes of this run's checkpoints left behind
        when they were killed (a finished write renames its file into place); returns them.
        Only one process trains a run, so none of them is still being written."""
        if not self.directory.is_dir():
            return []
        mine = re.compile(rf"^\.(?:{re.escape(self.name)}-(?:g\d+|best)\.pt|best)\..+\.tmp$")
        stale = [p for p in self.directory.iterdir() if mine.match(p.name) and p.is_file()]
        for p in stale:
            p.unlink(missing_ok=True)
        return stale

    def save(
        self, games: int, arrays: dict[str, np.ndarray], meta: dict[str, Any], best: bool
    ) -> Path:
        """Write the checkpoint for `games` games, drop all but the last `keep`, and copy
        it to the best file when `best`."""
        path = save(self.directory / f"{self.name}-g{games:09d}.pt", arrays, meta)
        for old in self.snapshots()[: -self.keep]:
            old.unlink(missing_ok=True)
        if best:
            prefix = f".{self.best_path.name}."
            fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=self.directory)
            os.close(fd)
            try:
                shutil.copyfile(path, tmp)
                os.chmod(tmp, 0o644)
                os.replace(tmp, self.best_path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return path
