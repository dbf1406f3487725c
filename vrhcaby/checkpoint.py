"""Checkpoint files: one atomic, torch-free file per snapshot; the last K kept plus the best.

Format. A checkpoint is a zip archive in numpy's ``.npz`` layout (whatever its name ends
with; the project uses ``.pt``): every tensor is a plain ``.npy`` member (model weights as
``model/<name>``, optimizer state as ``optim/...``, RNG state as ``rng/...``) and one
member ``meta`` holds a JSON document (network config, run config, games played, code
version, RNG and optimizer scalars). Why not ``torch.save``: its pickles reference torch
classes, so reading one needs ``import torch`` (over a second) and trusts arbitrary
pickled code; this layout opens with ``numpy.load(allow_pickle=False)`` in milliseconds,
so the command line and the agents evaluate a network without torch.

Writes are atomic: a temporary file in the same directory, flushed and fsynced, then
renamed over the target, so a crash never leaves a half-written checkpoint.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "vrhcaby-checkpoint-1"


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable or not what the caller needs."""


def save(path: str | Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> Path:
    """Write `arrays` and the JSON-able `meta` to `path` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = json.dumps({"format": FORMAT, **meta}, sort_keys=True)
    members = {name: np.asarray(a) for name, a in arrays.items()}
    members["meta"] = np.frombuffer(document.encode(), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **members)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; checkpoints are for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and meta document stored in `path`; CheckpointError if it is not one."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        meta = json.loads(arrays.pop("meta").tobytes().decode())
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        raise CheckpointError(
            f"not a readable vrhcaby checkpoint: {path} ({type(exc).__name__})"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"not a vrhcaby checkpoint (unknown format): {path}")
    return arrays, meta


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

    def save(
        self, games: int, arrays: dict[str, np.ndarray], meta: dict[str, Any], best: bool
    ) -> Path:
        """Write the checkpoint for `games` games, drop all but the last `keep`, and copy
        it to the best file when `best`."""
        path = save(self.directory / f"{self.name}-g{games:09d}.pt", arrays, meta)
        for old in self.snapshots()[: -self.keep]:
            old.unlink(missing_ok=True)
        if best:
            fd, tmp = tempfile.mkstemp(prefix=".best.", suffix=".tmp", dir=self.directory)
            os.close(fd)
            shutil.copyfile(path, tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.best_path)
        return path
