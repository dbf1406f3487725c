"""The bear-off databases, built by the project and cached on disk (`database()`).

`engine.bearoff` defines the tables and reads them; `engine.bearoff_build` computes them
(about 5 seconds, plus numba's compile the first time). Here they are kept in one file,
``bearoff-v<VERSION>.npz`` in `vrhcaby.base.files.cache_dir()` (27 MB, float32), with a
checksum of its arrays: a file that is missing, unreadable, of another shape or whose
checksum does not match is rebuilt (and a warning names it), so a damaged cache never
gives wrong values. The file is read by mapping it into memory, its tables views of the
mapped pages (read-only), rather than copied into new arrays, and its whole checksum is
computed once, not by every process: a file found sound leaves a stamp beside it (its size,
inode, modification time and checksum, and each table's own CRC-32, `_sound`) once it is a
few seconds old, and a later read whose file still matches the stamp skips the 20-25 ms of
reading every byte. Any write to the file changes its modification time, so a file changed
since is checked again; damage that keeps the size and time (bit rot, a bad disk) is found
by the table's own CRC-32, checked when the process first reads that table (medians on a
busy 2-core machine, `bench/bearoff_check.py`: 1.6 ms for a two-sided table, about 10 ms
for each 7 MB one-sided one, 38-48 ms for the whole file), and the file is rebuilt with a
one-line warning. Values leave the databases only
inside their range (probabilities in [0, 1], equities in [-1, 1]): anything else is taken
for damage too. A command that meets a bear-off pays the tables it reads and the pages it
reads, not the 50 ms a copy through `np.load` costs. The two-sided values are exact; the
one-sided ones are distributions from which `BearoffDB.probabilities` combines a race as
GNU Backgammon does.
"""

from __future__ import annotations

import functools
import math
import mmap
import struct
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

from engine import bearoff
from engine.classify import BEAROFF1, BEAROFF2, classify_boards
from vrhcaby.base.files import cache_dir, logger, save_atomic
from vrhcaby.nn.checkpoint import write_atomic

VERSION = 2
"""Bumped when the tables' definition changes, so that an old cache is not read."""
TABLES = ("rolls", "first", "win", "centred", "owned", "theirs")
MAX_ROLLS = 32
_ROUNDING = 1e-6
"""How far float32 rounding may take a table's value past its range (it is clipped)."""
_SHAPES = {
    "rolls": (bearoff.N_POSITIONS, MAX_ROLLS),
    "first": (bearoff.N_POSITIONS, MAX_ROLLS),
    **{name: (bearoff.N_SMALL, bearoff.N_SMALL) for name in TABLES[2:]},
}


