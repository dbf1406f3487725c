"""The ahead-of-time compiled kernels: one extension module built by numba's `pycc`.

`build` compiles every `engine.jit.Kernel` with the argument types numba's JIT ran it with
from Python in this process (`python -m vrhcaby.cli.warm` runs the command line's
workloads first, so the module holds exactly what they use) into one extension module, beside
numba's own cache (`engine/__pycache__`, or `$VRHCABY_AOT_DIR`). A manifest beside it names
the module, each kernel's exported functions by argument types, and a stamp: the contents
of every kernel module's source, numpy's version and the CPU (the code is compiled for
this machine's CPU, as numba's JIT compiles). `functions` hands a kernel its functions only
while the stamp matches: after any change to a kernel module, or on another CPU, every
kernel goes back to numba's JIT until the next build, and `problem` says so in one line
(which `vrhcaby` prints through `on_problem`). `VRHCABY_AOT=0` turns the module off.

pycc's functions do not check their arguments (an array of another type or layout is read
as if it had the compiled one), so a call is only routed to one whose types `arg_key`
matches exactly; anything else goes to numba's JIT. Like numba's own cache, the stamp does
not follow constants a kernel module imports from modules without kernels.
"""

from __future__ import annotations

import importlib
import os
import sys
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

#: Bumped when the manifest, its stamp's fingerprints or the way arguments are keyed change.
FORMAT = 2

MANIFEST = "vrhcaby-aot.json"
_PREFIX = "vrhcaby_kernels_"

_Functions = dict[tuple[str | None, ...], Callable[..., Any]]


class Compilable(Protocol):
    """What `build` reads of a kernel (an `engine.jit.Kernel`)."""

    key: str
    py_func: Callable[..., Any]
    jit_calls: set[tuple[str | None, ...]]

    @property
    def jit(self) -> Any: ...


# Loaded once per process: kernel key -> {argument keys: compiled function}; None until
# `functions` first looks, {} when there is no usable module.
_table: dict[str, _Functions] | None = None
# Why a module that is there was not loaded (`problem`), set by `_load`.
_problem: str | None = None

#: What rebuilds the module, as every `problem` line ends.
REBUILD = "run `python -m vrhcaby.cli.warm`"
#: Called with `problem`'s line as soon as a kernel finds the module stale or broken (the
#: `vrhcaby` program prints it, before numba's JIT makes the command wait); None: silent.
on_problem: Callable[[str], None] | None = None


def directory() -> Path:
    """Where the module and its manifest live: `$VRHCABY_AOT_DIR`, else beside numba's cache
    of the engine's kernels."""
    own = os.environ.get("VRHCABY_AOT_DIR")
    return Path(own) if own else Path(__file__).parent / "__pycache__"


# ndarray.flags.num: C- and F-contiguous, aligned, writeable (what numba's type reads).
_FLAGS = 0x1 | 0x2 | 0x100 | 0x400


def route_key(
    args: tuple[Any, ...], _array: Any = np.ndarray, _flags: int = _FLAGS
) -> tuple[Any, ...]:
    """A cheap key of the calls whose arguments have the same `arg_key`s (a kernel looks
    those up once per key): an array's dtype, rank and layout flags, any other value's
    `arg_key`. (Microseconds count here: a kernel's call pays it.)"""
    return tuple(
        [(a.dtype, a.ndim, a.flags.num & _flags) if type(a) is _array else arg_key(a) for a in args]
    )


def arg_key(value: object) -> str | None:
    """numba's type of a call's argument, as the manifest spells it (`type_key`); None for
    a value the module never takes (then numba's JIT runs the call)."""
    if isinstance(value, np.ndarray):
        if not value.dtype.isnative or value.dtype.kind not in "biuf":
            return None
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        readonly = "" if flags.writeable else "r"
        return f"{value.dtype.name}[{value.ndim}{layout}{readonly}{'' if flags.aligned else 'u'}]"
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int):
        return "int64" if -(1 << 63) <= value < 1 << 63 else None
    if isinstance(value, float):
        return "float64"
    if isinstance(value, np.integer | np.floating):
        return value.dtype.name
    return None


