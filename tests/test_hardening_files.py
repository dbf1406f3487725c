"""Files that lie (issue 32): checkpoints whose array headers or metadata do not fit what
they hold, and a bear-off cache damaged in place with its stamp intact.

Each case is a shipped file broken in a known way (its bytes rewritten here, by hand,
with the `.npy` header format written out), and the expected answer comes from that
mutation: one line naming the file and what is wrong (exit status 2 on the command line),
never an allocation of what a forged header claims, never a value outside [0, 1].
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents import load_agent
from vrhcaby.base.files import read_arrays, write_npz
from vrhcaby.cli import main as cli
from vrhcaby.nn import bearoff_db, checkpoint
from vrhcaby.nn.net import load_evaluator
from vrhcaby.nn.onesided import load as load_onesided
from vrhcaby.sixdice.learner import load_net

ROOT = Path(__file__).resolve().parents[1]
NETWORK = ROOT / "checkpoints" / "td-best.pt"
ACEY = ROOT / "checkpoints" / "td-acey-deucey.pt"
SET = ROOT / "checkpoints" / "td-set.pt"
SIXDICE = ROOT / "checkpoints" / "sixdice-td.pt"
ONESIDED = ROOT / "checkpoints" / "onesided-race.pt"
START = "4HPwATDgc/ABMA"


# --- crafting ---------------------------------------------------------------------------


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def write(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def npy_header(shape: tuple[int, ...], descr: str) -> bytes:
    """A version 1.0 `.npy` header, written out by the format's specification (magic,
    version, little-endian header length, a dict literal padded to 64 bytes)."""
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    pad = 64 - (10 + len(text) + 1) % 64
    text += " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def npy_body(entry: bytes) -> bytes:
    """The data of a version 1.0 `.npy` entry (what follows its header)."""
    (length,) = struct.unpack("<H", entry[8:10])
    return entry[10 + length :]


def npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def meta_of(entries: dict[str, bytes]) -> dict:
    return json.loads(npy_body(entries["meta.npy"]).decode())


def with_meta(entries: dict[str, bytes], meta: dict) -> dict[str, bytes]:
    return {**entries, "meta.npy": npy(np.frombuffer(json.dumps(meta).encode(), np.uint8))}


def reshaped(entries: dict[str, bytes], name: str, shape: tuple[int, ...]) -> dict[str, bytes]:
    """Entry `name` with its header claiming `shape`, its data unchanged."""
    entry = entries[name]
    descr = "<f4" if name != "meta.npy" else "|u1"
    return {**entries, name: npy_header(shape, descr) + npy_body(entry)}


def run_cli(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), err.getvalue()


def one_line(code: int, err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    for word in words:
        assert word in lines[0], err


def refused(load, path: Path, *words: str) -> None:
    with pytest.raises(checkpoint.CheckpointError) as info:
        load(path)
    message = str(info.value)
    assert len(message.splitlines()) == 1 and str(path) in message, message
    for word in words:
        assert word in message, message


BACKGAMMON_LOADERS = [
    load_evaluator,
    lambda p: load_agent(f"td:{p}"),
    lambda p: checkpoint.load(p, "backgammon", sets=True),
    lambda p: checkpoint.load(p),
]


# --- headers that claim what the file does not hold -------------------------------------


def test_the_reader_reads_what_numpy_reads():
    """The checking reader returns every entry exactly as `numpy.load` does (the
    reference), for a single network, a set, a six-dice network and a Fortran-order
    array."""
    for path in (NETWORK, SET, SIXDICE, ACEY):
        arrays, meta = checkpoint.load(path)
        with np.load(path, allow_pickle=False) as reference:
            assert set(arrays) | {"meta"} == set(reference.files)
            for name in arrays:
                np.testing.assert_array_equal(arrays[name], reference[name])
                assert arrays[name].dtype == reference[name].dtype
        assert meta == json.loads(reference_meta(path))


def reference_meta(path: Path) -> str:
    with np.load(path, allow_pickle=False) as archive:
        return archive["meta"].tobytes().decode()


def test_a_fortran_order_entry_reads_as_saved(tmp_path):
    a = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    path = checkpoint.save(tmp_path / "f.pt", {"x": a}, {"k": 1})
    np.testing.assert_array_equal(checkpoint.load(path)[0]["x"], a)


HEADERS = [
    ("huge weight", "model/0.weight.npy", (99999999, 99999999), "(99999999, 99999999)"),
    ("huge bias", "model/0.bias.npy", (99999999999,), "(99999999999,)"),
    ("huge meta", "meta.npy", (99999999999,), "entry meta"),
    ("overflowing shape", "model/2.weight.npy", (2**40, 2**40), "model/2.weight"),
    ("short claim", "model/0.bias.npy", (3,), "holds"),
]


@pytest.mark.parametrize(("name", "entry", "shape", "word"), HEADERS, ids=[h[0] for h in HEADERS])
def test_a_forged_array_header_is_refused_before_it_is_read(tmp_path, name, entry, shape, word):
    path = write(tmp_path / "forged.pt", reshaped(members(NETWORK), entry, shape))
    for load in BACKGAMMON_LOADERS:
        refused(load, path, word)


def test_an_entry_cut_short_is_refused(tmp_path):
    entries = members(NETWORK)
    cut = {**entries, "model/0.weight.npy": entries["model/0.weight.npy"][:1000]}
    refused(checkpoint.load, write(tmp_path / "cut.pt", cut), "model/0.weight", "holds")


def test_entries_claiming_more_than_a_checkpoint_holds_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint, "MAX_BYTES", 10_000)
    refused(checkpoint.load, NETWORK, "more than such a file may hold")


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16, np.bool_, np.uint8])
def test_a_network_of_other_numbers_than_floats_is_refused(tmp_path, dtype):
    """Integer (or half, or boolean) weights used to load and play nonsense."""
    entries = members(NETWORK)
    weight = np.load(io.BytesIO(entries["model/0.weight.npy"]))
    bad = {**entries, "model/0.weight.npy": npy((weight * 100).astype(dtype))}
    path = write(tmp_path / "ints.pt", bad)
    for load in BACKGAMMON_LOADERS:
        refused(load, path, "model/0.weight", np.dtype(dtype).name, "float32 or float64")


def test_optimizer_state_of_integers_is_refused(tmp_path):
    entries = members(NETWORK)
    state = np.load(io.BytesIO(entries["optim/0/exp_avg.npy"]))
    bad = {**entries, "optim/0/exp_avg.npy": npy(state.astype(np.int64))}
    refused(lambda p: checkpoint.load(p, training=True), write(tmp_path / "o.pt", bad), "optim/0")


def test_a_forged_six_dice_or_one_sided_network_is_refused(tmp_path):
    six = write(
        tmp_path / "six.pt",
        reshaped(members(SIXDICE), "model/body.0.weight.npy", (10**8, 10**8)),
    )
    refused(load_net, six, "model/body.0.weight")
    race = members(ONESIDED)
    first = next(name for name in race if name.startswith("model/") and "weight" in name)
    one = write(tmp_path / "race.pt", reshaped(race, first, (10**8, 10**8)))
    refused(load_onesided, one, first.removesuffix(".npy"))


# --- metadata that does not fit ---------------------------------------------------------


def variant_set(meta: dict, top: str | None, config: str | None) -> dict:
    meta = json.loads(json.dumps(meta))
    for key, value, table in (("variant", top, meta), ("variant", config, meta["config"])):
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    return meta


METAS = [
    ("path-like variant", NETWORK, "../../etc/passwd", "../../etc/passwd", "unknown variant"),
    ("path-like top variant", NETWORK, "../x", None, "unknown variant"),
    ("unknown variant", NETWORK, None, "hypergammon", "unknown variant"),
    ("variants disagree", NETWORK, "standard", "nackgammon", "disagree"),
    ("standard labelled acey-deucey", NETWORK, "acey-deucey", "acey-deucey", "without"),
    ("acey-deucey labelled standard", ACEY, "standard", "standard", "with the acey-deucey"),
    ("set labelled acey-deucey", SET, None, "acey-deucey", "without"),
    ("six-dice variant", SIXDICE, "harsh", "harsh", "unknown variant"),
]


@pytest.mark.parametrize(
    ("name", "source", "top", "config", "word"), METAS, ids=[m[0] for m in METAS]
)
def test_metadata_that_does_not_fit_is_refused(tmp_path, name, source, top, config, word):
    entries = members(source)
    path = write(tmp_path / "m.pt", with_meta(entries, variant_set(meta_of(entries), top, config)))
    loaders = [load_net] if source == SIXDICE else BACKGAMMON_LOADERS[:3]
    for load in loaders:
        refused(load, path, word)


def test_a_sound_nackgammon_label_still_loads(tmp_path):
    """A standard-board network may be trained for nackgammon: the same inputs."""
    entries = members(NETWORK)
    path = write(
        tmp_path / "n.pt", with_meta(entries, variant_set(meta_of(entries), "nackgammon", None))
    )
    assert load_evaluator(path).variant == "nackgammon"


def test_every_command_answers_a_lying_checkpoint_with_one_line(tmp_path):
    huge = write(
        tmp_path / "huge.pt", reshaped(members(NETWORK), "model/0.weight.npy", (10**8, 10**8))
    )
    entries = members(NETWORK)
    acey = write(
        tmp_path / "acey.pt",
        with_meta(entries, variant_set(meta_of(entries), "acey-deucey", "acey-deucey")),
    )
    for path, word in ((huge, "(100000000, 100000000)"), (acey, "acey-deucey inputs")):
        for argv in (
            ["hint", START, "31", "--agent", f"td:{path}"],
            ["eval", START, "--agent", f"td:{path}"],
            ["cube", START, "--agent", f"td:{path}"],
            ["tournament", f"td:{path}", "random", "--games", "2", "--jobs", "1"],
            ["rollout", START, "--evaluator", str(path), "--trials", "1"],
            ["netset", "--out", str(tmp_path / "set.pt"), "--contact", str(path)],
        ):
            one_line(*run_cli(argv), str(path), word)


# --- a bear-off cache damaged in place --------------------------------------------------


def data_offset(path: Path, member: str) -> int:
    """Where entry `member`'s data starts in the zip file `path`, read from the zip and
    `.npy` formats as specified (local header of 30 bytes, name, extra field, then the
    `.npy` header of version 1.0)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(f"{member}.npy")
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)
        name, extra = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + 30 + name + extra)
        head = f.read(10)
        assert head[:8] == b"\x93NUMPY\x01\x00"
        return info.header_offset + 30 + name + extra + 10 + struct.unpack("<H", head[8:])[0]


