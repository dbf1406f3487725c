"""Rollouts against references that do not use the rollout code: the rules for certain
results, symmetry for the opening, an exact bear-off calculation (independent one-sided
turn distributions) for a race, and a plain one-position-at-a-time 1-ply average for
truncated trials. Stand-in evaluators keep the tests apart from any trained network."""

from __future__ import annotations

import argparse
import json
import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from race_evaluator import RaceEvaluator

import engine
from agents.base import AfterstateAgent
from agents.td import TDAgent
from vrhcaby.cli import rollout as command
from vrhcaby.equity.outcomes import invert
from vrhcaby.nn import checkpoint
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig
from vrhcaby.play.pool import growing_chunks
from vrhcaby.play.rollout import (
    CubeSetting,
    Settings,
    cube_analysis,
    cube_rollout,
    rollout_afterstates,
    rollout_plays,
    rollout_position,
)

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]
Z = 3.29  # 99.9% two-sided: a check that fails for a real error, not for a seed


def board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A board from points (each side's own numbering) to checker counts; row 1 on roll."""
    b = np.zeros((2, 25), np.int8)
    for point, n in mine.items():
        b[1, point - 1] = n
    for point, n in theirs.items():
        b[0, point - 1] = n
    return b


# --- certain results -----------------------------------------------------------------

ALL_SETTINGS = [
    Settings(trials=72, luck=luck, quasi_random=qr, seed=3)
    for luck in (False, True)
    for qr in (False, True)
]


@pytest.mark.parametrize("settings", ALL_SETTINGS)
@pytest.mark.parametrize(
    ("theirs", "expected"),
    [
        ({13: 8, 18: 7}, [1, 1, 0, 0, 0]),  # no checker off: a gammon
        ({13: 8, 18: 6, 23: 1}, [1, 1, 1, 0, 0]),  # one in the winner's home: backgammon
        ({6: 14}, [1, 0, 0, 0, 0]),  # one off already: a single game
    ],
)
def test_a_won_bear_off_rolls_out_to_its_result(settings, theirs, expected):
    # The side on roll bears its last two checkers off with any roll.
    b = board({1: 2}, theirs)
    r = rollout_position(b, TDAgent(RaceEvaluator()), settings=settings)
    e = r.estimate()
    np.testing.assert_array_equal(r.values, np.tile(expected, (72, 1)))
    assert e.equity == sum(expected[:3])
    assert e.equity_se == 0.0


def test_a_certain_gammon_over_several_turns_rolls_out_to_it():
    # Six checkers on the 1-point need three turns, two if a double comes in the first
    # two; the opponent, every checker outside its home, cannot bear one off meanwhile.
    b = board({1: 6}, {13: 8, 18: 7})
    agent = TDAgent(RaceEvaluator())
    plain = rollout_position(b, agent, settings=Settings(trials=144, luck=False, seed=1))
    np.testing.assert_array_equal(plain.raw, np.tile([1, 1, 0, 0, 0], (144, 1)))
    assert set(plain.plies.tolist()) == {3, 5}
    adjusted = rollout_position(b, agent, settings=Settings(trials=144, seed=1)).estimate()
    assert abs(adjusted.equity - 2.0) <= Z * adjusted.equity_se + 1e-12


def test_a_finished_game_is_an_error():
    with pytest.raises(ValueError, match="over"):
        rollout_position(board({}, {6: 3}), TDAgent(RaceEvaluator()))


# --- symmetry ------------------------------------------------------------------------


def test_the_start_before_the_opening_roll_rolls_out_to_zero():
    from agents.pubeval import PubevalAgent

    start = engine.Position.start().board
    settings = Settings(trials=360, truncate=8, seed=7)
    r = rollout_position(
        start, PubevalAgent(), evaluator=RaceEvaluator(), settings=settings, opening=True
    )
    e = r.estimate()
    assert r.n_strata == 30 and np.bincount(r.stratum).tolist() == [12] * 30
    assert e.equity_se < 0.15
    assert abs(e.equity) <= Z * e.equity_se
    lose = e.mean[[3, 4]]
    win = e.mean[[1, 2]]
    assert np.all(np.abs(win - lose) <= Z * np.hypot(*e.probability_se[[1, 3]]))


# --- a race against its exact value ---------------------------------------------------

HORIZON = 16


def _one_sided(pos: tuple[int, ...]) -> np.ndarray:
    """A bear-off board with the mover's checkers `pos` (points 1..6) and the other side
    out of the way (in its own home board, beyond all of the mover's checkers)."""
    b = np.zeros((2, 25), np.int8)
    b[1, :6] = pos
    b[0, :6] = [3, 2, 2, 2, 2, 2]
    return b


@cache
def turns(pos: tuple[int, ...]) -> tuple[float, tuple[float, ...]]:
    """(expected turns to bear off, turn-count distribution) when the mover plays each
    roll to the next position of least `key`."""
    if sum(pos) == 0:
        return 0.0, (1.0,) + (0.0,) * HORIZON
    dist = np.zeros(HORIZON + 1)
    for roll in ROLLS:
        w = (1 if roll[0] == roll[1] else 2) / 36
        plays = engine.legal_plays(engine.Position(_one_sided(pos)), roll)
        best = min((tuple(int(x) for x in p.position.board[1, :6]) for p in plays), key=key)
        dist[1:] += w * np.asarray(turns(best)[1])[:-1]
    return float(dist @ np.arange(HORIZON + 1)), tuple(dist)


def key(pos: tuple[int, ...]) -> tuple[float, tuple[int, ...]]:
    """Fewest expected turns first, ties by the position tuple."""
    return round(turns(pos)[0], 9), pos


def turn_distribution(pos: tuple[int, ...]) -> np.ndarray:
    return np.asarray(turns(pos)[1])


_CODE = 5 ** np.arange(6)


@cache
def tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over one-sided positions of up to four checkers: each code's (counts in base 5)
    row, each row's rank, best (by `key`) first, and P(the mover wins) by (the mover's
    row, the roller's row) when the roller goes first."""
    grid = np.stack(np.meshgrid(*[range(5)] * 6, indexing="ij"), -1).reshape(-1, 6)
    every = [tuple(int(x) for x in g) for g in grid if g.sum() <= 4]
    row = np.full(5**6, -1)
    row[[np.dot(q, _CODE) for q in every]] = np.arange(len(every))
    order = sorted(range(len(every)), key=lambda i: key(every[i]))
    rank = np.empty(len(every), dtype=np.int64)
    rank[order] = np.arange(len(every))
    dist = np.stack([turn_distribution(q) for q in every])  # (positions, turns)
    later = dist[:, ::-1].cumsum(axis=1)[:, ::-1]  # P(T >= t)
    more = np.concatenate([later[:, 1:], np.zeros((len(every), 1))], axis=1)  # P(T > t)
    # The roller goes first: the mover wins when the roller needs more turns.
    return row, rank, dist @ more.T


class BearoffAgent(AfterstateAgent):
    """Plays every roll as `turns` assumes: to the next position of least `key`."""

    name = "bearoff"

    def score(self, afterstates, parent, boards):
        row, rank, _ = tables()
        return -rank[row[afterstates[:, 1, :6] @ _CODE]].astype(float)


class BearoffEvaluator:
    """Exact P(win) of a bear-off afterstate when both sides play as `BearoffAgent`."""

    variant = "standard"

    def probabilities(self, afterstates):
        out = np.zeros((len(afterstates), 5))
        a = np.asarray(afterstates, dtype=np.int64)
        row, _, win = tables()
        out[:, 0] = win[row[a[:, 1, :6] @ _CODE], row[a[:, 0, :6] @ _CODE]]
        return out


def test_a_race_rolls_out_to_its_exact_value_and_luck_cuts_the_error():
    mine, theirs = (1, 0, 1, 1, 0, 1), (0, 1, 1, 0, 1, 1)
    b = np.zeros((2, 25), np.int8)
    b[1, :6], b[0, :6] = mine, theirs
    me, them = turn_distribution(mine), turn_distribution(theirs)
    exact = sum(me[t] * them[t:].sum() for t in range(HORIZON + 1))  # on roll: ties win
    agent, ev = BearoffAgent(), BearoffEvaluator()
    plain = Settings(trials=648, luck=False, quasi_random=False, seed=11)
    reduced = Settings(trials=648, seed=11)
    p = rollout_position(b, agent, evaluator=ev, settings=plain).estimate()
    r = rollout_position(b, agent, evaluator=ev, settings=reduced)
    v = r.estimate()
    assert 0.1 < exact < 0.9
    assert abs(p.mean[0] - exact) <= Z * p.probability_se[0]
    assert abs(v.mean[0] - exact) <= Z * v.probability_se[0]
    assert abs(v.equity - p.equity) <= Z * math.hypot(v.equity_se, p.equity_se)
    assert p.equity_se / v.equity_se > 3
    assert r.se_cut()["luck"] > 3


# --- truncation, luck arithmetic, dice streams ------------------------------------------


def one_ply(ev: RaceEvaluator, b: np.ndarray) -> np.ndarray:
    """The average over the 36 rolls of the evaluator's probabilities after its best play
    (plain loops), for the side on roll of a pre-roll board."""
    total = np.zeros(5)
    for a in range(1, 7):
        for c in range(1, 7):
            plays = engine.legal_plays(engine.Position(b), (a, c))
            boards = np.stack([p.position.board for p in plays])
            p = ev.probabilities(boards)
            eq = 2 * p[:, 0] - 1 + p[:, 1] + p[:, 2] - p[:, 3] - p[:, 4]
            total += p[int(np.argmax(eq))] / 36
    return total


def contact_position() -> np.ndarray:
    return board({6: 4, 8: 3, 13: 5, 24: 2, 20: 1}, {6: 5, 8: 2, 13: 4, 24: 2, 16: 2})


def test_one_ply_truncation_with_stratified_dice_is_the_one_ply_average():
    ev = RaceEvaluator()
    b = contact_position()
    r = rollout_position(
        b, TDAgent(ev), settings=Settings(trials=72, truncate=1, luck=False, seed=5)
    )
    e = r.estimate()
    np.testing.assert_allclose(e.mean, one_ply(ev, b), atol=1e-12)
    assert e.stratified and e.equity_se == 0.0
    assert r.plies.tolist() == [1] * 72


def test_luck_adjusted_one_ply_truncation_is_the_one_ply_average_on_every_trial():
    ev = RaceEvaluator()
    b = contact_position()
    settings = Settings(trials=50, truncate=1, quasi_random=False, seed=5)
    r = rollout_position(b, TDAgent(ev), settings=settings)
    np.testing.assert_allclose(r.values, np.tile(one_ply(ev, b), (50, 1)), atol=1e-12)
    assert math.isnan(r.se_cut()["luck"])  # the adjusted error is 0: no ratio


def one_ply_net(ev: Evaluator, b: np.ndarray) -> np.ndarray:
    """As `one_ply`, for a network judged one afterstate at a time (`probabilities`, not the
    incremental `probabilities_from`), a play that ends the game scored by the rules."""
    total = np.zeros(5)
    for a in range(1, 7):
        for c in range(1, 7):
            plays = engine.legal_plays(engine.Position(b), (a, c))
            boards = np.stack([p.position.board for p in plays]) if plays else b[None]
            won = engine.game_value(boards)
            p = np.array([ev.probabilities(x[None])[0] for x in boards], dtype=np.float64)
            for k in np.flatnonzero(won):
                p[k] = [1, won[k] >= 2, won[k] >= 3, 0, 0]
            eq = 2 * p[:, 0] - 1 + p[:, 1] + p[:, 2] - p[:, 3] - p[:, 4]
            total += p[int(np.argmax(eq))] / 36
    return total


def random_net() -> Evaluator:
    """A small numpy network with random weights (its outputs vary from play to play)."""
    config = NetConfig("tesauro", (16,), "sigmoid")
    rng = np.random.default_rng(3)
    weights = [
        (rng.normal(0, 0.3, (o, i)).astype(np.float32), rng.normal(0, 0.3, o).astype(np.float32))
        for i, o in zip(config.sizes[:-1], config.sizes[1:], strict=True)
    ]
    return Evaluator(config, weights)


def test_luck_with_a_network_is_exact_on_every_trial():
    # The luck step judges the 21 rolls' plays of all distinct boards of a ply at once,
    # with the network's incremental first layer; the one-ply value it subtracts must
    # match a plain evaluation of every play, roll by roll, board by board. The second
    # board is a race that some rolls end (not a bear-off of both sides, which the
    # databases would decide: there the win is certain and the luck nil).
    ev = random_net()
    boards = [contact_position(), board({1: 2, 2: 1, 3: 1}, {7: 5, 5: 5, 4: 3})]
    settings = Settings(trials=50, truncate=1, quasi_random=False, seed=6)
    # Rolled out as afterstates of the other side: both boards go through each ply together.
    after = np.stack([b[::-1] for b in boards])
    results = rollout_afterstates(after, TDAgent(ev, plies=0), settings=settings)
    for b, r in zip(boards, results, strict=True):
        assert r.luck_adjusted and np.abs(r.luck).max() > 1e-3
        expected = invert(one_ply_net(ev, b))
        np.testing.assert_allclose(r.values, np.tile(expected, (50, 1)), atol=1e-5)


class OnlyPlays:
    """An agent that is nothing but another's `choose_boards`."""

    def __init__(self, agent: TDAgent) -> None:
        self.choose_boards = agent.choose_boards


def test_a_zero_ply_agent_on_the_luck_network_plays_as_when_asked():
    # A 0-ply td agent on the luck step's own network is not asked for its plays: the luck
    # step's best play for the roll stands in. The same agent behind a wrapper is asked;
    # every trial must come out the same.
    ev = random_net()
    settings = Settings(trials=36, truncate=10, seed=8)
    reused = rollout_position(contact_position(), TDAgent(ev, plies=0), settings=settings)
    asked = rollout_position(
        contact_position(), OnlyPlays(TDAgent(ev, plies=0)), evaluator=ev, settings=settings
    )
    np.testing.assert_array_equal(reused.raw, asked.raw)
    np.testing.assert_array_equal(reused.luck, asked.luck)
    np.testing.assert_array_equal(reused.plies, asked.plies)


def test_plays_share_dice_streams_and_processes_do_not_change_results():
    ev = RaceEvaluator()
    b = engine.Position.start().board
    plays = engine.legal_plays(engine.Position(b), (3, 1))
    a = plays[0].position.board
    settings = Settings(trials=40, chunk=16, truncate=12, seed=2)
    one, two = rollout_afterstates(np.stack([a, a]), TDAgent(ev), settings=settings)
    np.testing.assert_array_equal(one.values, two.values)
    (forked,) = rollout_afterstates(a[None], TDAgent(ev), settings=settings, jobs=2)
    np.testing.assert_array_equal(forked.raw, one.raw)
    np.testing.assert_array_equal(forked.luck, one.luck)


def test_rolled_out_plays_come_best_first_with_paired_differences():
    ev = RaceEvaluator()
    b = engine.Position.start().board
    settings = Settings(trials=36, truncate=6, seed=4)
    plays = rollout_plays(b, (6, 5), TDAgent(ev), candidates=3, settings=settings)
    assert len(plays) == 3
    eqs = [x.result.estimate().equity for x in plays]
    assert eqs == sorted(eqs, reverse=True)
    assert plays[0].diff.equity == 0.0 and plays[0].diff.equity_se == 0.0
    for x in plays[1:]:
        paired = x.result.values @ [2, 1, 1, -1, -1] - plays[0].result.values @ [2, 1, 1, -1, -1]
        assert x.diff.equity == pytest.approx(paired.mean(), abs=1e-12)


def test_ctrl_c_keeps_the_finished_chunks():
    calls = []

    def interrupt(results):
        calls.append(results[0].trials)
        if len(calls) == 2:
            raise KeyboardInterrupt

    settings = Settings(trials=100, chunk=20, truncate=2, seed=1)
    r = rollout_position(
        contact_position(), TDAgent(RaceEvaluator()), settings=settings, progress=interrupt
    )
    assert r.interrupted and r.trials == calls[-1] and 0 < calls[0] < calls[1] < 100
    # What was kept is the start of the uninterrupted rollout: the same trials, dice, values.
    whole = rollout_position(contact_position(), TDAgent(RaceEvaluator()), settings=settings)
    assert not whole.interrupted and whole.trials == 100
    np.testing.assert_array_equal(r.raw, whole.raw[: r.trials])
    np.testing.assert_array_equal(r.luck, whole.luck[: r.trials])


def test_the_first_units_of_a_rollout_are_small_and_cover_every_trial_once():
    """Progress and an early Ctrl-C need small first units; every trial is in one unit,
    in order, and no unit exceeds the chunk."""
    for trials, chunk in ((1296, 216), (100, 20), (5, 216), (1, 1), (1000, 3)):
        units = growing_chunks(trials, chunk)
        assert [t for u in units for t in u] == list(range(trials))
        assert len(units[0]) == 1 and max(len(u) for u in units) <= chunk


def test_truncation_without_a_network_is_an_error():
    from agents.pubeval import PubevalAgent

    with pytest.raises(ValueError, match="needs a network"):
        rollout_position(contact_position(), PubevalAgent(), settings=Settings(truncate=3))
    r = rollout_position(contact_position(), PubevalAgent(), settings=Settings(trials=4))
    assert not r.luck_adjusted and "luck" not in r.se_cut()


def test_cube_analysis_reads_the_money_decision_from_the_rolled_out_probabilities():
    from vrhcaby.equity.cube import money_cube_decision

    b = contact_position()
    r = rollout_position(b, TDAgent(RaceEvaluator()), settings=Settings(trials=72, truncate=2))
    e = r.estimate()
    c = cube_analysis(e, b, CubeSetting())
    ref = money_cube_decision(np.clip(e.mean, 0, 1), x=0.68, jacoby=False)
    assert (c.decision.action, c.decision.nd, c.decision.dt) == (ref.action, ref.nd, ref.dt)
    assert c.nd_se > 0 and c.dt_se > 0


# --- the command -----------------------------------------------------------------------


def run_command(argv: list[str], monkeypatch) -> int:
    import vrhcaby.cli.main as cli

    monkeypatch.setattr(cli, "COMMANDS", ("rollout",))
    return cli.main(["rollout", *argv])


@pytest.fixture
def tiny_net(tmp_path: Path) -> str:
    config = NetConfig("tesauro", (8,), "sigmoid")
    rng = np.random.default_rng(0)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(config.sizes[:-1], config.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.1, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = np.zeros(n_out, np.float32)
    path = tmp_path / "tiny.pt"
    checkpoint.save(path, arrays, {"net": config.to_dict(), "config": {"variant": "standard"}})
    return str(path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["4HPwATDgc/ABMA", "--trials", "0"], "--trials must be at least 1"),
        (["4HPwATDgc/ABMA", "--truncate", "-1"], "--truncate must be at least 1"),
        (["4AAAAAAAAAAAAA", "52"], "no side is on roll"),
        (["4HPwATDgc/ABMA:cBEAAAAAAAAE", "52"], "no side is on roll"),  # a double pending
        (["4HPwATDgc/ABMA", "72"], "dice '72'"),
        (["4HPwATDgc/ABMA", "--agent", "pubeval", "--truncate", "3"], "needs a network"),
    ],
)
def test_bad_input_is_a_one_line_error(argv, message, monkeypatch, capsys):
    assert run_command(argv, monkeypatch) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_command_rolls_out_a_position_and_its_plays(tiny_net, monkeypatch, capsys):
    common = ["--agent", f"td:{tiny_net}", "--trials", "36", "--truncate", "4", "--json"]
    assert run_command(["4HPwATDgc/ABMA", *common], monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rollout"]["trials"] == 36 and out["cube"]["action"] in (
        "no double",
        "double, take",
        "double, pass",
        "too good",
    )
    lo, hi = out["rollout"]["equity_ci95"]
    assert lo <= out["rollout"]["equity"] <= hi
    assert run_command(["4HPwATDgc/ABMA", "31", "--candidates", "2", *common], monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["plays"][0]["diff"] == 0.0 and len(out["plays"]) == 2
    legal = {str(p) for p in engine.legal_plays(engine.Position.start(), (3, 1))}
    assert {p["play"] for p in out["plays"]} <= legal
    # Each play's resulting position: the mover still on roll, and the opponent on roll.
    for p in out["plays"]:
        after = engine.Play.parse(p["play"], engine.Position.start(), (3, 1)).position
        assert p["position_id"] == after.position_id()
        assert engine.Position.from_id(p["next_position_id"]).board.tolist() == (
            after.board[::-1].tolist()
        )
    text_args = ["4HPwATDgc/ABMA", "--agent", f"td:{tiny_net}", "--trials", "8", "--truncate", "2"]
    assert run_command([*text_args, "--match-id", "cAngACAAIAAE"], monkeypatch) == 0
    text = capsys.readouterr().out
    assert "cube decision" in text
    heads = ["win", "win gammon", "win bg", "lose gammon", "lose bg"]  # the table's columns
    assert "".join(f"{h:>13}" for h in heads) in text


def test_the_command_plays_money_by_gnubg_rules_unless_told(tiny_net, monkeypatch, capsys):
    from vrhcaby.equity import cube

    common = ["--agent", f"td:{tiny_net}", "--trials", "36", "--truncate", "2", "--json"]
    x = cube.cube_efficiency("contact")
    for flags, jacoby, beavers in (
        ([], True, True),
        (["--no-beavers"], True, False),
        (["--no-jacoby", "--no-beavers"], False, False),
    ):
        assert run_command(["4HPwATDgc/ABMA", *common, *flags], monkeypatch) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["jacoby"], out["beavers"]) == (jacoby, beavers)
        rules = "Jacoby rule" if jacoby else "no Jacoby rule"
        assert (
            f"money ({rules}, {'beavers allowed' if beavers else 'no beavers'})"
            in (out["settings"])
        )
        p = np.array(out["rollout"]["probabilities"])
        ref = cube.money_cube_decision(p, x=x, jacoby=jacoby, beavers=beavers)
        assert out["cube"]["no_double"] == pytest.approx(ref.nd, abs=1e-9)
        assert out["cube"]["action"] == ref.action
    # A Match ID's Jacoby bit (cAkAAAAAAAAE: off) is the position's rule.
    assert run_command(["4HPwATDgc/ABMA:cAkAAAAAAAAE", *common], monkeypatch) == 0
    assert json.loads(capsys.readouterr().out)["jacoby"] is False


