"""The Ray backend of games between agents: chunks of work spread over a Ray cluster.

`run_ray` runs a job's chunks (a tournament pair's fixed, separately seeded chunks of
mirrored samples; a rollout's chunks of trials) as Ray tasks, at most `workers` at a time,
handing each result back as it finishes. A chunk's result depends only on the job and the
chunk, so the same seed gives the same games whatever the number of workers. The Ray
trainer (`vrhcaby.learn.ray`) joins clusters through `connect` too.

Ray is an optional dependency (``pip install 'vrhcaby[ray]'``): this module imports it
only when called, and says how to install it when it is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

INSTALL_HINT = "the ray backend needs Ray: pip install 'vrhcaby[ray]' (or 'ray[default]>=2.30')"
BACKENDS = ("local", "ray")


class Job(Protocol):
    """Work cut into chunks: `run(chunk)` is the result of one chunk, the same wherever it runs."""

    def run(self, chunk: range) -> Any: ...


def check_backend(backend: str) -> None:
    """ValueError unless `backend` is known and, for ray, Ray can be imported."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if backend == "ray":
        require_ray()


def require_ray() -> Any:
    """The `ray` module, or a ValueError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    return ray


def connect(address: str | None = None) -> Any:
    """Join the Ray cluster at `address` (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``), or
    start a local instance when None; an existing connection is kept. Returns `ray`."""
    ray = require_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except ConnectionError as exc:
            raise ValueError(f"cannot reach the Ray cluster at {address!r}: {exc}") from None
    return ray


def _run_chunk(job: Job, chunk: range) -> tuple[range, Any]:
    return chunk, job.run(chunk)


def run_ray(
    job: Job,
    chunks: Sequence[range],
    *,
    workers: int = 0,
    on_result: Callable[[range, Any], None] | None = None,
) -> bool:
    """Run `job.run(chunk)` for every chunk as a Ray task on the connected cluster (one is
    started here when none is), at most `workers` at a time (0 = the cluster's CPUs),
    passing each chunk and its result to `on_result` as it finishes; True if Ctrl-C cut it
    short (the tasks still pending are cancelled). The job goes into the object store once,
    not once per task."""
    ray = connect()
    task = ray.remote(num_cpus=1)(_run_chunk)
    shared = ray.put(job)
    window = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    todo = iter(chunks)
    pending: list[Any] = []

    def submit() -> None:
        chunk = next(todo, None)
        if chunk is not None:
            pending.append(task.remote(shared, chunk))

    try:
        for _ in range(window):
            submit()
        while pending:
            ready, _ = ray.wait(pending, num_returns=1)
            pending.remove(ready[0])
            submit()
            done = ray.get(ready[0])
            if on_result:
                on_result(*done)
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        return True
    return False
