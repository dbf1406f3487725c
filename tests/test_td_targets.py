"""The trainer's targets obey the rules: on constructed games (a race of 15 checkers a side
played to the end, a small bear-off), the targets `Learner` builds equal a plain λ-return
computed here with the rules applied by hand and bear-offs read from the databases'
tables, and outputs the rules decide give no gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import engine
from engine import bearoff
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.learner import Learner
from vrhcaby.nn.bearoff_db import database
from vrhcaby.nn.net import NetConfig, build_model, joint

CPU = torch.device("cpu")
NET = NetConfig(hidden=(6,))


def flip(v: np.ndarray) -> np.ndarray:
    """The same outcome probabilities from the other side: win, gammons, backgammons swap."""
    return np.array([1 - v[0], v[3], v[4], v[1], v[2]])


def one_sided(db, to_roll: np.ndarray, mover: np.ndarray) -> np.ndarray:
    """The mover's five probabilities in a race of two independent bear-offs, the other
    side on roll: the mover finishing on its n-th roll wins when the other needs more than
    n, and gammons it when its first checker needs more than n; it is gammoned when its own
    first checker needs at least as many rolls as the other needs to finish."""
    r0, f0 = db.rolls[bearoff.row_index(to_roll)], db.first[bearoff.row_index(to_roll)]
    r1, f1 = db.rolls[bearoff.row_index(mover)], db.first[bearoff.row_index(mover)]
    win = gammon = lose_gammon = 0.0
    for n in range(len(r1)):
        win += r1[n] * r0[n + 1 :].sum()
        gammon += r1[n] * f0[n + 1 :].sum()
        lose_gammon += r0[n] * f1[n:].sum()
    return np.array([win, gammon, 0.0, lose_gammon, 0.0])


def by_hand(board: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, str]:
    """`v` for an afterstate (row 1 the mover) with the rules applied, and what decided."""
    db = database()
    roll, mover = board[0].astype(int), board[1].astype(int)
    v = np.array(v, np.float64)
    if mover.sum() == 0:  # the mover won: a gammon if the other has none off, ...
        gammon = roll.sum() == 15
        return np.array([1.0, gammon, gammon and roll[18:].any(), 0, 0]), "over"
    if (roll[6:] == 0).all() and (mover[6:] == 0).all():  # every checker home
        if roll.sum() <= 6 and mover.sum() <= 6:
            win = 1 - db.win[bearoff.row_index(roll), bearoff.row_index(mover)]
            return np.array([win, 0, 0, 0, 0]), "two-sided"
        return one_sided(db, roll, mover), "one-sided"
    # Contact: a checker of one side still has one of the other's ahead of it.
    contact = np.flatnonzero(mover).max() + np.flatnonzero(roll).max() > 23
    rules = {
        (3, 4): mover.sum() < 15,  # the mover has borne off: no gammon loss
        (1, 2): roll.sum() < 15,
        (4,): not contact and not mover[18:].any(),  # no way back into the winner's home
        (2,): not contact and not roll[18:].any(),
    }
    for outputs, applies in rules.items():
        if applies:
            v[list(outputs)] = 0
    return v, "rules" if any(rules.values()) else "none"


def random_game(mover: np.ndarray, roll: np.ndarray, seed: int) -> tuple[np.ndarray, int]:
    """The afterstates of a game played by uniformly random legal plays from a position
    (`roll` on roll), and its result for the last mover."""
    rng = np.random.default_rng(seed)
    board = np.stack([mover, roll]).astype(np.int8)  # row 1 on roll
    states = []
    while True:
        after, _ = engine.batch_afterstates(board[None], engine.roll_dice(rng, 1))
        chosen = after[rng.integers(len(after))] if len(after) else board
        states.append(chosen)
        won = int(engine.game_value(chosen[None])[0])
        if won:
            return np.array(states), won
        board = chosen[::-1].copy()


def row(points: dict[int, int]) -> np.ndarray:
    r = np.zeros(25, np.int8)
    for point, n in points.items():
        r[point - 1] = n
    return r


def episodes_of(games: list[tuple[np.ndarray, int]]) -> Episodes:
    steps = max(len(s) for s, _ in games)
    states = np.zeros((steps, len(games), 2, 25), np.int8)
    movers = np.zeros((steps, len(games)), np.int8)
    for g, (s, _) in enumerate(games):
        states[: len(s), g], movers[: len(s), g] = s, np.arange(len(s)) % 2
    lengths = np.array([len(s) for s, _ in games])
    return Episodes(states, movers, lengths, np.array([w for _, w in games], np.int8), 0)


# A race of 15 checkers a side, some still in the other's home board (backgammons live),
# played to the end; and a small bear-off (both databases).
RACE = (row({24: 2, 12: 3, 8: 4, 6: 3, 4: 3}), row({23: 1, 11: 5, 9: 3, 5: 3, 2: 3}))
SMALL = (row({8: 2, 6: 2, 3: 3}), row({7: 1, 5: 3, 2: 3}))
HOME = (row({6: 2, 5: 3, 3: 3}), row({6: 1, 5: 3, 2: 3}))  # every checker home


@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
def test_targets_equal_the_lambda_returns_with_the_rules_applied_by_hand(lam: float) -> None:
    games = [random_game(*RACE, seed=3), random_game(*SMALL, seed=4), random_game(*RACE, seed=5)]
    episodes = episodes_of(games)
    torch.manual_seed(0)
    model = build_model(NET)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    learner = Learner(model, sgd, Backgammon(NET, "standard"), CPU)
    got = learner.targets(episodes, lam)
    want, kinds = {}, []
    for game, (states, won) in enumerate(games):
        with torch.no_grad():
            raw = joint(model(torch.from_numpy(NET.encode(states)))).numpy()
        values = [by_hand(b, v)[0] for b, v in zip(states, raw, strict=True)]
        g = np.array([1.0, won >= 2, won >= 3, 0, 0])  # the last state: the result
        for t in range(len(states) - 2, -1, -1):  # each return what the rules leave
            g, kind = by_hand(states[t], flip((1 - lam) * values[t + 1] + lam * g))
            want[t, game] = g
            kinds.append(kind)
    # The episodes hold states of every kind the rules treat.
    for kind in ("none", "rules", "one-sided", "two-sided"):
        assert kind in kinds, kind
    order = [tuple(i) for i in np.argwhere(episodes.trained())]  # the learner's: (t, g)
    np.testing.assert_allclose(got, np.array([want[i] for i in order]), atol=2e-6)


def test_outputs_the_rules_decide_give_no_gradient() -> None:
    """A game of bear-offs only: every target is a database value, and so is the
    prediction fitted, so the step changes nothing; a race game moves the weights."""
    torch.manual_seed(1)
    model = build_model(NET)
    before = [p.detach().clone() for p in model.parameters()]
    sgd = torch.optim.SGD(model.parameters(), lr=0.5)
    learner = Learner(model, sgd, Backgammon(NET, "standard"), CPU)
    small = random_game(*HOME, seed=8)
    assert all(by_hand(b, np.ones(5))[1] in ("one-sided", "two-sided", "over") for b in small[0])
    stats = learner.update(episodes_of([small]), 0.7)
    assert stats.loss == 0 and stats.positions == len(small[0]) - 1
    for p, b in zip(model.parameters(), before, strict=True):
        assert torch.equal(p.detach(), b)
    race = random_game(*RACE, seed=9)
    states = race[0][:-1]
    with torch.no_grad():
        raw = joint(model(torch.from_numpy(NET.encode(states)))).numpy()
    predicted = np.array([by_hand(b, v)[0] for b, v in zip(states, raw, strict=True)])
    want = learner.targets(episodes_of([race]), 0.7)
    stats = learner.update(episodes_of([race]), 0.7)
    assert stats.loss == pytest.approx(0.5 * ((want - predicted) ** 2).sum() / len(states), 1e-5)
    assert any(
        not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
    )
