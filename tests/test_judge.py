"""Plays judged by GNU Backgammon (`vrhcaby.play.judge`), against gnubg's own network and moves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers_bench import bench_script

from agents import load_agent
from tests.gnubg_oracle import GnubgEvaluator
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import EvalConfig, TDConfig
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn.net import NetConfig, equity, load_evaluator
from vrhcaby.play.judge import Judged, build_in_parts, gnubg_equities, judged_games


@pytest.fixture(scope="module")
def judged() -> Judged:
    return judged_games(load_agent("heuristic"), load_agent("pubeval"), 4, seed=3)


def test_equities_are_gnubg_zero_ply_seen_from_the_mover(judged: Judged) -> None:
    some = judged.after[:: max(1, len(judged.after) // 200)]
    want = equity(GnubgEvaluator().probabilities(some))
    np.testing.assert_allclose(gnubg_equities(some), want, atol=1e-9)


def test_positions_have_a_choice_and_come_from_both_sides_of_the_games(judged: Judged) -> None:
    counts = np.bincount(judged.parent, minlength=len(judged.boards))
    assert (counts > 1).all() and len(judged.boards) > 4 * 15
    assert judged.games == 4
    assert (
        set(judged.classes) <= {"contact", "crashed", "race", "bearoff"}
        and "contact" in judged.classes
    )


def test_gnubg_plays_cost_nothing_and_weaker_agents_cost_more(judged: Judged) -> None:
    gnubg = judged.play(load_agent("gnubg?plies=0"))
    assert gnubg.mean == pytest.approx(0.0, abs=1e-12) and gnubg.positions == len(judged.boards)
    random_cost = judged.cost(load_agent("random").choose_boards(judged.boards, judged.dice))
    pubeval = judged.play(load_agent("pubeval"))
    assert (random_cost >= 0).all()
    assert random_cost.mean() > pubeval.mean > 0
    assert pubeval.per_game == pytest.approx(pubeval.mean * pubeval.positions / 8)
    assert pubeval.se > 0 and set(pubeval.to_json()) >= {"mean", "se", "contact", "race"}


def test_the_bench_counts_the_decisions_whose_play_moved_from_the_first_agents(
    judged: Judged, capsys: pytest.CaptureFixture
) -> None:
    """bench/judge.py's `moved`: the decisions where an agent's play is not the first
    agent's, against a count made one decision at a time."""
    bench = bench_script("judge")
    rows = bench.judge_agents(judged, ["pubeval", "pubeval", "heuristic"])
    pubeval: Any = load_agent("pubeval")  # the Agent protocol names no choose_boards
    heuristic: Any = load_agent("heuristic")
    differ = sum(
        not np.array_equal(
            pubeval.choose_boards(b[None], d[None]), heuristic.choose_boards(b[None], d[None])
        )
        for b, d in zip(judged.boards, judged.dice, strict=True)
    )
    assert [r["moved"] for r in rows] == [0, 0, differ] and differ > 0
    assert "moved" in capsys.readouterr().out


def test_a_play_that_is_not_legal_is_refused(judged: Judged) -> None:
    chosen = judged.after[np.searchsorted(judged.parent, np.arange(len(judged.boards)))].copy()
    judged.cost(chosen)  # each position's first legal play
    chosen[0] = judged.boards[0]  # standing still is not legal when there is a choice
    with pytest.raises(ValueError, match="not one of its roll's legal plays"):
        judged.cost(chosen)


def test_training_evaluations_report_the_move_cost_and_can_pick_the_best_by_it() -> None:
    trainer = Trainer(
        NetConfig(hidden=(4,)), TDConfig(batch_games=4), "standard", 4, 1, torch.device("cpu")
    )
    config = EvalConfig(games=2, opponents=("pubeval",), judge_games=2, best_by="move_cost")
    record = trainer.evaluate(config, {})
    cost = record["move_cost"]
    assert cost["positions"] > 10 and cost["mean"] > 0
    report = trainer.game.report(record, config)
    assert report.score == -cost["mean"] and report.scalars["move_cost"] == cost["mean"]
    assert "move cost" in report.postfix
    assert isinstance(trainer.game, Backgammon) and len(trainer.game._judge) == 1
    trainer.evaluate(config, {})  # the judged positions are made once
    assert len(trainer.game._judge) == 1
    for bad, match in (
        ({"best_by": "luck"}, "unknown eval.best_by"),
        ({"best_by": "move_cost"}, "needs eval.judge_games"),
        ({"judge_games": -1}, "judge_games"),
    ):
        with pytest.raises(ValueError, match=match):
            EvalConfig(**bad)


