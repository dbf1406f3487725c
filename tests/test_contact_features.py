"""The `contact` encoding's 19 units per side against a plain per-position reference.

`contact_reference` is written from the prose of `vrhcaby.nn.encode.contact_features`'s
docstring alone, one board at a time with plain loops, so that it checks the numba kernel
independently; a few values at the starting position are worked out by hand besides.
"""

from __future__ import annotations

import functools
import math

import gnubg_nn
import numpy as np
import pytest

from tests.test_net import random_positions
from vrhcaby.nn.encode import (
    CONTACT_FEATURES,
    contact_features,
    encode_contact,
    encode_expert,
    extends,
)

START = np.array(gnubg_nn.board_from_position_id("4HPwATDgc/ABMA"), dtype=np.int8)
NAMES = [name[:-2] for name in CONTACT_FEATURES[:19]]


def made(x: int) -> bool:
    """A point is made (blocks) with two checkers or more."""
    return x >= 2


def rearmost(row: list[int]) -> int:
    """The highest index (bar = 24 included) holding a checker of `row`; -1 for none."""
    return max((i for i in range(25) if row[i] > 0), default=-1)


def escape_mask(board: list[int], n: int) -> int:
    """Bit k set when the point k + 1 pips ahead of a checker at index n (its own view) is
    made in `board`, the other side's row in that side's view (their index 24 + k - n)."""
    mask = 0
    for k in range(min(n, 12)):
        if made(board[24 + k - n]):
            mask |= 1 << k
    return mask


def escapes(board: list[int], n: int, past: bool = False) -> int:
    """Rolls out of 36 that let a checker at index n jump out over `board`'s blocks: the
    landing point d1 + d2 ahead is clear and d1, d2 ahead are not both made. With `past`,
    only those landing beyond the nearest block (0 when nothing blocks)."""
    if n <= 0:
        return 0 if past else 36
    mask = escape_mask(board, n)
    if past and mask == 0:
        return 0
    low = (mask & -mask).bit_length() - 1
    count = 0
    for d1 in range(1, 7):
        for d2 in range(1, 7):  # ordered dice: a double once, any other roll twice
            land = d1 + d2 - 1
            if mask >> land & 1:
                continue
            if mask >> (d1 - 1) & 1 and mask >> (d2 - 1) & 1:
                continue
            if past and not land > low:
                continue
            count += 1
    return count


def timing(c: list[int], r: int) -> float:
    """GNU Backgammon's timing: pips we can play before our home board breaks, / 100."""
    m = max(23 - r, 11)
    t = 24 * c[24]
    spare = c[24]
    for i in range(23, m, -1):
        if c[i] > 0 and c[i] != 2:
            k = c[i] - 2 if c[i] > 2 else 1
            spare += k
            t += i * k
    for i in range(min(m, 23), 5, -1):
        spare += c[i]
        t += i * c[i]
    for i in range(5, -1, -1):
        if c[i] > 2:
            k = c[i] - 2
            spare += k
            t += i * k
        elif c[i] < 2:
            k = 2 - c[i]
            if spare >= k:
                spare -= k
                t -= i * k
    return max(t, 0) / 100


def second_moment(c: list[int]) -> float:
    """How far our stragglers lag behind our (rounded-up) mean index, / 400."""
    total = sum(c)
    a = math.ceil(sum(i * c[i] for i in range(25)) / total) if total else 0
    behind = sum(c[i] for i in range(a + 1, 25))
    if not behind:
        return 0.0
    return math.ceil(sum(c[i] * (i - a) ** 2 for i in range(a + 1, 25)) / behind) / 400


def enter_loss(c: list[int], o: list[int]) -> float:
    """Pips of dice lost over the 36 rolls because our bar checkers cannot enter."""
    if c[24] == 0:
        return 0.0
    closed = [False, *(made(o[d - 1]) for d in range(1, 7))]
    loss = 0
    for d1 in range(1, 7):
        for d2 in range(1, 7):  # ordered dice: each non-double counted in both orders
            if d1 == d2:
                loss += 4 * d1 if closed[d1] else 0
            elif closed[d1] and closed[d2]:
                loss += d1 + d2
            elif c[24] >= 2 and (closed[d1] or closed[d2]):
                loss += d1 if closed[d1] else d2
    return loss / (36 * 49 / 6)


