"""Rule properties of positions, plays and games (hypothesis), and replayable games."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import random_board
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import Position

boards = st.integers(0, 2**32 - 1).map(lambda s: random_board(np.random.default_rng(s)))
dice = st.tuples(st.integers(1, 6), st.integers(1, 6))


@settings(max_examples=300, deadline=None)
@given(boards, dice)
def test_checkers_conserved_and_nothing_lands_on_a_blocked_point(board, roll):
    pos = Position(board)
    for play in engine.legal_plays(pos, roll):
        after = play.position.board
        # The mover's checkers are only moved or borne off; the opponent's only sent back.
        assert after[1].sum() + (15 - after[1].sum()) == 15
        assert after[1].sum() <= board[1].sum()
        assert after[0].sum() == board[0].sum()
        assert after[0, 24] - board[0, 24] == sum(play.hits)
        for (src, dst), _ in zip(play.steps, play.hits, strict=True):
            assert src > dst
            if dst:
                assert board[0, 24 - dst] < 2, "landed on a point the opponent held"
        engine.validate_board(after)


@settings(max_examples=300, deadline=None)
@given(boards, dice)
def test_every_play_uses_the_same_number_of_dice(board, roll):
    plays = engine.legal_plays(Position(board), roll)
    assert len({len(p.steps) for p in plays}) <= 1


def _one_checker_on_13(blocked: list[int]) -> Position:
    """The mover: 14 on its 1-point and one on its 13; the opponent holds `blocked`."""
    board = np.zeros((2, 25), np.int8)
    board[1, 0] = 14
    board[1, 12] = 1
    for point in blocked:  # my point p is their point 25 - p
        board[0, 24 - point] = 2
    board[0, 20] = 15 - 2 * len(blocked)  # the rest on their 21-point (my 4-point)
    return Position(board)


def test_only_one_die_playable_means_the_larger():
    # 6-5 from the 13-point: 13/7 then 7/2 blocked, 13/8 then 8/2 blocked, 13/2 blocked.
    pos = _one_checker_on_13([2])
    assert [str(p) for p in engine.legal_plays(pos, (6, 5))] == ["13/7"]
    assert [str(p) for p in engine.legal_plays(pos, (5, 6))] == ["13/7"]
    # With the 7-point blocked as well, only the smaller die can be played.
    pos = _one_checker_on_13([2, 7])
    assert [str(p) for p in engine.legal_plays(pos, (6, 5))] == ["13/8"]


def test_doubles_play_as_many_as_possible():
    # 5-5: 13/8, then 8/3 is blocked and the 1-point checkers may not bear off while
    # one checker is outside: a single five is all the roll allows.
    board = np.zeros((2, 25), np.int8)
    board[1, 12] = 1
    board[1, 0] = 14
    board[0, 24 - 3] = 15  # their 22 = my 3: blocked
    plays = engine.legal_plays(Position(board), (5, 5))
    assert [str(p) for p in plays] == ["13/8"]


@settings(max_examples=200, deadline=None)
@given(boards)
def test_flip_twice_is_identity_and_ids_round_trip(board):
    pos = Position(board)
    assert pos.flip().flip() == pos
    assert Position.from_id(pos.position_id()) == pos
    assert pos.flip().pips() == pos.pips()[::-1]
    assert hash(Position(board.copy())) == hash(pos)


def test_position_validation():
    board = np.zeros((2, 25), np.int8)
    board[1, 5] = 16
    with pytest.raises(ValueError, match="16 checkers"):
        Position(board)
    board[1, 5] = 2
    board[0, 18] = 2  # their 19-point is my 6-point
    with pytest.raises(ValueError, match="held by both sides"):
        Position(board)
    with pytest.raises(ValueError, match="shape"):
        Position(np.zeros((2, 24), np.int8))


def test_position_classes():
    assert Position.start().classify() == "contact"
    race = np.zeros((2, 25), np.int8)
    race[1, 8] = 15
    race[0, 8] = 15  # my 9-point and their 9-point (my 16): passed each other
    assert Position(race).classify() == "race"
    race[1, 8] = 0
    race[1, 3] = 15
    race[0, 8] = 0
    race[0, 2] = 15
    assert Position(race).classify() == "bearoff"
    race[1, 3] = 0
    assert Position(race).classify() == "over"


def test_game_values():
    b = np.zeros((3, 2, 25), np.int8)
    b[0, 0, 5] = 14  # loser has borne one off: single
    b[1, 0, 5] = 15  # none off, nothing in the winner's home: gammon
    b[2, 0, 20] = 15  # none off, in the winner's home board: backgammon
    assert engine.game_value(b).tolist() == [1, 2, 3]
    b[2, 0, 20] = 14
    b[2, 0, 24] = 1  # on the bar: backgammon too
    b[1, 1, 0] = 1  # the mover still has a checker: not over
    assert engine.game_value(b).tolist() == [1, 0, 3]


def test_opening_roll_is_never_a_double_and_picks_the_higher_die():
    rng = np.random.default_rng(3)
    for _ in range(200):
        starter, (a, b) = engine.opening_roll(rng)
        assert a != b and starter in (0, 1) and a > b


def test_game_replays_exactly_from_its_seed():
    def record(seed):
        rng = np.random.default_rng(seed)
        chooser = engine.random_chooser(rng)
        return engine.play_game((chooser, chooser), rng, seed=seed)

    a, b = record(42), record(42)
    assert [(t.player, t.dice, t.play) for t in a.turns] == [
        (t.player, t.dice, t.play) for t in b.turns
    ]
    assert a.turns[0].dice[0] != a.turns[0].dice[1]
    assert a.winner in (0, 1) and a.value in (1, 2, 3)
    # Replaying the transcript through the notation reaches the same positions.
    pos = Position.start()
    for turn in a.turns:
        if turn.play is not None:
            pos = engine.Play.parse(str(turn.play), pos, turn.dice).position
        else:
            assert not engine.legal_plays(pos, turn.dice)
        pos = pos.flip()
    assert pos == a.positions()[-1]
    assert engine.game_value(pos.flip().board[None])[0] == a.value


def test_random_selfplay_games_end_with_valid_values():
    res = engine.random_selfplay(300, np.random.default_rng(0))
    assert set(res.winner.tolist()) <= {0, 1} and (res.value >= 1).all()
    assert (res.plies >= 2).all()
    # Random play gammons often; both sides win about equally.
    assert 0.35 < (res.winner == 0).mean() < 0.65
    assert (res.value >= 2).mean() > 0.2


@pytest.mark.parametrize("variant", ["nackgammon", "nackgammon-seed"])
def test_variant_layouts(variant):
    pos = Position.start(variant)
    assert pos.board[1].sum() == 15 and pos.flip() == pos
    layout = dict(engine.get_variant(variant).layout)
    assert {i + 1: int(c) for i, c in enumerate(pos.board[1]) if c} == layout
    res = engine.random_selfplay(20, np.random.default_rng(1), variant=variant)
    assert (res.value >= 1).all()


def test_unknown_variant_is_named():
    with pytest.raises(ValueError, match="unknown variant 'hypergammon'"):
        Position.start("hypergammon")


@settings(max_examples=300, deadline=None)
@given(st.lists(boards, min_size=1, max_size=8), st.lists(dice, min_size=8, max_size=8))
def test_batched_equals_reference_for_any_batch(batch, rolls):
    from reference import reference_afterstates

    arr = np.stack(batch)
    roll = np.array(rolls[: len(batch)])
    after, parent = engine.batch_afterstates(arr, roll)
    for i, (b, d) in enumerate(zip(arr, roll, strict=True)):
        ours = {(tuple(x[0].tolist()), tuple(x[1].tolist())) for x in after[parent == i]}
        as_tuple = (tuple(b[0].tolist()), tuple(b[1].tolist()))
        assert ours == reference_afterstates(as_tuple, (int(d[0]), int(d[1])))
