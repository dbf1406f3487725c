"""Calibration folded into the last layer (`vrhcaby.learn.calibrate`): the folded network's
outputs against the correction applied to a plain forward pass of the original, the fit
against known parameters, the conditional targets against a table, the command line."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from agents import load_agent
from agents.td import SHIPPED
from engine.classify import CONTACT, CRASHED
from vrhcaby.learn import calibrate
from vrhcaby.learn.calibrate import LEAST, Correction, conditional_targets, fit, fold
from vrhcaby.nn.net import Evaluator, load_evaluator, load_member
from vrhcaby.nn.netset import NetworkSet
from vrhcaby.play.calibration import selfplay_turns

SHIFT = np.array([0.2, -0.3, 0.1, 0.4, -0.2])
PLATT = Correction(np.diag([0.8, 1.3, 0.9, 1.1, 0.7]), SHIFT)
MIXED = Correction(PLATT.matrix + 0.1 * (np.arange(25).reshape(5, 5) % 3 == 1), SHIFT)


def _contact_boards(games: int, seed: int) -> np.ndarray:
    """Afterstates of random play where both sides have all 15 checkers on the board and
    contact remains: the rules then leave the network's five outputs as they are."""

    def record(turn: int, boards: np.ndarray, after: np.ndarray) -> np.ndarray:
        return after.copy()

    parts = selfplay_turns(load_agent("random"), games, seed, record)
    after = np.concatenate([a for a, _, _ in parts])
    full = (after.sum(axis=2) == 15).all(axis=1)
    return after[full & np.isin(engine.classify_boards(after), (CONTACT, CRASHED))]


def _plain_logits(network: Evaluator, boards: np.ndarray) -> np.ndarray:
    """The last layer's pre-activations, float64, by the textbook forward pass."""
    x = network.net.encode(boards).astype(np.float64)
    for (w, b), name in zip(network.weights[:-1], network.net.layer_activations, strict=True):
        x = x @ w.astype(np.float64).T + b
        x = {"sigmoid": 1 / (1 + np.exp(-x)), "tanh": np.tanh(x), "relu": np.maximum(x, 0)}[name]
    w, b = network.weights[-1]
    return x @ w.astype(np.float64).T + b


def _plain_joint(q: np.ndarray) -> np.ndarray:
    """Conditional probabilities multiplied out by hand."""
    win, wg, wbg, lg, lbg = q.T
    return np.stack([win, win * wg, win * wg * wbg, (1 - win) * lg, (1 - win) * lg * lbg], 1)


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    found = _contact_boards(12, seed=3)
    assert len(found) > 300  # enough rows for the numba path (over SMALL_BATCH)
    return found


@pytest.mark.parametrize("rows", [40, 400])  # the numpy path and the kernels'
@pytest.mark.parametrize("correction", [PLATT, MIXED])
def test_the_folded_network_is_the_correction_of_the_original(boards, rows, correction) -> None:
    """The shipped default's contact network (256-1024-5) with a correction folded in gives,
    to 1e-6, the corrected conditionals of a plain forward pass of the original, multiplied
    out, on every evaluation path."""
    network = load_member(SHIPPED, "contact")
    assert isinstance(network, Evaluator)
    b = boards[:rows]
    z = _plain_logits(network, b)
    m, c = correction.matrix, correction.shift
    corrected = np.array(
        [[c[k] + sum(m[k, j] * r[j] for j in range(5)) for k in range(5)] for r in z]
    )
    want = _plain_joint(1 / (1 + np.exp(-corrected)))
    folded = fold(network, correction)
    assert folded.net == network.net
    assert [w.shape for w, _ in folded.weights] == [w.shape for w, _ in network.weights]
    np.testing.assert_allclose(folded.probabilities(b), want, atol=1e-6, rtol=0)
    roots = np.ascontiguousarray(b[::-1])  # any roots do: the incremental layer is exact
    parent = np.arange(len(b))
    np.testing.assert_allclose(folded.probabilities_from(roots, b, parent), want, atol=1e-6, rtol=0)
    original = _plain_joint(1 / (1 + np.exp(-_plain_logits(network, b))))
    assert np.abs(original - want).max() > 0.01  # the correction did change something


