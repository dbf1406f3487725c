"""Local worker processes for `--jobs N`, safe to start from any process.

Workers are forked from multiprocessing's fork server, a fresh interpreter started once per
process, never from the caller itself. Forking the caller is only safe while it runs no
threads, and a caller that has touched Ray holds gRPC threads whose fork handlers can wait
forever ("Waiting for thread pool to idle before forking"); torch and tqdm start threads
too. The price is that what the workers share is pickled, once per worker: agents must
pickle (every built-in one does), as they must for the Ray backend.
"""

from __future__ import annotations

import multiprocessing
import signal
from multiprocessing.pool import Pool
from typing import Any

#: What the workers of the current pool were given (set in the worker, by `_start`).
SHARED: dict[str, Any] = {}

# Imported once in the fork server, so a worker starts with them instead of importing
# torch and the engine anew. '__main__' lets a script's own agents unpickle, as spawn does.
_PRELOAD = ["__main__", "agents", "agents.td", "vrhcaby.rollout", "vrhcaby.tournament"]


def _start(shared: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    SHARED.clear()
    SHARED.update(shared)


def worker_pool(processes: int, **shared: Any) -> Pool:
    """A pool of `processes` workers, each holding `shared` in `SHARED` (use it as a
    context manager, which terminates the workers on leaving)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx.Pool(processes, initializer=_start, initargs=(shared,))
