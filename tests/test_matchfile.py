"""Saved games: JSON lines round trip, and `.mat` files that GNU Backgammon imports with
exactly the recorded moves, dice, positions and cube actions."""

from __future__ import annotations

import pytest
from helpers_agents import CubeBot

from agents import load_agent
from vrhcaby.io import matchfile
from vrhcaby.play.tournament import PairSettings, play_pair

gnubg = pytest.importorskip("gnubg")


def gnubg_games(path) -> tuple[dict, list]:
    gnubg.command(f"import mat {path}")
    m = gnubg.match()
    return m["match-info"], m["games"]


def check_against_gnubg(recs: list[dict], path) -> None:
    _, games = gnubg_games(path)
    assert len(games) == len(recs)
    for rec, game in zip(recs, games, strict=True):
        # gnubg calls the left-hand player (agent A) X.
        who = {rec["a_seat"]: "X", 1 - rec["a_seat"]: "O"}
        ours = []
        for t in rec["turns"]:
            if "action" in t:
                ours.append((t["action"], who[t["player"]]))
            else:
                moves = sorted(tuple(s[:2]) for s in t["steps"])
                ours.append(
                    ("move", who[t["player"]], tuple(sorted(t["dice"])), moves, t["position_id"])
                )
        theirs = []
        for e in game["game"]:
            if e["action"] == "move":
                theirs.append(
                    (
                        "move",
                        e["player"],
                        tuple(sorted(e["dice"])),
                        sorted(tuple(m) for m in e.get("move") or ()),
                        e["board"],
                    )
                )
            elif e["action"] in ("double", "take", "drop"):
                theirs.append((e["action"], e["player"]))
        assert theirs == ours
        assert game["info"]["winner"] == who[rec["winner"]]


def test_money_session_imports_into_gnubg(tmp_path):
    pair = play_pair(
        load_agent("pubeval"),
        load_agent("random?seed=1"),
        games=6,
        seed=3,
        settings=PairSettings(record=True),
    )
    recs = pair.records(3)
    matchfile.append_jsonl(tmp_path / "g.jsonl", recs)
    assert matchfile.read_jsonl(tmp_path / "g.jsonl") == recs
    matchfile.export_mat(recs, tmp_path / "s.mat")
    check_against_gnubg(recs, tmp_path / "s.mat")


def test_match_with_cube_actions_imports_into_gnubg(tmp_path):
    pair = play_pair(
        CubeBot("alice"),
        CubeBot("bob"),
        games=4,
        seed=8,
        settings=PairSettings(match_to=7, record=True),
    )
    recs = pair.records(8)
    actions = {t.get("action") for r in recs for t in r["turns"]}
    assert {"double", "take", "drop"} <= actions
    for key in {(r["sample"], r["copy"]) for r in recs}:
        match = [r for r in recs if (r["sample"], r["copy"]) == key]
        matchfile.export_mat(match, tmp_path / "m.mat")
        info, games = gnubg_games(tmp_path / "m.mat")
        assert info["match-length"] == 7
        assert (info["X"]["name"], info["O"]["name"]) == ("alice", "bob")
        check_against_gnubg(match, tmp_path / "m.mat")
        final = games[-1]["info"]
        a_won = match[-1]["winner"] == match[-1]["a_seat"]
        assert final["winner"] == ("X" if a_won else "O")


def test_export_refuses_other_variants(tmp_path):
    pair = play_pair(
        load_agent("pubeval"),
        load_agent("random"),
        games=2,
        seed=0,
        settings=PairSettings(variant="nackgammon", record=True),
    )
    with pytest.raises(ValueError, match="standard"):
        matchfile.export_mat(pair.records(0), tmp_path / "n.mat")
