"""The cube yardstick (`vrhcaby.play.cube_judge`, `bench/cube_judge.py`): the scoring rule
against a plain reference, the shipped set against GNU Backgammon, decisions read from
recorded games."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import engine
from agents.base import CubelessAgent
from vrhcaby.equity.context import GameContext
from vrhcaby.play.cube_judge import (
    CubeSet,
    GnubgCubeJudge,
    doubler_errors,
    match_id,
    probability_errors,
    recorded_decisions,
    recorded_turns,
    taker_errors,
)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "data" / "judge" / "gnubg-cube-2ply.npz"


# --- the scoring rule against a plain reference ------------------------------------------


def _reference(nd: float, dt: float, dp: float, doubled: bool, took: bool) -> tuple:
    """Doubler's and taker's error and the kind of each mistake, case by case."""
    answer = min(dt, dp)  # the taker answers correctly
    if answer >= nd:  # double
        double_error = 0.0 if doubled else answer - nd
        kind = None if doubled else "wrong no double"
    elif doubled:  # should have played on
        double_error = nd - answer
        kind = "too good" if dp < dt else "not good enough"
    else:
        double_error, kind = 0.0, None
    if took:
        take_error, take_kind = (dt - dp, "wrong take") if dt > dp else (0.0, None)
    else:
        take_error, take_kind = (dp - dt, "wrong pass") if dp > dt else (0.0, None)
    return double_error, take_error, kind, take_kind


HAND_MADE = [
    # nd, dt, dp: double/take, too good/pass, no double/take, double/pass, too good/take
    (0.30, 0.50, 1.00),
    (1.20, 1.40, 1.00),
    (0.50, 0.20, 1.00),
    (0.90, 1.30, 1.00),
    (0.95, 0.80, 1.00),
]


def _hand_set(nd, dt, dp) -> CubeSet:
    n = len(nd)
    return CubeSet(
        boards=np.repeat(engine.Position.start().board[None], n, axis=0),
        cube_value=np.ones(n, int),
        cube_owner=-np.ones(n, int),
        match_to=np.zeros(n, int),
        score=np.zeros((n, 2), int),
        crawford=np.zeros(n, bool),
        jacoby=np.zeros(n, bool),
        nd=np.asarray(nd, float),
        dt=np.asarray(dt, float),
        dp=np.asarray(dp, float),
        probabilities=np.zeros((n, 5)),
        classes=np.full(n, "contact"),
        sources=np.full(n, "hand"),
    )


@pytest.mark.parametrize("doubled", [False, True])
@pytest.mark.parametrize("took", [False, True])
def test_errors_and_counts_follow_the_plain_rule_on_hand_made_decisions(
    doubled: bool, took: bool
) -> None:
    nd, dt, dp = (np.array(x) for x in zip(*HAND_MADE, strict=True))
    cube_set = _hand_set(nd, dt, dp)
    errors = cube_set.errors(np.full(len(nd), doubled), np.full(len(nd), took))
    want = [_reference(*d, doubled, took) for d in HAND_MADE]
    np.testing.assert_allclose(errors.double, [w[0] for w in want], atol=1e-12)
    np.testing.assert_allclose(errors.take, [w[1] for w in want], atol=1e-12)
    kinds = [w[2] for w in want] + [w[3] for w in want]
    counts = cube_set.counts(errors)
    assert counts["too_good_to_double"] == kinds.count("too good")
    assert counts["not_good_enough"] == kinds.count("not good enough")
    assert counts["wrong_doubles"] == kinds.count("too good") + kinds.count("not good enough")
    assert counts["wrong_no_doubles"] == kinds.count("wrong no double")
    assert counts["wrong_takes"] == kinds.count("wrong take")
    assert counts["wrong_passes"] == kinds.count("wrong pass")


def test_errors_follow_the_plain_rule_on_random_decisions() -> None:
    rng = np.random.default_rng(5)
    nd, dt = rng.uniform(-1, 1.5, (2, 500))
    dp = np.ones(500)
    doubled, took = rng.random((2, 500)) < 0.5
    want = [_reference(*x) for x in zip(nd, dt, dp, doubled, took, strict=True)]
    np.testing.assert_allclose(doubler_errors(nd, dt, dp, doubled), [w[0] for w in want])
    np.testing.assert_allclose(taker_errors(dt, dp, took), [w[1] for w in want])


def test_probability_errors_are_named_and_follow_a_plain_loop() -> None:
    """Mean absolute error and bias of P(win), P(win gammon), P(lose gammon) (columns 0, 1
    and 3), under the JSON field names the bench has always written."""
    rng = np.random.default_rng(8)
    predicted, judged = rng.random((2, 40, 5))
    got = probability_errors(predicted, judged)
    assert list(got) == ["win", "win_gammon", "lose_gammon"]
    for name, k in (("win", 0), ("win_gammon", 1), ("lose_gammon", 3)):
        d = [predicted[i][k] - judged[i][k] for i in range(40)]
        assert got[name]["mae"] == pytest.approx(sum(abs(x) for x in d) / 40)
        assert got[name]["bias"] == pytest.approx(sum(d) / 40)


def test_the_summary_reports_millipoints_and_paired_differences() -> None:
    nd, dt, dp = (np.array(x) for x in zip(*HAND_MADE, strict=True))
    cube_set = _hand_set(nd, dt, dp)
    never = cube_set.errors(np.zeros(5, bool), np.ones(5, bool))
    always = cube_set.errors(np.ones(5, bool), np.ones(5, bool))
    report = cube_set.summary(always, never)
    want = [_reference(*d, True, True) for d in HAND_MADE]
    base = [_reference(*d, False, True) for d in HAND_MADE]
    assert report["double"]["mean"] == pytest.approx(1000 * np.mean([w[0] for w in want]))
    diff = [1000 * (w[0] + w[1] - b[0] - b[1]) for w, b in zip(want, base, strict=True)]
    assert report["paired"]["total"]["mean"] == pytest.approx(np.mean(diff))
    assert report["paired"]["total"]["se"] == pytest.approx(np.std(diff) / np.sqrt(5))
    assert report["classes"]["contact"]["decisions"] == 5
    assert report["cube_states"]["centred"]["decisions"] == 5


# --- the shipped set ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> CubeSet:
    return CubeSet.load(SHIPPED)


def test_a_file_that_is_not_a_cube_set_is_refused_by_name() -> None:
    other = ROOT / "data" / "judge" / "gnubg-2ply.npz"  # the checker-play set
    with pytest.raises(ValueError, match=r"gnubg-2ply\.npz: not a judged cube set"):
        CubeSet.load(other)


class _AlwaysDoubles(CubelessAgent):
    name = "always"

    def double_decision(self, position, context) -> bool:
        return True

    def take_decision(self, position, context) -> bool:
        return False


def test_the_shipped_set_has_the_decisions_it_promises(shipped: CubeSet) -> None:
    assert len(shipped) >= 1000
    states = shipped.cube_states
    assert (states == "centred").sum() >= 400 and (states == "owned").sum() >= 200
    assert (states == "match").sum() >= 300
    assert all(shipped.context(i).may_double() for i in range(len(shipped)))
    match = shipped.match_to > 0
    assert set(shipped.match_to[match]) == {5, 7} and (shipped.score[match] > 0).any()
    # money decisions: a double/pass is +1 per cube; close ones make up most of the set
    assert np.allclose(shipped.dp[~match], 1.0)
    margin = np.minimum(
        np.abs(shipped.nd - np.minimum(shipped.dt, shipped.dp)), np.abs(shipped.dt - shipped.dp)
    )
    assert 0.4 < (margin < 0.1).mean() < 0.95


def test_always_doubling_costs_nothing_exactly_where_gnubg_doubles(shipped: CubeSet) -> None:
    always = shipped.errors(*shipped.answers(_AlwaysDoubles()))
    never = shipped.errors(*shipped.answers(CubelessAgent()))  # never doubles, always takes
    doubling = np.minimum(shipped.dt, shipped.dp)
    double, play_on = doubling >= shipped.nd, shipped.nd >= doubling  # both on a tie
    assert ((always.double == 0) == double).all() and ((never.double == 0) == play_on).all()
    assert ((always.take == 0) == (shipped.dt >= shipped.dp)).all()  # always passes
    assert ((never.take == 0) == (shipped.dt <= shipped.dp)).all()
    assert double.sum() > 100 and play_on.sum() > 100


def test_gnubg_recomputes_a_stored_decision() -> None:
    shipped = CubeSet.load(SHIPPED)
    judge = GnubgCubeJudge()
    for i in (0, int(np.flatnonzero(shipped.match_to > 0)[0])):
        nd, dt, dp, p = judge(shipped.boards[i], shipped.context(i))
        stored = (shipped.nd[i], shipped.dt[i], shipped.dp[i])
        np.testing.assert_allclose((nd, dt, dp), stored, atol=2e-5)
        np.testing.assert_allclose(p, shipped.probabilities[i], atol=2e-5)


def test_the_judge_follows_each_decisions_jacoby_rule() -> None:
    """A centred cube in a certain gammon: without the Jacoby rule no double is worth the
    gammon (2 points), with it gammons count for nothing until the cube is turned (1); the
    rule follows each decision's context, back and forth."""
    shipped = CubeSet.load(SHIPPED)
    centred = np.flatnonzero((shipped.match_to == 0) & (shipped.cube_owner < 0))
    i = centred[np.argmax(shipped.probabilities[centred, 1])]
    assert shipped.probabilities[i, 1] == 1.0
    judge = GnubgCubeJudge()
    off, on = GameContext(jacoby=False), GameContext(jacoby=True)
    nds = [judge(shipped.boards[i], c)[0] for c in (off, on, off)]
    assert nds == [2.0, 1.0, 2.0]