def damage_in_place(path: Path, member: str, values: np.ndarray, at: int = 0) -> None:
    """Overwrite float32 values of table `member` in place, as bit rot does: the file
    keeps its size, inode and modification time."""
    before = path.stat()
    with open(path, "r+b") as f:
        f.seek(data_offset(path, member) + 4 * at)
        f.write(values.astype(np.float32).tobytes())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (
        before.st_size,
        before.st_ino,
        before.st_mtime_ns,
    )


def bear_off_boards(checkers: int, n: int = 64, seed: int = 5) -> np.ndarray:
    """`n` afterstates with `checkers` checkers of each side on its points 1 to 6."""
    rng = np.random.default_rng(seed)
    boards = np.zeros((n, 2, 25), np.int8)
    for board in boards:
        for side in (0, 1):
            np.add.at(board[side], rng.integers(0, 6, checkers), 1)
    return boards


@pytest.fixture()
def stamped_cache(tmp_path, monkeypatch):
    """A copy of the sound bear-off cache, settled and stamped, and a `build` that
    counts its calls and answers with the sound tables (no five-second rebuild)."""
    sound = bearoff_db.database()
    path = tmp_path / "bearoff.npz"
    shutil.copyfile(bearoff_db.path(), path)
    old = path.stat().st_mtime_ns - 60 * 10**9
    os.utime(path, ns=(old, old))
    assert bearoff_db._read(path) is not None
    assert path.with_name(f"{path.name}.verified").exists()
    builds = []

    def build():
        builds.append(1)
        return bearoff_db.BearoffDB({n: np.array(getattr(sound, n)) for n in bearoff_db.TABLES})

    monkeypatch.setattr(bearoff_db, "build", build)
    return path, sound, builds


