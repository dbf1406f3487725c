"""Outcome probabilities that obey the rules (`vrhcaby.nn.lawful`), on constructed positions,
through the numpy and torch evaluators, and against GNU Backgammon in bear-offs."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import game_positions

import engine
from agents import load_agent
from vrhcaby.equity.outcomes import invert
from vrhcaby.nn import lawful
from vrhcaby.nn.lawful import obey_rules

torch = pytest.importorskip("torch")


def board(mover: dict[int, int], to_roll: dict[int, int]) -> np.ndarray:
    """An afterstate from {index: checkers}: the side that just moved in row 1."""
    b = np.zeros((2, 25), np.int8)
    for row, side in ((1, mover), (0, to_roll)):
        for i, n in side.items():
            b[row, i] = n
    return b


# Each case: an afterstate and the outputs the rules force to 0 (w, wg, wbg, lg, lbg).
CONTACT_FULL = ({0: 2, 5: 5, 7: 3, 12: 5}, {0: 2, 5: 5, 7: 3, 12: 5})  # the start, in effect
CASES = {
    "contact, nothing borne off": (board(*CONTACT_FULL), ()),
    "mover has borne one off": (board({0: 1, 5: 5, 7: 3, 12: 5}, CONTACT_FULL[1]), (3, 4)),
    "to-roll has borne one off": (board(CONTACT_FULL[0], {0: 1, 5: 5, 7: 3, 12: 5}), (1, 2)),
    "both have borne off, contact": (board({1: 3, 20: 1}, {0: 2, 5: 3, 21: 1}), (1, 2, 3, 4)),
    # races: no checker can be hit any more, so backgammons need a checker left back there
    "race, nobody back": (board({7: 15}, {8: 15}), (2, 4)),
    "race, mover still in their home": (board({20: 1, 8: 14}, {1: 15}), (2,)),
    "race, to-roll still in the mover's home": (board({1: 15}, {19: 2, 3: 13}), (4,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_impossible_outcomes_get_no_chance(name: str) -> None:
    b, zero = CASES[name]
    assert engine.Position(b).classify() in ("contact", "race", "crashed")
    p = np.array([[0.6, 0.3, 0.05, 0.2, 0.02]], np.float32)
    got = obey_rules(b[None], p)
    want = p.copy()
    want[0, list(zero)] = 0
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32
    # torch gives the same, on its tensor, and gradients flow through what is kept
    t = torch.tensor(p, requires_grad=True)
    out = obey_rules(b[None], t)
    np.testing.assert_array_equal(out.detach().numpy(), want)
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), (want != 0).astype(np.float32))


def test_finished_games_get_their_result() -> None:
    boards = np.stack(
        [
            board({}, {0: 5}),  # the mover won a single game
            board({}, {0: 15}),  # a gammon
            board({}, {0: 14, 20: 1}),  # a backgammon: a checker in the winner's home
            board({0: 3}, {}),  # the mover lost a single game
            board({0: 14, 24: 1}, {}),  # lost a backgammon: a checker on the bar
        ]
    )
    got = obey_rules(boards, np.full((5, 5), 0.5))
    want = [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 1, 1]]
    np.testing.assert_array_equal(got, want)


def test_bear_offs_take_the_databases_values() -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    boards = np.stack(
        [
            board({0: 2, 3: 1}, {1: 2, 4: 2}),  # two-sided: exact, no gammons
            board({0: 5, 5: 4}, {2: 3, 4: 3}),  # one-sided, both have borne off
            board({0: 8, 1: 3, 2: 4}, {0: 1, 1: 1}),  # the mover may still be gammoned
        ]
    )
    got = obey_rules(boards, np.full((3, 5), 0.5, np.float32))
    theirs = invert(np.array([gnubg_nn.probabilities(b[::-1].tolist(), 0) for b in boards]))
    np.testing.assert_allclose(got, theirs, atol=2e-4)
    assert (got[:2, 1:] == 0).all() and got[2, 3] > 0.5


def test_hint_from_the_issue_obeys_the_rules() -> None:
    """`vrhcaby hint BQAA+O9SAAAAAA 41`: the other side bears off next roll, so bearing a
    checker off now saves the gammon and any other play loses it, never a backgammon."""
    gnubg_nn = pytest.importorskip("gnubg_nn")
    position = engine.Position.from_id("BQAA+O9SAAAAAA")
    plays = engine.legal_plays(position, (4, 1))
    after = np.stack([p.position.board for p in plays])
    for spec, plies in (("td", 0), ("td:checkpoints/td-80.pt", 0), ("td", 1)):
        got = load_agent(spec).probabilities(after, plies)
        theirs = invert(np.array([gnubg_nn.probabilities(a[::-1].tolist(), 0) for a in after]))
        np.testing.assert_allclose(got, theirs, atol=1e-3)
        saved = np.array([p.position.board[1].sum() < 15 for p in plays])
        assert saved.any() and not saved.all()
        np.testing.assert_allclose(got[:, 3], np.where(saved, 0.0, 1.0), atol=1e-12)
        np.testing.assert_allclose(got[:, [0, 1, 2, 4]], 0, atol=1e-12)


def test_evaluators_never_show_impossible_figures() -> None:
    """Every afterstate of varied games, through the numpy evaluator (both paths): the
    rules written out board by board hold for each."""
    rng = np.random.default_rng(7)
    roots = np.stack(game_positions(6, 11))  # half of them greedy runners: many bear-offs
    dice = rng.integers(1, 7, (len(roots), 2))
    after, parent = engine.batch_afterstates(roots, dice)
    evaluator = load_agent("td").evaluator
    for p in (evaluator.probabilities(after), evaluator.probabilities_from(roots, after, parent)):
        for a, q in zip(after, p, strict=True):
            off_mover, off_to_roll = a[1].sum() < 15, a[0].sum() < 15
            assert not (off_mover and q[3] > 0) and not (off_to_roll and q[1] > 0)
            assert q[2] <= q[1] <= q[0] and q[4] <= q[3] <= 1 - q[0] + 1e-6
            if not engine.has_contact(a):
                assert q[4] == 0 or a[1, 18:].any()
                assert q[2] == 0 or a[0, 18:].any()


def test_the_numba_pass_equals_the_numpy_masks(monkeypatch) -> None:
    rng = np.random.default_rng(8)
    roots = np.stack(game_positions(4, 12))
    after, _ = engine.batch_afterstates(roots, rng.integers(1, 7, (len(roots), 2)))
    p = rng.random((len(after), 5)).astype(np.float32)
    assert len(after) > 1000  # the numba pass
    fast = obey_rules(after, p)
    monkeypatch.setattr(lawful, "in_numpy", lambda rows: True)
    np.testing.assert_array_equal(obey_rules(after, p), fast)
    assert (fast != p).any()
