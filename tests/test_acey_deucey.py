"""Acey-deucey: the batched generator against a plain reference, hand-checked turns, games.

The reference below shares no code with `engine`: boards as tuples of 26 ints per side
(points 1..24, the bar, the waiting checkers), moves generated point by point from RULES.md
§1-2, every order of the dice, and sets of positions grown one die at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.acey_deucey import (
    START,
    WAITING,
    PlayAD,
    batch_afterstates_ad,
    batch_bonus_ad,
    game_value_ad,
    legal_plays_ad,
    play_game_ad,
    position_from_board_ad,
    random_selfplay_ad,
    start_boards_ad,
    to_board_ad,
)
from engine.game import random_chooser
from engine.position import Position

Board = tuple[tuple[int, ...], tuple[int, ...]]  # (not on roll, on roll), 26 each
BAR_POINT, START_POINT = 25, 26


def _idx(point: int) -> int:
    return point - 1  # point p sits at index p - 1; the bar (25) at 24, waiting (26) at 25


def _moves(board: Board, die: int) -> set[Board]:
    """Boards after one checker moves `die` pips."""
    opp, me = board
    if me[_idx(BAR_POINT)] > 0:
        sources = [BAR_POINT]  # a hit checker re-enters before anything else moves
    else:
        sources = [p for p in range(1, 27) if p != BAR_POINT and me[_idx(p)] > 0]
    all_home = sum(me[6:]) == 0  # nothing on 7..24, the bar or waiting
    results = set()
    for src in sources:
        dst = 25 - die if src in (BAR_POINT, START_POINT) else src - die
        new_me, new_opp = list(me), list(opp)
        new_me[_idx(src)] -= 1
        if dst >= 1:
            theirs = _idx(25 - dst)  # my point dst is their point 25 - dst
            if opp[theirs] >= 2:
                continue
            new_me[_idx(dst)] += 1
            if opp[theirs] == 1:
                new_opp[theirs] = 0
                new_opp[_idx(BAR_POINT)] += 1
        elif not all_home:
            continue
        elif dst < 0 and any(me[_idx(p)] for p in range(src + 1, 7)):
            continue  # a higher point still holds a checker
        results.add((tuple(new_opp), tuple(new_me)))
    return results


def _part(board: Board, dice: tuple[int, int]) -> tuple[set[Board], int]:
    """Positions one roll reaches under the max-dice rules, and how many dice it plays."""
    a, b = dice
    if a == b:
        layers = [{board}]
        for _ in range(4):
            nxt: set[Board] = set()
            for x in layers[-1]:
                nxt |= _moves(x, a)
            if not nxt:
                break
            layers.append(nxt)
        return (layers[-1], len(layers) - 1) if len(layers) > 1 else (set(), 0)
    first = {d: _moves(board, d) for d in (a, b)}
    both: set[Board] = set()
    for d, other in ((a, b), (b, a)):
        for x in first[d]:
            both |= _moves(x, other)
    if both:
        return both, 2
    if first[max(dice)]:
        return first[max(dice)], 1
    if first[min(dice)]:
        return first[min(dice)], 1
    return set(), 0


def reference_turns(board: Board, dice: tuple[int, int]) -> set[tuple[Board, bool]]:
    """Every distinct (resulting board, mover rolls again) of an acey-deucey roll."""
    played, used = _part(board, dice)
    if sorted(dice) != [1, 2] or used < 2:
        return {(x, False) for x in played}
    out: set[tuple[Board, bool]] = set()
    for x in played:
        for k in range(1, 7):
            after, n = _part(x, (k, k))
            if n == 0:
                out.add((x, False))
            out |= {(y, n == 4 and sum(y[1]) > 0) for y in after}
    return out


def _key(board: np.ndarray) -> Board:
    return tuple(board[0].tolist()), tuple(board[1].tolist())


def _by_parent(after, parent, flag, n: int) -> list[set]:
    sets: list[set] = [set() for _ in range(n)]
    for b, p, f in zip(after, parent, flag, strict=True):
        key = (_key(b), bool(f))
        assert key not in sets[p], "duplicate row"
        sets[p].add(key)
    return sets


def random_board(rng: np.random.Generator) -> np.ndarray:
    """A valid (2, 26) board with waiting, bar and borne-off checkers mixed in."""
    board = np.zeros((2, 26), np.int8)
    kind = int(rng.integers(5))
    for row in (1, 0):
        if kind == 1 and row == 0:  # the opponent holds points in its home board
            for i in rng.choice(6, size=int(rng.integers(2, 6)), replace=False):
                board[0, i] = 2
        left = 15 - int(board[row].sum())
        if kind == 0 and row == 1:  # bearing off, perhaps with one checker back
            back = int(rng.integers(0, 2))
            if back:
                board[1, 24 + int(rng.integers(2))] = 1
            spots = rng.integers(0, 6, size=int(rng.integers(1, 16 - back)))
        else:
            board[row, WAITING] = int(rng.integers(0, left + 1)) if rng.random() < 0.7 else 0
            left -= int(board[row, WAITING])
            if left and rng.random() < 0.3:
                board[row, 24] = int(rng.integers(1, min(left, 3) + 1))
                left -= int(board[row, 24])
            spots = rng.integers(0, 24, size=int(rng.integers(0, left + 1)))
        for s in spots:
            other = board[1 - row, 23 - s] if s < 24 else 0
            if other == 0:
                board[row, s] += 1
    return board


def game_boards(n: int, seed: int) -> np.ndarray:
    """Boards met in random games, from the roller's view."""
    rng = np.random.default_rng(seed)
    boards, out = start_boards_ad(16), []
    while sum(len(b) for b in out) < n:
        after, parent, _ = batch_afterstates_ad(boards, rng.integers(1, 7, (16, 2)), bonus=False)
        for i in range(16):
            rows = np.flatnonzero(parent == i)
            if rows.size:
                boards[i] = after[rng.choice(rows)]
        boards = np.where(
            (game_value_ad(boards) > 0)[:, None, None], start_boards_ad(16), boards[:, ::-1]
        )
        out.append(boards.copy())
    return np.concatenate(out)[:n]