def type_key(numba_type: Any) -> str | None:
    """`arg_key` of the values numba types as `numba_type`; None for a type it does not
    key (a tuple, a record...)."""
    from numba.core import types

    scalar = (types.Integer, types.Float, types.Boolean)
    if isinstance(numba_type, types.Array) and isinstance(numba_type.dtype, scalar):
        t = numba_type
        return f"{t.dtype}[{t.ndim}{t.layout}{'' if t.mutable else 'r'}{'' if t.aligned else 'u'}]"
    if isinstance(numba_type, scalar):
        return str(numba_type)
    return None


def _cpu() -> str:
    """What the compiled code depends on of this machine: its CPU's model and features."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            lines = [line for line in f if line.startswith(("model name", "flags"))][:2]
    except OSError:
        lines = []
    import platform

    text = "".join(lines) or f"{platform.machine()} {platform.processor()}"
    return _fingerprint(text.encode())


def _source(module: str) -> Path | None:
    """The source file of a kernel module, found without importing it."""
    loaded = sys.modules.get(module)
    if loaded is not None:
        file = getattr(loaded, "__file__", None)
        return Path(file) if file else None
    top, _, rest = module.partition(".")
    package = sys.modules.get(top)
    if package is not None:
        roots = list(getattr(package, "__path__", []))
    else:
        import importlib.util

        spec = importlib.util.find_spec(top)
        roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        base = Path(root, *rest.split(".")) if rest else Path(root)
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
    return None


def _fingerprint(data: bytes) -> str:
    """16 hex digits: the CRC-32 and the length of `data`. Enough to tell a changed
    source (or another CPU) from the one a module was built from, which is all the stamp
    guards against; and zlib costs nothing to load, where hashlib loads OpenSSL (several
    milliseconds of each cold start that loads the module)."""
    return f"{zlib.crc32(data):08x}{len(data) & 0xFFFFFFFF:08x}"


def _digest(path: Path | None) -> str | None:
    try:
        return _fingerprint(path.read_bytes()) if path else None
    except OSError:
        return None


def stamp(modules: Iterable[str]) -> dict[str, Any]:
    """What a built module must match to be used: the format, numpy's version, the CPU and
    the contents of the kernel modules' sources."""
    return {
        "format": FORMAT,
        "numpy": np.__version__,
        "cpu": _cpu(),
        "sources": {m: _digest(_source(m)) for m in sorted(modules)},
    }


def _changed(built: dict[str, Any], now: dict[str, Any]) -> str:
    """What differs between the stamp a module was `built` with and the stamp of `now`,
    in words: the kernel modules whose sources changed, numpy's version, the CPU."""
    if built.get("format") != now["format"]:
        return "vrhcaby changed the module's format"
    sources = [m for m in now["sources"] if built["sources"].get(m) != now["sources"][m]]
    if sources:
        more = f" and {len(sources) - 3} more" if len(sources) > 3 else ""
        return f"{', '.join(sources[:3])}{more} changed"
    if built.get("numpy") != now["numpy"]:
        return f"numpy {now['numpy']}, built with {built.get('numpy')}"
    return "another CPU than the build's"