def test_the_fit_finds_the_slope_and_shift_that_made_the_data() -> None:
    rng = np.random.default_rng(7)
    n = 200_000
    z = rng.normal(0, 2, (n, 5))
    shift = np.array([0.3, -0.4, 0.0, 0.2, -1.0])
    truth = Correction(np.diag([0.7, 1.2, 1.0, 0.9, 1.5]), shift)
    p = 1 / (1 + np.exp(-(z * np.diag(truth.matrix) + shift)))
    hit = rng.random((n, 5)) < p
    applies = rng.random((n, 5)) < 0.6
    fitted = fit(z, hit, applies)
    np.testing.assert_allclose(fitted.matrix, truth.matrix, atol=0.03)  # diagonal: Platt
    np.testing.assert_allclose(fitted.shift, truth.shift, atol=0.03)
    mixed = truth.matrix + np.array([[0, 0.3, 0, 0, 0]] + [[0] * 5] * 3 + [[-0.2, 0, 0, 0, 0]])
    p = 1 / (1 + np.exp(-(z @ mixed.T + shift)))
    fitted = fit(z, rng.random((n, 5)) < p, applies, mix=True)
    np.testing.assert_allclose(fitted.matrix, mixed, atol=0.03)
    np.testing.assert_allclose(fitted.shift, shift, atol=0.03)


def test_an_output_with_too_few_events_is_left_as_it_is() -> None:
    rng = np.random.default_rng(1)
    z = rng.normal(0, 1, (1000, 5))
    hit = rng.random((1000, 5)) < 0.5
    hit[:, 2] = False
    hit[: LEAST - 1, 2] = True  # one event short
    fitted = fit(z, hit, np.ones((1000, 5), bool), mix=True)
    assert fitted.matrix[2].tolist() == [0, 0, 1, 0, 0] and fitted.shift[2] == 0
    assert fitted.matrix[0, 0] != 1.0


def test_each_conditional_applies_where_its_condition_held() -> None:
    """Per result (+1..+3, -1..-3), the table of events and where each conditional output
    (win, gammon | win, backgammon | gammon win, gammon | loss, backgammon | gammon loss)
    applies, written out."""
    table = {
        1: ([1, 0, 0, 0, 0], [1, 1, 0, 0, 0]),
        2: ([1, 1, 0, 0, 0], [1, 1, 1, 0, 0]),
        3: ([1, 1, 1, 0, 0], [1, 1, 1, 0, 0]),
        -1: ([0, 0, 0, 0, 0], [1, 0, 0, 1, 0]),
        -2: ([0, 0, 0, 1, 0], [1, 0, 0, 1, 1]),
        -3: ([0, 0, 0, 1, 1], [1, 0, 0, 1, 1]),
    }
    hit, applies = conditional_targets(np.array(list(table)))
    assert hit.tolist() == [[bool(v) for v in h] for h, _ in table.values()]
    assert applies.tolist() == [[bool(v) for v in a] for _, a in table.values()]


def test_the_command_writes_a_set_whose_contact_network_alone_is_calibrated(
    tmp_path, boards, capsys
) -> None:
    out = tmp_path / "cal.pt"
    assert calibrate.main(["--games", "40", "--seed", "5", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    before, after = load_evaluator(SHIPPED), load_evaluator(out)
    assert isinstance(before, NetworkSet) and isinstance(after, NetworkSet)
    contact = before.networks["contact"]
    assert isinstance(contact, Evaluator)
    made = after.config["calibration"]
    assert made["games"] == 40 and made["classes"] == ["contact", "crashed"]
    platt = Correction(np.array(made["matrix"]), np.array(made["shift"]))
    assert (platt.matrix == np.diag(np.diag(platt.matrix))).all()  # Platt: diagonal
    assert (np.diag(platt.matrix) > 0).all()
    for (w0, b0), (w1, b1) in zip(
        before.networks["contact"].weights[:-1], after.networks["contact"].weights[:-1], strict=True
    ):
        assert np.array_equal(w0, w1) and np.array_equal(b0, b1)
    z = _plain_logits(contact, boards)
    want = _plain_joint(1 / (1 + np.exp(-(z * np.diag(platt.matrix) + platt.shift))))
    np.testing.assert_allclose(after.probabilities(boards), want, atol=1e-6, rtol=0)
    race = np.zeros((3, 2, 25), np.int8)
    race[:, 0, :6] = [3, 2, 2, 3, 3, 2]  # the side to roll home, the mover not yet
    race[:, 1, 6:12] = [[2, 3, 2, 3, 2, 3], [3, 3, 3, 2, 2, 2], [5, 5, 5, 0, 0, 0]]
    np.testing.assert_array_equal(after.probabilities(race), before.probabilities(race))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--games", "0"], "--games must be at least 1"),
        (["--out", "x.txt"], "must name a .pt file"),
        (["--network", "no-such-net"], "checkpoint not found"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says) -> None:
    args = ["--out", str(tmp_path / "c.pt"), "--games", "1", *argv]
    with pytest.raises(SystemExit) as stop:
        calibrate.main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert says in err[-1]
