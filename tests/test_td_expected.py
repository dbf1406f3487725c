"""Self-play on expected backups (`td.backup = "expected"`): each afterstate's backup is its
one-ply value, as the td agent's own look-ahead computes it, and learning moves towards it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from agents.td import TDAgent
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.learner import Learner
from vrhcaby.learn.selfplay import SelfPlay, weights_from_model
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn import checkpoint
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, joint

CPU = torch.device("cpu")
SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints" / "td-best.pt"


def selfplay(expected: bool, net: NetConfig | None = None) -> tuple[SelfPlay, torch.nn.Module]:
    """Self-play with a small random network (Tesauro inputs: its games end in a few
    hundred plies)."""
    torch.manual_seed(11)
    net = net or NetConfig(hidden=(12,))
    model = build_model(net)
    return SelfPlay(model, net, "standard", CPU, expected=expected), model


def shipped_selfplay() -> tuple[SelfPlay, torch.nn.Module]:
    """Self-play with the shipped network (rich inputs; random rich networks can hit back
    and forth for thousands of plies)."""
    arrays, meta = checkpoint.load(SHIPPED)
    net = NetConfig.from_dict(meta["net"])
    model = build_model(net)
    model.load_state_dict(
        {
            k[len("model/") :]: torch.from_numpy(v)
            for k, v in arrays.items()
            if k.startswith("model/")
        }
    )
    return SelfPlay(model, net, "standard", CPU, expected=True), model


@pytest.mark.parametrize("epsilon", [0.0, 0.3])
@pytest.mark.parametrize("shipped", [False, True])
def test_backups_are_the_one_ply_values_of_the_afterstates(shipped: bool, epsilon: float) -> None:
    sp, model = shipped_selfplay() if shipped else selfplay(True)
    episodes = sp.play(3 if shipped else 8, np.random.default_rng(3), epsilon)
    assert episodes.backups is not None
    assert episodes.backups.shape == (*episodes.movers.shape, 5)
    trained = episodes.trained()
    # The td agent's 1-ply look-ahead, a separate code path: every roll's replies, the
    # best by equity, averaged over the dice and seen from the afterstate's mover.
    agent = TDAgent(Evaluator(sp.net, weights_from_model(model)), plies=0)
    want = agent.probabilities(episodes.states[trained], 1)
    np.testing.assert_allclose(episodes.backups[trained], want, atol=2e-6)


def test_expected_selfplay_plays_the_same_greedy_games() -> None:
    sampled, _ = selfplay(False)
    expected, _ = selfplay(True)
    a = sampled.play(10, np.random.default_rng(21))
    b = expected.play(10, np.random.default_rng(21))
    assert a.backups is None
    np.testing.assert_array_equal(a.lengths, b.lengths)
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.values, b.values)
    assert b.evaluated > 10 * a.evaluated  # all 21 rolls, not the one that came


def test_expected_selfplay_explores_with_legal_plays() -> None:
    sp, _ = selfplay(True)
    greedy = sp.play(6, np.random.default_rng(5))
    explored = sp.play(6, np.random.default_rng(5), epsilon=0.5)
    assert explored.states.shape != greedy.states.shape or (explored.states != greedy.states).any()
    for g, n in enumerate(explored.lengths):
        states = explored.states[:n, g]
        before = states[:-1, ::-1]
        for t in range(1, n):  # each afterstate is reachable with some roll, or a pass
            rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
            after, _ = engine.batch_afterstates(np.repeat(before[t - 1 : t], 21, axis=0), rolls)
            reachable = (after == states[t]).all(axis=(1, 2)).any()
            assert reachable or (states[t] == before[t - 1]).all(), (g, t)


def test_the_learner_steps_towards_the_backups() -> None:
    net = NetConfig(hidden=(12,))
    sp, model = selfplay(True, net)
    episodes = sp.play(6, np.random.default_rng(8))
    trained = episodes.trained()
    states = episodes.states[trained]
    x = torch.from_numpy(net.encode(states))
    with torch.no_grad():  # both sides of the loss obey the rules (bear-offs: the database)
        p = obey_rules(states, joint(model(x)).numpy())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    stats = Learner(model, optimizer, Backgammon(net, "standard"), CPU).update(episodes, lam=0.0)
    target = obey_rules(states, episodes.backups[trained])
    want = 0.5 * ((target - p) ** 2).sum() / len(p)
    assert stats.loss == pytest.approx(want, rel=1e-4)
    with torch.no_grad():
        after = obey_rules(states, joint(model(x)).numpy())
    assert ((target - after) ** 2).sum() < ((target - p) ** 2).sum()


def test_a_trainer_on_expected_backups_learns_and_its_config_is_checked() -> None:
    td = TDConfig(batch_games=6, games_per_update=3, backup="expected", lam=0.0, lam_end=0.0)
    trainer = Trainer(NetConfig(hidden=(5,)), td, "nackgammon", 12, 2, CPU)
    first = trainer.weights()
    stats = trainer.round()
    assert stats.games == 6 and stats.update.positions > 6 * 10
    assert np.isfinite(stats.update.loss) and stats.evaluated > 20 * stats.plies
    assert any((first[k] != v).any() for k, v in trainer.weights().items())
    with pytest.raises(ValueError, match=r"unknown td\.backup 'onestep'"):
        TDConfig(backup="onestep")
    with pytest.raises(ValueError, match="acey-deucey"):
        Backgammon(NetConfig(hidden=(5,)), "acey-deucey", "expected")


def test_the_device_evaluator_agrees_with_the_numpy_one() -> None:
    from vrhcaby.learn.selfplay import _TorchEvaluator

    sp, model = shipped_selfplay()
    boards = np.repeat(engine.Position.start().board[None], 21, axis=0)
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
    after, _ = engine.batch_afterstates(boards, rolls)
    numpy_p = Evaluator(sp.net, weights_from_model(model)).probabilities(after)
    np.testing.assert_allclose(_TorchEvaluator(sp).probabilities(after), numpy_p, atol=1e-6)