def test_the_parser_takes_the_documented_options():
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(
        ["rollout", "4HPwATDgc/ABMA", "52", "--no-luck", "--no-quasi-random", "--cubeful"]
    )
    assert (args.dice, args.luck, args.quasi_random, args.cubeful) == ("52", False, False, True)
    assert engine.parse_dice("5-2") == (5, 2) and engine.parse_dice("6,6") == (6, 6)


def test_a_play_that_wins_rolls_out_first_to_its_points():
    # 2-1 bears both checkers off; the other play leaves one, and the opponent's last
    # checker comes off with any roll.
    b = board({1: 1, 2: 1}, {1: 1})
    agent = TDAgent(RaceEvaluator())
    plays = rollout_plays(b, (2, 1), agent, settings=Settings(trials=36))
    assert len(plays) == len(engine.legal_plays(engine.Position(b), (2, 1))) == 2
    won, lost = (x.result.estimate() for x in plays)
    assert plays[0].play.position.borne_off()[0] == 15
    assert (won.equity, won.equity_se, lost.equity, lost.equity_se) == (1.0, 0.0, -1.0, 0.0)
    assert (plays[1].diff.equity, plays[1].diff.equity_se) == (-2.0, 0.0)


# --- the network kernel of the luck step ------------------------------------------------