@pytest.mark.skipif(
    shutil.which("gnubg") is None and not Path("/usr/games/gnubg").exists(),
    reason="needs Debian's gnubg command line",
)
def test_the_judge_reads_the_same_analysis_as_gnubgs_command_line() -> None:
    """Debian's gnubg 1.07 and the gnubg package differ in build (cube efficiencies), so
    their equities agree to a few millipoints, not exactly: a misread line (no double for
    double/take) would be off by tenths."""
    board = engine.Position.from_id("jGfkASjg8wcBMA").board
    context = GameContext(match_to=7, score=(4, 2), cube_value=2, cube_owner="me")
    script = "\n".join(
        [
            "set jacoby off",
            "set evaluation cubedecision evaluation plies 2",
            "set evaluation cubedecision evaluation prune off",
            "set output mwc off",
            "set output digits 5",
            "new game",
            f"set gnubgid {engine.position_id(board)}:{match_id(context)}",
            "hint",
            "",
        ]
    )
    exe = shutil.which("gnubg") or "/usr/games/gnubg"
    text = subprocess.run(
        [exe, "-t", "-q"], input=script, capture_output=True, text=True, timeout=120
    ).stdout
    ours = GnubgCubeJudge()(board, context)
    lines = dict(re.findall(r"^\d\. (No double|Double, take|Double, pass) +(\S+)", text, re.M))
    theirs = [float(lines[k]) for k in ("No double", "Double, take", "Double, pass")]
    np.testing.assert_allclose(ours[:3], theirs, atol=0.01)


