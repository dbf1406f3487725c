"""`vrhcaby moves` and `vrhcaby show`, checked against GNU Backgammon's own IDs."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from corpus import corpus

import engine
from vrhcaby.cli import main as cli

START = "4HPwATDgc/ABMA"


def run_cli(args, capsys, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_moves_json_matches_gnubg(capsys):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    boards, dice = corpus(40, 5)
    finished = 0
    for b, d in zip(boards, dice, strict=True):
        pid = gnubg_nn.position_id(b.tolist())
        code, out, err = run_cli(["moves", pid, f"{d[0]}{d[1]}", "--json"], capsys)
        if (b.sum(axis=1) == 0).any():  # a side has borne off all: nobody is on roll
            assert code == 2 and out == "" and "the game is over" in err
            finished += 1
            continue
        assert code == 0
        answer = json.loads(out)
        assert answer["position_id"] == pid and answer["dice"] == [int(d[0]), int(d[1])]
        keys = gnubg_nn.moves(b.tolist(), int(d[0]), int(d[1]))
        after = [[list(r) for r in gnubg_nn.boardfromkey(k)] for k in keys]
        # Each play: the mover still on roll, and (rows swapped) the opponent on roll.
        expected = {(gnubg_nn.position_id(a), gnubg_nn.position_id(a[::-1])) for a in after}
        if {e[0] for e in expected} == {pid}:
            expected = set()  # no legal move
        assert {(m["position_id"], m["next_position_id"]) for m in answer["moves"]} == expected
        assert len(answer["moves"]) == len(expected)
    assert finished > 0  # the corpus holds finished games


def test_moves_text_lists_plays(capsys):
    code, out, _ = run_cli(["moves", START, "3-1"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert "8/5 6/5" in lines and len(lines) == 16


def test_moves_accepts_xgid(capsys):
    code, out, _ = run_cli(
        ["moves", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "65", "--json"], capsys
    )
    assert code == 0 and "24/13" in {m["play"] for m in json.loads(out)["moves"]}


def test_moves_with_no_legal_play(capsys):
    board = np.zeros((2, 25), np.int8)
    board[1, 24] = 2
    board[1, 0] = 13
    board[0, :6] = 2
    board[0, 10] = 3
    pid = engine.position_id(board)
    code, out, _ = run_cli(["moves", pid, "55", "--json"], capsys)
    assert code == 0 and json.loads(out)["moves"] == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["moves", "XXXX", "31"], "Position ID"),
        (["moves", START, "71"], "1 to 6"),
        (["moves", START, "3"], "two dice"),
        (["moves", "//////////////", "31"], "Position ID"),
        (["moves", START], "give the dice"),
        (["show", "4HPwATDgc/ABM"], "14 characters"),
        (["moves", START, "31", "--variant", "backgammon2"], "unknown variant"),
    ],
)
def test_bad_input_is_one_line_and_status_2(args, needle, capsys):
    code, out, err = run_cli(args, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_too_many_checkers_is_rejected(capsys):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    board = [[0] * 25, [0] * 25]
    board[1][5] = 16  # sixteen checkers: GNU Backgammon encodes it, we refuse it
    pid = gnubg_nn.position_id(board)
    code, _, err = run_cli(["moves", pid, "31"], capsys)
    assert code == 2 and "16" in err


def test_moves_on_a_finished_game_says_it_is_over(capsys, monkeypatch):
    board = engine.Position.start().board.copy()
    board[0] = 0  # the side that just played has borne off all fifteen
    pid = engine.position_id(board)
    code, out, err = run_cli(["moves", pid, "31"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "the game is over: the side not on roll has borne off all its checkers" in err
    lines = f"{pid} 31\n{START} 31\n"
    code, out, _ = run_cli(["moves", "-"], capsys, stdin=lines, monkeypatch=monkeypatch)
    first, second = (json.loads(x) for x in out.splitlines())
    assert code == 2 and "game is over" in first["error"] and len(second["moves"]) == 16


def test_moves_stream(capsys, monkeypatch):
    lines = f"{START} 31\nnonsense\n{START} 6-6\n{START} 77\n"
    code, out, _ = run_cli(["moves", "-"], capsys, stdin=lines, monkeypatch=monkeypatch)
    answers = [json.loads(x) for x in out.splitlines()]
    assert code == 2 and len(answers) == 4
    assert len(answers[0]["moves"]) == 16 and len(answers[2]["moves"]) == 11
    assert "error" in answers[1] and "error" in answers[3]
    # Each streamed answer is the same as the one-position command's.
    code, out, _ = run_cli(["moves", START, "31", "--json"], capsys)
    assert json.loads(out) == answers[0]


def test_show_draws_the_board(capsys):
    code, out, _ = run_cli(["show", START + ":cAkAAAAAAAAE"], capsys)
    assert code == 0
    assert START in out and "167" in out and "BAR" in out
    rows = out.splitlines()
    # Five X checkers on the 6-point show in the column under "6".
    bottom = next(r for r in rows if r.strip().startswith("+12"))
    col = bottom.index("-6-") + 1
    stacked = [r for r in rows[rows.index(bottom) - 5 : rows.index(bottom)] if r[col] == "X"]
    assert len(stacked) == 5


def test_installed_command_runs():
    exe = [sys.executable, "-m", "vrhcaby.cli.main", "moves", START, "21"]
    res = subprocess.run(exe, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "13/11 6/5" in res.stdout.splitlines()


def test_moves_acey_deucey_variant(capsys, monkeypatch):
    code, out, _ = run_cli(["moves", START, "21", "--variant", "acey-deucey", "--json"], capsys)
    answer = json.loads(out)
    assert code == 0 and answer["moves"]
    plays = engine.legal_plays_ad(engine.Position.from_id(START), (2, 1))
    assert {m["play"] for m in answer["moves"]} == {str(p) for p in plays}
    assert any(m["extra_turn"] for m in answer["moves"])
    # Streamed answers keep the order of the input lines, errors included.
    lines = f"zz 21\n{START} 31\n"
    code, out, _ = run_cli(
        ["moves", "-", "--variant", "acey-deucey"], capsys, stdin=lines, monkeypatch=monkeypatch
    )
    first, second = (json.loads(x) for x in out.splitlines())
    assert code == 2 and "error" in first and len(second["moves"]) == 16
