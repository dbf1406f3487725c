"""Local worker processes for `--jobs N`, safe to start after Ray.

Workers are normally forked from the caller: they start at once, inherit the agents
without pickling, and a script need not guard its top level with ``if __name__ ==
"__main__"``. A process that has loaded gRPC (Ray does, and its threads outlive
`ray.shutdown()`) must not fork: gRPC's fork handlers can wait forever for its threads to
idle ("Waiting for thread pool to idle before forking", grpc/grpc#31885). Such a process
gets its workers from multiprocessing's fork server, a fresh interpreter, instead; what
the workers share is then pickled, once per worker, as it is for the Ray backend, and a
script's top level must be guarded, as for any spawned process.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from multiprocessing.pool import Pool
from typing import Any

#: What the workers of the current pool were given (set in each worker by `_start`).
SHARED: dict[str, Any] = {}

#: Modules whose presence makes forking this process unsafe.
FORK_UNSAFE = ("grpc", "ray")

# Imported once in the fork server, so that a worker starts with them instead of
# importing torch and the engine anew. (Each worker still runs the caller's script as
# '__mp_main__', which is where a script's own agent classes unpickle from.)
_PRELOAD = ["agents", "agents.td", "vrhcaby.rollout", "vrhcaby.tournament"]


def start_method() -> str:
    """'fork', or 'forkserver' once this process has loaded gRPC (through Ray or not)."""
    return "forkserver" if any(m in sys.modules for m in FORK_UNSAFE) else "fork"


def _start(shared: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    SHARED.clear()
    SHARED.update(shared)


def worker_pool(processes: int, **shared: Any) -> Pool:
    """A pool of `processes` workers, each holding `shared` in `SHARED` (use it as a
    context manager, which terminates the workers on leaving)."""
    method = start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(_PRELOAD)
    return ctx.Pool(processes, initializer=_start, initargs=(shared,))
