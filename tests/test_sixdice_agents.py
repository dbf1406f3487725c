"""The six-dice players: the dynamic program against a plain reference over ordered dice,
simulation against the computed expectations, the learned agent's machinery (its training
through the project's trainer: tests/test_train_sixdice.py)."""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from engine import sixdice as sd
from tests.test_sixdice import NAMES, ref_score
from vrhcaby.sixdice import learner as td
from vrhcaby.sixdice import players as ag
from vrhcaby.sixdice.specs import load_dice_agent

# --- a plain reference: dice as six ordered positions, keeps as position subsets -----

THROWS = list(itertools.product(range(1, 7), repeat=6))
KEEP_MASKS = list(range(63))  # which positions stay; 63 (keep all) is no re-throw


@cache
def ref_scores(category: int) -> np.ndarray:
    memo: dict[tuple[int, ...], int] = {}
    out = np.empty(len(THROWS))
    for i, t in enumerate(THROWS):
        key = tuple(sorted(t))
        if key not in memo:
            memo[key] = ref_score(key, NAMES[category])
        out[i] = memo[key]
    return out.reshape((6,) * 6)


def rethrow_best(u: np.ndarray) -> np.ndarray:
    """Best expected value over which positions to keep, for each ordered throw."""
    best = np.full(u.shape, -np.inf)
    for keep in KEEP_MASKS:
        axes = tuple(p for p in range(6) if not keep >> p & 1)
        best = np.maximum(best, u.mean(axis=axes, keepdims=True))
    return best


def ref_solitaire(masks: list[int], top_bank: int) -> dict[tuple[int, int], float]:
    """Expected future points of sheet states (mask, bank), masks in order of increasing
    size, each mask's sub-masks listed before it; banks up to `top_bank` for the largest
    masks and two more per category fewer."""
    biggest = max(bin(m).count("1") for m in masks)
    values = {(0, b): float(b) for b in range(top_bank + 2 * biggest + 1)}
    for mask in masks:
        cats = [c for c in range(12) if mask >> c & 1]
        u_prev = None
        for n in range(top_bank + 2 * (biggest - len(cats)) + 3):
            stop = np.max(
                [ref_scores(c) + values.get((mask & ~(1 << c), n), np.nan) for c in cats], axis=0
            )
            u = stop if u_prev is None else np.maximum(stop, rethrow_best(u_prev))
            if n >= 2:
                values[(mask, n - 2)] = float(u.mean())
            u_prev = u
    return values


def test_optimal_table_matches_reference_on_small_sheets() -> None:
    table = ag.solve(max_open=2)
    singles = [1 << 0, 1 << 6, 1 << 7, 1 << 11]
    pairs = [(1 << 0) | (1 << 11), (1 << 6) | (1 << 7)]
    ref = ref_solitaire(singles + pairs, top_bank=6)
    for (mask, bank), v in ref.items():
        if mask:
            assert table[mask, bank] == pytest.approx(v, abs=1e-9), (mask, bank)
    # The last category alone: Ones is never worth a re-throw (one point per throw at most
    # five sixths of a point), so its value is the first throw's ones plus the bank.
    assert table[1, :23] == pytest.approx(1.0 + 2 + np.arange(23))
    assert np.isnan(table[1, 23:]).all()


def test_harsh_table_matches_reference() -> None:
    table = ag.solve(harsh=True, max_open=2)
    turn = {}
    for c in range(12):
        u = ref_scores(c)
        for _ in range(2):
            u = np.maximum(u, rethrow_best(u))
        turn[c] = u
    for mask in [1 << 6, 1 << 9, (1 << 6) | (1 << 9), (1 << 3) | (1 << 10)]:
        cats = [c for c in range(12) if mask >> c & 1]
        expected = np.max([turn[c] + table[mask & ~(1 << c), 0] for c in cats], axis=0).mean()
        assert table[mask, 0] == pytest.approx(expected, abs=1e-9)
    single = [float(turn[c].mean()) for c in range(12)]
    assert table[[1 << c for c in range(12)], 0] == pytest.approx(single)


def test_self_play_confirms_the_table() -> None:
    table = ag.solve(max_open=3)
    start = (1 << 6) | (1 << 8) | (1 << 11)
    play = ag.self_play(ag.table_values(table), 2500, np.random.default_rng(7), start, 4)
    totals = play.totals
    se = totals.std(ddof=1) / np.sqrt(len(totals))
    assert abs(totals.mean() - table[start, 4]) < 4 * se
    # Each recorded backup is the table's value of the state it was taken in.
    np.testing.assert_allclose(play.backups, table[play.masks[:-1], play.banks[:-1]])
    assert (play.masks[-1] == 0).all()


def _fill(game: sd.Game, open_set: int, bank: int) -> None:
    for sheet in game.sheets:
        sheet.scores = [None if open_set >> c & 1 else 0 for c in range(12)]
        sheet.bonus = bank