def backbone(c: list[int]) -> float:
    """1 - the mean support (11, 13 - distance, 0) the other made points give the highest."""
    points = [i for i in range(1, 24) if made(c[i])]
    if len(points) < 2:
        return 0.0
    top = max(points)
    weights = []
    for i in points:
        if i == top:
            continue
        d = top - i
        weights.append(11 if d <= 6 else 13 - d if d <= 11 else 0)
    return 1 - sum(weights) / len(weights) / 11


def side_reference(c: list[int], o: list[int]) -> list[float]:
    """The 19 units of one side: our row c and their row o, each in its own view."""
    r = rearmost(o)
    b = rearmost(c)
    break_contact = sum(c[i] * (i + r - 22) for i in range(max(24 - r, 0), 25)) / 167
    free_pips = sum(c[i] * (i + 1) for i in range(0, 23 - r)) / 100
    a = max((i for i in range(0, min(b, 23) + 1) if made(c[i])), default=-1)
    forward = next((j for j in range(18, 24) if made(c[j])), None)
    if forward is None:
        forward = next((j for j in range(17, 11, -1) if made(c[j])), None)
    forward_anchor = 2.0 if forward is None else (24 - forward) / 6
    least_active = min((escapes(c, n) for n in range(15, r + 1)), default=36)  # 36: none
    active = (36 - least_active) / 36
    contain = (36 - min(escapes(c, n) for n in range(15, 24))) / 36
    mobility = sum((i - 5) * c[i] * escapes(o, i) for i in range(6, 25)) / 3600
    h = sum(1 for i in range(6) if made(o[i]))
    anchors = sum(1 for i in range(18, 24) if made(c[i]))
    s = sum(c[18:25])
    return [
        break_contact,
        free_pips,
        timing(c, r),
        b / 24,
        a / 24,
        forward_anchor,
        escapes(c, r) / 36,
        escapes(c, r, past=True) / 36,
        active,
        active * active,
        contain,
        contain * contain,
        mobility,
        second_moment(c),
        enter_loss(c, o),
        (36 - (6 - h) ** 2) / 36,
        backbone(c),
        (s - 3) / 4 if anchors >= 2 else 0.0,
        s / 8 if anchors == 1 else 0.0,
    ]


def contact_reference(board: np.ndarray) -> list[float]:
    """The 38 `CONTACT_FEATURES` of one board: row 0's 19, then row 1's."""
    rows = [[int(x) for x in board[0]], [int(x) for x in board[1]]]
    return side_reference(rows[0], rows[1]) + side_reference(rows[1], rows[0])