# (table, values written over part of it, how the damage is read: 'two', 'one', 'cube')
DAMAGE = [
    ("win", np.full(2000, np.nan), "two"),
    ("win", np.full(2000, 0.5), "two"),  # in range, but not the table: the CRC finds it
    ("rolls", np.full(50_000, 1e22), "one"),
    ("first", np.full(50_000, -3.0), "one"),
    ("centred", np.full(2000, 1e22), "cube"),
    ("owned", np.full(2000, np.inf), "cube"),
]


@pytest.mark.parametrize(
    ("table", "values", "read"), DAMAGE, ids=[f"{d[0]}-{d[2]}" for d in DAMAGE]
)
def test_a_cache_damaged_in_place_under_its_stamp_is_found_and_rebuilt(
    stamped_cache, caplog, table, values, read
):
    path, sound, builds = stamped_cache
    damage_in_place(path, table, values)
    caplog.set_level(logging.WARNING)
    db = bearoff_db.load(path)  # the stamp still vouches for the file's size and time
    if read == "cube":
        boards = bear_off_boards(3)
        got, want = db.cubeful(boards, "centre"), sound.cubeful(boards, "centre")
        got = np.concatenate([got, db.cubeful(boards, "me")])
        want = np.concatenate([want, sound.cubeful(boards, "me")])
    else:
        boards = bear_off_boards(3 if read == "two" else 15)
        got, want = db.probabilities(boards), sound.probabilities(boards)
    assert builds == [1], "the damaged table was not found"
    assert f"table {table} fails its checksum" in caplog.text and str(path) in caplog.text
    np.testing.assert_array_equal(got, want)
    low = -1.0 if read == "cube" else 0.0
    assert np.isfinite(got).all() and (got >= low).all() and (got <= 1).all()


