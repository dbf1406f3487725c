"""Analysis (hint ranking, pre-roll evaluation, cube decisions) checked against GNU
Backgammon and against plain references.

The gnubg oracle: `gnubg.findbestmoves` with a cubeful 0-ply evaluation scores every play
by the mover's cubeful equity after it (gnubg's Janowski code with the opponent's doubling
option). Our agent is given gnubg's own network as its evaluator (through `gnubg_nn`), so
the two evaluators agree on every cubeless probability; then our hint equities and our
pre-roll cube decisions must be gnubg's. This checks the wiring (views, inversion, cube
ownership, Jacoby, efficiency by position class), not any network's skill.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import gnubg
import numpy as np
import pytest
from gnubg_oracle import GnubgEvaluator, invert

import engine
from agents.base import GameContext
from agents.td import TDAgent
from vrhcaby import analysis
from vrhcaby.equity import cube, decisions
from vrhcaby.equity.context import context_for

EC_CUBEFUL = gnubg.eval_context(1, 0, 1, 0, 0.0)
RACE = 8  # gnubg.classify: 8 race, 9 crashed, 10 contact; below: exact bear-off tables
PYPI = cube.GNUBG_PYPI_EFFICIENCY  # the installed gnubg's efficiencies (see vrhcaby.equity.cube)
ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]
MET_FILE = Path(__file__).parents[1] / "vrhcaby" / "equity" / "data" / "kazaross-xg2.json"


def _apply(board: np.ndarray, move: tuple[int, ...]) -> np.ndarray:
    """A gnubg move tuple (from, to, ...; 25 bar, 0 off) played by row 1; mover stays row 1."""
    b = np.array(board, dtype=np.int8)
    for src, dst in zip(move[::2], move[1::2], strict=True):
        b[1, src - 1] -= 1
        if dst > 0:
            b[1, dst - 1] += 1
            if b[0, 24 - dst] == 1:
                b[0, 24 - dst] = 0
                b[0, 24] += 1
    return b


def _cube_info(owner: int, jacoby: bool) -> dict:
    """gnubg money cube info for the mover (player 0 on roll); owner -1 centred, 0 mover."""
    ci = gnubg.cube_info(1 if owner == -1 else 2, owner, 0, 0, (0, 0), 0)
    ci["jacoby"] = int(jacoby)
    price = 0.0 if (jacoby and owner == -1) else 1.0
    ci["gammonprice"] = ((price, price), (price, price))
    return ci


def _context(owner: int, jacoby: bool) -> GameContext:
    side = {-1: "centre", 0: "me", 1: "opponent"}[owner]
    return GameContext(cube_value=1 if owner == -1 else 2, cube_owner=side, jacoby=jacoby)


@pytest.fixture(scope="module")
def gnubg_plays() -> list[tuple]:
    """(board, dice, owner, jacoby, {afterstate bytes: gnubg cubeful score}) from random games."""
    rng = np.random.default_rng(5)
    position = engine.Position.start()
    out = []
    for step in range(160):
        owner, jacoby = (-1, 0, 1)[step % 3], bool(step // 3 % 2)
        dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        board = position.board
        gnubg.command("clear cache")  # gnubg's cache keys ignore some cube settings (Jacoby)
        scores = {}
        for play in gnubg.findbestmoves(
            board.tolist(), _cube_info(owner, jacoby), EC_CUBEFUL, dice
        ):
            if len(play["move"]) % 2 == 0:  # the binding truncates some bear-offs
                scores[_apply(board, play["move"]).tobytes()] = play["score"]
        if gnubg.classify(board.tolist()) >= RACE:
            out.append((board, dice, owner, jacoby, scores))
        plays = engine.legal_plays(position, dice)
        if plays:
            position = plays[rng.integers(len(plays))].position
        if (
            engine.game_value(position.board[None])[0]
            or gnubg.classify(position.board.tolist()) < RACE
        ):
            position = engine.Position.start()
        else:
            position = position.flip()
    return out


@pytest.fixture(scope="module")
def gnubg_agent() -> TDAgent:
    return TDAgent(GnubgEvaluator())


def test_hint_equities_are_gnubgs_cubeful_equities(gnubg_plays, gnubg_agent) -> None:
    compared = 0
    for board, dice, owner, jacoby, scores in gnubg_plays:
        ctx = _context(owner, jacoby)
        ranked = analysis.candidate_plays(gnubg_agent, board, dice, ctx, params=PYPI)
        for c in ranked:
            after = c.play.position.board
            if after.tobytes() not in scores or gnubg.classify(after[::-1].tolist()) < RACE:
                continue
            assert c.equity == pytest.approx(scores[after.tobytes()], abs=3e-4), (board, dice)
            compared += 1
        equities = [c.equity for c in ranked]
        assert equities == sorted(equities, reverse=True)
    assert compared > 1500


def test_cube_decisions_are_gnubgs(gnubg_plays, gnubg_agent) -> None:
    """Before the roll of the side that answers each play: our optimal cubeful equity is
    minus gnubg's score of the play, and where doubling and not clearly differ, gnubg's
    optimal equity is the one of our action."""
    compared, actions = 0, set()
    for _, _, owner, jacoby, scores in gnubg_plays[::3]:
        mover = _context(owner, jacoby)
        for key, score in list(scores.items())[:6]:
            after = np.frombuffer(key, dtype=np.int8).reshape(2, 25)
            nxt = after[::-1]
            if engine.game_value(after[None])[0] or gnubg.classify(nxt.tolist()) < RACE:
                continue
            ev = analysis.evaluate(gnubg_agent, nxt, mover.flip(), plies=0, params=PYPI)
            d = ev.decision
            assert d.optimal == pytest.approx(-score, abs=3e-4)
            actions.add(d.action)
            if d.available and abs(min(d.dt, d.dp) - d.nd) > 1e-3:
                gnubg_doubles = abs(-score - min(d.dt, d.dp)) < abs(-score - d.nd)
                assert gnubg_doubles == d.double
                compared += 1
    assert compared > 100
    assert {"no double", "double, take"} <= actions


def _race_evaluator_probabilities(a: np.ndarray) -> np.ndarray:
    w = np.arange(1, 26)
    lead = a[:, 0] @ w - a[:, 1] @ w - 8.0
    win = 1 / (1 + np.exp(-lead / 15))
    wg = win * 0.2
    lg = (1 - win) * 0.2
    return np.stack([win, wg, wg * 0.1, lg, lg * 0.1], axis=1)


class RaceEvaluator:
    variant = "standard"

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        return _race_evaluator_probabilities(np.asarray(afterstates, dtype=np.float64))


def _eq(p: np.ndarray) -> float:
    return float(2 * p[0] - 1 + p[1] + p[2] - p[3] - p[4])


def _leaf(board: np.ndarray) -> np.ndarray:
    v = int(engine.game_value(board[None])[0])
    if v:
        return np.array([1.0, v >= 2, v >= 3, 0.0, 0.0])
    return _race_evaluator_probabilities(board[None].astype(np.float64))[0]


def test_before_roll_is_the_average_over_rolls_of_the_best_play() -> None:
    """Plain reference: 0-ply is the opponent's afterstate inverted; 1-ply averages, over
    the 21 rolls, the 0-ply probabilities of the play with the best 0-ply equity."""
    agent = TDAgent(RaceEvaluator())
    rng = np.random.default_rng(2)
    for board in _random_boards(rng, 6):
        ref0 = invert(_leaf(board[::-1]))
        np.testing.assert_allclose(agent.before_roll(board[None], 0)[0], ref0, atol=1e-12)
        total = np.zeros(5)
        for roll in ROLLS:
            plays = engine.legal_plays(engine.Position(board), roll)
            leaves = [_leaf(p.position.board) for p in plays] or [_leaf(board)]
            best = max(leaves, key=_eq)
            total += (1 if roll[0] == roll[1] else 2) / 36 * best
        np.testing.assert_allclose(agent.before_roll(board[None], 1)[0], total, atol=1e-12)


def _random_boards(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    out, position = [], engine.Position.start()
    while len(out) < n:
        plays = engine.legal_plays(position, tuple(int(x) for x in rng.integers(1, 7, 2)))
        if plays:
            position = plays[rng.integers(len(plays))].position
        if engine.game_value(position.board[None])[0]:
            position = engine.Position.start()
            continue
        position = position.flip()
        if rng.random() < 0.2:
            out.append(position.board.copy())
    return out


def test_hint_probabilities_and_filters_follow_the_plies() -> None:
    """Every play is evaluated at 0-ply; the best K0 by equity go on to 1-ply, of those
    the best K1 to 2-ply; a candidate's probabilities are those of its deepest ply."""
    agent = TDAgent(RaceEvaluator(), filter=(4, 2))
    board = engine.Position.from_id("4HPwATDgc/ABMA").board
    ctx = GameContext()
    ranked = analysis.candidate_plays(agent, board, (6, 4), ctx, plies=2, cubeful=False)
    assert [c.plies for c in ranked].count(2) == 2
    assert [c.plies for c in ranked].count(1) == 2
    for c in ranked:
        after = c.play.position.board
        expected = agent.probabilities(after[None], c.plies)[0]
        np.testing.assert_allclose(c.probabilities, expected, atol=1e-12)
        assert c.equity == pytest.approx(_eq(expected))
    zero = {
        str(c.play): c.equity for c in analysis.candidate_plays(agent, board, (6, 4), ctx, plies=0)
    }
    deeper = [str(c.play) for c in ranked if c.plies >= 1]
    assert sorted(deeper) == sorted(sorted(zero, key=lambda k: -zero[k])[:4])


