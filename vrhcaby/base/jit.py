"""Numba kernels compiled on first use, and the rule for when small batches skip them.

Importing numba costs about a second, which a one-off command (`vrhcaby hint`) should not
pay for a handful of positions; so kernels are `engine.jit` kernels (run from the
ahead-of-time compiled module when it is built and current, else compiled and cached on
disk by numba on their first call), and small batches stay in plain numpy until a
compiled kernel is at hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine import jit

#: The most rows evaluated in plain numpy while no compiled kernel is loaded yet.
SMALL_BATCH = 256


def in_numpy(rows: int) -> bool:
    """Whether a batch skips the kernels: a small one, while neither numba nor the
    ahead-of-time module is loaded."""
    return rows <= SMALL_BATCH and not jit.compiled()


def lazy_jit(fn: Callable | None = None, *, fastmath: bool = True) -> Any:
    """`fn` as an `engine.jit.Kernel` (numba's `njit(cache=True)`, compiled on first call,
    not at import; or its ahead-of-time compiled twin).

    `fastmath=False` keeps IEEE semantics, for kernels that must equal their numpy twin
    bit for bit.
    """
    return jit.kernel(fn, fastmath=fastmath)