# --- decisions from recorded games -------------------------------------------------------


def _game(turns: list[dict], *, sample=0, match_to=0, score=(0, 0), winner=0, points=1):
    record = {"match_to": match_to, "score": list(score), "turns": turns}
    return SimpleNamespace(sample=sample, copy=0, record=record, winner=winner, points=points)


def test_recorded_games_give_the_cube_before_each_double() -> None:
    start = engine.Position.start()
    play = engine.Play.parse("8/5 6/5", start, (3, 1))
    second = play.position.flip()
    reply = engine.Play.parse("13/7 8/7", second, (6, 1))
    third = reply.position.flip()
    turns = [
        {"player": 0, "dice": [3, 1], "play": "8/5 6/5", "position_id": start.position_id()},
        {"player": 1, "action": "double", "cube": 2},
        {"player": 0, "action": "take"},
        {"player": 1, "dice": [6, 1], "play": "13/7 8/7", "position_id": second.position_id()},
        {"player": 0, "action": "double", "cube": 4},
        {"player": 1, "action": "drop"},
    ]
    boards, contexts = recorded_decisions(SimpleNamespace(results=[_game(turns)]))
    # the opening has no cube; seat 1 doubled from the centre; seat 0 owned the cube of 2
    assert [c.cube_owner for c in contexts] == ["centre", "me"]
    assert [c.cube_value for c in contexts] == [1, 2]
    np.testing.assert_array_equal(boards, [second.board, third.board])
    quiet = [t for t in turns if "dice" in t]  # the same plays, no one doubling
    both = recorded_turns(SimpleNamespace(results=[_game(turns), _game(quiet)]), jacoby=True)
    assert both.seats.tolist() == [1, 0, 1] and both.games.tolist() == [0, 0, 1]
    assert both.doubled.tolist() == [True, True, False]
    assert [c.jacoby for c in both.contexts] == [True, True, True]
    assert not any(
        c.jacoby for c in recorded_turns(SimpleNamespace(results=[_game(quiet)])).contexts
    )


