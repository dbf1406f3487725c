"""The neural agent's cube and resignation decisions against a plain reference built here
from the evaluator's probabilities and `vrhcaby.cube`, one position at a time, and in
tournament matches and money sessions with the cube."""

from __future__ import annotations

import itertools

import gnubg_nn
import numpy as np
import pytest

import engine
from agents.base import GameContext
from agents.td import TDAgent
from vrhcaby import cube
from vrhcaby.tournament import play_pair


class PipEvaluator:
    """P(win) from the pip counts (the side to roll gains 8 pips), gammons from men off."""

    variant = "standard"

    def __init__(self, scale: float = 14.0) -> None:
        self.scale = scale

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        a = np.asarray(afterstates, dtype=np.float64)
        w = np.arange(1, 26)
        lead = a[:, 0] @ w - a[:, 1] @ w - 8
        win = 1 / (1 + np.exp(-lead / self.scale))
        mine_off = 15 - a[:, 1].sum(axis=1)
        theirs_off = 15 - a[:, 0].sum(axis=1)
        wg = win * 0.25 * (theirs_off == 0) * np.exp(-mine_off / 30)
        lg = (1 - win) * 0.25 * (mine_off == 0) * np.exp(-theirs_off / 30)
        return np.stack([win, wg, wg * 0.1, lg, lg * 0.1], axis=1)


class GnubgEvaluator:
    """GNU Backgammon's 0-ply network (through gnubg-nn) as an afterstate evaluator: it
    plays well enough for games to end and to reach doubling positions."""

    variant = "standard"

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        out = []
        for a in afterstates:
            q = gnubg_nn.probabilities(a[::-1].tolist(), 0)  # the opponent, on roll
            out.append([1 - q[0], q[3], q[4], q[1], q[2]])
        return np.array(out)


def pre_roll(ev, board: np.ndarray) -> np.ndarray:
    """Probabilities of the side on roll: its opponent's afterstate, seen from the other side."""
    q = ev.probabilities(board[::-1][None])[0]
    return np.array([1 - q[0], q[3], q[4], q[1], q[2]])


def efficiency(board: np.ndarray) -> float:
    on_roll, other = board[1], board[0]
    w = np.arange(1, 26)
    furthest_mine = max((i for i in range(25) if on_roll[i]), default=-1)
    furthest_theirs = max((i for i in range(25) if other[i]), default=-1)
    contact = furthest_mine + furthest_theirs >= 23  # some checkers still have to pass
    if contact:
        return cube.cube_efficiency("contact")
    if on_roll[6:].sum() == 0 and other[6:].sum() == 0:
        return cube.cube_efficiency("bearoff")
    return cube.cube_efficiency("race", int(on_roll @ w))


def reference(ev, board: np.ndarray, ctx: GameContext) -> cube.CubeDecision:
    p, x = pre_roll(ev, board), efficiency(board)
    owner = ctx.cube_owner if ctx.cube_enabled else "dead"
    if not ctx.match_to:
        return cube.money_cube_decision(
            p, x=x, cube_value=ctx.cube_value, cube_owner=owner, jacoby=ctx.jacoby
        )
    return cube.match_cube_decision(
        p,
        away_me=ctx.match_to - ctx.score[0],
        away_opp=ctx.match_to - ctx.score[1],
        cube_value=ctx.cube_value,
        cube_owner=owner,
        crawford=ctx.crawford,
        x=x,
    )


