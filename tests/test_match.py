"""The course of a match (`vrhcaby.play.match.MatchScore`) and the one builder of a
side's game context (`GameContext.of_side`, `money_rule`)."""

from __future__ import annotations

from vrhcaby.equity.context import GameContext, money_rule
from vrhcaby.play.match import MatchScore


def test_the_crawford_game_comes_once_then_post_crawford():
    m = MatchScore(5)
    m.after_game(4, 0)  # 4-0: the next game is the Crawford game
    assert (m.score, m.crawford, m.over) == ([4, 0], True, False)
    m.after_game(2, 1)  # 4-2: post-Crawford
    assert (m.crawford, m.crawford_done) == (False, True)
    m.after_game(2, 1)  # 4-4: still post-Crawford
    assert not m.crawford and m.winner == -1
    m.after_game(1, 1)
    assert m.over and m.winner == 1


def test_money_play_keeps_the_points_and_never_ends():
    m = MatchScore(0)
    m.after_game(8, 1)
    assert (m.score, m.over, m.crawford, m.winner) == ([0, 8], False, False, -1)


def test_the_money_rules_exist_only_in_money_play_with_the_cube():
    assert money_rule(True)
    assert not money_rule(True, cube_enabled=False)
    assert not money_rule(True, match_to=5)
    assert not money_rule(False)


def test_a_sides_context_by_seat():
    ctx = GameContext.of_side(1, cube_value=2, cube_owner=1, score=(3, 5), match_to=7)
    assert (ctx.cube_owner, ctx.score) == ("me", (5, 3))
    assert GameContext.of_side(0, cube_value=2, cube_owner=1).cube_owner == "opponent"
    assert GameContext.of_side(0).cube_owner == "centre"
    money = GameContext.of_side(0, jacoby=True, beavers=True)
    assert (money.jacoby, money.beavers) == (True, True)
    no_cube = GameContext.of_side(0, jacoby=True, beavers=True, cube_enabled=False)
    assert (no_cube.jacoby, no_cube.beavers) == (False, False)
    assert GameContext.of_side(0, jacoby=True, match_to=5).jacoby is False


def test_game_points_under_the_jacoby_rule():
    jacoby = GameContext(jacoby=True)
    assert jacoby.game_points(2) == 1  # a gammon on a centred cube counts single
    assert GameContext(jacoby=True, cube_value=2, cube_owner="me").game_points(2) == 4
    assert GameContext(cube_value=4, cube_owner="opponent").game_points(3) == 12
