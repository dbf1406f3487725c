"""The tournament runner: mirrored dice, determinism across processes, the cube and match
scoring, checked by replaying the recorded games through the engine."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from agents import load_agent
from agents.pubeval import PubevalAgent
from vrhcaby.play.stats import bradley_terry_elo, mean_ci95, wilson_ci95
from vrhcaby.play.tournament import PairSettings, play_pair


class CubeBot(PubevalAgent):
    """Pubeval's checker play; doubles whenever it may, takes or drops as told."""

    cube_aware = True

    def __init__(self, take: bool, name: str) -> None:
        self.take = take
        self.name = name

    def double_decision(self, position, context) -> bool:
        return True

    def take_decision(self, position, context) -> bool:
        return self.take


def replay(record: dict) -> tuple[engine.Position, int]:
    """Replay a record's plays by their notation; the final position and who moved last."""
    pos = engine.Position.start(record["variant"])
    last = -1
    for turn in record["turns"]:
        if "action" in turn:
            continue
        if turn["play"]:
            after = engine.Play.parse(turn["play"], pos, tuple(turn["dice"])).position
        else:
            assert not engine.legal_plays(pos, tuple(turn["dice"]))
            after = pos
        assert pos.position_id() == turn["position_id"]
        last = turn["player"]
        pos = after.flip()
    return pos.flip(), last


def test_recorded_games_replay_to_their_results():
    r = play_pair(
        load_agent("pubeval"),
        load_agent("random?seed=2"),
        games=12,
        seed=4,
        settings=PairSettings(record=True),
    )
    assert r.games == 12 and r.pairs == 6
    points = []
    for g in r.results:
        final, last = replay(g.record)
        assert last == g.winner
        assert int(engine.game_value(final.board[None])[0]) == g.value
        points.append(g.a_points)
    # Points per game and its interval, recomputed from the games by a plain loop.
    by_sample: dict[int, list[int]] = {}
    for g, p in zip(r.results, points, strict=True):
        by_sample.setdefault(g.sample, []).append(p)
    means = [sum(v) / 2 for v in by_sample.values()]
    m = sum(means) / len(means)
    sd = math.sqrt(sum((x - m) ** 2 for x in means) / (len(means) - 1))
    assert r.ppg == pytest.approx(m)
    assert r.ci95 == pytest.approx(
        (m - 1.96 * sd / math.sqrt(6), m + 1.96 * sd / math.sqrt(6)), rel=1e-3
    )
    assert sum(r.wins) == 12
    assert r.gammons[0] == sum(1 for g in r.results if g.winner == g.a_seat and g.value == 2)


def test_mirrored_games_share_their_dice_with_seats_swapped():
    r = play_pair(
        load_agent("heuristic"),
        load_agent("random?seed=1"),
        games=8,
        seed=9,
        settings=PairSettings(record=True),
    )
    games = {(g.sample, g.copy): g for g in r.results}
    for s in range(4):
        g0, g1 = games[s, 0], games[s, 1]
        assert g0.a_seat == 0 and g1.a_seat == 1
        d0 = [t["dice"] for t in g0.record["turns"]]
        d1 = [t["dice"] for t in g1.record["turns"]]
        n = min(len(d0), len(d1))
        assert d0[:n] == d1[:n]
        # The same seat opens in both; it is A in one copy and B in the other.
        assert g0.record["turns"][0]["player"] == g1.record["turns"][0]["player"]


def test_results_do_not_depend_on_processes_and_replay_from_the_seed():
    a, b = load_agent("pubeval"), load_agent("heuristic")
    one = play_pair(a, b, games=150, seed=3)
    two = play_pair(a, b, games=150, seed=3, jobs=2)
    again = play_pair(a, b, games=150, seed=3)
    other = play_pair(a, b, games=150, seed=4)
    assert one.games == 150 and one.pairs == 75
    key = [
        (g.sample, g.copy, g.winner, g.value)
        for g in sorted(one.results, key=lambda g: (g.sample, g.copy))
    ]
    assert key == [
        (g.sample, g.copy, g.winner, g.value)
        for g in sorted(two.results, key=lambda g: (g.sample, g.copy))
    ]
    assert (one.ppg, one.wins) == (two.ppg, two.wins) == (again.ppg, again.wins)
    assert (one.ppg, one.wins) != (other.ppg, other.wins)


def test_heuristic_beats_random_by_a_wide_margin():
    r = play_pair(load_agent("heuristic"), load_agent("random?seed=0"), games=100, seed=1)
    assert r.ci95[0] > 1.0


def test_dropped_doubles_end_the_game_for_the_cube_value():
    r = play_pair(
        CubeBot(False, "doubler"),
        CubeBot(False, "dropper"),
        games=6,
        seed=2,
        settings=PairSettings(record=True),
    )
    for g in r.results:
        turns = g.record["turns"]
        moves = [t for t in turns if "action" not in t]
        # The opener moves without a cube offer; the other side doubles at once, and it
        # is dropped: one move played, one point won by the doubler.
        assert len(moves) == 1
        assert [t["action"] for t in turns[1:]] == ["double", "drop"]
        assert g.winner == turns[1]["player"] != turns[0]["player"]
        assert g.points == 1