def _table() -> tuple[np.ndarray, np.ndarray]:
    data = json.loads(MET_FILE.read_text())
    return np.array(data["pre_crawford"]), np.array(data["post_crawford"])


def test_take_points_reproduce_the_table() -> None:
    """Known dead-cube take points, computed here from the raw Kazaross-XG2 table."""
    pre, _ = _table()
    board = engine.Position.start().board
    ctx = context_for(board, match_to=7, score=(3, 5))  # 4-away vs 2-away
    ev = analysis.evaluate(TDAgent(RaceEvaluator()), board, ctx)
    # Leader doubled (the opponent, 2-away): trailer passes into the Crawford game at
    # 4-away/1-away, or plays for the match at 2-away/2-away.
    assert ev.take_points[0] == pytest.approx(pre[3, 0] / pre[1, 1])
    # Trailer doubles the leader: pass leaves 2-away/3-away; take wins the match or
    # falls to 2-away/2-away.
    assert ev.take_points[1] == pytest.approx((pre[1, 2] - pre[1, 1]) / (1 - pre[1, 1]))
    assert 0.3 < ev.take_points[0] < 0.4 and 0.15 < ev.take_points[1] < 0.25


@pytest.mark.parametrize(("win", "take"), [(0.74, True), (0.76, False)])
def test_money_dead_cube_take_point_is_25_percent(win: float, take: bool) -> None:
    board = engine.Position.start().board
    p = np.array([win, 0.0, 0.0, 0.0, 0.0])
    d = decisions.cube_decision(p, board, GameContext(), x=0.0)
    assert d.take is take
    assert d.double


