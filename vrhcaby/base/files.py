"""Where computed tables are kept between runs, and how they are written there.

Tables that take seconds to compute (the six-dice optimum, the bear-off databases) are
cached under $XDG_CACHE_HOME/vrhcaby (default ~/.cache/vrhcaby), written atomically so
that a reader never sees half a file; a read-only cache only costs recomputing next time.
"""

from __future__ import annotations

import math
import os
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np
from numpy.lib import format as npy

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


def check_output_dir(path: str | Path, what: str) -> Path:
    """That results can be written into the folder `path` (setting or option `what`),
    checked before any work, so that a run does not fail at its first write after hours:
    no part of the path is a file, and a file (or, where the folder does not exist yet, a
    folder) can be made where it will be, which is tried, because permissions do not tell:
    root may write anywhere but a read-only file system or ``/proc``. The probe is removed
    and the folder is not made here. A ValueError of one line says what is wrong."""
    path = Path(path)
    _probe(path, path, what)
    return path


def check_output_file(path: str | Path, what: str) -> Path:
    """That the file `path` (option `what`) can be written, before any work (see
    `check_output_dir`): it is not a folder and a file can be made beside it (the atomic
    writers make a temporary file there and rename it; a missing folder is made)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{what} {str(path)!r:.200} is a folder, not a file")
    _probe(path.parent, path, what)
    return path


def _probe(folder: Path, shown: Path, what: str) -> None:
    """Make and remove a file in `folder`, or, where it does not exist, a folder in its
    deepest part that does; a ValueError naming `what` and `shown` if that fails."""
    for part in (folder, *folder.parents):
        if part.exists():
            break
    else:  # pragma: no cover - '/' or '.' always exists
        part = Path(".")
    try:
        if not part.is_dir():
            raise NotADirectoryError(0, f"{str(part)!r:.200} is a file, not a folder")
        if part == folder:
            fd, probe = tempfile.mkstemp(prefix=".vrhcaby-probe-", dir=part)
            os.close(fd)
            os.unlink(probe)
        else:
            os.rmdir(tempfile.mkdtemp(prefix=".vrhcaby-probe-", dir=part))
    except OSError as exc:
        raise ValueError(
            f"{what} {str(shown)!r:.200} cannot be written: {exc.strerror or exc}"
        ) from None


#: The most bytes the arrays of one file may claim together (2 GiB): far beyond any table,
#: checkpoint or shard here, far below what a forged array header can claim.
MAX_ARRAY_BYTES = 1 << 31

NPY_MAGIC = b"\x93NUMPY"


def read_arrays(path: str | Path, max_bytes: int = MAX_ARRAY_BYTES) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file `path` (a zip of ``.npy`` files, compressed or
    not; a bare ``.npy`` file is its one array, "table", as `write_npz` writes it), each
    header checked before its data is read: no Python objects, and a shape that needs
    exactly the bytes the entry holds, all entries together at most `max_bytes`. Where
    `numpy.load` would first allocate whatever a forged header claims (a shape of 10^16
    numbers, a traceback of 35 PiB), this raises a ValueError of one line saying what is
    wrong (OSError if the file cannot be read); zip members are CRC-checked as read."""
    path = Path(path)
    with open(path, "rb") as f:
        if f.read(len(NPY_MAGIC)) == NPY_MAGIC:
            f.seek(0)
            return {"table": _read_npy(f, "table", path.stat().st_size)}
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            claimed = sum(member.file_size for member in members)
            if claimed > max_bytes:
                raise ValueError(
                    f"its entries claim {claimed:,} bytes, more than such a file may hold "
                    f"({max_bytes:,})"
                )
            arrays = {}
            for member in members:
                name = member.filename.removesuffix(".npy")
                with archive.open(member) as stream:
                    arrays[name] = _read_npy(stream, name, member.file_size)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ValueError(f"not a readable archive of arrays ({type(exc).__name__})") from None
    return arrays


def _read_npy(stream: IO[bytes], name: str, size: int) -> np.ndarray:
    """The array of entry `name`, an ``.npy`` file of `size` bytes open in `stream`, its
    header checked (no objects, a shape that fits `size`) before its data is read."""
    if stream.read(len(NPY_MAGIC)) != NPY_MAGIC:
        raise ValueError(f"entry {name} is no array")
    version = tuple(stream.read(2))
    readers = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f"entry {name} has an unknown .npy format version {version}")
    shape, fortran, dtype = readers[version](stream)
    if dtype.hasobject:
        raise ValueError(f"entry {name} holds Python objects, not numbers")
    header = stream.tell()  # magic, version, header length and header
    needed = math.prod(shape) * dtype.itemsize
    if needed != size - header:
        raise ValueError(
            f"entry {name} claims shape {shape} of {dtype} ({needed:,} bytes) but holds "
            f"{max(size - header, 0):,} bytes"
        )
    data = stream.read(needed)
    if len(data) != needed:
        raise ValueError(f"entry {name} is cut short")
    array = np.frombuffer(bytearray(data), dtype)
    return array.reshape(shape, order="F" if fortran else "C")
