"""`--jobs N` workers: forked from the caller, except once it has loaded gRPC (Ray), whose
fork handlers can hang a fork; then from a fork server, given agents that pickle. A worker
that dies, or raises, ends the run with an error instead of a hang."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from race_evaluator import RaceEvaluator

import engine
from agents import load_agent
from agents.td import TDAgent
from vrhcaby.play import pool
from vrhcaby.play.rollout import Settings, rollout_afterstates
from vrhcaby.play.tournament import PairSettings, play_pair, run_pair

ROOT = Path(__file__).resolve().parents[1]

_FORKS: list[int] = []
os.register_at_fork(before=lambda: _FORKS.append(os.getpid()))


def _forks_of_this_process() -> int:
    return _FORKS.count(os.getpid())


METHODS = ["fork", "forkserver"]


def use(monkeypatch, method: str) -> None:
    if method == "fork" and pool.start_method() != "fork":
        pytest.skip("this process has loaded gRPC: forking it could hang")
    monkeypatch.setattr(pool, "start_method", lambda: method)


def test_a_process_forks_its_workers_until_it_loads_grpc(monkeypatch):
    for name in pool.FORK_UNSAFE:
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert pool.start_method() == "fork"
    monkeypatch.setitem(sys.modules, "grpc", object())
    assert pool.start_method() == "forkserver"


@pytest.mark.parametrize("method", METHODS)
def test_ctrl_c_on_two_processes_keeps_the_finished_games(monkeypatch, method):
    use(monkeypatch, method)
    seen = []

    def press_ctrl_c(result):
        seen.append(result)
        if len(seen) == 2 * 64:  # the first chunk's games are in
            raise KeyboardInterrupt

    a, b = load_agent("pubeval"), load_agent("heuristic")
    games, interrupted = run_pair(
        a, b, samples=64 * 40, seed=2, settings=PairSettings(), jobs=2, on_result=press_ctrl_c
    )
    assert interrupted
    assert 2 * 64 <= len(games) < 2 * 64 * 40


@pytest.mark.parametrize("method", METHODS)
def test_workers_return_every_result_and_end_with_the_pool(monkeypatch, method):
    use(monkeypatch, method)
    with pool.WorkerPool(2, abs) as workers:
        assert sorted(workers.imap_unordered(range(-20, 0))) == list(range(1, 21))
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("end", "code", "said"),
    [(os._exit, 3, "exited (3)"), (signal.raise_signal, signal.SIGKILL, "killed by SIGKILL")],
)
def test_a_worker_that_dies_is_an_error_not_a_hang(monkeypatch, method, end, code, said):
    use(monkeypatch, method)
    with (
        pytest.raises(pool.WorkerDied, match=re.escape(said)),
        pool.WorkerPool(2, end) as workers,
    ):
        list(workers.imap_unordered([code, code, code]))
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("method", METHODS)
def test_an_error_in_a_worker_is_raised_with_its_traceback(monkeypatch, method):
    use(monkeypatch, method)
    with (
        pytest.raises(ValueError, match="invalid literal") as caught,
        pool.WorkerPool(2, int) as workers,
    ):
        list(workers.imap_unordered(["1", "2", "x", "4"]))
    assert any("in a worker process" in note for note in caught.value.__notes__)
    assert multiprocessing.active_children() == []


def _die(task):
    os._exit(9)


def test_the_command_line_reports_a_dead_worker_in_one_line(monkeypatch, capsys):
    from vrhcaby.cli import main as cli
    from vrhcaby.play import tournament

    use(monkeypatch, "fork")  # the workers inherit the patched chunk player
    monkeypatch.setattr(tournament, "_worker_chunk", _die)
    argv = ["tournament", "pubeval", "random", "--games", "300", "--jobs", "2", "--no-progress"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "worker process" in err and "exited (9)" in err, err


def test_after_grpc_a_tournament_on_two_processes_never_forks_the_caller():
    pytest.importorskip("grpc")
    a, b = load_agent("pubeval"), load_agent("heuristic")
    before = _forks_of_this_process()
    two = play_pair(a, b, games=260, seed=5, jobs=2)
    assert _forks_of_this_process() == before
    one = play_pair(a, b, games=260, seed=5)
    assert (two.ppg, two.wins) == (one.ppg, one.wins)


def test_after_grpc_a_rollout_on_two_processes_never_forks_the_caller():
    pytest.importorskip("grpc")
    a = engine.legal_plays(engine.Position.start(), (3, 1))[0].position.board
    settings = Settings(trials=32, chunk=8, truncate=8, seed=3)
    before = _forks_of_this_process()
    (two,) = rollout_afterstates(a[None], TDAgent(RaceEvaluator()), settings=settings, jobs=2)
    assert _forks_of_this_process() == before
    (one,) = rollout_afterstates(a[None], TDAgent(RaceEvaluator()), settings=settings)
    np.testing.assert_array_equal(two.raw, one.raw)


def run_script(path: Path, text: str) -> list[str]:
    """Run `text` as a fresh script; the words it printed."""
    path.write_text(textwrap.dedent(text))
    done = subprocess.run(
        [sys.executable, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_script_without_a_main_guard_plays_on_two_processes(tmp_path):
    printed = run_script(
        tmp_path / "unguarded.py",
        """
            from agents import load_agent
            from vrhcaby.play.tournament import play_pair
            r = play_pair(load_agent("pubeval"), load_agent("heuristic"), games=260, seed=1, jobs=2)
            print(r.games)
        """,
    )
    assert printed == ["260"]


def test_after_grpc_a_scripts_own_agent_plays_on_two_processes(tmp_path):
    pytest.importorskip("grpc")
    printed = run_script(
        tmp_path / "own_agent.py",
        """
            import grpc
            from agents import load_agent
            from agents.pubeval import PubevalAgent
            from vrhcaby.play.pool import start_method
            from vrhcaby.play.tournament import play_pair

            class Mine(PubevalAgent):
                name = "mine"

            if __name__ == "__main__":
                two = play_pair(Mine(), load_agent("heuristic"), games=260, seed=1, jobs=2)
                one = play_pair(Mine(), load_agent("heuristic"), games=260, seed=1)
                print(start_method(), two.games, two.ppg == one.ppg)
        """,
    )
    assert printed == ["forkserver", "260", "True"]


@pytest.mark.parametrize(
    "spec", ["random?seed=4", "heuristic", "pubeval", "td", "td?plies=1", "gnubg?plies=0"]
)
def test_every_built_in_agent_pickles_and_plays_as_before(spec):
    if spec.startswith("gnubg"):
        pytest.importorskip("gnubg_nn")
    agent = load_agent(spec)
    copy = pickle.loads(pickle.dumps(agent))
    assert copy.name == agent.name
    pos = engine.Position.start()
    rng = np.random.default_rng(1)
    boards = []
    for _ in range(6):
        plays = engine.legal_plays(pos, (6, 1))
        pos = plays[int(rng.integers(len(plays)))].position.flip()
        boards.append(pos.board)
    dice = np.array([[6, 1], [5, 3], [4, 4], [2, 1], [6, 5], [3, 3]])
    boards = np.stack(boards)  # a random agent's copy draws the same stream
    np.testing.assert_array_equal(
        copy.choose_boards(boards, dice), agent.choose_boards(boards, dice)
    )


def test_an_interrupt_that_numba_wraps_still_counts_as_one():
    """A SIGINT landing inside numba's unpickling surfaces as a SystemError caused by the
    KeyboardInterrupt: the rollout and tournament loops must still keep what finished."""
    from vrhcaby.play.pool import caused_by_interrupt as interrupted

    def wrapped(inner: BaseException) -> SystemError:
        try:
            try:
                raise inner
            except BaseException as exc:
                raise SystemError("returned a result with an exception set") from exc
        except SystemError as outer:
            return outer

    assert interrupted(KeyboardInterrupt())
    assert interrupted(wrapped(KeyboardInterrupt()))
    assert not interrupted(wrapped(ValueError("a real error")))
    assert not interrupted(SystemError("plain"))
