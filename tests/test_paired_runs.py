"""bench/paired_runs.py: two tournament runs on the same dice compared sample by sample,
checked against the tournament's own results and a plain recount of the games."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from statistics import NormalDist

import pytest
from helpers_bench import bench_script

from vrhcaby.cli import main as cli


def _tournament(out: Path, a: str, b: str, games: int, seed: int) -> dict:
    argv = ["tournament", a, b, "--games", str(games), "--seed", str(seed), "--jobs", "1"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main([*argv, "--no-progress", "--out", str(out)])
    assert code in (0, None)
    return json.loads((out / "results.json").read_text())["pairs"][0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("paired")
    made = {
        "heur": ("heuristic", "pubeval", 24, 5),
        "heur_short": ("heuristic", "pubeval", 10, 5),
        "td": ("td", "pubeval", 24, 5),
        "other_seed": ("td", "pubeval", 24, 6),
    }
    for name, (a, b, games, seed) in made.items():
        _tournament(root / name, a, b, games, seed)
    return {name: root / name for name in made}


def _recount(folder: Path) -> dict[int, list[int]]:
    """A's points per sample, straight from the records."""
    per: dict[int, list[int]] = {}
    for line in (folder / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        sign = 1 if g["winner"] == g["a_seat"] else -1
        per.setdefault(g["sample"], []).append(sign * g["points"])
    return per


def test_each_run_matches_the_tournaments_own_figure(runs: dict[str, Path]) -> None:
    r = bench_script("paired_runs").compare(runs["heur"], runs["td"])
    assert r["samples"] == 12  # 24 mirrored games
    for key, name in (("base", "heur"), ("new", "td")):
        own = json.loads((runs[name] / "results.json").read_text())["pairs"][0]
        assert r[key]["ppg"] == pytest.approx((own["ppg"], *own["ci95"]))
    heur, td = _recount(runs["heur"]), _recount(runs["td"])
    diffs = [sum(td[s]) / 2 - sum(heur[s]) / 2 for s in heur]
    mean = sum(diffs) / len(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
    half = NormalDist().inv_cdf(0.975) * sd / math.sqrt(len(diffs))
    lo, hi = mean - half, mean + half
    assert r["difference"] == pytest.approx((mean, lo, hi))


def test_a_shorter_run_pairs_on_the_samples_both_played(runs: dict[str, Path]) -> None:
    """The same deterministic agents on the same dice play the same games: the first five
    samples of the longer run are the shorter run's, game for game (the dice are dealt by
    sample)."""
    r = bench_script("paired_runs").compare(runs["heur"], runs["heur_short"])
    assert r["samples"] == 5
    short = json.loads((runs["heur_short"] / "results.json").read_text())["pairs"][0]
    assert r["base"]["ppg"][0] == pytest.approx(short["ppg"])
    assert r["difference"][0] == 0.0


def test_runs_on_other_dice_are_refused(runs: dict[str, Path], capsys) -> None:
    assert bench_script("paired_runs").main([str(runs["td"]), str(runs["other_seed"])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seed 5 and 6" in err[0]


def test_a_folder_without_games_is_refused(tmp_path: Path, runs: dict[str, Path], capsys) -> None:
    assert bench_script("paired_runs").main([str(tmp_path), str(runs["td"])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no games.jsonl" in err[0]


def test_parted_runs_add_up_to_the_paired_difference(runs):
    """Where the games part: the kinds' shares add up to the paired difference, and two
    agents meeting the same deterministic pubeval part first at their own turns (A's),
    never at one of pubeval's checker plays; a run against itself never parts."""
    paired_runs = bench_script("paired_runs")
    same = paired_runs.parted(runs["td"], runs["td"])
    assert list(same) == ["the same game"] and same["the same game"]["games"] == 24
    parts = paired_runs.parted(runs["heur"], runs["td"])
    assert "B's checker play" not in parts and parts["A's checker play"]["games"] > 0
    assert sum(p["games"] for p in parts.values()) == 24
    total = sum(p["difference"][0] for p in parts.values())
    assert total == pytest.approx(paired_runs.compare(runs["heur"], runs["td"])["difference"][0])
