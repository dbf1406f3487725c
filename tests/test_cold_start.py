"""A cold `vrhcaby hint` loads only what it needs (docs/benchmarks.md; bench/cli_latency.py
times it).

Each probe runs the `vrhcaby` program (`python -m vrhcaby.cli`) in a fresh interpreter and
reports, at exit, the modules it imported and what it did: a 0-ply hint imports neither
torch nor numba (the numpy evaluator, no compiled kernel for a few positions); a bear-off
hint reads the databases without enumerating every bear-off position (nor importing
logging, which only their cache's troubles need); a 2-ply hint runs
the ahead-of-time compiled kernels, when `python -m vrhcaby.cli.warm` has built them,
without numba and without the OpenSSL that hashlib loads. The bear-off cache reader is
checked against `np.load` on small files.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from engine import aot
from vrhcaby.base.files import write_npz
from vrhcaby.cli.main import main
from vrhcaby.nn import bearoff_db

ROOT = Path(__file__).resolve().parents[1]

#: Runs the program with the probe's arguments, then prints its facts on stderr at exit.
PROBE = textwrap.dedent(
    """
    import atexit, gc, json, runpy, sys

    def facts():
        aot = sys.modules.get("engine.aot")
        bearoff = sys.modules.get("engine.bearoff")
        print(json.dumps({
            "modules": sorted(sys.modules),
            "aot": bool(aot and aot.loaded()),
            "enumerated": bool(bearoff and bearoff._positions.cache_info().currsize),
            "frozen": gc.get_freeze_count(),
        }), file=sys.stderr)

    atexit.register(facts)
    sys.argv = ["vrhcaby", *sys.argv[1:]]
    runpy.run_module("vrhcaby.cli", run_name="__main__")
    """
)

HEAVY = ("torch", "numba", "scipy", "tensorboard")
CONTACT = "4HPwATDgc/ABMA"  # the README's example
BEAR_OFF = "BQAA+O9SAAAAAA"  # both sides home, one of them with more than 6 checkers


def probe(*argv: str) -> tuple[str, dict]:
    """The program's output and its facts (see `PROBE`) for `vrhcaby ARGV`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def bear_off_cache() -> None:
    """The bear-off databases cached on disk (built once if missing), as after an install."""
    bearoff_db.database()


def shipped_kernels() -> bool:
    """Whether the ahead-of-time module serves the move generator; a failure naming what
    to run when it is there but stale or broken (`engine.aot.problem`), rather than a
    probe that finds numba loaded."""
    aot.forget()
    try:
        found = os.environ.get("VRHCABY_AOT") != "0" and bool(
            aot.functions("engine.movegen._afterstates")
        )
        if aot.problem():
            pytest.fail(aot.problem())
        return found
    finally:
        aot.forget()


def test_a_zero_ply_hint_loads_no_heavy_library() -> None:
    shipped_kernels()  # the cube's default 1-ply look-ahead runs the move generator
    out, facts = probe("hint", CONTACT, "31")
    assert out.startswith(f"{CONTACT}  roll 3-1")
    assert "8/5 6/5" in out.splitlines()[3]  # the best play, as in the README
    assert not set(HEAVY) & set(facts["modules"])
    assert "vrhcaby.nn.bearoff_db" not in facts["modules"]  # no bear-off in sight
    assert facts["frozen"] > 1000  # the program exempted its modules from the collector


def test_a_bear_off_hint_reads_the_tables_without_enumerating(bear_off_cache) -> None:
    out, facts = probe("hint", BEAR_OFF, "41")
    assert out.startswith(f"{BEAR_OFF}  roll 4-1")
    assert "vrhcaby.nn.bearoff_db" in facts["modules"]
    assert not facts["enumerated"]
    assert not {*HEAVY, "logging"} & set(facts["modules"])  # a sound cache: nothing to report


def test_a_two_ply_hint_runs_the_compiled_kernels_without_numba() -> None:
    if not shipped_kernels():
        pytest.skip("no ahead-of-time module (python -m vrhcaby.cli.warm builds it)")
    out, facts = probe("hint", CONTACT, "31", "--plies", "2", "-n", "1")
    assert out.splitlines()[3].split()[1:3] == ["8/5", "6/5"]
    assert facts["aot"]
    assert not {*HEAVY, "hashlib"} & set(facts["modules"])


