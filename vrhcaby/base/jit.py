"""Numba kernels compiled on first use, and the rule for when small batches skip them.

Importing numba costs about a second, which a one-off command (`vrhcaby hint`) should not
pay for a handful of positions; so kernels are compiled (and cached on disk) on their
first call, and small batches stay in plain numpy until something else has loaded numba.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

#: The most rows evaluated in plain numpy while numba is not loaded yet.
SMALL_BATCH = 256


def in_numpy(rows: int) -> bool:
    """Whether a batch skips the numba kernels: a small one, while numba is not loaded."""
    return rows <= SMALL_BATCH and "numba" not in sys.modules


def lazy_jit(fn: Callable | None = None, *, fastmath: bool = True) -> Callable:
    """`fn` compiled by numba (cached on disk) on its first call, not at import.

    `fastmath=False` keeps IEEE semantics, for kernels that must equal their numpy twin
    bit for bit.
    """
    if fn is None:
        return functools.partial(lazy_jit, fastmath=fastmath)
    compiled: Callable | None = None

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        nonlocal compiled
        if compiled is None:
            from numba import njit

            compiled = njit(cache=True, fastmath=fastmath)(fn)
        return compiled(*args)

    return call
