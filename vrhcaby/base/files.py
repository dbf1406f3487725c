"""Where computed tables are kept between runs, and how they are written there.

Tables that take seconds to compute (the six-dice optimum, the bear-off databases) are
cached under $XDG_CACHE_HOME/vrhcaby (default ~/.cache/vrhcaby), written atomically so
that a reader never sees half a file; a read-only cache only costs recomputing next time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import logging


def logger(name: str) -> logging.Logger:
    """The logger `name` of a module that reports only what goes wrong with a cache.
    logging is imported on the first report, not with the module: a command that reads a
    sound cache (every `vrhcaby hint` that meets a bear-off) does not pay for its import,
    several milliseconds."""
    import logging

    return logging.getLogger(name)


def cache_dir() -> Path:
    """Where computed tables are kept: $XDG_CACHE_HOME/vrhcaby (default ~/.cache/vrhcaby)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vrhcaby"


def write_npz(path: Path, arrays: dict[str, np.ndarray], *, compressed: bool = False) -> None:
    """Write `arrays` to `path` (.npz, or .npy for the one array "table") atomically: a
    temporary file beside it, then renamed, so a reader (or a resumed run) never sees half
    a file. Raises OSError when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")
    try:
        if path.suffix == ".npy":
            np.save(tmp, arrays["table"])
        elif compressed:
            np.savez_compressed(tmp, allow_pickle=False, **arrays)
        else:
            np.savez(tmp, allow_pickle=False, **arrays)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def save_atomic(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Cache `arrays` at `path` (`write_npz`, uncompressed); an unwritable cache is logged
    and otherwise ignored."""
    try:
        write_npz(path, arrays)
    except OSError as exc:
        logger(__name__).warning("could not cache %s: %s", path, exc)