def _check_against_reference(boards: np.ndarray, dice: np.ndarray) -> None:
    after, parent, extra = batch_afterstates_ad(boards, dice)
    assert np.all(np.diff(parent) >= 0)
    sets = _by_parent(after, parent, extra, len(boards))
    for i, (b, d) in enumerate(zip(boards, dice, strict=True)):
        expected = reference_turns(_key(b), (int(d[0]), int(d[1])))
        assert sets[i] == expected, (b.tolist(), d.tolist())


ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


def test_against_reference_on_random_boards_and_rolls():
    rng = np.random.default_rng(11)
    boards = np.array([random_board(rng) for _ in range(3000)])
    dice = rng.integers(1, 7, size=(len(boards), 2))
    dice[(dice.min(1) == 1) & (dice.max(1) == 2)] = (3, 1)  # the 1-2 has its own tests
    _check_against_reference(boards, dice)


def test_against_reference_on_game_boards_for_all_rolls():
    boards = game_boards(60, 5)
    rolls = np.array([r for r in ROLLS if r != (2, 1)])
    _check_against_reference(np.repeat(boards, len(rolls), 0), np.tile(rolls, (len(boards), 1)))


def _one_two(boards: np.ndarray) -> np.ndarray:
    dice = np.tile([[1, 2]], (len(boards), 1))
    dice[::2] = (2, 1)
    return dice


def _few_sources(boards: np.ndarray, most: int) -> np.ndarray:
    """The boards whose mover has checkers in at most `most` places: the reference's
    1-2 turns grow fast with the number of places."""
    return boards[(boards[:, 1] > 0).sum(axis=1) <= most]


def test_acey_deucey_roll_against_reference():
    rng = np.random.default_rng(17)
    boards = _few_sources(np.array([random_board(rng) for _ in range(180)]), 5)
    boards = np.concatenate([boards, _few_sources(game_boards(2000, 9)[::25], 5)])
    assert len(boards) > 100
    _check_against_reference(boards, _one_two(boards))


@pytest.mark.slow
def test_acey_deucey_roll_against_reference_in_open_positions():
    rng = np.random.default_rng(23)
    boards = np.array([random_board(rng) for _ in range(20)])
    boards = np.concatenate([boards, game_boards(3000, 13)[::600]])
    _check_against_reference(boards, _one_two(boards))


def test_bonus_in_two_stages_gives_the_same_turns():
    boards = game_boards(40, 21)
    dice = np.tile([[2, 1]], (len(boards), 1))
    whole = _by_parent(*batch_afterstates_ad(boards, dice), len(boards))
    first, parent, due = batch_afterstates_ad(boards, dice, bonus=False)
    staged: list[set] = [set() for _ in boards]
    for b, p in zip(first[~due], parent[~due], strict=True):
        staged[p].add((_key(b), False))
    after, p2, extra = batch_bonus_ad(first[due])
    owner = parent[due]
    for b, p, e in zip(after, p2, extra, strict=True):
        staged[owner[p]].add((_key(b), bool(e)))
    assert staged == whole


