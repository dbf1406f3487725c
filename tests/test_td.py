"""TD(λ) learning and batched self-play against plain one-game references."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import engine
from tests.test_net import random_positions
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.learner import Learner
from vrhcaby.learn.returns import lambda_returns
from vrhcaby.learn.selfplay import SelfPlay, weights_from_model
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn.encode import encode_tesauro
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, joint

# The linear part of the change of view (a signed permutation, its own transpose).
CHANGE_OF_VIEW = torch.tensor(
    [
        [-1.0, 0, 0, 0, 0],
        [0, 0, 0, 1, 0],
        [0, 0, 0, 0, 1],
        [0, 1, 0, 0, 0],
        [0, 0, 1, 0, 0],
    ]
)


def trace_reference(model, games, lam):
    """Offline TD(λ) with Tesauro's eligibility traces, one game and one move at a time.

    Per output k, the trace e_k <- λ e_k + ∇P_k (its outputs re-expressed in the new
    mover's view when the side changes), and the update accumulates δ_t · e_t, with
    δ_t the one-step error: next value (in this mover's view) minus this value, the final
    result at the end. Values are the network's made to obey the rules (`obey_rules`), as
    the trainer's are: an output the rules decide has no gradient, and its trace starts
    afresh there (its λ-return is the decided value, not a continuation). Weights stay
    fixed during the games; returns the summed update.
    """
    params = list(model.parameters())
    total = [torch.zeros_like(p) for p in params]

    def value(board):  # the value the trainer learns: the network's, obeying the rules
        out = joint(model(torch.from_numpy(encode_tesauro(board[None]))))
        return obey_rules(board[None], out)[0]

    def decided(board):  # the outputs the rules fix: their λ-returns start afresh there
        return torch.from_numpy(~np.isnan(obey_rules(board[None], np.full((1, 5), np.nan))[0]))

    for states, movers, result in games:
        traces = [torch.zeros((5, *p.shape)) for p in params]
        for t in range(len(states) - 1):
            out = value(states[t])
            jac = [torch.autograd.grad(out[k], params, retain_graph=True) for k in range(5)]
            view = CHANGE_OF_VIEW if t and movers[t] != movers[t - 1] else torch.eye(5)
            for j in range(len(params)):
                traces[j] = lam * torch.einsum("kl,l...->k...", view, traces[j])
                traces[j][decided(states[t])] = 0
                traces[j] += torch.stack([g[j] for g in jac])
            with torch.no_grad():
                if t == len(states) - 2:
                    nxt = torch.from_numpy(outcome(np.array(result)))
                else:
                    nxt = value(states[t + 1])
                nxt = nxt if movers[t + 1] == movers[t] else invert(nxt)
                delta = nxt - out
                for j in range(len(params)):
                    total[j] += torch.einsum("k,k...->...", delta, traces[j])
    return total


def synthetic_episodes(lengths, seed):
    """Games of random boards with alternating movers (one bonus turn), random results."""
    rng = np.random.default_rng(seed)
    pool = random_positions(10, seed)[1]
    steps = max(lengths)
    states = np.zeros((steps, len(lengths), 2, 25), np.int8)
    movers = np.zeros((steps, len(lengths)), np.int8)
    games = []
    for g, n in enumerate(lengths):
        boards = pool[rng.choice(len(pool), n, replace=False)]
        who = np.arange(n) % 2
        if n > 3:
            who[2:] = (np.arange(2, n) + 1) % 2  # afterstates 1 and 2 by the same side
        states[:n, g], movers[:n, g] = boards, who
        games.append((boards, who, int(rng.integers(1, 4))))
    values = np.array([r for _, _, r in games], np.int8)
    return Episodes(states, movers, np.array(lengths), values, 0), games


@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_batched_update_equals_one_game_trace_reference(lam: float) -> None:
    torch.manual_seed(0)
    net = NetConfig(hidden=(4,))
    from vrhcaby.nn.net import build_model

    model = build_model(net)
    episodes, games = synthetic_episodes([6, 3, 9, 2], seed=1)
    expected = trace_reference(model, games, lam)
    before = [p.detach().clone() for p in model.parameters()]
    alpha = 0.5
    sgd = torch.optim.SGD(model.parameters(), lr=alpha)
    learner = Learner(model, sgd, Backgammon(net, "standard"), torch.device("cpu"))
    stats = learner.update(episodes, lam)
    n = sum(len(s) - 1 for s, _, _ in games)
    assert stats.positions == n
    for p, b, e in zip(model.parameters(), before, expected, strict=True):
        torch.testing.assert_close(p.detach() - b, alpha / n * e, rtol=1e-4, atol=1e-7)


def test_lambda_one_and_zero_targets() -> None:
    rng = np.random.default_rng(2)
    steps, games = 7, 3
    values = joint(rng.random((steps, games, 5))).astype(np.float32)
    same = rng.random((steps, games)) < 0.3
    lengths = np.array([7, 4, 2])
    final = outcome(np.array([2, 1, 3]))
    mc = lambda_returns(values, same, lengths, final, 1.0)
    td0 = lambda_returns(values, same, lengths, final, 0.0)
    for g, n in enumerate(lengths):
        view = final[g]
        for t in range(n - 2, -1, -1):  # Monte Carlo: the result, in each mover's view
            view = view if same[t, g] else invert(view)
            np.testing.assert_allclose(mc[t, g], view, atol=1e-6)
        for t in range(n - 1):  # TD(0): the next value in this mover's view
            nxt = final[g] if t == n - 2 else values[t + 1, g]
            np.testing.assert_allclose(td0[t, g], nxt if same[t, g] else invert(nxt), atol=1e-6)


@pytest.mark.parametrize("lam", [0.0, 0.45, 1.0])
def test_lambda_returns_with_rewards_expected_backups_and_cut_games(lam: float) -> None:
    """The general form against the forward view: a zero-sum scalar value (the change of
    view negates it), per-step rewards, expected backups B, games finished or cut short.

    G_t = (1 - λ) Σ_n λ^(n-1) G^(n)_t + λ^(N-1) G^(N)_t, where G^(n)_t is the rewards of
    n - 1 steps plus the backup of the state reached, each in the view of state t, and the
    longest, G^(N)_t, ends in the final result (finished) or the last state's backup (cut).
    """
    rng = np.random.default_rng(9)
    lengths = np.array([6, 1, 4, 9, 3])
    cut = np.array([False, True, True, False, False])
    steps, games = int(lengths.max()), len(lengths)
    movers = rng.integers(0, 2, size=(steps, games))
    same = np.zeros((steps, games), bool)
    same[:-1] = movers[1:] == movers[:-1]
    rewards = rng.normal(0, 1, size=(steps, games, 1))
    backups = rng.normal(0, 2, size=(steps, games, 1))
    final = rng.normal(0, 3, size=(games, 1))
    got = lambda_returns(
        None,
        same,
        lengths,
        final,
        lam,
        rewards=rewards,
        backups=backups,
        truncated=cut,
        flip=np.negative,
    )
    for g, n in enumerate(lengths):

        def seen(t: int, k: int, x: float, g: int = g) -> float:
            """`x`, in the view of state k, seen from state t."""
            return x if movers[k, g] == movers[t, g] else -x

        def n_step(t: int, m: int, g: int = g) -> float:
            """Rewards of m - 1 steps from t, then the backup of the state reached."""
            ret = sum(seen(t, k, rewards[k, g, 0]) for k in range(t, t + m - 1))
            return ret + seen(t, t + m - 1, backups[t + m - 1, g, 0])

        for t in range(n if cut[g] else n - 1):
            if cut[g]:  # the longest return ends in the last state's backup
                longest = n - t
                terms = [((1 - lam) * lam ** (m - 1), n_step(t, m)) for m in range(1, longest)]
                terms.append((lam ** (longest - 1), n_step(t, longest)))
            else:  # ... or in the final result
                longest = n - 1 - t
                terms = [((1 - lam) * lam ** (m - 1), n_step(t, m)) for m in range(1, longest + 1)]
                realised = sum(seen(t, k, rewards[k, g, 0]) for k in range(t, n - 1))
                terms.append((lam**longest, realised + seen(t, n - 1, final[g, 0])))
            expected = sum(w * r for w, r in terms)
            assert got[t, g, 0] == pytest.approx(expected, abs=1e-9), (g, t)


def play(seed: int, n_games: int = 6, epsilon: float = 0.0):
    torch.manual_seed(4)
    net = NetConfig(hidden=(6,))
    from vrhcaby.nn.net import build_model

    model = build_model(net)
    selfplay = SelfPlay(model, net, "standard", torch.device("cpu"))
    return selfplay.play(n_games, np.random.default_rng(seed), epsilon), model


def test_selfplay_games_are_legal_greedy_and_finished() -> None:
    episodes, model = play(seed=5, n_games=3)
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)])
    for g, n in enumerate(episodes.lengths):
        states = episodes.states[:n, g]
        assert (episodes.movers[:n, g] == np.arange(n) % 2).all()
        assert (engine.game_value(states[:-1]) == 0).all()
        assert engine.game_value(states[-1:])[0] == episodes.values[g] > 0
        start = engine.Position.start().board
        before = np.concatenate([start[None], states[:-1, ::-1]])
        # Every roll from every position of the game, in one batch: (t, roll) -> row t*36+r.
        boards = np.repeat(before, len(rolls), axis=0)
        after, parent = engine.batch_afterstates(boards, np.tile(rolls, (n, 1)))
        with torch.no_grad():
            raw = joint(model(torch.from_numpy(encode_tesauro(after))))
            scores = equity(obey_rules(after, raw)).numpy()  # self-play obeys the rules
        counts = np.bincount(parent, minlength=len(boards))
        starts = np.cumsum(counts) - counts
        for t in range(n):
            greedy_for_some_roll = False
            for r, roll in enumerate(rolls):
                if t == 0 and roll[0] == roll[1]:
                    continue  # the opening roll is never a double
                i = t * len(rolls) + r
                cands = after[starts[i] : starts[i] + counts[i]]
                sc = scores[starts[i] : starts[i] + counts[i]]
                if not len(cands):  # no legal play: the position stays
                    greedy_for_some_roll |= bool((states[t] == before[t]).all())
                    continue
                hit = (cands == states[t]).all(axis=(1, 2))
                greedy_for_some_roll |= bool(hit.any() and sc[hit][0] >= sc.max() - 1e-5)
            assert greedy_for_some_roll, (g, t)


def test_selfplay_is_reproducible_and_explores() -> None:
    a, _ = play(seed=6)
    b, _ = play(seed=6)
    c, _ = play(seed=7)
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.lengths, b.lengths)
    assert a.states.shape != c.states.shape or (a.states != c.states).any()
    explored, _ = play(seed=6, epsilon=0.5)
    assert explored.states.shape != a.states.shape or (explored.states != a.states).any()


def test_trainer_state_round_trip_continues_exactly() -> None:
    def trainer(seed: int) -> Trainer:
        td = TDConfig(batch_games=8, games_per_update=4, optimizer="adam", lr=1e-3, lr_end=1e-3)
        return Trainer(NetConfig(hidden=(5,)), td, "standard", 100, seed, torch.device("cpu"))

    first = trainer(8)
    first.round()
    arrays, meta = first.state()
    first.round()
    second = trainer(9)
    second.load_state(arrays, meta)
    assert second.games == 8
    second.round()
    for (k, a), b in zip(first.weights().items(), second.weights().values(), strict=True):
        np.testing.assert_array_equal(a, b, err_msg=k)
    other = Trainer(NetConfig(hidden=(6,)), TDConfig(), "standard", 100, 1, torch.device("cpu"))
    with pytest.raises(ValueError, match="198-5-5"):
        other.load_state(arrays, meta)


@pytest.mark.parametrize(
    ("base", "encoding", "hidden"),
    [("rich", "expert", (6,)), ("rich", "expert", (11,)), ("expert", "contact", (11,))],
)
def test_warm_start_grows_the_network_and_plays_as_the_saved_one(base, encoding, hidden) -> None:
    cpu = torch.device("cpu")
    rich = Trainer(NetConfig(base, (6,)), TDConfig(batch_games=8), "standard", 8, 3, cpu)
    rich.round()
    arrays, meta = rich.state()
    expert = Trainer(NetConfig(encoding, hidden), TDConfig(batch_games=8), "standard", 16, 4, cpu)
    expert.warm_start(arrays, meta)
    grown = expert.weights()
    old, new = rich.net.inputs, expert.net.inputs
    assert grown["model/0.weight"].shape == (hidden[0], new)
    assert grown["model/2.weight"].shape == (5, hidden[0])
    np.testing.assert_array_equal(grown["model/0.weight"][:6, :old], arrays["model/0.weight"])
    np.testing.assert_array_equal(grown["model/2.weight"][:, :6], arrays["model/2.weight"])
    assert not grown["model/0.weight"][:6, old:].any() and not grown["model/2.weight"][:, 6:].any()
    if hidden[0] > 6:  # new hidden units: random incoming weights
        assert grown["model/0.weight"][6:].std() > 0.01
    after = random_positions(3, seed=5)[1]
    np.testing.assert_allclose(
        Evaluator(expert.net, weights_from_model(expert.model)).probabilities(after),
        Evaluator(rich.net, weights_from_model(rich.model)).probabilities(after),
        atol=1e-6,
    )
    expert.round()  # and it learns: every weight, the new ones too, moves (the new units'
    expert.round()  # inputs from the second update on, once their outputs have moved)
    moved = expert.weights()
    assert (moved["model/0.weight"][:, old:] != 0).any()
    if hidden[0] > 6:
        assert (moved["model/0.weight"][6:] != grown["model/0.weight"][6:]).any()
        assert (moved["model/2.weight"][:, 6:] != 0).any()


@pytest.mark.parametrize(("base", "encoding"), [("rich", "rich"), ("expert", "contact")])
def test_a_split_warm_start_copies_saved_units_and_plays_almost_as_the_saved_one(
    base, encoding
) -> None:
    """Net2WiderNet growth of two hidden layers (6, 4) -> (10, 9): every new unit is a
    saved unit's copy (its incoming weights, up to the noise, and bias), the copies of a
    unit share its outgoing weights, and the grown network values positions as the saved
    one did up to that noise."""
    cpu = torch.device("cpu")
    small = Trainer(NetConfig(base, (6, 4)), TDConfig(batch_games=8), "standard", 8, 3, cpu)
    small.round()
    arrays, meta = small.state()
    big = Trainer(NetConfig(encoding, (10, 9)), TDConfig(batch_games=8), "standard", 8, 4, cpu)
    big.warm_start(arrays, meta, split=torch.Generator().manual_seed(7))
    grown, old = big.weights(), small.net.inputs
    w0, w1, w2 = (grown[f"model/{i}.weight"] for i in (0, 2, 4))
    np.testing.assert_array_equal(w0[:6, :old], arrays["model/0.weight"])
    assert not w0[:6, old:].any()
    for j in range(6, 10):  # a copy of one saved unit, a little apart from it
        gaps = np.abs(w0[j, :old] - arrays["model/0.weight"]).max(axis=1)
        source = int(gaps.argmin())
        assert 0 < gaps[source] < 0.1 * np.abs(arrays["model/0.weight"]).max()
        assert grown["model/0.bias"][j] == arrays["model/0.bias"][source]
    # a saved unit's outgoing weights are shared by it and its copies: the sums are the same
    sums = np.zeros((9, 6), np.float32)
    for j in range(10):
        sources = np.abs(w0[j, :old] - arrays["model/0.weight"]).max(axis=1)
        sums[:, int(sources.argmin())] += w1[:, j]
    np.testing.assert_allclose(sums[:4], arrays["model/2.weight"], rtol=1e-5, atol=1e-7)
    assert w2.shape == (5, 9) and np.abs(w2).sum() == pytest.approx(
        np.abs(arrays["model/4.weight"]).sum(), rel=1e-5
    )
    after = random_positions(40, seed=5)[1]
    np.testing.assert_allclose(
        Evaluator(big.net, weights_from_model(big.model)).probabilities(after),
        Evaluator(small.net, weights_from_model(small.model)).probabilities(after),
        atol=0.01,
    )


def test_warm_start_refuses_what_it_cannot_grow() -> None:
    cpu = torch.device("cpu")
    rich = Trainer(NetConfig("rich", (6,)), TDConfig(batch_games=8), "standard", 8, 3, cpu)
    arrays, meta = rich.state()
    fewer_inputs, narrower = NetConfig(hidden=(6,)), NetConfig("rich", (5,))
    tanh, deeper = NetConfig("rich", (6,), "tanh"), NetConfig("rich", (6, 4))
    for net in (fewer_inputs, narrower, tanh, deeper):
        with pytest.raises(ValueError, match=r"cannot (start|deepen)"):
            Trainer(net, TDConfig(), "standard", 8, 4, cpu).warm_start(arrays, meta)


def test_trainer_learns_on_nackgammon_and_rejects_unknown_variants() -> None:
    td = TDConfig(batch_games=4, games_per_update=2)
    t = Trainer(NetConfig(hidden=(3,)), td, "nackgammon", 4, 1, torch.device("cpu"))
    stats = t.round()
    assert stats.games == 4 and stats.plies > 4 * 10 and t.games == 4
    with pytest.raises(ValueError, match="variant"):
        Trainer(NetConfig(hidden=(3,)), td, "chess", 4, 1, torch.device("cpu"))


def test_bad_td_configs_are_errors() -> None:
    with pytest.raises(ValueError, match="lam"):
        TDConfig(lam=1.5)
    with pytest.raises(ValueError, match="optimizer"):
        TDConfig(optimizer="rmsprop")
