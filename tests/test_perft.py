"""Perft-style suite: named positions and their number of distinct legal plays per roll.

The counts were produced by GNU Backgammon's move generator (`gnubg_nn.moves`, version
1.1.0a11); when that package is installed the sets of resulting positions are compared
live as well. On a mismatch the failure lists every roll whose count differs.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import reference_afterstates

import engine

ROLLS = [f"{a}{b}" for a in range(1, 7) for b in range(1, a + 1)]

PERFT = {
    "start": (
        "4HPwATDgc/ABMA",
        {
            "11": 42,
            "21": 15,
            "22": 75,
            "31": 16,
            "32": 17,
            "33": 73,
            "41": 14,
            "42": 18,
            "43": 17,
            "44": 52,
            "51": 8,
            "52": 8,
            "53": 9,
            "54": 9,
            "55": 4,
            "61": 10,
            "62": 14,
            "63": 14,
            "64": 14,
            "65": 7,
            "66": 11,
        },
    ),
    "contact": (
        "Mp/BATBkz8EDIA",
        {
            "11": 76,
            "21": 25,
            "22": 103,
            "31": 21,
            "32": 20,
            "33": 46,
            "41": 21,
            "42": 21,
            "43": 17,
            "44": 41,
            "51": 11,
            "52": 10,
            "53": 8,
            "54": 9,
            "55": 4,
            "61": 15,
            "62": 16,
            "63": 14,
            "64": 13,
            "65": 7,
            "66": 8,
        },
    ),
    "prime": (
        "sHPwATCY27YBAA",
        {
            "11": 229,
            "21": 45,
            "22": 199,
            "31": 39,
            "32": 39,
            "33": 118,
            "41": 39,
            "42": 39,
            "43": 34,
            "44": 96,
            "51": 33,
            "52": 33,
            "53": 29,
            "54": 29,
            "55": 45,
            "61": 27,
            "62": 27,
            "63": 24,
            "64": 24,
            "65": 20,
            "66": 19,
        },
    ),
    "bar_vs_closed_board": (
        "27YBBwDgc/ABYA",
        {
            "11": 0,
            "21": 0,
            "22": 0,
            "31": 0,
            "32": 0,
            "33": 0,
            "41": 0,
            "42": 0,
            "43": 0,
            "44": 0,
            "51": 0,
            "52": 0,
            "53": 0,
            "54": 0,
            "55": 0,
            "61": 0,
            "62": 0,
            "63": 0,
            "64": 0,
            "65": 0,
            "66": 0,
        },
    ),
    "bar_vs_five_points": (
        "tm3ABwDg8+ADQA",
        {
            "11": 9,
            "21": 3,
            "22": 0,
            "31": 3,
            "32": 0,
            "33": 0,
            "41": 3,
            "42": 0,
            "43": 0,
            "44": 0,
            "51": 3,
            "52": 0,
            "53": 0,
            "54": 0,
            "55": 0,
            "61": 3,
            "62": 0,
            "63": 0,
            "64": 0,
            "65": 0,
            "66": 0,
        },
    ),
    "bearoff_with_gaps": (
        "3/cBAAD3eQ4AAA",
        {
            "11": 56,
            "21": 12,
            "22": 14,
            "31": 9,
            "32": 6,
            "33": 8,
            "41": 8,
            "42": 5,
            "43": 4,
            "44": 4,
            "51": 4,
            "52": 3,
            "53": 2,
            "54": 2,
            "55": 1,
            "61": 4,
            "62": 3,
            "63": 2,
            "64": 2,
            "65": 1,
            "66": 1,
        },
    ),
    "hit_during_bearoff": (
        "A8D/BwB2dwcAQA",
        {
            "11": 0,
            "21": 6,
            "22": 35,
            "31": 6,
            "32": 8,
            "33": 20,
            "41": 6,
            "42": 7,
            "43": 6,
            "44": 10,
            "51": 6,
            "52": 6,
            "53": 5,
            "54": 4,
            "55": 4,
            "61": 6,
            "62": 5,
            "63": 4,
            "64": 3,
            "65": 2,
            "66": 1,
        },
    ),
    "blot_in_bearoff": (
        "APD/AyDu7g4AAA",
        {
            "11": 81,
            "21": 23,
            "22": 65,
            "31": 19,
            "32": 18,
            "33": 31,
            "41": 15,
            "42": 14,
            "43": 12,
            "44": 12,
            "51": 11,
            "52": 10,
            "53": 8,
            "54": 6,
            "55": 3,
            "61": 5,
            "62": 5,
            "63": 4,
            "64": 3,
            "65": 2,
            "66": 1,
        },
    ),
    "forced_higher_die": (
        "AADw/xn/PwAEAA",
        {
            "11": 1,
            "21": 1,
            "22": 1,
            "31": 1,
            "32": 1,
            "33": 1,
            "41": 1,
            "42": 1,
            "43": 1,
            "44": 1,
            "51": 1,
            "52": 1,
            "53": 1,
            "54": 1,
            "55": 1,
            "61": 1,
            "62": 1,
            "63": 1,
            "64": 1,
            "65": 1,
            "66": 1,
        },
    ),
    "last_checkers": (
        "AAD8/wEFAAAAAA",
        {
            "11": 1,
            "21": 2,
            "22": 1,
            "31": 2,
            "32": 1,
            "33": 1,
            "41": 2,
            "42": 1,
            "43": 1,
            "44": 1,
            "51": 2,
            "52": 1,
            "53": 1,
            "54": 1,
            "55": 1,
            "61": 2,
            "62": 1,
            "63": 1,
            "64": 1,
            "65": 1,
            "66": 1,
        },
    ),
}


def _count(board: np.ndarray, roll: str) -> int:
    after, _ = engine.batch_afterstates(board[None], np.array([[int(roll[0]), int(roll[1])]]))
    return len(after)


@pytest.mark.parametrize("name", PERFT)
def test_perft_counts(name):
    pid, counts = PERFT[name]
    board = engine.board_from_position_id(pid)
    ours = {roll: _count(board, roll) for roll in ROLLS}
    wrong = {r: (ours[r], counts[r]) for r in ROLLS if ours[r] != counts[r]}
    assert not wrong, f"{name} ({pid}): roll -> (ours, GNU Backgammon): {wrong}"


@pytest.mark.parametrize("name", PERFT)
def test_perft_positions_match_reference_and_gnubg(name):
    gnubg_nn = pytest.importorskip("gnubg_nn")
    board = engine.board_from_position_id(PERFT[name][0])
    as_tuple = (tuple(board[0].tolist()), tuple(board[1].tolist()))
    for roll in ROLLS:
        d = int(roll[0]), int(roll[1])
        after, _ = engine.batch_afterstates(board[None], np.array([d]))
        ours = {(tuple(b[0].tolist()), tuple(b[1].tolist())) for b in after}
        theirs = {
            tuple(map(tuple, gnubg_nn.boardfromkey(k))) for k in gnubg_nn.moves(board.tolist(), *d)
        }
        theirs.discard(as_tuple)  # GNU Backgammon lists "no move" as the same board
        assert ours == theirs == reference_afterstates(as_tuple, d), (name, roll)
