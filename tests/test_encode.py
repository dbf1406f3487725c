"""Input encodings against plain per-position reference implementations and gnubg."""

from __future__ import annotations

import gnubg_nn
import numpy as np
import pytest

import engine
from tests.test_net import random_positions
from vrhcaby.nn import encode
from vrhcaby.nn.encode import (
    RICH_FEATURES,
    encode_expert,
    encode_rich,
    encode_tesauro,
    extends,
    rich_features,
    shots,
)

START = np.array(gnubg_nn.board_from_position_id("4HPwATDgc/ABMA"), dtype=np.int8)


def tesauro_reference(board: np.ndarray) -> list[float]:
    """Tesauro's 198 units written out from the description, one position at a time."""
    units: list[float] = []
    for side in (0, 1):
        for point in range(24):
            n = int(board[side, point])
            units += [float(n >= 1), float(n >= 2), float(n >= 3), max(n - 3, 0) / 2]
        units.append(board[side, 24] / 2)
        units.append((15 - int(board[side].sum())) / 15)
    return [*units, 1.0, 0.0]


def rich_reference(board: np.ndarray) -> list[float]:
    """The documented hand-made features, computed point by point."""
    out: list[float] = []
    pips = []
    rear = []
    for side in (0, 1):
        me, other = board[side], board[1 - side]
        pips.append(sum((i + 1) * int(me[i]) for i in range(25)))
        on_board = [p for p in range(1, 26) if me[p - 1] > 0]
        rear.append(max(on_board, default=0))

        def other_at(p: int, other: np.ndarray = other) -> int:
            """Opposing checkers on my point p; p = 0 is their bar."""
            return int(other[24]) if p == 0 else int(other[24 - p])

        blots = [p for p in range(1, 25) if me[p - 1] == 1]
        direct = sum(other_at(p - d) for p in blots for d in range(1, 7) if p - d >= 0)
        indirect = sum(other_at(p - d) for p in blots for d in range(7, 13) if p - d >= 0)
        home = sum(1 for p in range(1, 7) if me[p - 1] >= 2)
        prime = run = 0
        for p in range(1, 25):
            run = run + 1 if me[p - 1] >= 2 else 0
            prime = max(prime, run)
        back = rear[-1]
        if back >= 19:
            blocked = sum(1 for d in range(1, 7) if other_at(back - d) >= 2)
            escapes = (36 - blocked * blocked) / 36
        else:
            escapes = 1.0
        out += [pips[-1] / 167, len(blots) / 5, direct / 10, indirect / 10, home / 6]
        out += [prime / 6, escapes]
    contact = rear[0] + rear[1] > 25
    return [*out, (pips[0] - pips[1]) / 100, float(not contact)]


def test_tesauro_matches_reference() -> None:
    boards = random_positions(20, seed=11)[1][::7]
    got = encode_tesauro(boards)
    assert got.shape == (len(boards), 198) and got.dtype == np.float32
    for board, row in zip(boards, got, strict=True):
        np.testing.assert_allclose(row, tesauro_reference(board), atol=1e-6)


def test_rich_matches_reference() -> None:
    roots, after, _ = random_positions(20, seed=12)
    boards = np.concatenate([roots[::5], after[::11], START[None]])
    got = rich_features(boards)
    assert got.shape == (len(boards), len(RICH_FEATURES))
    for board, row in zip(boards, got, strict=True):
        np.testing.assert_allclose(row, rich_reference(board), atol=1e-6)
    full = encode_rich(boards)
    np.testing.assert_array_equal(full[:, :198], encode_tesauro(boards))
    np.testing.assert_array_equal(full[:, 198:], got)


def test_rich_kernel_gives_the_numpy_floats() -> None:
    roots, after, _ = random_positions(60, seed=14)
    edge = np.zeros((3, 2, 25), np.int8)
    edge[1, 0, 24] = 15  # everything on the bar against a side that has borne off
    edge[2, :, 23] = 15  # both sides all on their 24-points
    boards = np.concatenate([roots, after, edge])
    kernel = np.empty((len(boards), len(RICH_FEATURES)), np.float32)
    encode._rich_kernel(boards, kernel)
    np.testing.assert_array_equal(kernel, encode._rich_numpy(boards))
    np.testing.assert_array_equal(rich_features(boards), kernel)  # a big batch: the kernel
    for board, row in zip(boards[::97], kernel[::97], strict=True):
        np.testing.assert_allclose(row, rich_reference(board), atol=1e-6)


