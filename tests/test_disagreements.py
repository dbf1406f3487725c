"""bench/disagreements.py: agents compared where their plays differ, on the turns a
tournament's first agent played; checked against the games' own records and a plain
recount with the judge."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from helpers_bench import bench_script

import engine
from agents import load_agent
from vrhcaby.cli import main as cli
from vrhcaby.play.judge import gnubg_equities

pytest.importorskip("gnubg_nn")
disagreements = bench_script("disagreements")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("disagree") / "run"
    argv = ["tournament", "pubeval", "heuristic", "--games", "6", "--seed", "3", "--jobs", "1"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main([*argv, "--no-progress", "--out", str(out)]) in (0, None)
    return out


def test_the_turns_read_are_the_first_agents(folder: Path):
    """Each turn read is one pubeval (the first agent) played, in either seat: pubeval's
    own play of it leaves the board the record's next turn starts from."""
    boards, dice, games, spec = disagreements.first_agent_turns(folder)
    assert (games, spec) == (6, "pubeval") and len(boards) > 60
    following = set()
    for line in (folder / "games.jsonl").read_text().splitlines():
        turns = json.loads(line)["turns"]
        following |= {t["position_id"] for t in turns[1:]}
    played = load_agent("pubeval").choose_boards(boards, dice)
    reached = [engine.Position(np.ascontiguousarray(a[::-1])).position_id() for a in played]
    ends = sum(engine.game_value(played[i : i + 1])[0] != 0 for i in range(len(played)))
    assert sum(r in following for r in reached) == len(reached) - ends


def test_the_printed_gain_is_the_judges_on_the_plays_that_differ(folder: Path, tmp_path):
    out = tmp_path / "d.json"
    argv = [str(folder), "pubeval", "heuristic", "pubeval", "--positions", "40"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert (
            disagreements.main([*argv, "--judge-plies", "0", "--seed", "2", "--json", str(out)])
            == 0
        )
    found = json.loads(out.read_text())
    assert found["agents"]["pubeval"]["differs"] == 0
    # A plain recount: the same 40 turns drawn, each agent's play, gnubg 0-ply's equities.
    boards, dice, _, _ = disagreements.first_agent_turns(folder)
    choice = disagreements.with_choice(boards, dice)
    rows = np.sort(np.random.default_rng(2).choice(choice, 40, replace=False))
    gains = []
    for b, d in zip(boards[rows], dice[rows], strict=True):
        mine = load_agent("heuristic").choose_boards(b[None], d[None])
        base = load_agent("pubeval").choose_boards(b[None], d[None])
        gains.append(
            0.0
            if (mine == base).all()
            else float(gnubg_equities(mine)[0] - gnubg_equities(base)[0])
        )
    heuristic = found["agents"]["heuristic"]
    assert heuristic["differs"] == sum(g != 0 for g in gains) > 0
    assert heuristic["gain_per_decision"][0] == pytest.approx(np.mean(gains), abs=1e-9)


def test_a_folder_without_games_is_one_line(tmp_path, capsys):
    assert disagreements.main([str(tmp_path), "pubeval", "heuristic"]) == 2
    err = capsys.readouterr().err
    assert "no games.jsonl" in err and err.count("\n") == 1