def test_recorded_matches_skip_the_crawford_game_and_keep_post_crawford() -> None:
    start = engine.Position.start()
    play = engine.Play.parse("8/5 6/5", start, (3, 1))
    turns = [
        {"player": 0, "dice": [3, 1], "play": "8/5 6/5", "position_id": start.position_id()},
        {
            "player": 1,
            "dice": [3, 1],
            "play": "8/5 6/5",
            "position_id": play.position.flip().position_id(),
        },
    ]
    games = [
        _game(turns, match_to=5, score=(0, 0), winner=0, points=4),  # 4-0 next: Crawford
        _game(turns, match_to=5, score=(4, 0), winner=1, points=1),  # the Crawford game
        _game(turns, match_to=5, score=(4, 1), winner=1, points=1),  # post-Crawford
    ]
    _, contexts = recorded_decisions(SimpleNamespace(results=games))
    assert [(c.score, c.crawford) for c in contexts] == [((0, 0), False), ((1, 4), False)]


# --- the command line --------------------------------------------------------------------


def test_the_bench_judges_agents_and_writes_json(tmp_path: Path, shipped: CubeSet) -> None:
    out = tmp_path / "cube.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cube_judge.py"), "pubeval", "random",
         "--json", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    pubeval, random = json.loads(out.read_text())["results"]
    # pubeval never doubles and always takes: wrong exactly where gnubg doubles or passes
    doubling = np.minimum(shipped.dt, shipped.dp)
    assert pubeval["counts"]["wrong_no_doubles"] == int((doubling > shipped.nd).sum())
    assert pubeval["counts"]["wrong_takes"] == int((shipped.dt > shipped.dp).sum())
    assert pubeval["counts"]["wrong_doubles"] == pubeval["counts"]["wrong_passes"] == 0
    want = 1000 * np.mean(
        np.maximum(doubling - shipped.nd, 0) + np.maximum(shipped.dt - shipped.dp, 0)
    )
    assert pubeval["total"]["mean"] == pytest.approx(want)
    assert random["paired"]["total"]["mean"] == pytest.approx(0.0)  # the same answers
    assert "probabilities" not in pubeval and "pubeval" in run.stdout


def test_the_bench_refuses_a_bad_agent_in_one_line() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cube_judge.py"), "nonsense"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert (
        run.stderr.strip().startswith("cube_judge:") and len(run.stderr.strip().splitlines()) == 1
    )