def test_a_stale_module_is_one_line_naming_the_rebuild(tmp_path: Path) -> None:
    """A manifest whose stamp no longer matches the move generator's source (as after an
    edit of engine/movegen.py): the hint answers on numba's JIT and says why in one line."""
    built = aot.stamp(["engine.movegen"])
    built["sources"]["engine.movegen"] = "0123456789abcdef"  # what the build saw
    name = "vrhcaby_kernels_0123456789abcdef"
    manifest = {"module": name, "file": f"{name}.so", "stamp": built, "kernels": {}}
    (tmp_path / aot.MANIFEST).write_text(json.dumps(manifest))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VRHCABY_AOT_DIR": str(tmp_path)}
    env.pop("VRHCABY_AOT", None)
    done = subprocess.run(
        [sys.executable, "-m", "vrhcaby.cli", "hint", CONTACT, "31"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "8/5 6/5" in done.stdout.splitlines()[3]
    assert done.stderr == (
        "vrhcaby: note: stale ahead-of-time kernels (engine.movegen changed since the build):"
        " run `python -m vrhcaby.cli.warm`\n"
    )


def test_main_called_with_arguments_leaves_the_collector_alone(capsys) -> None:
    before = gc.get_freeze_count()
    assert main(["moves", "start", "21"]) == 0
    assert "24/23 13/11" in capsys.readouterr().out
    assert gc.get_freeze_count() == before


# --- the bear-off cache's reader ------------------------------------------------------


@pytest.mark.parametrize("maps", [True, False], ids=["mapped", "read where mmap fails"])
def test_mapped_arrays_are_what_np_load_reads(tmp_path: Path, monkeypatch, maps: bool) -> None:
    if not maps:
        monkeypatch.setattr(bearoff_db.mmap, "mmap", _no_mmap)
    rng = np.random.default_rng(0)
    arrays: dict[str, np.ndarray] = {
        "c": rng.random((7, 5), dtype=np.float32),
        "fortran": np.asfortranarray(rng.random((4, 6))),
        "counts": rng.integers(0, 2**32, 9, dtype=np.uint32),
        "cube": rng.integers(-9, 9, (2, 3, 4), dtype=np.int8),
        "scalar": np.array(2.5),
        "empty": np.zeros((0, 3), np.int16),
    }
    path = tmp_path / "tables.npz"
    write_npz(path, arrays)
    mapped = bearoff_db._map(path)
    with np.load(path) as data:
        assert sorted(mapped) == sorted(data.files)
        for name in data.files:
            want = data[name]
            assert mapped[name].dtype == want.dtype and mapped[name].shape == want.shape
            np.testing.assert_array_equal(mapped[name], want)
            assert not mapped[name].flags.writeable  # views of the file, not copies


def _no_mmap(*args: object, **kwargs: object) -> None:
    raise OSError("this file system cannot map files")


def test_a_checked_cache_is_stamped_and_a_changed_one_checked_again(
    tmp_path: Path, bear_off_cache, monkeypatch, caplog
) -> None:
    """A sound file that has settled is stamped, and read again without its checksum; one
    just written is not stamped; a file changed since its stamp is checked again (and a
    damaged one refused)."""
    path = tmp_path / "bearoff.npz"
    shutil.copyfile(bearoff_db.path(), path)
    stamp = path.with_name(f"{path.name}.verified")
    assert bearoff_db._read(path) is not None
    assert not stamp.exists()  # just written: a write in the same clock tick could hide
    old = path.stat().st_mtime_ns - 60 * 10**9
    os.utime(path, ns=(old, old))
    assert bearoff_db._read(path) is not None and stamp.exists()
    with monkeypatch.context() as m:
        m.setattr(bearoff_db, "_checksum", _no_checksum)
        assert bearoff_db._read(path) is not None  # the stamp vouches for the file
        with np.load(path) as data:
            arrays = dict(data)
        arrays["win"][5, 7] += 0.25  # damage under the stored checksum
        write_npz(path, arrays)
        os.utime(path, ns=(old - 10**9, old - 10**9))  # changed, and settled again
        with pytest.raises(AssertionError, match="checksum"):
            bearoff_db._read(path)  # the stamp no longer matches: checked again
    caplog.set_level(logging.WARNING)
    assert bearoff_db._read(path) is None
    assert "corrupt" in caplog.text


def _no_checksum(arrays: object) -> None:
    raise AssertionError("the checksum was computed")


def test_a_compressed_truncated_or_misshapen_cache_is_not_read(tmp_path: Path, caplog) -> None:
    small = {name: np.zeros((2, 2), np.float32) for name in (*bearoff_db.TABLES, "checksum")}
    caplog.set_level(logging.WARNING)
    compressed = tmp_path / "compressed.npz"
    write_npz(compressed, small, compressed=True)
    assert bearoff_db._read(compressed) is None
    assert "unreadable" in caplog.text and "compressed" in caplog.text
    whole = tmp_path / "small.npz"
    write_npz(whole, small)
    caplog.clear()
    assert bearoff_db._read(whole) is None  # the tables' shapes are wrong
    assert "corrupt" in caplog.text
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(whole.read_bytes()[:-100])
    caplog.clear()
    assert bearoff_db._read(truncated) is None
    assert "unreadable" in caplog.text
