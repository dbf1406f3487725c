"""Position classes (`engine.classify`) against GNU Backgammon's own `ClassifyPosition`."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import game_positions, random_board

import engine
from engine import classify

gnubg_nn = pytest.importorskip("gnubg_nn")


def board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A board from {index: checkers} per side (row 1 the side on roll)."""
    b = np.zeros((2, 25), np.int8)
    for row, side in ((1, mine), (0, theirs)):
        for i, n in side.items():
            b[row, i] = n
    return b


def crafted() -> list[np.ndarray]:
    """Edge cases of each class: the crashed thresholds either side, bear-off sizes."""
    out = [
        board({0: 6}, {0: 6}),  # two-sided database
        board({0: 7}, {0: 6}),  # one-sided only
        board({5: 15}, {5: 15}),
        board({6: 1, 0: 3}, {0: 3}),  # race: one checker outside
        board({}, {0: 3}),  # over
    ]
    for p1 in range(0, 9):  # the crashed test around its thresholds, contact kept
        for p2 in range(0, 9 - p1):
            for rest in range(0, 10 - p1 - p2):
                mine = {0: p1, 1: p2, 20: 1, 19: rest}
                out.append(board({k: v for k, v in mine.items() if v}, {0: 2, 5: 13}))
    return out


def test_classes_match_gnubg_on_varied_boards() -> None:
    rng = np.random.default_rng(16)
    boards = np.stack(game_positions(20, 5) + [random_board(rng) for _ in range(2000)] + crafted())
    want = np.array([gnubg_nn.classify(b.tolist()) for b in boards])
    # gnubg_nn's codes are the module's: over 0, two-sided 1, one-sided 2, race, crashed, contact
    assert (gnubg_nn.c_over, gnubg_nn.c_race, gnubg_nn.c_crashed, gnubg_nn.c_contact) == (
        classify.OVER,
        classify.RACE,
        classify.CRASHED,
        classify.CONTACT,
    )
    got = classify.classify_boards(boards)  # a large batch: the numba kernel
    assert got.shape == (len(boards),)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(classify.classify_numpy(boards), want)
    assert set(np.unique(want)) == set(range(6))  # every class was met
    # batched over any leading axes, one board alone gives a scalar
    np.testing.assert_array_equal(
        classify.classify_boards(boards[:6].reshape(2, 3, 2, 25)), want[:6].reshape(2, 3)
    )
    assert int(classify.classify_boards(boards[0])) == want[0]


def test_position_classify_names_gnubg_classes() -> None:
    names = {0: "over", 1: "bearoff", 2: "bearoff", 3: "race", 4: "crashed", 5: "contact"}
    for b in crafted():
        assert engine.Position(b).classify() == names[gnubg_nn.classify(b.tolist())]
    assert engine.Position.start().classify() == "contact"
    assert engine.Position.start("acey-deucey").classify() == "contact"  # checkers waiting


def test_bad_shape_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match=r"\(\.\.\., 2, 25\)"):
        classify.classify_boards(np.zeros((3, 2, 24), np.int8))
