"""Which agents play without a cube: said in every result table and results JSON, and a
tournament with the cube forced on (`--cube`) that includes one and an agent with cube
decisions warns on stderr (one line; among cubeless agents alone the cube is never
turned, so there is nothing to warn). Without `--cube` such pairs play cubeless."""

from __future__ import annotations

import json

import evaluate
from agents import load_agent
from vrhcaby.play.tournament import play_pair


def test_pair_results_name_the_cubeless_agents() -> None:
    pair = play_pair(load_agent("gnubg"), load_agent("random?seed=1"), games=2, seed=0)
    assert pair.cubeless == ["random?seed=1"]
    assert pair.to_json()["cubeless"] == ["random?seed=1"]
    both = play_pair(load_agent("pubeval"), load_agent("heuristic"), games=2, seed=0)
    assert both.to_json()["cubeless"] == ["pubeval", "heuristic"]


def test_cube_tournament_with_a_cubeless_agent_warns(capsys, tmp_path) -> None:
    argv = ["gnubg", "pubeval", "random?seed=1", "--games", "2", "--no-progress", "--cube"]
    assert evaluate.main([*argv, "--json", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["cube"] is True and out["cubeless_agents"] == ["pubeval", "random?seed=1"]
    assert [p["cubeless"] for p in out["pairs"]] == [
        ["pubeval"],
        ["random?seed=1"],
        ["pubeval", "random?seed=1"],
    ]
    assert json.loads((tmp_path / "results.json").read_text())["cubeless_agents"] == [
        "pubeval",
        "random?seed=1",
    ]
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: pubeval, random?seed=1 play without")

    assert evaluate.main(argv) == 0
    captured = capsys.readouterr()
    assert "without a cube (never double, always take): pubeval, random?seed=1" in captured.out
    assert len(captured.err.splitlines()) == 1


def test_no_warning_without_the_cube_or_without_cubeless_agents(capsys) -> None:
    assert evaluate.main(["gnubg", "pubeval", "--games", "2", "--no-cube"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "cube: off for every agent (--no-cube)" in captured.out
    assert evaluate.main(["gnubg", "gnubg?plies=1", "--games", "2", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["cubeless_agents"] == []
    assert evaluate.main(["pubeval", "heuristic", "--games", "2", "--cube"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "without a cube (never double, always take): " in captured.out
    assert evaluate.main(["gnubg", "pubeval", "--games", "2"]) == 0  # cubeless by default
    captured = capsys.readouterr()
    assert captured.err == "" and "cube: off in every pair" in captured.out