def _load() -> dict[str, _Functions]:
    """The manifest's kernels with their compiled functions; {} when there is no module,
    it is stale or it fails to load (the last two say why in `problem`)."""
    import importlib.machinery
    import importlib.util
    import json

    global _problem
    _problem = None
    if os.environ.get("VRHCABY_AOT", "1") == "0":
        return {}
    place = directory()
    try:
        manifest = json.loads((place / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # never built here (or no C compiler at install): nothing to tell
    try:
        now = stamp(manifest["stamp"]["sources"])
        if manifest["stamp"] != now:
            why = _changed(manifest["stamp"], now)
            _problem = f"stale ahead-of-time kernels ({why} since the build): {REBUILD}"
            return {}
        name = manifest["module"]
        path = place / manifest["file"]
        loader = importlib.machinery.ExtensionFileLoader(name, str(path))
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return {
            key: {tuple(args): getattr(module, export) for args, export in exports}
            for key, exports in manifest["kernels"].items()
        }
    except (OSError, ImportError, KeyError, TypeError, ValueError, AttributeError) as exc:
        line = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        _problem = f"the ahead-of-time kernels in {place} do not load ({line}): {REBUILD}"
        return {}


def functions(key: str) -> _Functions:
    """The compiled functions of the kernel `key` by argument types (`arg_key`); empty
    when the module has none, or there is no usable module."""
    global _table
    if _table is None:
        _table = _load()
        if _problem and on_problem is not None:
            on_problem(_problem)
    return _table.get(key, {})


def loaded() -> bool:
    """Whether a usable module has been loaded in this process."""
    return bool(_table)


def problem() -> str | None:
    """One line saying why the module there is not used, once a kernel has looked for it
    in this process: stale (a kernel module's source, numpy or the CPU changed since
    `python -m vrhcaby.cli.warm` built it) or not loadable; None when it is used, when
    there is none, or when `VRHCABY_AOT=0` turns it off. Its kernels run on numba's JIT
    meanwhile, which costs a cold command numba's import and, for a changed source, its
    compilation (seconds)."""
    return _problem


def forget() -> None:
    """Forget the loaded table: the next `functions` looks for the module again."""
    global _table, _problem
    _table = _problem = None


def _with_kernel_flags(
    original: Callable[..., Any], by_function: dict[Any, Compilable]
) -> Callable[..., Any]:
    """pycc's `compile_extra` (`original`), compiling each kernel with its own options
    (fastmath, nogil...) where pycc would take numba's defaults."""
    flags_type: Any = importlib.import_module("numba.core.compiler").Flags

    def compile_extra(typingctx: Any, targetctx: Any, func: Any, *args: Any, **kw: Any) -> Any:
        args_, return_type, flags = args[:3]
        dispatcher = by_function[func].jit
        own = flags_type()
        dispatcher.targetdescr.options.parse_as_flags(own, dispatcher.targetoptions)
        for name in ("no_compile", "nrt", "no_cpython_wrapper", "no_cfunc_wrapper"):
            setattr(own, name, getattr(flags, name))
        return original(typingctx, targetctx, func, args_, return_type, own, *args[3:], **kw)

    return compile_extra


def build(kernels: Iterable[Compilable], place: Path | None = None) -> Path | None:
    """Compile `kernels` (all of them: the stamp covers their modules' sources) for the
    argument types numba's JIT ran them with from Python in this process while
    `engine.jit.recording` (`Kernel.jit_calls`), into one extension module in `place`
    (default `directory()`), with its manifest; older modules there are removed. Returns
    the module's path, or None when there was no such call. Takes a few seconds per
    signature."""
    import json
    import shutil
    import tempfile
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc is pending deprecation in numba
        pycc: Any = importlib.import_module("numba.pycc")
    compiler = pycc.compiler

    kernels = list(kernels)
    place = place or directory()
    entries = []
    for k in kernels:
        for signature in k.jit.nopython_signatures if k.jit_calls else ():
            keys = [type_key(t) for t in signature.args]
            if tuple(keys) in k.jit_calls:
                entries.append((k, signature, keys))
    if not entries:
        return None
    the_stamp = stamp({k.py_func.__module__ for k in kernels})
    exports: dict[str, list[Any]] = {}
    for i, (k, _, keys) in enumerate(entries):
        exports.setdefault(k.key, []).append([keys, f"k{i}"])
    text = json.dumps([the_stamp, exports, [str(s) for _, s, _ in entries]], sort_keys=True)
    name = _PREFIX + _fingerprint(text.encode())
    place.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=place) as tmp:
        cc = pycc.CC(name)
        cc.output_dir = tmp
        cc.target_cpu = "host"
        for i, (k, signature, _) in enumerate(entries):
            cc.export(f"k{i}", signature)(k.py_func)
        original = compiler.compile_extra
        compiler.compile_extra = _with_kernel_flags(original, {k.py_func: k for k, _, _ in entries})
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cc.compile()
        finally:
            compiler.compile_extra = original
        file = Path(tmp) / str(cc.output_file)
        shutil.move(file, place / file.name)
        manifest = {"module": name, "file": file.name, "stamp": the_stamp, "kernels": exports}
        (Path(tmp) / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        os.replace(Path(tmp) / MANIFEST, place / MANIFEST)
    for old in place.glob(_PREFIX + "*"):
        if not old.name.startswith(name):
            old.unlink(missing_ok=True)
    return place / file.name