def _engine_totals(agent: ag.DiceAgent, open_set: int, bank: int, games: int) -> np.ndarray:
    rng = np.random.default_rng(11)
    totals = []
    for _ in range(games):
        game = sd.Game(1, rng)
        _fill(game, open_set, bank)
        while not game.over:
            ag.apply(game, agent.decide(game.view()))
        totals.append(game.sheets[0].total)
    return np.array(totals)


def test_agents_through_the_engine_on_a_short_sheet() -> None:
    table = ag.solve(max_open=3)
    start = (1 << 5) | (1 << 7) | (1 << 10)
    optimal = ag.ValueAgent("optimal", ag.table_values(table))
    totals = _engine_totals(optimal, start, 2, 250)
    se = totals.std(ddof=1) / np.sqrt(len(totals))
    assert abs(totals.mean() - table[start, 2]) < 4 * se
    greedy = _engine_totals(ag.GreedyAgent(), start, 2, 250)
    rand = _engine_totals(ag.RandomAgent(np.random.default_rng(0)), start, 2, 250)
    assert rand.mean() < greedy.mean() < table[start, 2]


def test_value_agent_options_are_consistent() -> None:
    table = ag.solve(max_open=2)
    agent = ag.ValueAgent("optimal", ag.table_values(table))
    view = sd.TurnView(
        dice=(1, 2, 3, 4, 5, 6),
        open=(1 << 6) | (1 << 0),
        bonus=3,
        free_rethrows=1,
        throw=2,
        harsh=False,
        announced=None,
        player=0,
        totals=(0,),
    )
    opts = agent.options(view)
    values = [v for _, v in opts]
    assert values == sorted(values, reverse=True)
    score = dict((a.category, v) for a, v in opts if isinstance(a, ag.Score))
    assert score[6] == pytest.approx(21 + table[1, 4])
    assert score[0] == pytest.approx(1 + table[1 << 6, 4])
    rethrows = [a for a, _ in opts if isinstance(a, ag.Rethrow)]
    assert len(rethrows) == 63  # every proper subset of six distinct dice
    assert opts[0][0] == ag.Score(6)


def test_play_game_with_every_kind_of_agent() -> None:
    rng = np.random.default_rng(3)
    players = [ag.GreedyAgent(), ag.RandomAgent(np.random.default_rng(1))]
    game = ag.play_game(players, rng)
    assert game.over and all(s.full for s in game.sheets)
    harsh = ag.play_game(players, rng, harsh=True)
    assert harsh.over and all(s.bonus == 0 for s in harsh.sheets)


def test_unknown_agent_spec() -> None:
    with pytest.raises(ValueError, match="unknown dice agent"):
        load_dice_agent("pubeval")
    with pytest.raises(ValueError, match="checkpoint not found"):  # a CheckpointError
        load_dice_agent("td:/nonexistent/x.pt")


# --- the learned agent ---------------------------------------------------------------


def test_expected_backups_match_the_reference_turn() -> None:
    # An arbitrary valuation of the sheets after the turn, not a table of this code's.
    def values(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks)
        return 1.7 * np.asarray(banks) + 3.0 * (masks % 7) + 0.5 * (masks % 5) ** 2

    sheets = [(1 << 6) | (1 << 8), 1 << 9]
    got_m, got_b, got_t = td.expected_backups(values, [*sheets, sheets[0], 0])
    for mask in sheets:
        cats = [c for c in range(12) if mask >> c & 1]
        top = 2 * (12 - len(cats))
        mine = got_m == mask
        assert sorted(got_b[mine]) == list(range(top + 1))  # every bank it can hold, once
        u = None
        for n in range(top + 3):
            stop = np.max([ref_scores(c) + values([mask & ~(1 << c)], [n])[0] for c in cats], 0)
            u = stop if u is None else np.maximum(stop, rethrow_best(u))
            if n >= 2:
                assert got_t[mine & (got_b == n - 2)] == pytest.approx(u.mean()), (mask, n)
    assert 0 not in got_m


def test_successors_are_one_written_category_away() -> None:
    got = td.successors(np.array([0b1011, 0b1011, 1 << 11]))
    assert sorted(got) == [0, 0b0011, 0b1001, 0b1010]


@pytest.mark.slow
def test_shipped_checkpoint_reaches_97_percent_of_the_optimum() -> None:
    net = td.load_net(Path(__file__).resolve().parents[1] / "checkpoints" / "sixdice-td.pt")
    totals = ag.self_play(td.net_values(net), 1000, np.random.default_rng(5)).totals
    half = 1.96 * totals.std(ddof=1) / np.sqrt(len(totals))
    assert totals.mean() - half > 0.97 * ag.optimal_expected_score()
