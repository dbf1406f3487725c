"""The numba-free paths a one-off command takes: `engine.plain` against the batched kernel
(the same plays, steps and notation on the seeded corpus) and the evaluator's numpy path
against its numba kernels and a dense forward pass written here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from corpus import corpus

import engine
from engine import jit
from engine.movegen import batch_afterstates_with_steps
from engine.plain import plays_of
from engine.play import format_steps
from vrhcaby.nn import net
from vrhcaby.nn.encode import get_encoding
from vrhcaby.nn.lawful import obey_rules

ROOT = Path(__file__).parents[1]


def test_plain_equals_the_kernel_on_the_corpus() -> None:
    boards, dice = corpus(5000, 11)
    after, parent, steps = batch_afterstates_with_steps(boards, dice)
    want: list[dict[bytes, str]] = [{} for _ in boards]
    for board, row, path in zip(after, parent, steps, strict=True):
        used = path[path[:, 0] > 0]
        moves = tuple((int(s), int(t)) for s, t, _ in used)
        want[row][board.tobytes()] = format_steps(moves, tuple(bool(h) for h in used[:, 2]))
    assert sum(map(len, want)) == len(after)
    for board, roll, expected in zip(boards, dice, want, strict=True):
        got = plays_of(board, (int(roll[0]), int(roll[1])))
        texts = {b.tobytes(): format_steps(moves, hits) for b, moves, hits in got}
        assert len(texts) == len(got), "a position was found twice"
        assert texts == expected, (board.tolist(), roll.tolist())


def test_plain_boards_are_legal_results() -> None:
    """Each plain play's board is the start board with its steps applied."""
    boards, dice = corpus(300, 12)
    for board, roll in zip(boards, dice, strict=True):
        for after, steps, hits in plays_of(board, (int(roll[0]), int(roll[1]))):
            mine = board[1].astype(int)
            theirs = board[0].astype(int)
            for (src, dst), hit in zip(steps, hits, strict=True):
                mine[src - 1] -= 1
                if dst:
                    mine[dst - 1] += 1
                    assert hit == (theirs[24 - dst] == 1)
                    if hit:
                        theirs[24 - dst] = 0
                        theirs[24] += 1
            assert mine.tolist() == after[1].tolist() and theirs.tolist() == after[0].tolist()


def test_legal_plays_before_and_after_numba_agree() -> None:
    """`engine.legal_plays` walks in plain Python until the kernel is loaded; both ways
    give the same plays in the same order."""
    boards, dice = corpus(200, 13)
    code = (
        "import sys, numpy as np, engine\n"
        "from corpus import corpus\n"
        "boards, dice = corpus(200, 13)\n"
        "for b, d in zip(boards, dice):\n"
        "    plays = engine.legal_plays(engine.Position(b), tuple(int(x) for x in d))\n"
        "    print('|'.join(str(p) + '=' + p.position.position_id() for p in plays))\n"
        "assert 'numba' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT / "tests", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    batch_afterstates_with_steps(boards[:1], dice[:1])  # this process loads the kernel
    assert jit.compiled()
    for line, board, roll in zip(done.stdout.splitlines(), boards, dice, strict=True):
        plays = engine.legal_plays(engine.Position(board), tuple(int(x) for x in roll))
        assert line == "|".join(f"{p}={p.position.position_id()}" for p in plays)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu"])
def test_evaluator_numpy_path_equals_the_kernels(activation: str, monkeypatch) -> None:
    config = net.NetConfig("tesauro", (12, 7), activation)
    rng = np.random.default_rng(3)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(config.sizes[:-1], config.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.5, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = rng.normal(0, 0.5, n_out).astype(np.float32)
    evaluator = net.Evaluator(config, net.weights_from_arrays(config, arrays))
    roots, dice = corpus(40, 14)
    after, parent = engine.batch_afterstates(roots, dice)

    x = get_encoding("tesauro")[0](after).astype(np.float64)
    act = {
        "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
        "tanh": np.tanh,
        "relu": lambda z: np.maximum(z, 0),
    }[activation]
    h = act(x @ arrays["model/0.weight"].T + arrays["model/0.bias"])
    h = act(h @ arrays["model/2.weight"].T + arrays["model/2.bias"])
    c = 1 / (1 + np.exp(-(h @ arrays["model/4.weight"].T + arrays["model/4.bias"])))
    win, lg = c[:, 0], (1 - c[:, 0]) * c[:, 3]
    dense = np.stack([win, win * c[:, 1], win * c[:, 1] * c[:, 2], lg, lg * c[:, 4]], axis=1)
    dense = obey_rules(after, dense)  # as every evaluator's outputs

    kernels = evaluator.probabilities(after)
    kernels_from = evaluator.probabilities_from(roots, after, parent)
    monkeypatch.setattr(net, "in_numpy", lambda rows: True)
    numpy_path = evaluator.probabilities(after)
    numpy_from = evaluator.probabilities_from(roots, after, parent)
    for got in (kernels, kernels_from, numpy_path, numpy_from):
        np.testing.assert_allclose(got, dense, atol=2e-5)
    np.testing.assert_allclose(numpy_path, kernels, atol=2e-6)
    np.testing.assert_allclose(numpy_from, kernels_from, atol=2e-6)
