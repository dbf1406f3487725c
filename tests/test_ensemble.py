"""An ensemble of networks (`vrhcaby.nn.ensemble`) and its relabelled shards
(bench/ensemble.py), checked against each member network evaluated on its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from corpus import walk_positions
from helpers_bench import bench_script

import engine
from engine.classify import NAMES
from vrhcaby.learn.labels import Shard
from vrhcaby.nn.ensemble import Ensemble, ensemble_set
from vrhcaby.nn.net import load_evaluator

ROOT = Path(__file__).resolve().parents[1]
GEN9 = ROOT / "checkpoints" / "td-contact-gen9.pt"
EI = ROOT / "checkpoints" / "td-contact-ei.pt"


@pytest.fixture(scope="module")
def afterstates() -> np.ndarray:
    """Afterstates (mover in row 1) met in random games: contact, crashed, races."""
    return np.stack([board[::-1] for board in walk_positions(400, seed=3)]).copy()


def test_an_ensemble_is_the_mean_of_its_members(afterstates: np.ndarray) -> None:
    gen9, ei = load_evaluator(GEN9), load_evaluator(EI)
    contact = [gen9.networks["contact"], ei.networks["contact"]]  # type: ignore[union-attr]
    both = Ensemble(contact)
    want = (contact[0].probabilities(afterstates) + contact[1].probabilities(afterstates)) / 2
    np.testing.assert_allclose(both.probabilities(afterstates), want, atol=1e-6)
    roots = afterstates[:1, ::-1].copy()
    parent = np.zeros(len(afterstates), np.int64)
    np.testing.assert_allclose(both.probabilities_from(roots, afterstates, parent), want, atol=2e-5)
    assert both.net is contact[0].net


def test_an_ensemble_set_averages_contact_and_keeps_the_rest(afterstates: np.ndarray) -> None:
    gen9, ei = load_evaluator(GEN9), load_evaluator(EI)
    ens = ensemble_set([GEN9, EI])
    classes = np.asarray(engine.classify_boards(afterstates))
    contact = np.isin(classes, [NAMES.index(n) for n in ("contact", "crashed")])
    assert contact.any() and (~contact).any()
    want = np.where(
        contact[:, None],
        (gen9.probabilities(afterstates) + ei.probabilities(afterstates)) / 2,
        gen9.probabilities(afterstates),
    )
    np.testing.assert_allclose(ens.probabilities(afterstates), want, atol=1e-6)
    same = ensemble_set([GEN9, GEN9])
    np.testing.assert_allclose(
        same.probabilities(afterstates), gen9.probabilities(afterstates), atol=1e-6
    )


def test_a_single_network_is_refused() -> None:
    with pytest.raises(ValueError, match=r"td-best\.pt: not a network set"):
        ensemble_set([GEN9, ROOT / "checkpoints" / "td-best.pt"])
    with pytest.raises(ValueError, match="at least one"):
        Ensemble([])


def test_relabelled_shards_take_the_ensembles_values(afterstates: np.ndarray) -> None:
    n = len(afterstates)
    rng = np.random.default_rng(5)
    own = rng.dirichlet(np.ones(5), n).astype(np.float32)
    shard = Shard(
        after=afterstates,
        probabilities=own,
        zero_ply=own,
        decision=np.arange(n) // 4,
        role=np.full(n, 4, np.uint8),
        boards=afterstates[::4, ::-1].copy(),
        dice=np.ones(((n + 3) // 4, 2), np.int64),
        games=6,
        positions=n,
    )
    ens = ensemble_set([GEN9, EI])
    got = bench_script("ensemble").relabelled(shard, ens)
    want = ens.probabilities(afterstates)
    np.testing.assert_allclose(got["pure"].probabilities, want, atol=1e-6)
    np.testing.assert_allclose(got["mix"].probabilities, (want + own) / 2, atol=1e-6)
    for kind in ("pure", "mix"):
        assert np.array_equal(got[kind].after, afterstates)
        assert np.array_equal(got[kind].decision, shard.decision)