def test_opening_six_five_enters_two_checkers_or_runs_one():
    plays = legal_plays_ad(Position.start("acey-deucey"), (6, 5))
    assert sorted(str(p) for p in plays) == ["start/14", "start/20 start/19"]
    both = next(p for p in plays if str(p) == "start/20 start/19")
    assert both.steps in (((START, 20), (START, 19)), ((START, 19), (START, 20)))
    board = to_board_ad(both.position)
    assert board[1, 18] == board[1, 19] == 1 and board[1, WAITING] == 13
    assert not both.extra_turn and both.double is None


def test_acey_deucey_from_the_start():
    plays = legal_plays_ad(Position.start("acey-deucey"), (1, 2))
    assert all(p.extra_turn for p in plays)  # nothing blocks any double at the start
    by_text = {str(p): p for p in plays}
    four = by_text["start/24 start/23, 6-6: start/19(4)"]
    board = to_board_ad(four.position)
    assert (board[1, 23], board[1, 22], board[1, 18], board[1, WAITING]) == (1, 1, 4, 9)
    assert four.double == 6 and four.double_steps == 4 and len(four.steps) == 6
    # The 1 and 2 may also be played by one checker: enter and move on to the 22-point.
    first, _, due = batch_afterstates_ad(start_boards_ad(1), np.array([[1, 2]]), bonus=False)
    assert sorted(b[1, 21:24].tolist() for b in first) == [[0, 1, 1], [1, 0, 0]]
    assert due.all()
    assert {p.double for p in plays} == set(range(1, 7))


def test_hit_checker_enters_before_waiting_ones_or_others_move():
    board = np.zeros((2, 26), np.int8)
    board[1, 24] = 1  # one checker on the bar
    board[1, WAITING] = 4
    board[1, 9] = 10  # the 10-point
    board[0, 4] = 2  # the opponent holds its 5-point, my 20-point
    board[0, WAITING] = 13
    pos = position_from_board_ad(board)
    plays = legal_plays_ad(pos, (5, 3))
    # The 5 cannot enter, so the 3 enters the hit checker; then the 5 is free for any
    # checker but the waiting ones (they would enter on the held 20-point).
    assert sorted(str(p) for p in plays) == ["bar/17", "bar/22 10/5"]
    assert all(p.steps[0] == (25, 22) for p in plays)
    # With the entry closed to both dice nothing moves, though 10/5 and 10/7 are open.
    board[0, 2] = 2  # now my 22-point too
    board[0, WAITING] = 11
    assert legal_plays_ad(position_from_board_ad(board), (5, 3)) == []
    # A double: the hit checker first, then waiting and entered checkers alike.
    three = legal_plays_ad(pos, (3, 3))
    assert all(p.steps[0] == (25, 22) for p in three)
    assert "bar/22 start/22(3)" in {str(p) for p in three}
    assert "bar/22 10/1" in {str(p) for p in three}


def _forfeit_board() -> np.ndarray:
    board = np.zeros((2, 26), np.int8)
    board[1, 12] = 1  # one checker on my 13-point, 14 waiting
    board[1, WAITING] = 14
    board[0, 18:24] = 2  # the opponent holds my points 1..6
    board[0, 5] = 2  # and my 19-point, where a 6 enters
    board[0, WAITING] = 1
    return board


def test_bonus_forfeited_when_the_double_cannot_go_four_times():
    plays = legal_plays_ad(position_from_board_ad(_forfeit_board()), (1, 2))
    assert {p.double for p in plays} == set(range(1, 7))
    for p in plays:
        assert p.extra_turn == (p.double_steps == 4)
        assert len(p.steps) == 2 + p.double_steps
    by_position = {(to_board_ad(p.position).tobytes(), p.extra_turn): p for p in plays}

    def after(moves: dict[int, int], extra: bool = False) -> PlayAD:
        board = _forfeit_board()
        for column, change in moves.items():
            board[1, column] += change
        return by_position[(board.tobytes(), extra)]

    # 13/10 leaves nothing a six can move: 10/4 and entering on 19 are blocked. The player
    # may still choose 6-6 (and only 6-6 does not move): the 1-2 stands, no extra roll.
    alone = after({12: -1, 9: 1})
    assert str(alone) == "13/10, 6-6: no move" and alone.double_steps == 0
    # Entering on 22, then sixes: 22/16/10 and 13/7, and no fourth six (10/4, 7/1 blocked).
    # Only three sixes make up these 21 pips, so this position has no extra roll.
    three = after({WAITING: -1, 12: -1, 9: 1, 6: 1})
    assert three.double == 6 and three.double_steps == 3 and not three.extra_turn
    # Entering on 24 and 23, then four sixes: 24/12 23/11, with the extra roll.
    four = after({WAITING: -2, 11: 1, 10: 1}, extra=True)
    assert four.double == 6 and four.double_steps == 4
    assert (to_board_ad(alone.position).tobytes(), True) not in by_position