class BearoffDB:
    """The one-sided and two-sided tables (see `engine.bearoff`), float32.

    Tables that a stamp vouched for (`unchecked`: name -> the CRC-32 the stamp recorded)
    are checked once, when first read in this process: a table damaged in place since the
    stamp (bit rot, a bad disk: size and modification time kept) is found then, named on
    stderr, and the file at `file` rebuilt. A command checks only the tables it reads
    (1.6 ms a two-sided table, about 10 ms a one-sided one: `bench/bearoff_check.py`).
    """

    def __init__(
        self,
        tables: dict[str, np.ndarray],
        unchecked: dict[str, int] | None = None,
        file: Path | None = None,
    ) -> None:
        self._tables = {name: tables[name] for name in TABLES}
        self._unchecked = dict(unchecked or {})
        self._file = file

    def _table(self, name: str) -> np.ndarray:
        expected = self._unchecked.pop(name, None)
        if expected is not None and _crc(self._tables[name]) != expected:
            self._rebuild(f"table {name} fails its checksum")
        return self._tables[name]

    def _rebuild(self, why: str) -> None:
        """Replace every table with freshly built ones (saved to `file`), saying why."""
        where = self._file if self._file is not None else "in memory"
        logger(__name__).warning("bear-off database %s is corrupt (%s): rebuilding it", where, why)
        fresh = build() if self._file is None else _rebuilt(self._file)
        self._tables, self._unchecked = fresh._tables, {}

    @property
    def rolls(self) -> np.ndarray:
        """(54264, 32): P(bearing off all the checkers takes exactly n rolls)."""
        return self._table("rolls")

    @property
    def first(self) -> np.ndarray:
        """(54264, 32): P(bearing off the first checker takes exactly n rolls)."""
        return self._table("first")

    @property
    def win(self) -> np.ndarray:
        """(924, 924) [on roll, not on roll]: cubeless P(the side on roll wins), exact."""
        return self._table("win")

    @property
    def centred(self) -> np.ndarray:
        """(924, 924): the side on roll's cubeful money equity (cube 1), cube centred."""
        return self._table("centred")

    @property
    def owned(self) -> np.ndarray:
        """(924, 924): the same with the cube on its side."""
        return self._table("owned")

    @property
    def theirs(self) -> np.ndarray:
        """(924, 924): the same with the cube on the opponent's side."""
        return self._table("theirs")

    def mean_rolls(self, rows: np.ndarray) -> np.ndarray:
        """Expected rolls to bear off all the checkers of each side's row (..., 25)."""
        return self.rolls[bearoff.row_index(rows)] @ np.arange(MAX_ROLLS, dtype=np.float32)

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """The five probabilities (N, 5) float64 of the side that just moved (row 1) of
        afterstates in a bear-off class (`engine.classify`): the exact two-sided value
        where both sides have at most 6 checkers, else the one-sided race."""
        after = np.asarray(afterstates)
        classes = classify_boards(after)
        if not np.isin(classes, (BEAROFF1, BEAROFF2)).all():
            raise ValueError("the bear-off databases only cover positions with every checker home")
        return self._guarded(lambda: self._probabilities(after, classes), 0.0)

    def _probabilities(self, after: np.ndarray, classes: np.ndarray) -> np.ndarray:
        to_roll, mover = bearoff.row_index(after[:, 0]), bearoff.row_index(after[:, 1])
        small = classes == BEAROFF2
        out = np.zeros((len(after), 5))
        out[small, 0] = 1.0 - self.win[to_roll[small], mover[small]]
        if not small.all():  # the one-sided races only where the two-sided table ends
            a, b = to_roll[~small], mover[~small]
            out[~small] = bearoff.one_sided_outcome(
                self.rolls[a], self.first[a], self.rolls[b], self.first[b]
            )
        return out

    def cubeful(self, boards: np.ndarray, cube: str = "centre") -> np.ndarray:
        """The side on roll's (row 1) exact cubeful money equity (N,) for cube value 1 in
        two-sided positions (`BEAROFF2`), the cube ``"centre"``, ``"me"`` or ``"opponent"``."""
        tables = {"centre": "centred", "me": "owned", "opponent": "theirs"}
        if cube not in tables:
            raise ValueError(f"cube must be 'centre', 'me' or 'opponent', got {cube!r}")
        b = np.asarray(boards)
        if (classify_boards(b) != BEAROFF2).any():
            raise ValueError("exact cubeful equities need at most 6 checkers a side, all home")
        on_roll, other = bearoff.row_index(b[:, 1]), bearoff.row_index(b[:, 0])
        return self._guarded(lambda: getattr(self, tables[cube])[on_roll, other], -1.0)

    def _guarded(self, compute: Callable[[], np.ndarray], low: float) -> np.ndarray:
        """`compute()` as float64, every value in [low, 1]: a value outside (beyond float
        rounding) or not finite means a damaged table that no checksum caught, so the
        tables are rebuilt and the values computed again. Nothing outside the range leaves
        the databases."""
        for attempt in range(2):
            out = np.asarray(compute(), np.float64)
            inside = (out >= low - _ROUNDING).all() and (out <= 1 + _ROUNDING).all()
            if inside and np.isfinite(out).all():
                return np.clip(out, low, 1.0, out=out)
            if attempt == 0:
                self._rebuild(f"values outside [{low:g}, 1]")
        raise RuntimeError(f"freshly built bear-off databases give values outside [{low:g}, 1]")