def boards(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out, position = [], engine.Position.start()
    while len(out) < n:
        plays = engine.legal_plays(position, tuple(int(d) for d in rng.integers(1, 7, 2)))
        if plays:
            position = plays[rng.integers(len(plays))].position
        if engine.game_value(position.board[None])[0]:
            position = engine.Position.start()
            continue
        position = position.flip()
        out.append(position.board.copy())
    return out


CONTEXTS = [
    GameContext(),
    GameContext(jacoby=True),
    GameContext(cube_value=2, cube_owner="me"),
    GameContext(cube_value=2, cube_owner="opponent"),
    GameContext(cube_enabled=False),
    GameContext(match_to=7, score=(2, 4)),
    GameContext(match_to=7, score=(5, 3), cube_value=2, cube_owner="me"),
    GameContext(match_to=5, score=(4, 2), crawford=True),
    GameContext(match_to=5, score=(2, 4)),  # post-Crawford, the trailer on roll
]


def test_double_and_take_follow_the_reference() -> None:
    ev = PipEvaluator()
    agent = TDAgent(ev)
    seen = set()
    for board, ctx in itertools.product(boards(60, seed=3), CONTEXTS):
        position = engine.Position(board)
        ref = reference(ev, board, ctx)
        assert agent.double_decision(position, ctx) == (ctx.may_double() and ref.double)
        if ctx.may_double():
            # The opponent, doubled: it sees the position from its side, the doubler in row 0.
            assert agent.take_decision(position.flip(), ctx.flip()) == ref.take
            seen.add(ref.action)
    assert {"no double", "double, take", "double, pass", "too good"} <= seen


def test_resignations_follow_the_reference() -> None:
    ev = PipEvaluator(scale=4.0)  # sharp, so some positions are hopeless
    agent = TDAgent(ev)
    offers = set()
    for board, ctx in itertools.product(boards(60, seed=4), CONTEXTS[:2] + CONTEXTS[5:7]):
        position = engine.Position(board)
        p = pre_roll(ev, board)
        match = {}
        if ctx.match_to:
            match = {
                "away_me": ctx.match_to - ctx.score[0],
                "away_opp": ctx.match_to - ctx.score[1],
            }
        kw = {"cube_owner": ctx.cube_owner, "jacoby": ctx.jacoby, **match}
        expected = cube.resignation_offer(p, ctx.cube_value, **kw)
        assert agent.resign_offer(position, ctx) == expected
        offers.add(expected)
        for value in (1, 2, 3):
            accept = cube.accept_resignation(p, value, ctx.cube_value, **kw)
            assert agent.accept_resignation(position.flip(), ctx.flip(), value) == accept
    assert 0 in offers and len(offers) > 1


def _replay_cube_actions(record: dict, match_to: int, crawford: bool):
    """(board of the doubler, its context, whether the double was taken) per double."""
    cube_value, owner = 1, -1
    turns = record["turns"]
    for k, turn in enumerate(turns):
        if turn.get("action") != "double":
            continue
        seat = turn["player"]
        after = turns[k + 2] if turns[k + 1]["action"] == "take" else None
        if after is None or after.get("player") != seat:
            continue  # dropped: the doubler's position is not in the record
        score = record["score"]
        ctx = GameContext(
            cube_value=cube_value,
            cube_owner="centre" if owner < 0 else "me" if owner == seat else "opponent",
            match_to=match_to,
            score=(score[seat], score[1 - seat]) if match_to else (0, 0),
            crawford=crawford,
        )
        yield engine.Position.from_id(after["position_id"]).board, ctx
        cube_value, owner = cube_value * 2, 1 - seat


@pytest.mark.parametrize("match_to", [0, 5])
def test_tournament_games_double_take_and_pass_by_the_rules(match_to: int) -> None:
    """In tournament games with the cube, the agent doubles and takes, and every double
    taken was offered where the reference says double (checked on the recorded games)."""
    ev = GnubgEvaluator()
    a, b = TDAgent(ev, name="td-a"), TDAgent(ev, name="td-b")
    result = play_pair(a, b, games=6, seed=1, match_to=match_to, record=True)
    records = [g.record for g in result.results]
    actions = [t.get("action") for r in records for t in r["turns"]]
    assert "double" in actions and ("take" in actions or "drop" in actions)
    checked = 0
    crawford_done: dict[tuple, bool] = {}
    for g in result.results:
        key = (g.sample, g.copy)
        score = g.record["score"]
        crawford = bool(match_to) and (match_to - 1 in score) and not crawford_done.get(key)
        if crawford:
            crawford_done[key] = True
        for board, ctx in _replay_cube_actions(g.record, match_to, crawford):
            ref = reference(ev, board, ctx)
            assert ref.double and ref.take
            checked += 1
    assert checked > 0
