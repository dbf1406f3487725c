"""The batched generator against a plain reference and against GNU Backgammon."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import corpus
from reference import reference_afterstates

import engine


def _as_set(boards: np.ndarray) -> set:
    return {(tuple(b[0].tolist()), tuple(b[1].tolist())) for b in boards}


def _by_parent(after: np.ndarray, parent: np.ndarray, n: int) -> list[set]:
    sets: list[set] = [set() for _ in range(n)]
    for b, p in zip(after, parent, strict=True):
        key = (tuple(b[0].tolist()), tuple(b[1].tolist()))
        assert key not in sets[p], "duplicate resulting position"
        sets[p].add(key)
    return sets


def _reference(board: np.ndarray, dice) -> set:
    return reference_afterstates((tuple(board[0].tolist()), tuple(board[1].tolist())),
                                 (int(dice[0]), int(dice[1])))


def test_start_position_counts_match_known_values():
    start = engine.Position.start().board
    # Distinct plays from the opening position for each of the 21 rolls, from the
    # reference generator (GNU Backgammon agrees: see test_against_gnubg).
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            after, _ = engine.batch_afterstates(start[None], np.array([[d1, d2]]))
            assert _as_set(after) == _reference(start, (d1, d2))


def test_batched_equals_reference_on_5000_positions():
    boards, dice = corpus(5000, 99)
    after, parent = engine.batch_afterstates(boards, dice)
    sets = _by_parent(after, parent, len(boards))
    for i, (b, d) in enumerate(zip(boards, dice, strict=True)):
        assert sets[i] == _reference(b, d), (engine.Position(b).position_id(), d)


def test_against_gnubg():
    gnubg_nn = pytest.importorskip("gnubg_nn")
    boards, dice = corpus(6000, 7)
    after, parent = engine.batch_afterstates(boards, dice)
    sets = _by_parent(after, parent, len(boards))
    for i, (b, d) in enumerate(zip(boards, dice, strict=True)):
        keys = gnubg_nn.moves(b.tolist(), int(d[0]), int(d[1]))
        expected = {tuple(tuple(r) for r in gnubg_nn.boardfromkey(k)) for k in keys}
        if len(expected) == 1 and _as_set(b[None]) == expected:
            expected = set()  # GNU Backgammon lists "no move" as the unchanged board
        assert sets[i] == expected, (engine.Position(b).position_id(), d)


def test_batch_order_and_batch_size_do_not_matter():
    boards, dice = corpus(300, 3)
    after, parent = engine.batch_afterstates(boards, dice)
    assert np.all(np.diff(parent) >= 0)
    whole = _by_parent(after, parent, len(boards))
    for i in range(0, len(boards), 37):
        one, p1 = engine.batch_afterstates(boards[i : i + 1], dice[i : i + 1])
        assert _as_set(one) == whole[i] and set(p1.tolist()) <= {0}


def test_no_legal_play_yields_no_rows():
    board = np.zeros((2, 25), np.int8)
    board[1, 24] = 1  # on the bar
    board[1, 5] = 14
    board[0, :6] = 2  # the opponent's closed home board
    board[0, 12] = 3
    after, parent = engine.batch_afterstates(board[None], np.array([[6, 6]]))
    assert after.shape == (0, 2, 25) and parent.shape == (0,)


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match="shape"):
        engine.batch_afterstates(np.zeros((2, 25), np.int8), np.array([[1, 2]]))
    with pytest.raises(ValueError, match=r"1\.\.6"):
        engine.batch_afterstates(np.zeros((1, 2, 25), np.int8), np.array([[7, 2]]))