def test_no_bonus_when_the_one_and_two_cannot_both_be_played():
    board = np.zeros((2, 26), np.int8)
    board[1, WAITING] = 15
    board[0, 0] = 2  # the opponent's 1-point is my 24-point, where a 1 enters
    board[0, WAITING] = 13
    plays = legal_plays_ad(position_from_board_ad(board), (2, 1))
    # The 2 enters on 23 and the 1 takes it on to 22: both played, the bonus follows.
    assert {str(p).split(",")[0] for p in plays} == {"start/22"}
    assert all(p.double is not None for p in plays)
    board[0, 2] = 2  # close my 22-point as well: the 1 cannot be played after the 2
    board[0, WAITING] = 11
    plays = legal_plays_ad(position_from_board_ad(board), (2, 1))
    assert [str(p) for p in plays] == ["start/23"]
    assert plays[0].double is None and not plays[0].extra_turn
    after, _, extra = batch_afterstates_ad(board[None], np.array([[1, 2]]))
    assert len(after) == 1 and extra.tolist() == [False]


@pytest.mark.parametrize("column, text", [(24, "bar/20"), (WAITING, "start/20")])
def test_larger_die_when_only_one_can_be_played(column, text):
    board = np.zeros((2, 26), np.int8)
    board[1, column] = 1  # one checker to enter
    board[1, 0] = 14  # the rest on my 1-point, where they cannot move
    board[0, 6] = 2  # the opponent holds my 18-point
    board[0, WAITING] = 13
    # 5-2: either die enters (on 20 or 23), but both then lead to the held 18-point.
    plays = legal_plays_ad(position_from_board_ad(board), (5, 2))
    assert [str(p) for p in plays] == [text]
    assert [str(p) for p in legal_plays_ad(position_from_board_ad(board), (2, 5))] == [text]


def _reference_value(board: np.ndarray) -> int:
    me, opp = board[1], board[0]
    if me.sum():
        return 0
    if opp.sum() < 15:
        return 1
    return 3 if opp[18:].sum() else 2  # their points 19-24, bar and waiting


def test_game_value_counts_waiting_checkers_like_the_bar():
    rng = np.random.default_rng(4)
    boards = np.array([random_board(rng) for _ in range(2000)])
    boards[::3, 1] = 0  # the mover has borne off everything
    values = game_value_ad(boards)
    assert values.tolist() == [_reference_value(b) for b in boards]
    b = np.zeros((1, 2, 26), np.int8)
    b[0, 0, WAITING] = 15
    assert game_value_ad(b).tolist() == [3]


def test_random_games_keep_checkers_and_end_with_the_right_value():
    rng = np.random.default_rng(8)
    chooser = random_chooser(rng)
    record = play_game_ad((chooser, chooser), np.random.default_rng(0), seed=0)
    positions = record.positions()
    assert positions[0] == Position.start("acey-deucey")
    for turn, nxt, before, after in zip(
        record.turns, record.turns[1:], positions, positions[1:], strict=False
    ):
        for pos in (before, after):
            board = to_board_ad(pos)
            assert np.all(board >= 0) and np.all(board.sum(axis=1) <= 15)
        if turn.play is None:
            assert after == before.flip() and nxt.player != turn.player
            continue
        assert turn.play.extra_turn == (sorted(turn.dice) == [1, 2] and turn.play.double_steps == 4)
        assert (nxt.player == turn.player) == turn.play.extra_turn
        # The steps account for the change: the waiting column weighs 26, the bar 25, off 0.
        weights = np.arange(1, 27)
        moved = to_board_ad(before)[1] @ weights - to_board_ad(turn.play.position)[1] @ weights
        assert moved == sum(a - b for a, b in turn.play.steps)
    last = to_board_ad(record.turns[-1].play.position)
    assert record.value == _reference_value(last) > 0
    assert sum(1 for t in record.turns if t.play and t.play.extra_turn) > 0


def test_random_selfplay_in_lockstep():
    result = random_selfplay_ad(40, np.random.default_rng(3))
    assert np.all(result.winner >= 0) and set(result.value.tolist()) <= {1, 2, 3}
    assert np.all(result.plies > 0)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="shape"):
        batch_afterstates_ad(np.zeros((1, 2, 25), np.int8), np.array([[1, 2]]))
    with pytest.raises(ValueError, match=r"1\.\.6"):
        batch_afterstates_ad(start_boards_ad(1), np.array([[0, 2]]))
    with pytest.raises(ValueError, match="shape"):
        position_from_board_ad(np.zeros((2, 25), np.int8))
