"""Where computed tables are kept between runs, and how they are written there.

Tables that take seconds to compute (the six-dice optimum, the bear-off databases) are
cached under $XDG_CACHE_HOME/vrhcaby (default ~/.cache/vrhcaby), written atomically so
that a reader never sees half a file; a read-only cache only costs recomputing next time.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Where computed tables are kept: $XDG_CACHE_HOME/vrhcaby (default ~/.cache/vrhcaby)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vrhcaby"


def save_atomic(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` to `path` (.npz, uncompressed, or .npy for the one array "table"),
    atomically; an unwritable cache is logged and otherwise ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")
        if path.suffix == ".npy":
            np.save(tmp, arrays["table"])
        else:
            np.savez(tmp, allow_pickle=False, **arrays)
        tmp.replace(path)
    except OSError as exc:
        log.warning("could not cache %s: %s", path, exc)
