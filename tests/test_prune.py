"""The pruned search (`agents.search.Pruner`): keeping every reply is the unpruned search
number for number; a small keep picks, per roll, the full network's best among the
ranker's best (against a plain per-roll reference); the pruned 2-ply values stay close to
the unpruned ones; `top_k` against a sort; the spec option and `hint`'s default."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import walk_positions

import engine
from agents import load_agent, search
from agents.search import Pruner
from agents.td import CHECKPOINTS, DEFAULT_PRUNER
from vrhcaby.cli.hint import pruned_spec
from vrhcaby.nn.encode import get_encoding
from vrhcaby.nn.net import load_evaluator
from vrhcaby.nn.prune import PruningNet

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


@pytest.fixture(scope="module")
def nets():
    """The shipped network and its pruning network (fitted to it)."""
    return load_evaluator(CHECKPOINTS / "td-best.pt"), PruningNet.load(DEFAULT_PRUNER)


@pytest.fixture(scope="module")
def afterstates() -> np.ndarray:
    """One afterstate of each of 12 boards of seeded random games, contact and race."""
    boards = np.array(walk_positions(60, 11))[::5]
    rng = np.random.default_rng(3)
    out = []
    for b in boards:
        plays = engine.legal_plays(engine.Position(b), tuple(rng.integers(1, 7, 2)))
        out.append(plays[0].position.board if plays else b)
    return np.array(out, np.int8)


def eq(p: np.ndarray) -> np.ndarray:
    return 2 * p[..., 0] - 1 + p[..., 1] + p[..., 2] - p[..., 3] - p[..., 4]


def plain_scores(ranker: PruningNet, after: np.ndarray) -> np.ndarray:
    """The pruning network by hand: Tesauro's inputs, two dense sigmoid layers, the five
    joint outputs, their equity."""
    (w1, b1), (w2, b2) = ranker.evaluator.weights
    x = get_encoding("tesauro")[0](after).astype(np.float64)
    c = 1 / (1 + np.exp(-(1 / (1 + np.exp(-(x @ w1.T + b1))) @ w2.T + b2)))
    win, lose = c[:, 0], 1 - c[:, 0]
    p = np.stack([win, win * c[:, 1], win * c[:, 1] * c[:, 2], lose * c[:, 3]], axis=1)
    return eq(np.column_stack([p, p[:, 3] * c[:, 4]]))


def test_the_ranker_against_a_plain_forward_pass(nets, afterstates):
    _, ranker = nets
    roots = afterstates[:, ::-1]
    after, parent = engine.batch_afterstates(roots, np.tile([[6, 4]], (len(roots), 1)))
    got = ranker.scores(roots, after, parent)
    np.testing.assert_allclose(got, plain_scores(ranker, after), atol=2e-5)


def test_keeping_every_reply_is_the_unpruned_search(nets, afterstates):
    full, ranker = nets
    every = Pruner(ranker, keep=1000)
    for plies, a in ((1, afterstates), (2, afterstates[:2])):
        plain = search.ply_probabilities(full, a, plies)
        assert np.array_equal(search.ply_probabilities(full, a, plies, prune=every), plain)


def test_each_roll_picks_the_full_best_of_the_rankers_best(nets, afterstates):
    full, ranker = nets
    keep = 2
    boards = afterstates[:4, ::-1]  # the opponent on roll
    table = search.every_roll(full, boards, Pruner(ranker, keep))
    for b, board in enumerate(boards):
        for r, roll in enumerate(ROLLS):
            plays = engine.legal_plays(engine.Position(board), roll)
            chosen = table.plays[table.inverse[b], r]
            if not plays:
                assert np.array_equal(chosen, board)
                continue
            after = np.stack([p.position.board for p in plays])
            value = engine.game_value(after)
            cheap = np.where(value != 0, np.inf, plain_scores(ranker, after))
            dear = np.where(value != 0, value, eq(full.probabilities(after)))
            top = np.argsort(-cheap, kind="stable")[:keep]
            mine = [i for i in range(len(after)) if np.array_equal(after[i], chosen)]
            assert len(mine) == 1 and cheap[mine[0]] >= cheap[top[-1]] - 2e-5
            assert dear[mine[0]] == pytest.approx(dear[top].max(), abs=1e-5)


def test_pruned_two_ply_values_stay_close(nets, afterstates):
    full, ranker = nets
    a = afterstates[:6]
    plain = eq(search.ply_probabilities(full, a, 2))
    pruned = eq(search.ply_probabilities(full, a, 2, prune=Pruner(ranker)))
    assert np.abs(pruned - plain).max() < 0.03
    assert np.abs(pruned - plain).mean() < 0.01


def test_top_k_against_a_sort():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 6, 400).astype(float)  # many ties
    scores[rng.random(400) < 0.1] = -np.inf
    scores[rng.random(400) < 0.05] = np.nan
    parent = rng.integers(0, 30, 400)
    for k in (1, 2, 5):
        mask = search.top_k(scores, parent, k)
        expected = np.zeros(400, bool)
        for g in range(30):
            rows = [r for r in range(400) if parent[r] == g and np.isfinite(scores[r])]
            rows.sort(key=lambda r: (-scores[r], r))
            expected[rows[:k]] = True
        assert np.array_equal(mask, expected)


def test_the_spec_option():
    assert load_agent("td").prune is None
    assert load_agent("td?plies=2&prune=off").prune is None
    on = load_agent("td?plies=2&prune=on")
    assert on.prune is not None and on.prune.keep == Pruner.keep
    assert load_agent("td:td-80?plies=1&prune=5").prune.keep == 5
    for bad in ("td?prune=0", "td?prune=yes", "td?prune=-2"):
        with pytest.raises(ValueError, match="prune") as info:
            load_agent(bad)
        assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="no search to prune"):
        load_agent("td:td-acey-deucey?prune=on")
    with pytest.raises(ValueError, match="at least 1"):
        Pruner(None, 0)  # type: ignore[arg-type]


def test_hint_prunes_by_default_at_one_or_two_plies():
    assert pruned_spec("td", 2, False) == "td?prune=on"
    assert pruned_spec("td?plies=1", None, False) == "td?plies=1&prune=on"
    assert pruned_spec("td", None, False) == "td"  # 0-ply: nothing to prune
    assert pruned_spec("td?prune=4", 2, False) == "td?prune=4"
    assert pruned_spec("td", 2, True) == "td"
    assert pruned_spec("gnubg", 2, False) == "gnubg"
    with pytest.raises(ValueError, match="contradicts"):
        pruned_spec("td?prune=on", 2, True)


def test_hint_at_one_ply_pruned_and_not(capsys, monkeypatch):
    import json

    import vrhcaby.cli.main as cli

    monkeypatch.setattr(cli, "COMMANDS", ("hint",))  # `vrhcaby.cli.main` imports no more
    got = {}
    for flags in ([], ["--no-prune"]):
        assert cli.main(["hint", "4HPwATDgc/ABMA", "62", "--plies", "1", "--json", *flags]) == 0
        got[bool(flags)] = {m["play"]: m for m in json.loads(capsys.readouterr().out)["moves"]}
    pruned, plain = got[False], got[True]
    assert pruned.keys() == plain.keys()
    deep = [p for p, m in plain.items() if m["plies"] == 1]
    assert deep and all(pruned[p]["plies"] == 1 for p in deep)
    assert max(abs(pruned[p]["equity"] - plain[p]["equity"]) for p in deep) < 0.02


def test_a_full_network_is_no_pruning_network():
    with pytest.raises(ValueError, match=r"td-best\.pt: a pruning network has one hidden layer"):
        PruningNet.load(CHECKPOINTS / "td-best.pt")


def test_fitting_a_pruning_network(tmp_path):
    """`vrhcaby.learn.prune` end to end, tiny: labels from the teacher, a fit that learns
    (its error within a roll on held-out rolls well below the untrained network's), a
    checkpoint the search loads."""
    pytest.importorskip("torch")
    from vrhcaby.learn import prune

    after, targets, rolls = prune.pruning_data("td:td-80", 1, 4000, 0)
    assert len(after) >= 4000 and np.all(np.diff(rolls) >= 0)
    _, untrained = prune.fit(after, targets, rolls, hidden=8, epochs=0, seed=0, batch=128)
    model, error = prune.fit(after, targets, rolls, hidden=8, epochs=10, seed=0, batch=128)
    assert error < 0.7 * untrained
    ranker = PruningNet.load(prune.save(tmp_path / "p.pt", model, 8, {"teacher": "td-80"}))
    roots = after[:3, ::-1]  # any boards will do
    a, parent = engine.batch_afterstates(roots, np.tile([[3, 1]], (3, 1)))
    assert np.isfinite(ranker.scores(roots, a, parent)).all()
