"""Plays and their notation, checked against GNU Backgammon's formatter and parser."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import corpus, random_board
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import IllegalPlayError, InvalidPlayError, Play, Position

START = Position.start()


def _flat(play: Play) -> tuple[int, ...]:
    return tuple(x for step in play.steps for x in step)


def test_notation_matches_gnubg_formatter():
    gnubg = pytest.importorskip("gnubg")
    boards, dice = corpus(1500, 11)
    checked = 0
    for b, d in zip(boards, dice, strict=True):
        pos = Position(b)
        gboard = [list(map(int, b[0])), list(map(int, b[1]))]
        for play in engine.legal_plays(pos, d):
            assert str(play) == gnubg.move_tuple_to_string(_flat(play), gboard), (
                pos.position_id(),
                d,
                play.steps,
            )
            checked += 1
    assert checked > 10_000


def test_known_notation_from_the_opening():
    def names(dice):
        return {str(p) for p in engine.legal_plays(START, dice)}

    assert "24/18 13/11" in names((6, 2))
    assert "8/5 6/5" in names((3, 1))
    assert "24/13" in names((6, 5))
    assert "24/18(2) 13/7(2)" in names((6, 6))
    assert "8/4(2) 6/2(2)" in names((4, 4))


@pytest.mark.parametrize(
    ("text", "dice", "expected"),
    [
        ("24/18 13/11", (6, 2), "24/18 13/11"),
        ("13/11 24/18", (6, 2), "24/18 13/11"),
        ("24-18 13-11", (6, 2), "24/18 13/11"),
        ("24/13", (6, 5), "24/13"),
        ("24/18/13", (6, 5), "24/13"),
        ("24/18 18/13", (6, 5), "24/13"),
        ("8/5(2) 6/3(2)", (3, 3), "8/5(2) 6/3(2)"),
        ("6/3 8/5 6/3 8/5", (3, 3), "8/5(2) 6/3(2)"),
        ("13/7(2) 24/18(2)", (6, 6), "24/18(2) 13/7(2)"),
    ],
)
def test_parse_accepts_equivalent_spellings(text, dice, expected):
    assert str(Play.parse(text, START, dice)) == expected


def test_parse_bar_off_and_hits():
    # Side on roll: 1 on the bar, the rest home; opponent blot on my 22-point.
    board = np.zeros((2, 25), np.int8)
    board[1, 24] = 1
    board[1, 5] = 10
    board[1, 0] = 4
    board[0, 2] = 1  # their 3-point is my 22-point
    board[0, 12] = 14
    pos = Position(board)
    play = Play.parse("bar/22* 6/1", pos, (3, 5))
    assert str(play) == "bar/22* 6/1"
    assert play.hits == (True, False)
    assert play.position.board[0, 24] == 1
    # Bearing off.
    home = np.zeros((2, 25), np.int8)
    home[1, :6] = [2, 2, 2, 3, 3, 3]
    home[0, 12] = 15
    hp = Position(home)
    assert str(Play.parse("6/off 5/off", hp, (6, 5))) == "6/off 5/off"
    assert str(Play.parse("6/0 5/o", hp, (6, 5))) == "6/off 5/off"


def test_intermediate_hit_notation():
    board = np.zeros((2, 25), np.int8)
    board[1, 12] = 2  # my 13-point
    board[1, 5] = 13
    board[0, 17] = 1  # their 18 = my 7
    board[0, 23] = 14
    pos = Position(board)
    plays = {str(p) for p in engine.legal_plays(pos, (6, 2))}
    assert "13/7*/5" in plays
    assert str(Play.parse("13/7*/5", pos, (6, 2))) == "13/7*/5"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "24",
        "24/",
        "x/18",
        "24/25",
        "18/24",
        "off/3",
        "24/18(5)",
        "13/bar",
        "26/20",
        "24/18((2)",
        "6/off/3",
        "bar*/20",
    ],
)
def test_malformed_text_is_invalid(text):
    with pytest.raises(InvalidPlayError):
        Play.parse(text, START, (6, 1))


@pytest.mark.parametrize(
    ("text", "dice"),
    [
        ("24/18 13/11", (6, 1)),
        ("5/off", (6, 5)),
        ("24/18(2)", (6, 5)),
        ("23/17", (6, 1)),
        ("24/23", (6, 1)),
        ("6/1(2)", (5, 5)),
    ],
)
def test_illegal_plays_are_illegal(text, dice):
    with pytest.raises(IllegalPlayError):
        Play.parse(text, START, dice)


def test_errors_are_value_errors_and_distinct():
    assert issubclass(InvalidPlayError, ValueError) and issubclass(IllegalPlayError, ValueError)
    assert not issubclass(InvalidPlayError, IllegalPlayError)
    assert not issubclass(IllegalPlayError, InvalidPlayError)


def test_plays_are_hashable_values():
    plays = engine.legal_plays(START, (3, 1))
    assert len(set(plays)) == 16
    again = engine.legal_plays(START, (3, 1))
    assert plays == again and {hash(p) for p in plays} == {hash(p) for p in again}


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 6))
def test_every_play_round_trips_through_notation(seed, d1, d2):
    pos = Position(random_board(np.random.default_rng(seed)))
    plays = engine.legal_plays(pos, (d1, d2))
    for play in plays[:: max(1, len(plays) // 12)]:  # parsing lists the plays again
        again = Play.parse(str(play), pos, (d1, d2))
        assert again.position == play.position