def make_board(ours: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """A (2, 25) board from {index: checkers} for row 0 and row 1, each in its own view."""
    board = np.zeros((2, 25), np.int8)
    for row, points in enumerate((ours, theirs)):
        for i, n in points.items():
            board[row, i] = n
    assert board.sum(axis=1).max() <= 15
    for i in range(24):  # no point held by both sides
        assert not (board[0, i] and board[1, 23 - i]), (i, board)
    return board


EDGE_CASES = {
    # one, two and three row-0 checkers on the bar against a 2-point and a 4-point board
    "bar_one": make_board(
        {24: 1, 5: 4, 7: 3, 12: 5, 23: 2},
        {1: 3, 2: 2, 5: 4, 7: 3, 12: 3},
    ),
    "bar_two": make_board(
        {24: 2, 5: 4, 7: 2, 12: 5, 22: 2},
        {0: 2, 2: 2, 3: 2, 5: 4, 7: 3, 12: 2},
    ),
    "bar_three": make_board(
        {24: 3, 5: 4, 7: 2, 12: 4, 20: 2},
        {0: 2, 1: 2, 2: 3, 4: 2, 5: 3, 12: 3},
    ),
    # both sides on the bar at once, row 1 with two
    "bar_both": make_board(
        {24: 1, 0: 2, 5: 5, 7: 3, 12: 4},
        {24: 2, 1: 2, 4: 2, 5: 4, 7: 2, 12: 3},
    ),
    # a race: everyone past each other, row 1 with six borne off
    "race": make_board(
        {3: 3, 4: 4, 5: 4, 7: 2, 9: 2},
        {0: 2, 1: 2, 2: 1, 4: 2, 5: 2},
    ),
    # a race where row 0 has borne off most of its checkers
    "race_bearoff": make_board({0: 1, 2: 2}, {5: 5, 8: 4, 11: 3, 14: 3}),
    # a back game: row 0 holds the opponent's 1- and 3-points (our indices 23 and 21)
    "back_game": make_board(
        {23: 2, 21: 3, 24: 1, 12: 3, 5: 3, 4: 3},
        {1: 3, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 9: 2},
    ),
    # row 1 in a three-anchor back game against row 0 (its indices 23, 21 and 20)
    "back_game_1": make_board(
        {1: 2, 4: 3, 5: 3, 6: 2, 7: 3, 12: 2},
        {23: 2, 21: 2, 20: 2, 15: 4, 5: 3, 4: 2},
    ),
    # a closed board with a checker on the bar and another on its way round
    "closed": make_board(
        {0: 2, 1: 2, 2: 2, 3: 2, 4: 2, 5: 3, 8: 2},
        {24: 1, 16: 1, 12: 5, 7: 4, 5: 4},
    ),
    # a six-point prime (indices 4..9) trapping two checkers of row 1
    "prime": make_board(
        {4: 2, 5: 2, 6: 2, 7: 2, 8: 3, 9: 2, 12: 2},
        {23: 1, 22: 1, 12: 5, 6: 3, 5: 5},
    ),
    # a broken prime with a spare far back and blots everywhere
    "scattered": make_board(
        {23: 1, 20: 1, 17: 2, 14: 1, 10: 3, 6: 2, 3: 1, 1: 4},
        {21: 1, 18: 2, 15: 1, 11: 3, 8: 1, 7: 2, 2: 2, 1: 3},
    ),
    # anchors: row 0 on the opponent's 5-point and bar point, row 1 on row 0's bar point
    "anchors": make_board(
        {17: 2, 19: 2, 12: 4, 7: 3, 5: 4},
        {17: 2, 12: 4, 8: 3, 5: 4, 2: 2},
    ),
    # row 1 has just borne off its last checker: it has none (B = R = -1)
    "won": make_board({5: 3, 12: 4, 23: 2, 24: 1}, {}),
    "start": START,
}


@functools.cache
def sample_boards() -> np.ndarray:
    """Random game positions, the hand-made edge cases, and all of them with rows swapped."""
    roots, after, _ = random_positions(20, seed=5)
    edge = np.stack(list(EDGE_CASES.values()))
    boards = np.concatenate([roots, after[::20], edge])
    return np.concatenate([boards, boards[:, ::-1]]).astype(np.int8)


def test_contact_features_match_reference() -> None:
    boards = sample_boards()
    got = contact_features(boards)
    assert got.shape == (len(boards), 38) and got.dtype == np.float32
    want = np.array([contact_reference(board) for board in boards])
    for board, row, ref in zip(boards, got, want, strict=True):
        np.testing.assert_allclose(row, ref, atol=1e-6, err_msg=str(board.tolist()))
    for column, name in enumerate(CONTACT_FEATURES):  # no feature passes by being constant
        assert len(np.unique(np.round(want[:, column], 6))) >= 3, name


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_match_reference(name: str) -> None:
    board = EDGE_CASES[name]
    got = contact_features(board[None])[0]
    np.testing.assert_allclose(got, contact_reference(board), atol=1e-6)


def test_known_values_at_the_start() -> None:
    got = contact_features(START[None])[0]
    # The start is symmetric: both rows hold 2 on index 23, 5 on 12, 3 on 7 and 5 on 5.
    np.testing.assert_array_equal(got[:19], got[19:])
    f = dict(zip(NAMES, got[:19].tolist(), strict=True))
    expected = {
        # R = 23: every checker but those on index 0 (none) must pass; sum c[i] (i + 1)
        # = 167 of the 167 pips -> 1.
        "break_contact": 1.0,
        # i < 23 - R = 0: nothing already past -> 0.
        "free_pips": 0.0,
        # m = max(0, 11) = 11. Indices 23..12: 23 holds 2 (skipped), 12 holds 5: spare 3,
        # t = 36. Indices 11..6: index 7 holds 3: spare 6, t = 57. Index 5 holds 5: spare
        # 9, t = 72; indices 4, 3, 2, 1 each take 2 spares: t = 72 - 8 - 6 - 4 - 2 = 52,
        # spare 1; index 0 needs 2, has 1: skipped. 52 / 100.
        "timing": 0.52,
        "back_checker": 23 / 24,  # B = 23
        "back_anchor": 23 / 24,  # the 24-point anchor, index 23
        "forward_anchor": 1 / 6,  # nothing made on 18..22, index 23: (24 - 23) / 6
        # Their checker at 23 faces our made indices 5, 7, 12 = bits 4, 6, 11 (k = i - 1).
        # Blocked: sums 5 (4 rolls), 7 (6), 12 (6-6) and 5-5 (both dice on bit 4) ->
        # 36 - 12 = 24.
        "back_escapes": 24 / 36,
        # Past the lowest block (bit 4): sums 6..12 (26 rolls) less sums 7 (6), 12 (1) and
        # 5-5 -> 18.
        "back_escapes_past": 18 / 36,
        # Our checkers at 7 (3), 12 (5) and 23 (2) facing their made 23, 12 (= our bits
        # 6 at 7; 0 and 11 at 12): 30, 34 and 24 escapes (the 24 as above):
        # (2 * 3 * 30 + 7 * 5 * 34 + 18 * 2 * 24) / 3600 = 2234 / 3600.
        "mobility": 2234 / 3600,
        # a = ceil(152 / 15) = 11; over 12..24: (5 * 1 + 2 * 144) / 7 = 41.86 -> 42 / 400.
        "second_moment": 42 / 400,
        "enter_loss": 0.0,  # nobody on the bar
        "enter_blocked": 11 / 36,  # h = 1 (their 6-point): (36 - 5 ** 2) / 36
        # P = 23; the others: 12 (23 - 12 = 11 -> 13 - 11 = 2), 7 and 5 (over 11 -> 0):
        # mean 2 / 3, 1 - (2 / 3) / 11 = 31 / 33.
        "backbone": 31 / 33,
        "back_game": 0.0,  # one anchor in their home board
        "lone_anchor": 2 / 8,  # a = 1, s = c[18..24] = 2
    }
    for name, value in expected.items():
        assert f[name] == pytest.approx(value, abs=1e-6), name


def test_known_values_against_a_closed_board() -> None:
    got = contact_features(EDGE_CASES["closed"][None])[0]
    f0 = dict(zip(NAMES, got[:19].tolist(), strict=True))
    f1 = dict(zip(NAMES, got[19:].tolist(), strict=True))
    # Row 1's bar checker (R = 24) faces our made indices 0..5 and 8: bits 0..5 and 8 set,
    # so every die is blocked and no roll escapes.
    assert f0["back_escapes"] == 0.0 and f0["active_containment"] == 1.0
    # Row 1 on the bar against six closed points: all 36 rolls lose both dice (doubles 4 d):
    # 4 * (1 + ... + 6) + (36 * 7 - 2 * 21) = 84 + 210 = 294 = 36 * 49 / 6 -> 1.
    assert f1["enter_loss"] == pytest.approx(1.0) and f1["enter_blocked"] == 1.0
    # Row 1's rearmost is the bar: B / 24 = 1; its highest made point: index 12 -> 12 / 24.
    assert f1["back_checker"] == 1.0 and f1["back_anchor"] == pytest.approx(0.5)


def test_encode_contact_is_expert_plus_contact() -> None:
    boards = sample_boards()[::4]
    full = encode_contact(boards)
    assert full.shape == (len(boards), 256)
    np.testing.assert_array_equal(full[:, :218], encode_expert(boards))
    np.testing.assert_array_equal(full[:, 218:], contact_features(boards))
    assert extends("contact", "expert") and not extends("expert", "contact")


def test_swapping_rows_swaps_the_halves() -> None:
    boards = sample_boards()
    got = contact_features(boards)
    swapped = contact_features(np.ascontiguousarray(boards[:, ::-1]))
    np.testing.assert_array_equal(swapped[:, :19], got[:, 19:])
    np.testing.assert_array_equal(swapped[:, 19:], got[:, :19])