#: The shipped networks of the (2, 25) board: the standard ones and Nackgammon's (the same
#: game from another start), all judged on standard backgammon decisions; the acey-deucey
#: network plays another game (tests/test_variants.py checks it).
SHIPPED = [
    p
    for p in sorted((Path(__file__).resolve().parents[1] / "checkpoints").glob("td-*.pt"))
    if load_evaluator(p).variant != "acey-deucey"
]


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_network_plays_far_better_than_pubeval(path: Path, judged: Judged) -> None:
    """Loads each shipped network with its own encoding (a wrong or reordered input would
    make it play badly) and checks its plays against gnubg's."""
    network = judged.play(load_agent(f"td:{path}"))
    assert network.mean < 0.5 * judged.play(load_agent("pubeval")).mean


def test_a_judged_set_survives_a_round_trip_and_concatenation(
    judged: Judged, tmp_path: Path
) -> None:
    n = len(judged.boards) // 2
    cut = int(np.searchsorted(judged.parent, n))
    first = Judged(
        judged.boards[:n],
        judged.dice[:n],
        judged.classes[:n],
        judged.after[:cut],
        judged.parent[:cut],
        judged.equities[:cut],
        1,
        np.full(n, "a"),
    )
    second = Judged(
        judged.boards[n:],
        judged.dice[n:],
        judged.classes[n:],
        judged.after[cut:],
        judged.parent[cut:] - n,
        judged.equities[cut:],
        3,
        np.full(len(judged.boards) - n, "b"),
    )
    first.save(tmp_path / "a.npz")
    whole = Judged.concat([Judged.load(tmp_path / "a.npz"), second])
    for name in ("boards", "dice", "classes", "after", "parent", "equities"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(judged, name))
    assert whole.games == 4 and list(whole.sources[n - 1 : n + 1]) == ["a", "b"]
    chosen = judged.after[np.searchsorted(judged.parent, np.arange(len(judged.boards)))]
    np.testing.assert_array_equal(whole.cost(chosen), judged.cost(chosen))


def test_a_file_that_is_not_a_judged_set_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"bad\.npz: not a judged set"):
        Judged.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "short.npz", boards=np.zeros((1, 2, 25), np.int8))
    with pytest.raises(ValueError, match=r"short\.npz: not a judged set"):
        Judged.load(tmp_path / "short.npz")


def test_a_set_built_in_parts_resumes_where_it_stopped_and_equals_one_built_whole(
    judged: Judged, tmp_path: Path
) -> None:
    boards, dice = judged.boards[:10], judged.dice[:10]
    whole = Judged.from_positions(boards, dice, 4)  # the reference: one build, no parts
    out = tmp_path / "set.npz"
    asked: list[slice] = []

    def judge(rows: slice) -> Judged:
        asked.append(rows)
        if rows.start == 8 and len(asked) == 3:
            raise KeyboardInterrupt  # stopped in the third part
        return Judged.from_positions(boards[rows], dice[rows], 4)

    with pytest.raises(KeyboardInterrupt):
        build_in_parts(out, boards, judge, Judged.load, Judged.concat, size=4)
    assert not out.exists() and len(list((tmp_path / ".parts").iterdir())) == 2
    (tmp_path / ".parts" / "set-001.npz").write_bytes(b"not a judged set")
    asked.clear()
    built = build_in_parts(out, boards, judge, Judged.load, Judged.concat, size=4)
    # The spoilt part and the one never written are judged again, the good one is kept.
    assert [(r.start, r.stop) for r in asked] == [(4, 8), (8, 12)]
    assert not (tmp_path / ".parts").exists()
    for got in (built, Judged.load(out)):
        for name in ("boards", "dice", "after", "parent", "equities", "classes"):
            np.testing.assert_array_equal(getattr(got, name), getattr(whole, name))
