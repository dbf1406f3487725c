"""`vrhcaby tournament` and `python evaluate.py`: options, output, saved files, errors."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import evaluate
from vrhcaby.cli import tournament as command
from vrhcaby.io import matchfile

ROOT = Path(__file__).resolve().parents[1]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["tournament", *argv])


def test_parser_defaults_and_options():
    args = parse(
        [
            "pubeval",
            "random",
            "--games",
            "10",
            "--match-to",
            "5",
            "--no-cube",
            "--jacoby",
            "--jobs",
            "2",
            "--variant",
            "nackgammon",
            "--seed",
            "3",
        ]
    )
    assert args.func is command.run
    assert (args.games, args.match_to, args.cube, args.jacoby, args.jobs, args.seed) == (
        10,
        5,
        False,
        True,
        2,
        3,
    )
    assert args.variant == "nackgammon" and args.mirror
    # No --cube: decided per pair (vrhcaby.cli.tournament.pair_cube).
    assert parse(["a", "b"]).cube is None and parse(["a", "b"]).games == 1000


def test_money_games_follow_gnubg_rules_unless_told(capsys):
    # Jacoby on by default, as in GNU Backgammon: pubeval never doubles, so with the rule
    # (and the cube forced on between these cubeless agents) every gammon counts single;
    # --no-jacoby counts them double.
    base = ["pubeval", "random?seed=3", "--games", "20", "--seed", "6", "--jobs", "1", "--cube"]
    for flags, jacoby in (([], True), (["--jacoby"], True), (["--no-jacoby"], False)):
        assert command.run(parse([*base, "--json", *flags])) == 0
        out = json.loads(capsys.readouterr().out)
        rules = out["rules"]
        assert rules == {"match_to": 0, "cube": True, "jacoby": jacoby, "beavers": True}
        pair = out["pairs"][0]
        assert pair["gammons"] != [0, 0]  # the check below has gammons to count
        # Points a game: the ppg over single-counted gammons is the wins' difference.
        wins = pair["wins"]
        single = (wins[0] - wins[1]) / pair["games"]
        assert (pair["ppg"] == pytest.approx(single)) == jacoby
    assert command.run(parse(base)) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "money games with the cube, Jacoby rule, beavers allowed"
    assert command.run(parse([*base, "--match-to", "3"])) == 0
    assert capsys.readouterr().out.splitlines()[0] == "3-point matches, Crawford rule"


def test_json_output_for_three_agents(capsys):
    assert evaluate.main(["pubeval", "heuristic", "random?seed=1", "--games", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(p["a"], p["b"]) for p in out["pairs"]] == [
        ("pubeval", "heuristic"),
        ("pubeval", "random?seed=1"),
        ("heuristic", "random?seed=1"),
    ]
    for p in out["pairs"]:
        assert p["games"] == 8 and p["pairs"] == 4
        assert p["ci95"][0] <= p["ppg"] <= p["ci95"][1]
        assert sum(p["wins"]) == 8 and len(p["gammons"]) == 2 and len(p["backgammons"]) == 2
    assert [r["agent"] for r in out["ratings"]] == ["pubeval", "heuristic", "random?seed=1"]


def test_table_output_and_saved_games(tmp_path, capsys):
    rc = command.run(
        parse(
            [
                "pubeval",
                "random",
                "--games",
                "4",
                "--match-to",
                "3",
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "pubeval" in text and "mirrored pairs" in text and "match wins" in text
    recs = matchfile.read_jsonl(tmp_path / "games.jsonl")
    assert {r["a"] for r in recs} == {"pubeval"} and all(r["turns"] for r in recs)
    assert len(list(tmp_path.glob("*.mat"))) == 4
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["pairs"][0]["match_to"] == 3 and saved["pairs"][0]["matches"] == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pubeval", "nobody"], "unknown agent"),
        (["pubeval", "random", "--games", "0"], "--games must be at least 1"),
        (["pubeval", "td:missing.pt"], "not found"),
        (["pubeval", "random", "--variant", "acey-deucey"], "cannot play variant"),
        (["pubeval", "random", "--variant", "hypergammon"], "unknown variant"),
        (["pubeval"], "at least two agents"),
        (["pubeval", "random", "--seed", "-1"], "--seed must be 0 or more"),
    ],
)
def test_bad_input_is_a_one_line_error(argv, message, capsys):
    assert evaluate.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and captured.err.count("\n") == 1


def test_evaluate_script_in_a_subprocess():
    proc = subprocess.run(
        [sys.executable, "evaluate.py", "pubeval", "random", "--games", "2", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["pairs"][0]["games"] == 2


def test_through_the_vrhcaby_command(monkeypatch, capsys):
    from vrhcaby.cli import main as cli

    monkeypatch.setattr(cli, "COMMANDS", ("tournament",))  # this verb alone
    assert cli.main(["tournament", "pubeval", "random", "--games", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"][0]["games"] == 2
    assert cli.main(["tournament", "pubeval", "random", "--games", "0"]) == 2
    assert "--games must be at least 1" in capsys.readouterr().err


def test_round_robin_table_and_picture(tmp_path, capsys):
    import json as _json
    import xml.dom.minidom

    from vrhcaby.cli import main as cli

    out = tmp_path / "rr"
    code = cli.main(
        [
            "tournament",
            "random",
            "heuristic",
            "pubeval",
            "--games",
            "8",
            "--seed",
            "3",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0 and "round robin" in text
    result = _json.loads((out / "results.json").read_text())
    svg = (out / "table.svg").read_text()
    xml.dom.minidom.parseString(svg)  # well-formed
    for name in ("random", "heuristic", "pubeval"):
        assert name in svg
    # Each pair's ppg appears in the picture for the row agent, and negated for the other.
    for pair in result["pairs"]:
        assert f"{pair['ppg']:+.3f}" in svg and f"{-pair['ppg']:+.3f}" in svg