def test_known_values_at_the_start() -> None:
    f = dict(zip(RICH_FEATURES, rich_features(START[None])[0], strict=True))
    assert f["pips_0"] == f["pips_1"] == pytest.approx(1.0)  # 167 pips each
    assert f["home_points_1"] == pytest.approx(1 / 6) and f["prime_1"] == pytest.approx(1 / 6)
    assert f["race"] == 0.0 and f["blots_1"] == 0.0


def test_race_flag_agrees_with_gnubg_classes() -> None:
    roots, after, _ = random_positions(40, seed=13)
    races = np.zeros((3, 2, 25), np.int8)
    races[:, :, 5] = 15  # both sides home: a race (gnubg: bear-off class)
    races[1, 0, 5], races[1, 0, 12] = 10, 5  # still coming home, past each other
    races[2, 1, 5], races[2, 1, 19] = 14, 1  # behind the opponent's 6-point: contact
    boards = np.concatenate([roots, after[::3], races])
    race = rich_features(boards)[:, RICH_FEATURES.index("race")]
    for board, flag in zip(boards, race, strict=True):
        cls = gnubg_nn.classify(board.tolist())
        assert (cls <= gnubg_nn.c_race) == bool(flag), board
    assert race[-3:].tolist() == [1.0, 1.0, 0.0]


def test_bad_shapes_are_errors() -> None:
    with pytest.raises(ValueError, match="shape"):
        encode_tesauro(np.zeros((2, 25), np.int8))


# Rolls out of 36 that let one checker hit a blot n pips away with no point in between
# made: the table every backgammon book prints (1: 11 rolls ... 6: 17, 7: 6 ... 12: 3).
SHOTS = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2, 12: 3}


@pytest.mark.parametrize("distance", sorted(SHOTS))
def test_shots_of_one_checker_match_the_shot_table(distance: int) -> None:
    board = np.zeros((1, 2, 25), np.int8)
    board[0, 1, 0] = 14  # the blot's side: the rest on its 1-point, behind the hitter
    board[0, 1, 19] = 1  # a blot on its 20-point = the hitter's 5-point: a hit costs 5 pips
    board[0, 0, 4 + distance] = 1  # the hitter, `distance` pips behind it
    board[0, 0, 0] = 14
    rolls, pips = shots(board)[0, [1, 3]] * 36
    assert rolls == pytest.approx(SHOTS[distance]) and pips * 24 == pytest.approx(5 * rolls)


def legal_shots(boards: np.ndarray) -> np.ndarray:
    """`shots` from the move generator: per roll, whether some legal play hits, and the most
    pips one hit blot of the row loses (its distance from home: 25 - its point)."""
    out = np.zeros((len(boards), 4))
    points = np.arange(1, 25)
    for target in (0, 1):
        on_roll = boards[:, [target, 1 - target]].copy()  # gnubg layout: the hitter in row 1
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                dice = np.tile([d1, d2], (len(boards), 1))
                plays, parent = engine.batch_afterstates(on_roll, dice)
                hit = (on_roll[parent, 0, :24] == 1) & (plays[:, 0, :24] == 0)
                cost = np.where(hit, 25 - points, 0).max(axis=1)
                best = np.zeros(len(boards), int)
                np.maximum.at(best, parent, cost)
                weight = 1 if d1 == d2 else 2
                out[:, target] += weight * (best > 0)
                out[:, 2 + target] += weight * best / 24
    return out / 36


def test_shots_against_the_move_generator() -> None:
    """Exact but for the rule that a play must use as many dice as it can, which `shots`
    ignores: never fewer hitting rolls or pips than the legal plays give, and the same for
    nearly every position."""
    roots, after, _ = random_positions(40, seed=15)
    boards = np.concatenate([roots, after[::3]])
    got = shots(boards)
    np.testing.assert_array_equal(encode._shots_numpy(boards), got)  # both ways agree
    legal = legal_shots(boards)
    assert (got >= legal - 1e-5).all()
    assert np.mean(np.abs(got - legal) < 1e-5) > 0.995
    assert legal[:, :2].mean() > 0.2  # positions with blots in reach were tried


def test_expert_is_rich_plus_the_shots() -> None:
    boards = random_positions(10, seed=16)[0]
    expert = encode_expert(boards)
    np.testing.assert_array_equal(expert[:, :214], encode_rich(boards))
    np.testing.assert_array_equal(expert[:, 214:], shots(boards))
    assert extends("expert", "rich") and extends("rich", "tesauro") and extends("rich", "rich")
    assert not extends("tesauro", "rich")
