"""The neural agent's look-ahead against a plain recursive reference, with a stand-in
evaluator (a race formula) so the search is checked apart from any trained network."""

from __future__ import annotations

import numpy as np
import pytest
from race_evaluator import RaceEvaluator

import engine
from agents.td import TDAgent

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


def eq0(ev: RaceEvaluator, board: np.ndarray) -> float:
    v = int(engine.game_value(board[None])[0])
    if v:
        return float(v)
    p = ev.probabilities(board[None])[0]
    return float(2 * p[0] - 1 + p[1] + p[2] - p[3] - p[4])


def ref_value(ev: RaceEvaluator, board: np.ndarray, plies: int) -> float:
    """n-ply value of an afterstate, one position and one roll at a time."""
    v = int(engine.game_value(board[None])[0])
    if v or plies == 0:
        return eq0(ev, board)
    total = 0.0
    for roll in ROLLS:
        opp = engine.Position(board[::-1])
        plays = engine.legal_plays(opp, roll)
        if plays:
            reply = max((p.position.board for p in plays), key=lambda b: eq0(ev, b))
        else:
            reply = opp.board
        total += (1 if roll[0] == roll[1] else 2) / 36 * ref_value(ev, reply, plies - 1)
    return -total


def positions() -> list[engine.Position]:
    rng = np.random.default_rng(11)
    out = []
    pos = engine.Position.start()
    while len(out) < 12:
        dice = tuple(int(d) for d in engine.roll_dice(rng, 1)[0])
        plays = engine.legal_plays(pos, dice)
        after = plays[int(rng.integers(len(plays)))].position if plays else pos
        if engine.game_value(after.board[None])[0]:
            pos = engine.Position.start()
            continue
        out.append(after.flip())
        pos = after.flip()
    return out


@pytest.mark.parametrize("plies", [0, 1])
def test_values_match_the_plain_reference(plies):
    ev = RaceEvaluator()
    agent = TDAgent(ev, plies=plies)
    boards = np.stack([p.board for p in positions()])
    ours = agent.value(boards, plies)
    ref = [ref_value(ev, b, plies) for b in boards]
    np.testing.assert_allclose(ours, ref, atol=1e-9)


def test_two_ply_matches_the_plain_reference_in_a_bear_off():
    ev = RaceEvaluator()
    b = np.zeros((2, 25), np.int8)
    b[1, [0, 1, 3]] = (2, 1, 1)  # four checkers left for the mover
    b[0, [0, 2, 4, 5]] = (1, 2, 1, 2)
    boards = np.stack([b, b[::-1].copy()])
    ours = TDAgent(ev, plies=2).value(boards, 2)
    np.testing.assert_allclose(ours, [ref_value(ev, x, 2) for x in boards], atol=1e-9)


def test_passing_and_finished_positions():
    ev = RaceEvaluator()
    agent = TDAgent(ev, plies=1)
    won = np.zeros((1, 2, 25), np.int8)
    won[0, 0, 20] = 15  # mover has borne off all, loser still in the winner's home: 3
    assert agent.value(won, 1)[0] == 3.0
    # The opponent is closed out on the bar: every roll passes back to the mover.
    shut = np.zeros((1, 2, 25), np.int8)
    shut[0, 1, :6] = 2
    shut[0, 1, 6] = 3
    shut[0, 0, 24] = 1
    shut[0, 0, 5] = 14
    expected = ref_value(ev, shut[0], 1)
    assert agent.value(shut, 1)[0] == pytest.approx(expected)
    assert expected == pytest.approx(-eq0(ev, shut[0][::-1]))


def test_one_ply_agent_picks_the_best_reference_play_with_one_call_per_ply():
    ev = RaceEvaluator()
    agent = TDAgent(ev, plies=1, filter=(100, 100))
    for pos in positions()[:2]:
        plays = engine.legal_plays(pos, (4, 2))
        if len(plays) < 2:
            continue
        best = max(plays, key=lambda p: ref_value(ev, p.position.board, 1))
        ev.calls = 0
        chosen = agent.choose_play(pos, (4, 2))
        assert chosen.position == best.position
        assert ev.calls == 2  # one pass for the candidates, one for all their replies


def test_move_filter_keeps_the_best_few():
    ev = RaceEvaluator()
    pos = positions()[3]
    deep = TDAgent(ev, plies=2, filter=(3, 1))
    plays = engine.legal_plays(pos, (6, 1))
    top = sorted(plays, key=lambda p: -eq0(ev, p.position.board))[:3]
    assert deep.choose_play(pos, (6, 1)).position in {p.position for p in top}


def test_bad_plies():
    with pytest.raises(ValueError, match="plies"):
        TDAgent(RaceEvaluator(), plies=3)


def test_td_spec_loads_a_checkpoint_and_plays(tmp_path):
    from agents import load_agent
    from vrhcaby.nn import checkpoint
    from vrhcaby.nn.net import Evaluator, NetConfig
    from vrhcaby.play.tournament import play_pair

    cfg = NetConfig(hidden=(8,))
    rng = np.random.default_rng(0)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(cfg.sizes[:-1], cfg.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.2, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = rng.normal(0, 0.2, n_out).astype(np.float32)
    path = checkpoint.save(
        tmp_path / "net.pt", arrays, {"net": cfg.to_dict(), "config": {"variant": "standard"}}
    )
    agent = load_agent(f"td:{path}?plies=1")
    assert agent.name == f"td:{path}?plies=1" and agent.plies == 1
    weights = [(arrays[f"model/{2 * i}.weight"], arrays[f"model/{2 * i}.bias"]) for i in range(2)]
    direct = TDAgent(Evaluator(cfg, weights), plies=1)
    pos = positions()[0]
    assert agent.choose_play(pos, (6, 2)).position == direct.choose_play(pos, (6, 2)).position
    assert play_pair(agent, load_agent("pubeval"), games=2, seed=0).games == 2
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"bad\.pt"):
        load_agent(f"td:{tmp_path / 'bad.pt'}")