def test_only_the_tables_read_are_checked(stamped_cache, monkeypatch):
    """A stamped file's tables are checked when first read, once each."""
    path, _, builds = stamped_cache
    checked = []
    crc = bearoff_db._crc
    monkeypatch.setattr(bearoff_db, "_crc", lambda t: checked.append(t.shape) or crc(t))
    db = bearoff_db.load(path)
    for _ in range(3):
        db.probabilities(bear_off_boards(3))
    assert checked == [bearoff_db._SHAPES["win"]] and builds == []


def test_values_outside_the_range_never_leave_the_databases(tmp_path, stamped_cache, caplog):
    """A file whose checksums were made over out-of-range tables (no checksum can see
    that): the range guard finds it, the tables are rebuilt, the values are right."""
    _, sound, builds = stamped_cache
    tables = {name: np.array(getattr(sound, name)) for name in bearoff_db.TABLES}
    tables["win"][:] = 7.0
    tables["rolls"][:, 0] = -2.0
    path = tmp_path / "made.npz"
    caplog.set_level(logging.WARNING)
    for checkers in (3, 15):
        write_npz(path, {**tables, "checksum": bearoff_db._checksum(tables)})
        db = bearoff_db.load(path)
        boards = bear_off_boards(checkers)
        got = db.probabilities(boards)
        np.testing.assert_array_equal(got, sound.probabilities(boards))
    assert builds == [1, 1] and "outside [0, 1]" in caplog.text


