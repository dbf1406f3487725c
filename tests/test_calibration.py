"""Calibration (`vrhcaby.play.calibration`, `bench/calibration.py`): the decile binning
against a plain reference, synthetic predictors calibrated and biased, self-play records."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from helpers_bench import bench_script

from agents import load_agent
from vrhcaby.io.plot import reliability_svg
from vrhcaby.play.calibration import (
    Predictions,
    calibration_table,
    happened,
    selfplay_predictions,
)


def _plain_deciles(predicted: list[float], hit: list[bool], bins: int) -> list[dict]:
    """Sort, cut into `bins` runs whose sizes differ by at most one (the longer first)."""
    order = sorted(range(len(predicted)), key=lambda i: predicted[i])
    n = len(order)
    rows, at = [], 0
    for b in range(bins):
        size = n // bins + (1 if b < n % bins else 0)
        run = order[at : at + size]
        at += size
        p = sum(predicted[i] for i in run) / size
        r = sum(hit[i] for i in run) / size
        rows.append({"count": size, "predicted": p, "realised": r, "gap": r - p,
                     "se": (p * (1 - p) / size) ** 0.5,
                     "lo": predicted[run[0]], "hi": predicted[run[-1]]})  # fmt: skip
    return rows


def test_deciles_match_a_plain_reference() -> None:
    rng = np.random.default_rng(1)
    predicted = rng.random(1234)
    hit = rng.random(1234) < predicted
    ours = calibration_table(predicted, hit, bins=10)
    want = _plain_deciles(predicted.tolist(), hit.tolist(), 10)
    assert len(ours) == 10
    for row, ref in zip(ours, want, strict=True):
        assert row["count"] == ref["count"]
        for key in ("predicted", "realised", "gap", "se", "lo", "hi"):
            assert row[key] == pytest.approx(ref[key], abs=1e-12)


def test_a_calibrated_predictor_shows_gaps_within_noise_and_a_biased_one_its_bias() -> None:
    rng = np.random.default_rng(7)
    predicted = rng.random(50_000)
    calibrated = rng.random(50_000) < predicted
    high = rng.random(50_000) < 0.8 * predicted  # the predictions run 25% high
    for row in calibration_table(predicted, calibrated):
        assert abs(row["gap"]) < 4 * row["se"]
    rows = calibration_table(predicted, high)
    for row in rows:
        assert row["gap"] == pytest.approx(-0.2 * row["predicted"], abs=4 * row["se"] + 1e-3)
    assert all(r["gap"] < -4 * r["se"] for r in rows[3:])


def test_turns_of_one_game_count_as_one_cluster() -> None:
    """Ten turns per game with the game's one outcome: the clustered standard error is
    about sqrt(10) times the binomial one, which treats them as independent."""
    rng = np.random.default_rng(3)
    games = 20_000
    p = np.repeat(rng.random(games), 10)
    hit = np.repeat(rng.random(games), 10) < p
    game = np.repeat(np.arange(games), 10)
    rows = calibration_table(p, hit, game)
    ratio = np.median([r["se_games"] / r["se"] for r in rows[1:-1]])
    assert 2.6 < ratio < 3.7


def test_outcomes_become_the_five_events() -> None:
    got = happened(np.array([3, 2, 1, -1, -2, -3]))
    want = [
        [1, 1, 1, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 1, 0],
        [0, 0, 0, 1, 1],
    ]
    np.testing.assert_array_equal(got, np.array(want, dtype=bool))


def test_the_report_names_the_events_as_its_json_always_has() -> None:
    """The field names are a public contract (the bench's JSON): the five events by name,
    each the column of `happened` it names."""
    names = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
    outcome = np.array([3, 2, 1, -1, -2, -3] * 4)
    predicted = happened(outcome).astype(float)
    report = Predictions(predicted, outcome, np.arange(24) // 6, np.full(24, "race")).report(2)
    assert tuple(report["all"]) == names
    for k, name in enumerate(names):
        hits = sum(row["realised"] * row["count"] for row in report["all"][name])
        assert hits == happened(outcome)[:, k].sum()


def test_self_play_records_each_turn_with_its_games_result() -> None:
    agent = load_agent("td")
    predictions = selfplay_predictions(agent, 6, seed=4, batch=4)
    assert set(predictions.game) == set(range(6))
    assert set(np.abs(predictions.outcome)) <= {1, 2, 3}
    for g in range(6):
        o = predictions.outcome[predictions.game == g]
        assert (o[1:] == -o[:-1]).all()  # the sides alternate, one result per game
    assert set(predictions.classes) <= {"contact", "crashed", "race", "bearoff"}
    assert predictions.probabilities.shape == (len(predictions.outcome), 5)


def test_the_reliability_diagram_is_svg_with_a_point_per_bin() -> None:
    svg = reliability_svg({"win": ([0.1, 0.5, 0.9], [0.12, 0.5, 0.85], [0.01] * 3)}, "t")
    root = ET.fromstring(svg)
    circles = root.findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == 2 * 3 + 1  # the points on both panels and the legend's


def test_the_bench_prints_writes_and_draws(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out, svg = tmp_path / "cal.json", tmp_path / "reliability.svg"
    assert (
        bench_script("calibration").main(
            ["td", "--games", "4", "--json", str(out), "--svg", str(svg)]
        )
        == 0
    )
    report = json.loads(out.read_text())
    assert report["games"] == 4 and set(report) >= {"all", "contact", "race"}
    rows = report["all"]["win"]
    assert sum(r["count"] for r in rows) == report["turns"] and len(rows) == 10
    assert len(ET.parse(svg).getroot().findall("{http://www.w3.org/2000/svg}polyline")) == 2 * 3
    assert "win_gammon (all" in capsys.readouterr().out


def test_the_bench_refuses_an_agent_without_probabilities() -> None:
    with pytest.raises(ValueError, match="no pre-roll probabilities"):
        bench_script("calibration").main(["pubeval", "--games", "2"])
