"""The ahead-of-time compiled kernels (`engine.aot`, `engine.jit`).

A tiny module of two toy kernels is built here (a few seconds) to check the machinery:
the compiled code answers a cold process without numba; a stale stamp, a missing file
and other argument types fall back to numba's JIT with the same answers (and
`VRHCABY_AOT=0` in the hint test below). The shipped kernels' module, which
`python -m vrhcaby.cli.warm` builds at install, is checked when it is there (a stale one fails
with `engine.aot.problem`'s line, naming what to run): the move
generator against the plain reference walk of `tests/reference.py`, and a 2-ply hint
(every kernel of the search) against the same hint on numba's JIT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from corpus import corpus
from reference import reference_afterstates

from engine import aot, jit, movegen

ROOT = Path(__file__).resolve().parents[1]

TOY = '''
import numpy as np
from engine.jit import kernel


@kernel(inline="always")
def _twice(x):
    return 2 * x


@kernel(fastmath=False)
def row_sums(a, scale):
    """Twice each row's sum of `a` (N, K), times `scale`: calls another kernel."""
    out = np.empty(a.shape[0], np.float64)
    for r in range(a.shape[0]):
        total = 0.0
        for k in range(a.shape[1]):
            total += a[r, k]
        out[r] = _twice(total) * scale
    return out