def test_the_command_line_rebuilds_a_damaged_cache_and_shows_sound_values(tmp_path):
    """`vrhcaby eval` of a bear-off (exact two-sided: the win probability is the
    database's, checked against a recursive reference in test_bearoff) with the cache
    damaged in place under its stamp: a one-line notice and the sound answer."""
    cache = tmp_path / "cache" / "vrhcaby"
    cache.mkdir(parents=True)
    path = cache / bearoff_db.path().name
    shutil.copyfile(bearoff_db.path(), path)
    old = path.stat().st_mtime_ns - 60 * 10**9
    os.utime(path, ns=(old, old))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "vrhcaby.cli", "eval", "txUAAGxVAAAAAA", "--json"]
    sound = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    assert path.with_name(f"{path.name}.verified").exists()
    damage_in_place(path, "win", np.full(853_776, np.nan))
    damage_in_place(path, "rolls", np.full(1000, 1e22))
    damaged = subprocess.run(command, env=env, capture_output=True, text=True)
    assert damaged.returncode == 0, damaged.stderr
    assert damaged.stderr.strip().splitlines() == [
        f"bear-off database {path} is corrupt (table win fails its checksum): rebuilding it"
    ]
    assert json.loads(damaged.stdout) == json.loads(sound.stdout)


# --- every other file of arrays: shards, caches -----------------------------------------


def test_a_label_shard_with_a_forged_header_is_one_line_not_an_allocation(tmp_path):
    """Label shards (compressed archives) go through the same checking reader."""
    from vrhcaby.learn.labels import Shard

    source = ROOT / "data" / "labels" / "contact1" / "shard-00000.npz"
    entries = members(source)
    assert Shard.load(source).after.shape[1:] == (2, 25)  # the sound one loads
    name = next(n for n in entries if n.startswith("probabilities"))
    (length,) = struct.unpack("<H", entries[name][8:10])
    forged = {**entries, name: npy_header((10**8, 10**8), "<f4") + entries[name][10 + length :]}
    path = write(tmp_path / "shard-00000.npz", forged)
    with pytest.raises(ValueError) as info:
        Shard.load(path)
    message = str(info.value)
    assert len(message.splitlines()) == 1 and str(path) in message
    assert "(100000000, 100000000)" in message


def test_read_arrays_reads_what_numpy_reads_and_refuses_objects(tmp_path):
    arrays = {
        "f": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        "text": np.array("a JSON document"),
        "ids": np.array([b"4HPwATDgc/ABMA", b"x"]),
        "empty": np.zeros((0, 4), np.int8),
    }
    for compressed in (False, True):
        path = tmp_path / f"a{compressed}.npz"
        write_npz(path, arrays, compressed=compressed)
        got = read_arrays(path)
        with np.load(path) as reference:
            assert sorted(got) == sorted(reference.files)
            for name in reference.files:
                np.testing.assert_array_equal(got[name], reference[name])
                assert got[name].dtype == reference[name].dtype
    objects = tmp_path / "objects.npz"
    np.savez(objects, x=np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="Python objects"):
        read_arrays(objects)


def test_the_six_dice_table_damaged_in_place_is_computed_again(tmp_path, monkeypatch):
    """The cached optimal table carries its CRC-32: bytes changed in place (size and time
    kept) are found and the table computed again (here: `solve` answers with the sound
    table, counting its calls)."""
    from vrhcaby.sixdice import players

    want = players.optimal_table()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    solved = []
    monkeypatch.setattr(players, "solve", lambda harsh=False: solved.append(1) or want.copy())
    np.testing.assert_array_equal(players.optimal_table(), want)  # built and cached
    path = players.optimal_table_path()
    np.testing.assert_array_equal(players.optimal_table(), want)
    assert solved == [1]  # the sound cache is read, not computed
    damage_in_place(path, "table", np.array([want[5, 3] + 0.5, 1e22]), at=5 * want.shape[1] + 3)
    np.testing.assert_array_equal(players.optimal_table(), want)
    assert solved == [1, 1]