def test_taken_doubles_raise_the_cube_and_pass_ownership():
    r = play_pair(
        CubeBot(True, "x"), CubeBot(True, "y"), games=4, seed=5, settings=PairSettings(record=True)
    )
    for g in r.results:
        cube, owner = 1, None
        for t in g.record["turns"]:
            if t.get("action") == "double":
                assert owner in (None, t["player"])
                cube *= 2
                assert t["cube"] == cube
            elif t.get("action") == "take":
                owner = t["player"]
        assert cube == g.cube == min(cube, 64)
        assert g.points == g.value * g.cube


def test_jacoby_counts_gammons_single_without_a_double():
    r = play_pair(
        load_agent("pubeval"),
        load_agent("random?seed=3"),
        games=20,
        seed=6,
        settings=PairSettings(jacoby=True),
    )
    assert all(g.points == 1 for g in r.results)
    assert any(g.value > 1 for g in r.results)


def test_matches_score_to_the_end_with_crawford():
    r = play_pair(
        CubeBot(True, "x"),
        CubeBot(True, "y"),
        games=4,
        seed=7,
        settings=PairSettings(match_to=5, record=True),
    )
    assert r.matches == 4 and sum(r.match_wins) == 4
    lo, hi = r.match_ci95
    assert lo <= r.match_win_rate <= hi
    by_match: dict[tuple[int, int], list] = {}
    for g in r.results:
        by_match.setdefault((g.sample, g.copy), []).append(g)
    for games in by_match.values():
        score = [0, 0]
        crawford_seen = False
        for g in games:
            assert g.record["score"] == score
            doubled = any(t.get("action") == "double" for t in g.record["turns"])
            is_crawford = not crawford_seen and 4 in score
            if is_crawford:
                crawford_seen = True
                assert not doubled
            score[g.winner] += g.points
        assert max(score) >= 5 and games[-1].match_winner == int(np.argmax(score))


def test_bad_input_fails_before_any_game():
    with pytest.raises(ValueError, match="at least 1"):
        play_pair(load_agent("pubeval"), load_agent("random"), games=0, seed=0)
    with pytest.raises(ValueError, match="cannot play variant"):
        play_pair(
            load_agent("pubeval"),
            load_agent("random"),
            games=2,
            seed=0,
            settings=PairSettings(variant="acey-deucey"),
        )
    with pytest.raises(ValueError, match="unknown variant"):
        play_pair(
            load_agent("pubeval"),
            load_agent("random"),
            games=2,
            seed=0,
            settings=PairSettings(variant="chess"),
        )


def test_nackgammon_plays():
    r = play_pair(
        load_agent("pubeval"),
        load_agent("random"),
        games=4,
        seed=0,
        settings=PairSettings(variant="nackgammon", record=True),
    )
    assert r.games == 4
    assert (
        r.results[0].record["turns"][0]["position_id"]
        == engine.Position.start("nackgammon").position_id()
    )


def test_wilson_interval_known_values() -> None:
    # Textbook values: 50 of 100 -> [0.4038, 0.5962]; 0 of 10 -> [0, 0.2775].
    assert wilson_ci95(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson_ci95(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    # Ties share a win (six-dice tournaments): 2.5 of 5 is a rate of one half.
    assert sum(wilson_ci95(2.5, 5)) == pytest.approx(1.0)


def test_interval_helpers():
    # Wilson with no successes: the upper end is z^2 / (n + z^2).
    lo, hi = wilson_ci95(0, 10)
    assert lo == pytest.approx(0, abs=1e-12) and hi == pytest.approx(3.8415 / 13.8415, rel=1e-4)
    m, lo, hi = mean_ci95(np.array([1.0, 3.0]))
    assert (m, lo, hi) == pytest.approx(
        (2.0, 2 - 1.96 * math.sqrt(2) / math.sqrt(2), 2 + 1.96 * math.sqrt(2) / math.sqrt(2)),
        rel=1e-3,
    )
    assert math.isnan(mean_ci95(np.array([1.0]))[1])


def test_bradley_terry_two_players_is_the_log_odds():
    elo, se = bradley_terry_elo(np.array([[0, 30], [10, 0]]))
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), rel=1e-6)
    # Standard error of the log-odds: sqrt(1/30 + 1/10), on the Elo scale, split in two.
    assert se[0] == pytest.approx(400 / math.log(10) * math.sqrt(1 / 30 + 1 / 10) / 2, rel=1e-4)


class Interrupting(PubevalAgent):
    """Pubeval that presses Ctrl-C on its 80th batch."""

    def __init__(self) -> None:
        self.calls = 0

    def choose_boards(self, boards, dice):
        self.calls += 1
        if self.calls == 80:
            raise KeyboardInterrupt
        return super().choose_boards(boards, dice)


def test_ctrl_c_keeps_what_was_played():
    agent = Interrupting()
    agent.name = "pubeval"
    r = play_pair(agent, load_agent("random"), games=40, seed=1, settings=PairSettings(record=True))
    assert r.interrupted
    assert 0 < r.games < 40 and r.games == 2 * r.pairs
    assert all(g.record for g in r.results)
