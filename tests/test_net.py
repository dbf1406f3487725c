"""The network's outputs, its equity and change-of-view formulas, and the numpy evaluator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gnubg
import gnubg_nn
import numpy as np
import pytest
import torch
from corpus import lockstep_positions

import engine
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.learn.selfplay import weights_from_model
from vrhcaby.nn import checkpoint
from vrhcaby.nn.encode import get_encoding
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, joint, load_evaluator


def random_positions(n_games: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boards met in random games (60 turns at most), plus every afterstate of each for a
    random roll."""
    return lockstep_positions(n_games, seed, max_turns=60)


def test_equity_matches_gnubg() -> None:
    # Money play and a cubeless 0-ply evaluation, given: gnubg.evaluate's defaults are the
    # session's match, which other tests set (test_svg's XGIDs: a match score, then this
    # equity was gnubg's match equity and the test failed after them).
    money = gnubg.cube_info(1, -1, 0, 0, (0, 0), 0)
    money["jacoby"] = 0
    cubeless = gnubg.eval_context(0, 0, 1, 0, 0.0)
    roots = random_positions(4, seed=0)[0]
    boards = [gnubg_nn.board_from_position_id("4HPwATDgc/ABMA"), *roots[::25].tolist()]
    for board in boards:
        *probs, gnubg_equity = gnubg.evaluate(board, money, cubeless)
        assert equity(np.array(probs)) == pytest.approx(gnubg_equity, abs=1e-5)


def test_invert_matches_a_plain_reference() -> None:
    rng = np.random.default_rng(1)
    p = joint(rng.random((50, 5)))
    q = invert(p)
    for a, b in zip(p, q, strict=True):
        win, wg, wbg, lg, lbg = a
        assert b == pytest.approx([1 - win, lg, lbg, wg, wbg])
    np.testing.assert_allclose(invert(q), p)
    np.testing.assert_allclose(equity(q), -equity(p), atol=1e-12)
    torch_q = invert(torch.from_numpy(p))
    np.testing.assert_allclose(torch_q.numpy(), q)


def test_outputs_are_consistent_probabilities() -> None:
    rng = np.random.default_rng(2)
    p = joint(rng.random((1000, 5)))
    win, wg, wbg, lg, lbg = p.T
    assert (wbg >= 0).all() and (wbg <= wg).all() and (wg <= win).all() and (win <= 1).all()
    assert (lbg >= 0).all() and (lbg <= lg).all() and (lg <= 1 - win + 1e-12).all()


def test_outcome_is_the_result_seen_by_the_winner() -> None:
    np.testing.assert_array_equal(
        outcome(np.array([1, 2, 3])), [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]]
    )


@pytest.mark.parametrize(
    "config",
    [
        NetConfig("tesauro", (12,), "sigmoid"),
        NetConfig("tesauro", (10, 6), "tanh"),
        NetConfig("rich", (9,), "relu"),
        NetConfig("rich", (8, 5), "sigmoid"),
        NetConfig("expert", (9,), "sigmoid"),
    ],
)
def test_numpy_evaluator_equals_torch(config: NetConfig) -> None:
    torch.manual_seed(3)
    model = build_model(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)  # make every table entry matter
    evaluator = Evaluator(config, weights_from_model(model))
    roots, after, parent = random_positions(30, seed=4)
    encode = get_encoding(config.encoding)[0]
    with torch.no_grad():  # both paths obey the rules (vrhcaby.nn.lawful) the same way
        expected = obey_rules(after, joint(model(torch.from_numpy(encode(after))))).numpy()
    np.testing.assert_allclose(evaluator.probabilities(after), expected, atol=2e-5)
    from_roots = evaluator.probabilities_from(roots, after, parent)
    np.testing.assert_allclose(from_roots, expected, atol=2e-5)
    np.testing.assert_allclose(evaluator.equity(after), equity(expected), atol=1e-4)


def test_evaluator_rejects_weights_of_another_shape() -> None:
    model = build_model(NetConfig(hidden=(7,)))
    with pytest.raises(ValueError, match="layer shapes"):
        Evaluator(NetConfig(hidden=(8,)), weights_from_model(model))


def test_bad_net_configs_are_errors() -> None:
    with pytest.raises(ValueError, match="encoding"):
        NetConfig(encoding="nope")
    with pytest.raises(ValueError, match="activation"):
        NetConfig(activation="gelu")
    with pytest.raises(ValueError, match="hidden"):
        NetConfig(hidden=())


def save_model(path: Path, config: NetConfig, model: torch.nn.Module) -> None:
    arrays = {f"model/{k}": v.numpy() for k, v in model.state_dict().items()}
    checkpoint.save(path, arrays, {"net": config.to_dict(), "config": {"variant": "nackgammon"}})


def test_load_evaluator_reads_a_checkpoint_without_torch(tmp_path: Path) -> None:
    config = NetConfig("tesauro", (6,), "sigmoid")
    torch.manual_seed(5)
    model = build_model(config)
    path = tmp_path / "net.pt"
    save_model(path, config, model)
    board = engine.Position.start().board[None]
    with torch.no_grad():
        expected = joint(model(torch.from_numpy(get_encoding("tesauro")[0](board)))).numpy()
    code = (
        "import sys, numpy as np, engine\n"
        "from vrhcaby.nn.net import load_evaluator\n"
        f"e = load_evaluator({str(path)!r})\n"
        "p = e.probabilities(engine.Position.start().board[None])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print(e.variant, *p[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd()
    ).stdout.split()
    assert out[0] == "nackgammon"
    np.testing.assert_allclose([float(x) for x in out[1:]], expected[0], atol=1e-6)
    assert load_evaluator(path).net == config


def test_load_evaluator_bad_files(tmp_path: Path) -> None:
    with pytest.raises(checkpoint.CheckpointError, match="not found"):
        load_evaluator(tmp_path / "missing.pt")
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(checkpoint.CheckpointError, match="not a readable"):
        load_evaluator(corrupt)
    torch_file = tmp_path / "torch.pt"
    torch.save({"a": torch.zeros(2)}, torch_file)
    with pytest.raises(checkpoint.CheckpointError):
        load_evaluator(torch_file)
    truncated = tmp_path / "truncated.pt"
    save_model(truncated, NetConfig(hidden=(4,)), build_model(NetConfig(hidden=(4,))))
    truncated.write_bytes(truncated.read_bytes()[:300])
    with pytest.raises(checkpoint.CheckpointError):
        load_evaluator(truncated)