def test_crawford_and_post_crawford() -> None:
    board = engine.Position.start().board
    p = np.array([0.6, 0.1, 0.0, 0.05, 0.0])
    crawford = context_for(board, match_to=5, score=(2, 4), crawford=True)
    assert not decisions.cube_decision(p, board, crawford).available
    post = context_for(board, match_to=5, score=(2, 4))
    trailer = decisions.cube_decision(np.array([0.3, 0.0, 0.0, 0.0, 0.0]), board, post)
    assert trailer.double  # the trailer doubles at once post-Crawford
    leader = decisions.cube_decision(p, board, post.flip())
    assert not leader.available  # the leader has nothing to gain from a double


def test_resignations() -> None:
    board = engine.Position.start().board
    lost = np.array([0.0, 0.0, 0.0, 0.0, 0.0])  # a certain single loss
    assert decisions.resignation_offer(lost, GameContext()) == 1
    gammoned = np.array([0.0, 0.0, 0.0, 1.0, 0.0])
    assert decisions.resignation_offer(gammoned, GameContext()) == 2
    live = np.array([0.3, 0.05, 0.0, 0.1, 0.0])
    assert decisions.resignation_offer(live, GameContext()) == 0
    assert not decisions.accept_resignation(gammoned, 1, GameContext())
    assert decisions.accept_resignation(gammoned, 2, GameContext())
    assert board.shape == (2, 25)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"match_to": -1}, "a match is 1 to 25 points"),
        ({"match_to": 0, "score": (1, 1)}, "--score needs --match-to"),
        ({"match_to": 5, "score": (5, 1)}, "impossible score"),
        ({"match_to": 5, "score": (2, 1), "crawford": True}, "Crawford"),
        ({"score": (1, 1)}, "--match-to"),
        ({"match_to": 40}, "table"),
    ],
)
def test_bad_match_context(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        context_for(engine.Position.start().board, **kwargs)


def test_context_from_a_match_id() -> None:
    """gnubg's manual example: 9-point match at 2-4, player 0 owns a 2-cube, player 1 rolled."""
    state = engine.MatchState.from_id("QYkqASAAIAAA")
    ctx = context_for(engine.Position.start().board, state)
    assert (ctx.match_to, ctx.score, ctx.cube_value, ctx.cube_owner) == (9, (4, 2), 2, "opponent")
    over = engine.MatchState(game_state=engine.GameState.OVER)
    with pytest.raises(ValueError, match="game is over"):
        context_for(engine.Position.start().board, over)
    finished = np.zeros((2, 25), np.int8)
    finished[0, 0] = 15
    with pytest.raises(ValueError, match="finished game"):
        context_for(finished, None)
    with pytest.raises(ValueError, match="not both"):
        context_for(engine.Position.start().board, state, match_to=5)


def test_efficiency_by_position_class() -> None:
    start = engine.Position.start().board
    assert decisions.efficiency(start) == cube.GNUBG_EFFICIENCY.contact
    race = np.zeros((2, 25), np.int8)
    race[:, 7] = 15  # both sides on their 8 points: no contact, 120 pips each
    assert decisions.efficiency(race) == pytest.approx(min(0.7, 0.55 + 0.00125 * 120))
    assert not math.isnan(decisions.efficiency(race, PYPI))
