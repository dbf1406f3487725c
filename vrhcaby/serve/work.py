"""The engine behind `vrhcaby serve`: bounded worker threads, warm agents, rollout jobs.

The network evaluation is CPU-bound, so it never runs on the event loop: each request's
work goes to a small pool of engine threads (one by default, the machine has few cores),
each with its own agents (an agent keeps buffers, so threads do not share one). At most
`Limits.queue` requests wait or run at once; one more is refused (`Busy`, HTTP 503)
instead of queueing without bound. Rollouts are jobs on a thread of their own: started,
watched, fetched and cancelled by id, at most `Limits.rollout_jobs` queued or running, at
most `Limits.rollout_trials` trials each, the last `Limits.kept_jobs` kept.

What each request computes is `vrhcaby.io.answers` / `vrhcaby.io.board_json`, the same
functions as the command line's `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import re
import tempfile
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

import engine
from agents import load_agent, parse_spec
from agents.td import CHECKPOINTS
from engine.svg import board_svg
from engine.waiting import read_position
from vrhcaby.io import answers, board_json
from vrhcaby.serve.models import HintRequest

T = TypeVar("T")

#: A shipped network's name as `td:NAME` gives it (no folders, no leading dot).
_NETWORK_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


#: Agents one thread keeps (the specs used last).
AGENTS = 8


class Busy(Exception):
    """The service has as much work queued as it takes (HTTP 503)."""


class NotFound(Exception):
    """No such rollout job (HTTP 404)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one service takes on at once: bounds that keep it answering under load."""

    #: Engine requests waiting or running at once; one more is refused as busy.
    queue: int = 64
    #: Engine threads (each with its own agents).
    threads: int = 1
    #: Trials of one rollout job.
    rollout_trials: int = 20736
    #: Rollout jobs queued or running at once.
    rollout_jobs: int = 4
    #: Finished rollout jobs kept for fetching (the oldest are forgotten first).
    kept_jobs: int = 64
    #: Checker plays of one `/analyse` request at 0, 1 and 2 plies: about ten seconds'
    #: work each (a 2-ply judge takes some 0.1 s a play on one core).
    analyse_plays: tuple[int, int, int] = (2000, 500, 100)


def served_spec(spec: str) -> str:
    """The agent spec a request may name: `td`, or `td:NAME` of a shipped network (its
    options kept), written with the network's path; ValueError for anything else, so
    that a request never makes the service open a file of its choosing."""
    name, path, _ = parse_spec(spec)
    if name != "td":
        raise ValueError(f"agent {spec!r}: the service analyses with td agents (td, td:NAME)")
    if path is None:
        return spec
    file = CHECKPOINTS / (path if path.endswith(".pt") else f"{path}.pt")
    if not _NETWORK_NAME.fullmatch(path) or not file.is_file():
        names = ", ".join(sorted(f.stem for f in CHECKPOINTS.glob("td*.pt")))
        raise ValueError(f"agent {spec!r}: not a shipped network (shipped: {names})")
    query = spec.strip().partition("?")[2]
    return f"td:{file}" + (f"?{query}" if query else "")


@dataclasses.dataclass
class RolloutJob:
    """A rollout started by a request, and what it has found so far."""

    id: str
    trials: int
    state: str = "queued"  # queued, running, done, cancelled, failed
    done: int = 0
    #: The best equity so far (of the position, or of the best play).
    equity: float | None = None
    result: dict | None = None
    error: str | None = None
    cancel: threading.Event = dataclasses.field(default_factory=threading.Event)

    def to_json(self) -> dict:
        """The job's state: `rollout --json`'s document as `result` once finished."""
        return {
            "id": self.id,
            "state": self.state,
            "trials": self.trials,
            "done": self.done,
            "equity": self.equity,
            "result": self.result,
            "error": self.error,
        }


class Service:
    """The engine threads, their agents and the rollout jobs of one server."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._engine = ThreadPoolExecutor(limits.threads, thread_name_prefix="engine")
        self._roller = ThreadPoolExecutor(1, thread_name_prefix="rollout")
        self._local = threading.local()
        self._waiting = 0
        self._jobs: collections.OrderedDict[str, RolloutJob] = collections.OrderedDict()
        self._lock = threading.Lock()

    # --- running work ------------------------------------------------------------------

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` on an engine thread, awaited; `Busy` when the queue is full."""
        if self._waiting >= self.limits.queue:
            raise Busy(f"the service is busy ({self._waiting} requests in hand); try again")
        self._waiting += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._engine, work, *args)
        finally:
            self._waiting -= 1

    def agent(self, spec: str) -> Any:
        """This thread's analysis agent of a served spec (`answers.load_analysis_agent`)."""
        return self._cached("agents", spec, answers.load_analysis_agent)

    def _rollout_agent(self, spec: str) -> Any:
        """This thread's playing agent of a served spec (`agents.load_agent`), for rollouts."""
        return self._cached("players", spec, load_agent)

    def _cached(self, kind: str, spec: str, load: Callable[[str], Any]) -> Any:
        """An agent kept by this thread: loaded once, the `AGENTS` used last kept (each
        request may name another spec, so the cache is bounded)."""
        cache = self._local.__dict__.setdefault(kind, collections.OrderedDict())
        if spec in cache:
            cache.move_to_end(spec)
            return cache[spec]
        agent = cache[spec] = load(served_spec(spec))
        while len(cache) > AGENTS:
            cache.popitem(last=False)
        return agent

    def warm(self) -> None:
        """Load the default agent and compile the kernels on the engine threads (a 0-ply
        and a 2-ply hint each), so that the first request answers as fast as the next."""
        start = HintRequest(position="4HPwATDgc/ABMA", dice="31")
        done = [
            self._engine.submit(self.hint, request.namespace())
            for request in (start, start.model_copy(update={"plies": 2}))
            for _ in range(self.limits.threads)
        ]
        for future in done:
            future.result()
        self._roller.submit(self._rollout_agent, "td").result()

    def close(self) -> None:
        """Stop the jobs and the threads (work in hand is dropped)."""
        with self._lock:
            for job in self._jobs.values():
                job.cancel.set()
        self._engine.shutdown(wait=False, cancel_futures=True)
        self._roller.shutdown(wait=False, cancel_futures=True)

    # --- the answers (on an engine thread) ------------------------------------------------

    def hint(self, args: argparse.Namespace) -> dict:
        """`hint --json`."""
        found = answers.hint(args, load=self.agent)
        shown = found.ranked[: args.candidates]
        return answers.hint_json(shown, found.dice, found.context, found.cubeful, found.rules)

    def cube(self, args: argparse.Namespace) -> dict:
        """`cube --json`."""
        ev, _, rules = answers.evaluate(args, load=self.agent)
        return answers.cube_json(ev, rules)

    def eval(self, args: argparse.Namespace) -> dict:
        """`eval --json`."""
        ev, _, rules = answers.evaluate(args, load=self.agent)
        return answers.eval_json(ev, rules)

    @staticmethod
    def moves(position: str, dice: str, variant: str) -> dict:
        """`moves --json`."""
        pos = board_json.read_playable_position(position, variant)
        roll = engine.parse_dice(dice)
        if engine.get_variant(variant).acey_deucey_bonus:
            return board_json.moves_json_ad(pos, roll)
        (answer,) = board_json.moves_json(pos.board[None], np.array([roll]))
        return answer

    @staticmethod
    def show(position: str, play: str | None) -> tuple[str, dict]:
        """`show --svg` (with `--play`'s arrows) and `show --json`."""
        pos, state = read_position(position)
        steps = board_json.parse_shown_play(play, pos.board, state).steps if play else ()
        return board_svg(pos.board, state, steps), board_json.show_json(pos.board, state)

    def analyse(self, mat: str, name: str, args: argparse.Namespace) -> dict:
        """`analyse FILE --json` of a `.mat` file's text (`vrhcaby.review`), its `path`
        the name given: every checker play and cube decision judged by a td agent."""
        from agents.td import TDAgent
        from vrhcaby import review
        from vrhcaby.io.matchfile import read_mat

        agent = self.agent(args.judge)
        if not isinstance(agent, TDAgent) or agent.acey_deucey:
            raise ValueError(f"judge {args.judge!r}: a judge is a td agent (td, td:NAME)")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / name
            path.write_text(mat, encoding="utf-8")
            try:
                match = read_mat(path)
            except ValueError as exc:  # MatError: FILE:LINE: what; FILE the name given
                raise ValueError(str(exc).replace(str(path), name)) from None
        plays = sum(t.kind == "move" for g in match.games for t in g.turns)
        most = self.limits.analyse_plays[args.plies]
        if plays > most:
            raise ValueError(
                f"{plays} checker plays: one request analyses at most {most} at "
                f"{args.plies} plies here (fewer plies, or vrhcaby analyse, for more)"
            )
        judge = review.TDJudge(agent, args.plies)
        found = review.analyse_match(match, judge, cube=args.cube, jacoby=args.jacoby)
        return dict(found.to_json(worst=args.worst), path=name)

    # --- rollout jobs --------------------------------------------------------------------

    def start_rollout(self, args: argparse.Namespace) -> RolloutJob:
        """Check a rollout's options (on the calling thread: a quick check) and queue it."""
        if args.trials > self.limits.rollout_trials:
            raise ValueError(
                f"trials {args.trials}: at most {self.limits.rollout_trials} per job here"
            )
        answers.rollout_inputs(args, load=self._rollout_agent)  # this thread's agents
        with self._lock:
            live = sum(j.state in ("queued", "running") for j in self._jobs.values())
            if live >= self.limits.rollout_jobs:
                raise Busy(f"{live} rollouts are queued or running; wait for one or cancel it")
            job = RolloutJob(uuid.uuid4().hex, args.trials)
            self._jobs[job.id] = job
            finished = [k for k, j in self._jobs.items() if j.state not in ("queued", "running")]
            for key in finished[: max(0, len(self._jobs) - self.limits.kept_jobs)]:
                del self._jobs[key]
        self._roller.submit(self._roll, job, args)
        return job

    def job(self, job_id: str) -> RolloutJob:
        """The job of an id; NotFound if there is none (or it was forgotten)."""
        with self._lock:
            if job_id not in self._jobs:
                raise NotFound(f"no rollout job {job_id!r}")
            return self._jobs[job_id]

    def cancel(self, job_id: str) -> RolloutJob:
        """Ask a job to stop: it keeps the trials finished (state `cancelled`)."""
        job = self.job(job_id)
        job.cancel.set()
        if job.state == "queued":
            job.state = "cancelled"
        return job

    def _roll(self, job: RolloutJob, args: argparse.Namespace) -> None:
        """Run a job on the rollout thread; a cancel stops it after the chunk in hand."""
        if job.cancel.is_set():
            job.state = "cancelled"
            return
        job.state = "running"

        def progress(results: list) -> None:
            best = max(results, key=lambda r: r.estimate().equity)
            job.done, job.equity = best.trials, float(best.estimate().equity)
            if job.cancel.is_set():
                raise KeyboardInterrupt  # run_trials keeps the chunks finished

        try:
            inputs = answers.rollout_inputs(args, load=self._rollout_agent)
            run = answers.run_rollout(inputs, args, progress=progress)
            job.done = run.done
            job.result = run.to_json() if run.done else None
            job.state = "cancelled" if run.interrupted else "done"
        except Exception as exc:  # a failed job says why; the service goes on
            job.error, job.state = " ".join(str(exc).split()) or type(exc).__name__, "failed"