@pytest.mark.parametrize(
    ("activation", "width"), [("sigmoid", 37), ("tanh", 37), ("relu", 37), ("sigmoid", 3)]
)
def test_the_incremental_network_kernel_is_the_dense_product(activation, width):
    # Every afterstate of 21 rolls from boards of random games, as the luck step asks for
    # them, against the plain float64 product of the Tesauro inputs; large weights push
    # hidden and output units deep into saturation. A layer narrower than the five
    # outputs once overran the kernel's scratch space.
    from vrhcaby.nn.encode import get_encoding

    config = NetConfig("tesauro", (width,), activation)
    rng = np.random.default_rng(11)
    weights = [
        (rng.normal(0, 2.0, (o, i)).astype(np.float32), rng.normal(0, 2.0, o).astype(np.float32))
        for i, o in zip(config.sizes[:-1], config.sizes[1:], strict=True)
    ]
    ev = Evaluator(config, weights)
    roots = []
    b = np.repeat(engine.Position.start().board[None], 8, axis=0)
    for _ in range(40):
        after, parent = engine.batch_afterstates(b, engine.roll_dice(rng, len(b)))
        pick = np.searchsorted(parent, np.arange(len(b)))[np.bincount(parent, minlength=len(b)) > 0]
        roots.append(b)
        b = after[pick]
        b = b[engine.game_value(b) == 0][:, ::-1].copy()
    roots = np.concatenate(roots)
    reps = np.repeat(roots, 21, axis=0)
    rolls = np.array(ROLLS * len(roots))
    after, parent = engine.batch_afterstates(reps, rolls)
    x = get_encoding("tesauro")[0](after).astype(np.float64)
    act = {
        "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
        "tanh": np.tanh,
        "relu": lambda z: np.maximum(z, 0),
    }[activation]
    (w1, b1), (w2, b2) = weights
    c = 1 / (1 + np.exp(-(act(x @ w1.T.astype(np.float64) + b1) @ w2.T + b2)))
    win, lg = c[:, 0], (1 - c[:, 0]) * c[:, 3]
    dense = np.stack([win, win * c[:, 1], win * c[:, 1] * c[:, 2], lg, lg * c[:, 4]], axis=1)
    dense = obey_rules(after, dense)  # as every evaluator's outputs
    assert len(after) > 10_000 and (np.abs(x @ w1.T) > 20).mean() > 0.05
    np.testing.assert_allclose(ev.probabilities_from(roots, after, parent // 21), dense, atol=2e-5)
    np.testing.assert_allclose(ev.probabilities(after), dense, atol=2e-5)


# --- the cube in the trials ---------------------------------------------------------------


def test_a_sure_win_is_double_pass_by_the_rules():
    # The side on roll bears off its last two checkers with any roll; the other side has
    # one off: a single game. Playing on wins 1, a double taken 2, a pass 1.
    b = board({1: 2}, {6: 14})
    setting = CubeSetting()
    r = rollout_position(
        b, TDAgent(RaceEvaluator()), settings=Settings(trials=72, seed=2), cube=setting
    )
    np.testing.assert_array_equal(r.cubeful, np.tile([1.0, 2.0], (72, 1)))
    c = cube_rollout(r, setting)
    assert (c.nd, c.dt, c.dp, c.nd_se, c.dt_se) == (1.0, 2.0, 1.0, 0.0, 0.0)
    assert c.action == "double, pass" and c.optimal == 1.0


def test_a_hopeless_position_is_no_double_and_a_double_loses_twice_the_stake():
    # The side on roll cannot get its 14 checkers off in one turn; the other side's last
    # checker comes off with any roll. Whatever either side does with the cube, the side
    # on roll loses 1 (a double is passed or the game is played out) or, doubling, 2.
    b = board({6: 14}, {1: 1})
    setting = CubeSetting()
    r = rollout_position(
        b, TDAgent(RaceEvaluator()), settings=Settings(trials=72, seed=2), cube=setting
    )
    np.testing.assert_array_equal(r.cubeful, np.tile([-1.0, -2.0], (72, 1)))
    c = cube_rollout(r, setting)
    assert c.action == "no double" and abs(c.nd + 1) < 1e-9 and abs(c.dt + 2) < 1e-9
    assert c.versus_optimal["double, take"][0] == pytest.approx(-1.0)


def test_the_jacoby_rule_scores_a_sure_backgammon_single_while_the_cube_is_centred():
    # The side on roll has three checkers on its 1-point, the other side all fifteen on
    # its 19-point (the side on roll's home board), which it cannot all leave in one
    # turn: a backgammon whatever the dice. By the rules: 3 points on the centred cube
    # without the Jacoby rule, 1 with it; on the doubled line (cube 2, turned) 6 either way.
    b = board({1: 3}, {19: 15})
    agent = TDAgent(RaceEvaluator())
    for jacoby, expected in ((False, [3.0, 6.0]), (True, [1.0, 6.0])):
        setting = CubeSetting(jacoby=jacoby, beavers=True)
        r = rollout_position(b, agent, settings=Settings(trials=36, seed=4), cube=setting)
        np.testing.assert_array_equal(r.cubeful, np.tile(expected, (36, 1)))
        np.testing.assert_array_equal(r.raw[:, 2], 1.0)  # every trial a backgammon


def test_the_centred_cube_before_the_opening_rolls_out_to_zero():
    from agents.pubeval import PubevalAgent

    start = engine.Position.start().board
    r = rollout_position(
        start,
        PubevalAgent(),
        evaluator=RaceEvaluator(),
        opening=True,
        cube=CubeSetting(),
        settings=Settings(trials=360, truncate=8, seed=7),
    )
    assert r.cubeful.shape == (360, 1)  # nobody may double before the opening roll
    mean, se = r.cubeful_estimate()
    assert 0 < se < 0.3 and abs(mean) <= Z * se
    assert np.abs(r.cubeful).max() > 1  # the cube was turned in some trials


def test_a_cube_that_cannot_turn_leaves_the_cubeless_results():
    # Money with the cube at 64 (no higher): each trial's cubeful result is its cubeless
    # equity, luck included. Crawford game: the match equity of each trial's outcome.
    from vrhcaby.equity.met import KAZAROSS_XG2, mwc_to_emg

    b = board({1: 3, 2: 2, 4: 2}, {1: 2, 3: 3, 5: 2, 20: 1})
    agent = TDAgent(RaceEvaluator())
    settings = Settings(trials=72, seed=3)
    money = rollout_position(b, agent, settings=settings, cube=CubeSetting(64, "centre"))
    assert money.cubeful.shape == (72, 1)
    eq = money.raw @ [2, 1, 1, -1, -1] - 1
    assert len(set(eq.tolist())) > 1
    np.testing.assert_allclose(money.cubeful[:, 0], eq, atol=1e-12)
    np.testing.assert_allclose(money.cubeful_luck[:, 0], money.luck @ [2, 1, 1, -1, -1], atol=1e-12)
    crawford = CubeSetting(1, "centre", 5, (3, 1), crawford=True)
    match = rollout_position(b, agent, settings=settings, cube=crawford)
    np.testing.assert_array_equal(match.raw, money.raw)
    points = 1 + match.raw[:, 1] + match.raw[:, 2] + match.raw[:, 3] + match.raw[:, 4]
    won = match.raw[:, 0] == 1
    expected = [
        mwc_to_emg(
            KAZAROSS_XG2.outcome(3, 1, int(p), bool(w), crawford=True), 3, 1, 1, crawford=True
        )
        for p, w in zip(points, won, strict=True)
    ]
    np.testing.assert_allclose(match.cubeful[:, 0], expected, atol=1e-12)
    assert not match.cubeful_luck.any()  # no cubeful luck in match play


def test_plays_roll_out_with_the_cube_alive():
    # 2-1 bears both checkers off and wins 1; after the other play the opponent's last
    # checker comes off with any roll, and the mover loses 1 whatever the cube does.
    b = board({1: 1, 2: 1}, {1: 1})
    plays = rollout_plays(
        b, (2, 1), TDAgent(RaceEvaluator()), settings=Settings(trials=36), cube=CubeSetting()
    )
    assert [x.result.cubeful_estimate() for x in plays] == [(1.0, 0.0), (-1.0, 0.0)]


def test_the_command_rolls_out_the_cube_in_the_trials(tiny_net, monkeypatch, capsys):
    common = ["--agent", f"td:{tiny_net}", "--trials", "36", "--truncate", "4", "--json"]
    assert run_command(["4HPwATDgc/ABMA", *common, "--cubeful-trials"], monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    rolled, janowski = out["cube_rollout"], out["cube"]
    assert set(janowski) >= {"action", "no_double", "double_take", "cubeful"}  # as before
    assert rolled["double_pass"] == 1.0 and rolled["no_double_se"] > 0
    best = max(rolled["no_double"], min(rolled["double_take"], rolled["double_pass"]))
    assert rolled["cubeful"] == pytest.approx(best)
    assert rolled["versus_optimal"][rolled["action"]]["difference"] == 0.0
    argv = ["4HPwATDgc/ABMA", "31", "--candidates", "2", *common, "--cubeful-trials"]
    assert run_command(argv, monkeypatch) == 0
    plays = json.loads(capsys.readouterr().out)["plays"]
    assert all(p["cubeful_rollout_se"] > 0 for p in plays)
    assert run_command([*argv, "--no-cubeful"], monkeypatch) == 2
    assert "contradict" in capsys.readouterr().err
