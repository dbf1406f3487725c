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
    return reference_afterstates(
        (tuple(board[0].tolist()), tuple(board[1].tolist())), (int(dice[0]), int(dice[1]))
    )


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


def test_many_plays_grow_the_output_and_the_table():
    # One checker on each of points 3..17 and 1-1: more distinct plays than the first
    # dedup table holds (512) and than a batch of one starts with, so both are grown.
    board = np.zeros((2, 25), np.int8)
    board[1, 2:17] = 1
    board[0, 23] = 15
    expected = _reference(board, (1, 1))
    assert len(expected) > 1024
    for batch in (board[None], np.stack([board, board[::-1], board])):
        after, parent = engine.batch_afterstates(batch, np.array([[1, 1]] * len(batch)))
        sets = _by_parent(after, parent, len(batch))
        assert sets[0] == expected and sets[-1] == expected
        assert all(sets[i] == _reference(batch[i], (1, 1)) for i in range(1, len(batch) - 1))


def _flipped_back(boards: np.ndarray) -> set:
    return _as_set(boards[:, ::-1])


def _values(after: np.ndarray) -> list[int]:
    """What the mover (row 1) won, written from the rules: all 15 off, then gammon and
    backgammon by the loser's checkers left and where they are."""
    values = []
    for b in after.tolist():
        if sum(b[1]):
            values.append(0)
        elif sum(b[0]) < 15:
            values.append(1)
        else:
            values.append(3 if sum(b[0][18:]) else 2)
    return values


def test_random_turns_pick_each_distinct_play_for_its_share_of_uniform():
    from engine.movegen import random_turns

    boards, dice = corpus(300, 17)
    for b, d in zip(boards, dice, strict=True):
        expected = _reference(b, d)
        count = max(len(expected), 1)
        # One draw in the middle of each of `count` equal slices of [0, 1).
        copies = np.repeat(b[None], count, axis=0)
        values = random_turns(
            copies, np.arange(count), np.tile(d, (count, 1)), (np.arange(count) + 0.5) / count
        )
        if not expected:  # no legal play: the turn passes
            assert _as_set(copies) == _as_set(b[None, ::-1]) and values.tolist() == [0]
            continue
        assert _flipped_back(copies) == expected, (engine.Position(b).position_id(), d)
        assert values.tolist() == _values(copies[:, ::-1])


def test_random_turns_frequencies_are_uniform():
    from engine.movegen import random_turns

    start = engine.Position.start().board
    expected = _reference(start, (3, 1))
    n = 16_000
    boards = np.repeat(start[None], n, axis=0)
    rng = np.random.default_rng(11)
    random_turns(boards, np.arange(n), np.tile([3, 1], (n, 1)), rng.random(n))
    keys = [(tuple(b[1].tolist()), tuple(b[0].tolist())) for b in boards]
    counts = np.array([keys.count(k) for k in expected])
    assert counts.sum() == n  # every pick is one of the reference's plays
    chi2 = (((counts - n / len(expected)) ** 2) / (n / len(expected))).sum()
    assert chi2 < 37.7  # chi-square, 15 degrees of freedom, p = 0.001


def test_random_turns_only_touch_the_listed_boards():
    from engine.movegen import random_turns

    boards, dice = corpus(40, 5)
    before = boards.copy()
    rows = np.arange(0, 40, 3)
    random_turns(boards, rows, dice[rows], np.full(len(rows), 0.25))
    untouched = np.setdiff1d(np.arange(40), rows)
    assert np.array_equal(boards[untouched], before[untouched])
    for r in rows:
        assert _as_set(boards[r][None, ::-1]) <= _reference(before[r], dice[r]) or (
            np.array_equal(boards[r], before[r][::-1]) and not _reference(before[r], dice[r])
        )


def test_random_turns_bad_input_is_rejected():
    from engine.movegen import random_turns

    boards = np.repeat(engine.Position.start().board[None], 2, axis=0)
    with pytest.raises(ValueError, match="rows must index boards"):
        random_turns(boards, np.array([2]), np.array([[3, 1]]), np.array([0.5]))
    with pytest.raises(ValueError, match=r"1\.\.6"):
        random_turns(boards, np.array([0]), np.array([[3, 0]]), np.array([0.5]))
    with pytest.raises(ValueError, match="uniform"):
        random_turns(boards, np.array([0]), np.array([[3, 1]]), np.array([0.5, 0.1]))
    with pytest.raises(ValueError, match="int8"):
        random_turns(boards.astype(np.int64), np.array([0]), np.array([[3, 1]]), np.array([0.5]))