def _checksum(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """CRC-32 of the tables in order: it catches damage, not tampering, in a third of the
    time SHA-256 takes (the cache is read by every command that meets a bear-off)."""
    crc = 0
    for name in TABLES:
        crc = zlib.crc32(np.ascontiguousarray(arrays[name]).data, crc)
    return np.array([crc], np.uint32)


def _crc(table: np.ndarray) -> int:
    """CRC-32 of one table's bytes: what a stamp records per table."""
    return zlib.crc32(np.ascontiguousarray(table).data)


def build() -> BearoffDB:
    """Compute both databases (numba)."""
    from engine import bearoff_build  # loads numba and the move generator: only to build

    rolls, first = bearoff_build.build_one_sided()
    tables = {"rolls": rolls, "first": first, **bearoff_build.build_two_sided()}
    return BearoffDB({name: tables[name].astype(np.float32) for name in TABLES})


#: A zip member's local header: its signature, then fields up to the lengths of the
#: name and the extra field that come between the header's 30 bytes and the data.
_LOCAL_HEADER = struct.Struct("<4s22xHH")


def _map(path: Path) -> dict[str, np.ndarray]:
    """The arrays of the uncompressed .npz `path` by name, read-only views of the file
    mapped into memory (of its bytes read whole, where the file system cannot map it).
    Raises OSError, ValueError or `zipfile.BadZipFile` when it is not such a file."""
    with open(path, "rb") as f:
        with zipfile.ZipFile(f) as archive:
            members = archive.infolist()
        data: mmap.mmap | bytes
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError:  # a file system that cannot map files: read it whole instead
            data = path.read_bytes()
        arrays = {}
        for member in members:
            if member.compress_type != zipfile.ZIP_STORED:
                raise ValueError(f"{member.filename} is compressed")
            signature, name, extra = _LOCAL_HEADER.unpack_from(data, member.header_offset)
            if signature != b"PK\x03\x04":
                raise zipfile.BadZipFile(f"no local header for {member.filename}")
            f.seek(member.header_offset + _LOCAL_HEADER.size + name + extra)
            version = npy.read_magic(f)
            header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, fortran, dtype = header(f)
            flat = np.frombuffer(data, dtype, count=math.prod(shape), offset=f.tell())
            arrays[member.filename.removesuffix(".npy")] = flat.reshape(
                shape, order="F" if fortran else "C"
            )
    return arrays


def _read(path: Path) -> BearoffDB | None:
    """The databases in `path`, or None (with a warning) if it is missing or damaged."""
    if not path.exists():
        return None
    try:
        mapped = _map(path)
        arrays = {name: mapped[name] for name in (*TABLES, "checksum")}
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        logger(__name__).warning(
            "bear-off database %s is unreadable (%s): rebuilding it", path, exc
        )
        return None
    bad_shape = any(arrays[n].shape != _SHAPES[n] or arrays[n].dtype != np.float32 for n in TABLES)
    vouched = None if bad_shape else _stamped(path, arrays["checksum"])
    if bad_shape or (vouched is None and not _sound(path, arrays)):
        logger(__name__).warning("bear-off database %s is corrupt (checksum): rebuilding it", path)
        return None
    return BearoffDB(arrays, vouched, path)


#: How old (seconds) a file must be before its checksum is stamped: a write within the
#: file system's timestamp granularity of the check could otherwise keep the stamped time.
_SETTLED = 2.0


def _stamp_path(path: Path) -> Path:
    return path.with_name(f"{path.name}.verified")


def _stamp(path: Path, checksum: np.ndarray) -> str:
    """The part of the stamp of `path` that says which file it vouches for: its size,
    inode, modification time in nanoseconds and stored checksum."""
    st = path.stat()
    return f"{st.st_size} {st.st_ino} {st.st_mtime_ns} {int(checksum[0])}"


def _stamped(path: Path, checksum: np.ndarray) -> dict[str, int] | None:
    """The CRC-32 of each table, as the stamp of `path` recorded them when the whole file
    was found sound, if the stamp vouches for `path` as it is now; else None."""
    try:
        head, _, crcs = _stamp_path(path).read_text().partition(" tables ")
        if head != _stamp(path, checksum):
            return None
    except OSError:
        return None
    try:
        recorded = {name: int(crc) for name, crc in (pair.split("=") for pair in crcs.split())}
    except ValueError:
        return None
    return recorded if sorted(recorded) == sorted(TABLES) else None


def _sound(path: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Whether the tables of `path` match their stored checksum (every byte read); if so,
    and the file has settled, stamp it with each table's own CRC-32, so that a later
    process checks only the tables it reads, when it reads them (best effort)."""
    if not np.array_equal(arrays["checksum"], _checksum(arrays)):
        return False
    try:
        if time.time() - path.stat().st_mtime > _SETTLED:
            crcs = " ".join(f"{name}={_crc(arrays[name])}" for name in TABLES)
            write_atomic(_stamp_path(path), f"{_stamp(path, arrays['checksum'])} tables {crcs}\n")
    except OSError:
        pass  # an unwritable cache: the next read checks again
    return True


def path() -> Path:
    """Where the databases are cached."""
    return cache_dir() / f"bearoff-v{VERSION}.npz"


def load(file: Path | None = None) -> BearoffDB:
    """The databases from `file` (default `path()`), built and saved there if it is
    missing or corrupt."""
    file = path() if file is None else Path(file)
    return _read(file) or _rebuilt(file)


def _rebuilt(file: Path) -> BearoffDB:
    """The databases built afresh and saved to `file` (best effort)."""
    logger(__name__).info("building the bear-off databases into %s", file)
    db = build()
    arrays = {name: getattr(db, name) for name in TABLES}
    save_atomic(file, {**arrays, "checksum": _checksum(arrays)})
    return db


@functools.cache
def database() -> BearoffDB:
    """The process's bear-off databases, loaded (or built) once on first use."""
    return load()
