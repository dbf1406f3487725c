"""Numba kernels that cost nothing until they run, and run ahead-of-time compiled code when
there is some.

`kernel` turns a function written for numba into a `Kernel`. Importing it costs nothing;
its first call looks for an ahead-of-time compiled twin (`engine.aot`: an extension module
that `python -m vrhcaby.cli.warm` builds at install, loaded in a few milliseconds without
importing numba) that holds the arguments' exact types and was built from the current
sources. Any other call goes to numba's JIT dispatcher (`numba.njit(cache=True)`, loaded
from numba's on-disk cache), which costs about a second for a process's first kernel:
importing numba, its type registries and the cached code. A one-off command
(`vrhcaby hint`) saves that second.

A long run goes back to numba's JIT after `LONG_RUN` calls of compiled code: a call to
the module's code costs a few microseconds more than numba's (the arguments' types are
checked in Python, and pycc's returned arrays are built more slowly), which a run of
millions of calls (a tournament, training) would pay many times over the second numba
takes to load. So a long run costs what it cost before the module existed, plus at most
`LONG_RUN` times those microseconds (a few hundredths of a second).

Kernels call each other as numba functions: numba types a `Kernel` as its dispatcher
(`_numba_type_`) and inlines one made with `inline="always"` (`targetoptions`, `py_func`),
so kernel bodies are written exactly as for `numba.njit`. A body may use a numba-only name
that must not be imported before numba is needed: `numba_globals` binds it in the
function's module when numba first compiles there.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from engine import aot

#: Every kernel made so far, by `Kernel.key`: what `engine.aot.build` compiles.
KERNELS: dict[str, Kernel] = {}

#: Calls of ahead-of-time compiled code in a process after which every kernel runs on
#: numba's JIT: the process is a long one.
LONG_RUN = 10_000

_aot_calls = 0

#: Whether calls that numba's JIT runs note their argument types (`Kernel.jit_calls`), as
#: `python -m vrhcaby.cli.warm` has them noted for `engine.aot.build`.
recording = False


class Kernel:
    """A function compiled by numba on demand, or run from the ahead-of-time module."""

    def __init__(
        self, fn: Callable[..., Any], options: dict[str, Any], numba_globals: Mapping[str, str]
    ) -> None:
        functools.update_wrapper(self, fn)
        self.py_func = fn
        #: numba's `njit` options (`cache` aside); numba's inliner reads `inline` here.
        self.targetoptions = options
        self.numba_globals = dict(numba_globals)
        #: The module-qualified name, which the ahead-of-time module's manifest uses.
        self.key = f"{fn.__module__}.{fn.__qualname__}"
        #: The argument types (`engine.aot.arg_key`) of the calls numba's JIT ran from
        #: Python while `recording`: the signatures worth compiling ahead of time.
        self.jit_calls: set[tuple[str | None, ...]] = set()
        self._aot: dict[tuple[str | None, ...], Callable[..., Any]] | None = None
        # `engine.aot.route_key` of the calls so far -> their compiled function, or None.
        self._routes: dict[tuple[Any, ...], Callable[..., Any] | None] = {}
        self._jit: Any = None
        KERNELS[self.key] = self

    def __call__(self, *args: Any) -> Any:
        global _aot_calls
        table = self._aot
        if table is None:
            table = self._aot = aot.functions(self.key) if _aot_calls < LONG_RUN else {}
        if table:
            key = aot.route_key(args)
            try:
                compiled = self._routes[key]
            except KeyError:  # the first call with these types: look them up once
                compiled = self._routes[key] = table.get(tuple(map(aot.arg_key, args)))
            if compiled is not None:
                _aot_calls += 1
                if _aot_calls >= LONG_RUN:
                    _leave_aot()
                return compiled(*args)
        if recording:
            self.jit_calls.add(tuple(map(aot.arg_key, args)))
        return self.jit(*args)

    @property
    def jit(self) -> Any:
        """numba's dispatcher of the function (numba is imported on first use)."""
        if self._jit is None:
            from numba import njit

            for k in list(KERNELS.values()):  # the names their bodies take from numba
                for name, module in k.numba_globals.items():
                    k.py_func.__globals__.setdefault(
                        name, getattr(importlib.import_module(module), name)
                    )
            self._jit = njit(cache=True, **self.targetoptions)(self.py_func)
        return self._jit

    @property
    def _numba_type_(self) -> Any:
        """numba's type of the kernel inside other kernels: its dispatcher's."""
        return self.jit._numba_type_

    def __repr__(self) -> str:
        return f"<kernel {self.key}>"


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def kernel(
    fn: _F,
    *,
    fastmath: bool = ...,
    nogil: bool = ...,
    inline: str | None = ...,
    numba_globals: Mapping[str, str] | None = ...,
) -> _F: ...
@overload
def kernel(
    fn: None = None,
    *,
    fastmath: bool = ...,
    nogil: bool = ...,
    inline: str | None = ...,
    numba_globals: Mapping[str, str] | None = ...,
) -> Callable[[_F], _F]: ...
def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    fastmath: bool = False,
    nogil: bool = False,
    inline: str | None = None,
    numba_globals: Mapping[str, str] | None = None,
) -> Any:
    """`fn` as a `Kernel`: numba's `njit(cache=True, ...)` with these options, compiled
    (or loaded from the ahead-of-time module) on first use rather than at import. Typed
    as `fn` itself, as `numba.njit` is.

    `numba_globals` maps names the body uses to the numba modules that define them (bound
    when numba first compiles a kernel, so importing the module does not load numba).
    """
    if fn is None:
        return functools.partial(
            kernel, fastmath=fastmath, nogil=nogil, inline=inline, numba_globals=numba_globals
        )
    options: dict[str, Any] = {"fastmath": fastmath, "nogil": nogil}
    if inline is not None:
        options["inline"] = inline
    return Kernel(fn, options, numba_globals or {})


def _leave_aot() -> None:
    """Every kernel's next call goes to numba's JIT (until `reset`)."""
    for k in KERNELS.values():
        k._aot = {}


def reset() -> None:
    """Forget the ahead-of-time module, what each kernel found in it and the count of
    calls to it: the next call looks for it again (after a build, or a change of
    `$VRHCABY_AOT`)."""
    global _aot_calls
    _aot_calls = 0
    aot.forget()
    for k in KERNELS.values():
        k._aot = None
        k._routes.clear()


def compiled() -> bool:
    """Whether compiled kernels are at hand without a second's wait: numba or the
    ahead-of-time module is loaded. Small batches take a numpy path until then."""
    return "numba" in sys.modules or aot.loaded()