'''

# A cold process: the toy kernel on a C-contiguous and a Fortran-ordered array (the module
# was built for the first only), then what it loaded.
PROBE = """
import sys, json, numpy as np
import toy_kernels
from engine import aot
a = np.arange(12, dtype=np.int64).reshape(3, 4)
out = [toy_kernels.row_sums(a, 0.5).tolist()]
aot_loaded = aot.loaded()
numba_after_c = "numba" in sys.modules
out.append(toy_kernels.row_sums(np.asfortranarray(a), 0.5).tolist())
print(json.dumps({"out": out, "aot": aot_loaded, "numba_after_c": numba_after_c,
                  "problem": aot.problem()}))
"""


# A long run: after `LONG_RUN` calls of compiled code, numba's JIT.
LONG = """
import sys, json, numpy as np
import toy_kernels
from engine import jit
jit.LONG_RUN = 3
a = np.arange(12, dtype=np.int64).reshape(3, 4)
out, numba = [], []
for _ in range(5):
    out.append(toy_kernels.row_sums(a, 0.5).tolist())
    numba.append("numba" in sys.modules)
print(json.dumps({"out": out, "numba": numba}))
"""


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the toy kernel module and, under `aot/`, its compiled module, built
    for int64 (N, K) C-contiguous arrays and a float scale."""
    root = tmp_path_factory.mktemp("toy")
    (root / "toy_kernels.py").write_text(TOY)
    sys.path.insert(0, str(root))
    try:
        import toy_kernels
    finally:
        sys.path.remove(str(root))
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    jit.recording = True
    try:
        toy_kernels.row_sums(a, 0.5)
    finally:
        jit.recording = False
    kernels = [toy_kernels.row_sums, toy_kernels._twice]
    assert toy_kernels.row_sums.jit_calls == {("int64[2C]", "float64")}
    assert not toy_kernels._twice.jit_calls  # only called (inlined) inside a kernel
    built = aot.build(kernels, root / "aot")
    assert built is not None and built.is_file()
    return root


def _probe(root: Path, code: str = PROBE) -> dict:
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)]),
        "VRHCABY_AOT_DIR": str(root / "aot"),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _row_sums(a: np.ndarray, scale: float) -> list[float]:
    return [2 * float(sum(int(x) for x in row)) * scale for row in a]


WANT = _row_sums(np.arange(12).reshape(3, 4), 0.5)


def test_a_cold_process_runs_the_compiled_kernel_without_numba(toy: Path) -> None:
    got = _probe(toy)
    assert got["aot"] and not got["numba_after_c"] and got["problem"] is None
    assert got["out"] == [WANT, WANT]  # the Fortran array went to numba's JIT


def test_a_long_run_goes_back_to_numbas_jit(toy: Path) -> None:
    got = _probe(toy, LONG)
    assert got["numba"] == [False, False, False, True, True]  # the fourth call is numba's
    assert got["out"] == [WANT] * 5


def test_the_manifest_names_the_sources_it_was_built_from(toy: Path) -> None:
    manifest = json.loads((toy / "aot" / aot.MANIFEST).read_text())
    assert set(manifest["stamp"]["sources"]) == {"toy_kernels"}
    assert list(manifest["kernels"]) == ["toy_kernels.row_sums"]
    assert (toy / "aot" / manifest["file"]).is_file()


def test_a_changed_source_makes_the_module_stale(toy: Path, tmp_path: Path) -> None:
    (tmp_path / "toy_kernels.py").write_text(TOY + "\n# changed\n")
    (tmp_path / "aot").symlink_to(toy / "aot")
    got = _probe(tmp_path)
    assert not got["aot"] and got["numba_after_c"]
    assert got["out"] == [WANT, WANT]
    assert got["problem"] == (
        "stale ahead-of-time kernels (toy_kernels changed since the build): "
        "run `python -m vrhcaby.cli.warm`"
    )


def test_a_manifest_without_its_module_falls_back(toy: Path, tmp_path: Path) -> None:
    (tmp_path / "toy_kernels.py").write_text(TOY)
    (tmp_path / "aot").mkdir()
    manifest = json.loads((toy / "aot" / aot.MANIFEST).read_text())
    (tmp_path / "aot" / aot.MANIFEST).write_text(json.dumps(manifest))  # no module beside it
    got = _probe(tmp_path)
    assert not got["aot"] and got["out"] == [WANT, WANT]
    assert got["problem"].startswith(f"the ahead-of-time kernels in {tmp_path / 'aot'} do not load")
    assert got["problem"].endswith(": run `python -m vrhcaby.cli.warm`")


@pytest.mark.parametrize(
    "value",
    [
        np.zeros((3, 2, 25), np.int8),
        np.zeros((4, 5), np.float32)[:, ::2],  # neither C nor F
        np.asfortranarray(np.zeros((4, 5))),
        np.zeros(7, np.bool_),
        np.zeros((2, 3), np.int16).T,
        np.frombuffer(b"\0" * 16, np.int64),  # read-only
        np.zeros(3, np.uint64),
        3,
        -(1 << 62),
        2.5,
        True,
        np.int64(4),
        np.float32(1.5),
    ],
)
def test_arg_key_is_numbas_type(value: object) -> None:
    """The key a call is routed by equals the key of numba's own type of the value."""
    assert aot.arg_key(value) is not None
    assert aot.arg_key(value) == aot.type_key(numba.typeof(value))


def test_values_without_a_key() -> None:
    assert aot.arg_key((1, 2)) is None
    assert aot.arg_key(1 << 64) is None
    assert aot.arg_key(np.zeros(3, ">i8")) is None  # not in the machine's byte order
    assert aot.type_key(numba.typeof((1, 2))) is None


def _shipped_module() -> bool:
    """Whether the installed module serves the move generator (else the tests below skip)."""
    jit.reset()
    boards = np.zeros((1, 2, 25), np.int8)
    dice = np.ones((1, 2), np.int64)
    return bool(aot.functions(movegen._afterstates.key)) and (
        aot.arg_key(boards),
        aot.arg_key(dice),
        aot.arg_key(movegen._ZOBRIST),
    ) in aot.functions(movegen._afterstates.key)


@pytest.fixture
def shipped() -> None:
    """The installed module, current: a failure saying what to run when it is stale or
    broken (`engine.aot.problem`), a skip when there is none."""
    if not _shipped_module():
        if aot.problem():
            pytest.fail(aot.problem())
        pytest.skip("no ahead-of-time module (python -m vrhcaby.cli.warm builds it)")


def test_the_compiled_move_generator_equals_the_reference_walk(shipped: None) -> None:
    boards, dice = corpus(400, 21)
    args = (np.ascontiguousarray(boards, np.int8), np.ascontiguousarray(dice, np.int64))
    compiled = aot.functions(movegen._afterstates.key)[
        tuple(aot.arg_key(a) for a in (*args, movegen._ZOBRIST))
    ]
    after, parent = compiled(*args, movegen._ZOBRIST)
    for i, (board, roll) in enumerate(zip(boards, dice, strict=True)):
        got = {(tuple(b[0].tolist()), tuple(b[1].tolist())) for b in after[parent == i]}
        assert len(got) == int((parent == i).sum()), "a position was found twice"
        start = (tuple(board[0].tolist()), tuple(board[1].tolist()))
        assert got == reference_afterstates(start, (int(roll[0]), int(roll[1]))), start


def test_a_compiled_two_ply_hint_equals_the_jit_one(shipped: None) -> None:
    """Every kernel of the pruned 2-ply search, compiled ahead of time and on the JIT: the
    same plays, equities and probabilities to the last digit shown."""
    code = textwrap.dedent(
        """
        import sys, vrhcaby.cli.main as cli
        rc = cli.main(["hint", "4HPwATDgc/ABMA", "31", "--plies", "2", "--json"])
        print("numba" in sys.modules, file=sys.stderr)
        sys.exit(rc)
        """
    )
    runs = {}
    for flag in ("1", "0"):
        env = {**os.environ, "VRHCABY_AOT": flag}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        runs[flag] = done
    assert runs["1"].stderr.strip() == "False" and runs["0"].stderr.strip() == "True"
    assert json.loads(runs["1"].stdout) == json.loads(runs["0"].stdout)


def test_what_made_a_module_stale_is_named() -> None:
    now = {"format": aot.FORMAT, "numpy": "2.1.0", "cpu": "c", "sources": {}}
    now["sources"] = {m: "new" for m in ("m1", "m2", "m3", "m4", "m5")}
    built = {**now, "sources": {**now["sources"], "m2": "old", "m4": "old"}}
    assert aot._changed(built, now) == "m2, m4 changed"
    built = {**now, "sources": dict.fromkeys(now["sources"], "old")}
    assert aot._changed(built, now) == "m1, m2, m3 and 2 more changed"
    assert aot._changed({**now, "numpy": "1.26.4"}, now) == "numpy 2.1.0, built with 1.26.4"
    assert aot._changed({**now, "cpu": "d"}, now) == "another CPU than the build's"
    assert aot._changed({**now, "format": 1}, now) == "vrhcaby changed the module's format"
