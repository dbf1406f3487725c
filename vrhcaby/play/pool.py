"""Local worker processes for `--jobs N`: safe to start after Ray, and never left waiting
for a worker that died.

Workers are normally forked from the caller: they start at once, inherit the agents
without pickling, and a script need not guard its top level with ``if __name__ ==
"__main__"``. A process that has loaded gRPC (Ray does, and its threads outlive
`ray.shutdown()`) must not fork: gRPC's fork handlers can wait forever for its threads to
idle ("Waiting for thread pool to idle before forking", grpc/grpc#31885). Such a process
gets its workers from multiprocessing's fork server, a fresh interpreter, instead; what
the workers share is then pickled, once per worker, as it is for the Ray backend, and a
script's top level must be guarded, as for any spawned process.

The standard library's pools do not serve. `multiprocessing.Pool` replaces a killed
worker (the OOM killer's victim, say) and waits forever for the task it held; here that is
a `WorkerDied` error. `concurrent.futures.ProcessPoolExecutor` (with the same fork or
forkserver context, `SHARED` filled by its initializer) was tried against
tests/test_pool.py and passes all but the dead-worker tests: its `BrokenProcessPool` says
neither which worker ended nor how ("A process in the process pool was terminated
abruptly..."; Python 3.11 keeps the exit code in private attributes only), so
`test_a_worker_that_dies_is_an_error_not_a_hang` ("exited (3)", "killed by SIGKILL") and
`test_the_command_line_reports_a_dead_worker_in_one_line` fail. Nor can it stop a worker
that is busy (`terminate_workers` is Python 3.14's): leaving it on Ctrl-C or on an error
waits for every running task (a rollout's or a tournament's chunk) to finish, where
`close` here terminates them at once.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkServerContext

#: What the workers were given (set in each worker process).
SHARED: dict[str, Any] = {}

#: Modules whose presence makes forking this process unsafe.
FORK_UNSAFE = ("grpc", "ray")

# Imported once in the fork server, so that a worker starts with them instead of
# importing torch and the engine anew. (Each worker still runs the caller's script as
# '__mp_main__', which is where a script's own agent classes unpickle from.)
_PRELOAD = ["agents", "agents.td", "vrhcaby.play.rollout", "vrhcaby.play.tournament"]

_END = object()  # no more tasks (None may be a task)

#: The signal by which a pool asks its busy workers for the finished part of their tasks.
CUT_SHORT = signal.SIGUSR1

_cut_short = False  # set in a worker by `CUT_SHORT`, cleared when its next task starts


def stop_requested() -> bool:
    """Whether this worker's pool asked it to cut its task short (`WorkerPool.cut_short`):
    a task that can stop part way (a tournament's chunk) then returns what it finished.
    Always False outside a worker."""
    return _cut_short


def _on_cut_short(_signum: int, _frame: object) -> None:
    global _cut_short
    _cut_short = True


def chunks(total: int, size: int) -> Iterator[range]:
    """`range(total)` cut into consecutive ranges of `size` (the last may be shorter): the
    units of work, and of seeding, that the workers and Ray are handed."""
    for lo in range(0, total, size):
        yield range(lo, min(lo + size, total))


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is a KeyboardInterrupt or came from one. A Ctrl-C (or a SIGTERM that
    `StopSignals` turns into one) raised while numba unpickles a compiled function's
    constants surfaces as a SystemError caused by the KeyboardInterrupt; the work loops
    that keep what they finished on an interrupt treat both alike."""
    link: BaseException | None = exc
    while link is not None:
        if isinstance(link, KeyboardInterrupt):
            return True
        link = link.__cause__ or link.__context__
    return False


def growing_chunks(total: int, size: int) -> list[range]:
    """`range(total)` cut into consecutive ranges of 1, 2, 4, ... doubling while below
    `size`, then `size` each: the units of work of rollouts and tournaments. Work in
    lockstep ends together, so a first unit of full size shows no progress and keeps
    nothing at a Ctrl-C for as long as it takes (minutes for a 1-ply tournament's 128
    games, or a rollout's 216 trials); the small first ones end within seconds, and the
    later ones keep the batches large."""
    out: list[range] = []
    lo, step = 0, 1
    while lo < total:
        out.append(range(lo, min(lo + min(step, size), total)))
        lo, step = out[-1].stop, 2 * step
    return out


class WorkerDied(ChildProcessError):
    """A worker process ended while the pool was open."""


def start_method() -> Literal["fork", "forkserver"]:
    """'fork', or 'forkserver' once this process has loaded gRPC (through Ray or not)."""
    return "forkserver" if any(m in sys.modules for m in FORK_UNSAFE) else "fork"


def _how_it_ended(exitcode: int) -> str:
    if exitcode >= 0:
        return f"exited ({exitcode})"
    known = {s.value: s.name for s in signal.Signals}
    return f"was killed by {known.get(-exitcode, f'signal {-exitcode}')}"


def _serve(conn: Connection, fn: Callable[[Any], Any], shared: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler forked from the parent
    signal.signal(CUT_SHORT, _on_cut_short)
    SHARED.update(shared)
    global _cut_short
    while True:
        task = conn.recv()
        _cut_short = False
        try:
            out = (True, fn(task))
        except Exception as exc:
            exc.add_note("in a worker process:\n" + traceback.format_exc().rstrip())
            out = (False, exc)
        try:
            conn.send(out)
        except Exception as exc:  # a result or exception that does not pickle
            conn.send((False, RuntimeError(f"in a worker process: {exc!r}")))


class WorkerPool:
    """`processes` worker processes that each run `fn` on one task at a time, with
    `shared` in their `SHARED`. Use as a context manager: leaving it (Ctrl-C or an error
    included) terminates the workers."""

    def __init__(self, processes: int, fn: Callable[[Any], Any], **shared: Any) -> None:
        ctx: ForkContext | ForkServerContext
        if start_method() == "forkserver":
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(_PRELOAD)
        else:
            ctx = multiprocessing.get_context("fork")
        self._workers: list[tuple[Any, Connection]] = []
        #: The workers holding a task, by their end of the pipe.
        self._busy: dict[Connection, Any] = {}
        try:
            for _ in range(processes):
                here, there = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(there, fn, shared), daemon=True)
                proc.start()
                there.close()
                self._workers.append((proc, here))
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers, whatever they are doing."""
        for proc, conn in self._workers:
            if proc.is_alive():
                proc.terminate()
            proc.join()
            conn.close()
        self._workers = []

    def imap_unordered(self, tasks: Iterable[Any]) -> Iterator[Any]:
        """`fn(task)` for every task, in the order they finish. An exception raised by
        `fn` is raised here; a worker that ends while the pool is open (workers only end
        when it closes) raises `WorkerDied`."""
        todo = iter(tasks)
        busy = self._busy

        def died(proc: Any) -> WorkerDied:
            proc.join()
            how = _how_it_ended(proc.exitcode)
            return WorkerDied(f"worker process {proc.pid} {how} before finishing (out of memory?)")

        def hand_out(proc: Any, conn: Connection) -> None:
            task = next(todo, _END)
            if task is not _END:
                try:
                    conn.send(task)
                except OSError:
                    raise died(proc) from None
                busy[conn] = proc

        for proc, conn in self._workers:
            hand_out(proc, conn)
        while busy:
            for ready in wait([*busy, *(p.sentinel for p in busy.values())]):
                if ready not in busy:  # a sentinel: that worker's process ended
                    proc = next((p for p in busy.values() if p.sentinel == ready), None)
                    if proc is not None:
                        raise died(proc)
                    continue
                proc = busy.pop(ready)
                try:
                    ok, value = ready.recv()
                except EOFError:
                    raise died(proc) from None
                if not ok:
                    raise value
                hand_out(proc, ready)
                yield value

    def cut_short(self, timeout: float = 10.0) -> Iterator[Any]:
        """After an interrupt of `imap_unordered`: ask every busy worker to cut its task
        short (`CUT_SHORT`, see `stop_requested`) and yield what each returns within
        `timeout` seconds; a worker that fails, dies or is late is left to `close`."""
        busy, self._busy = self._busy, {}
        for proc in busy.values():
            with contextlib.suppress(OSError):
                os.kill(proc.pid, CUT_SHORT)
        deadline = time.monotonic() + timeout
        while busy and (left := deadline - time.monotonic()) > 0:
            for ready in wait(list(busy), left):
                assert isinstance(ready, Connection)
                del busy[ready]
                try:
                    ok, value = ready.recv()
                except Exception:  # a reply cut by the interrupt, or a dead worker
                    continue
                if ok:
                    yield value
