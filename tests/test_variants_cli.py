"""The command line in the variants: `start`, positions with waiting checkers (`@X,O`),
`show` drawing them, `moves`, and `hint --variant acey-deucey` ranking whole 1-2 turns,
checked against the engine's legal turns and the network evaluated directly."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import engine
from agents import load_agent
from engine.acey_deucey import legal_plays_ad, position_from_board_ad, to_board_ad
from engine.waiting import read_position, waiting_id
from vrhcaby.cli import main as cli
from vrhcaby.io.answers import VARIANT_AGENTS
from vrhcaby.nn.net import equity

AD = "acey-deucey"


def run_cli(args, capsys):
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def midgame(seed: int = 3, turns: int = 40) -> engine.Position:
    """A position of a random acey-deucey game, some checkers still waiting."""
    agent, rng = load_agent(f"random?seed={seed}"), np.random.default_rng(seed)
    board = to_board_ad(engine.Position.start(AD))[None]
    for _ in range(turns):
        board, again = agent.choose_turns_ad(board, engine.roll_dice(rng, 1))
        if not again[0]:
            board = board[:, ::-1].copy()
    return position_from_board_ad(board[0])


def test_show_draws_waiting_checkers(capsys) -> None:
    code, out, _ = run_cli(["show", "start", "--variant", AD], capsys)
    assert code == 0 and "AAAAAAAAAAAAAA@15,15" in out
    assert "X  waiting 15" in out and "O  waiting 15" in out
    assert "Pip count  X: 375  O: 375" in out
    pos = midgame()
    code, out, _ = run_cli(["show", waiting_id(pos), "--variant", AD], capsys)
    o_wait, x_wait = pos.waiting
    assert f"X  waiting {x_wait:2d}" in out and f"O  waiting {o_wait:2d}" in out
    # Pips by hand: each checker's point, 25 for the bar and for waiting checkers.
    b = pos.board
    x = sum((i + 1) * int(b[1, i]) for i in range(25)) + 25 * x_wait
    o = sum((i + 1) * int(b[0, i]) for i in range(25)) + 25 * o_wait
    assert f"Pip count  X: {x}  O: {o}" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "AAAAAAAAAAAAAA@15,15"], "need --variant acey-deucey"),
        (["moves", "AAAAAAAAAAAAAA@15,16", "21", "--variant", AD], "two counts 0..15"),
        (["hint", "start", "21", "--variant", AD, "--agent", "td:td-best"], "does not play acey"),
    ],
)
def test_variant_input_errors_are_one_line(capsys, args, message) -> None:
    code, out, err = run_cli(args, capsys)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and message in err


def test_moves_reads_start_and_waiting_checkers(capsys) -> None:
    code, out, _ = run_cli(["moves", "start", "21", "--variant", AD, "--json"], capsys)
    answer = json.loads(out)
    assert code == 0 and answer["position_id"] == "AAAAAAAAAAAAAA@15,15"
    start = engine.Position.start(AD)
    assert {m["play"] for m in answer["moves"]} == {str(p) for p in legal_plays_ad(start, (2, 1))}
    for m in answer["moves"]:
        pos, _ = read_position(m["position_id"], AD)
        assert sum(pos.waiting) + int(pos.board.sum()) == 30  # nothing borne off yet
    code, out, _ = run_cli(["moves", "start", "31", "--variant", "nackgammon"], capsys)
    nack = engine.legal_plays(engine.Position.start("nackgammon"), (3, 1))
    assert code == 0 and set(out.split("\n")[:-1]) == {str(p) for p in nack}


def test_hint_ranks_whole_one_two_turns(capsys) -> None:
    pos = midgame(5, 16)
    text = waiting_id(pos)
    args = ["hint", text, "12", "--variant", AD, "--cubeless", "-n", "100000", "--json"]
    code, out, _ = run_cli(args, capsys)
    doc = json.loads(out)
    plays = {str(p): p for p in legal_plays_ad(pos, (1, 2))}
    assert code == 0 and len(doc["moves"]) == len(plays) and doc["variant"] == AD
    assert {m["play"] for m in doc["moves"]} == set(plays)
    values = [m["equity"] for m in doc["moves"]]
    assert values == sorted(values, reverse=True)
    # Each equity is the network's, on the turn's board with its "rolls again" input.
    evaluator = load_agent(VARIANT_AGENTS[AD]).evaluator  # the default network
    boards = np.stack([to_board_ad(plays[m["play"]].position) for m in doc["moves"]])
    flags = np.array([plays[m["play"]].extra_turn for m in doc["moves"]])
    np.testing.assert_allclose(values, equity(evaluator.probabilities(boards, flags)), atol=1e-5)
    for m in doc["moves"]:
        play = plays[m["play"]]
        assert m["extra_turn"] == play.extra_turn
        if play.double is not None:
            assert m["double"] == play.double and m["play"].startswith(m["first"] + ", ")
        nxt = play.position if play.extra_turn else play.position.flip()
        assert m["position_id"] == waiting_id(nxt)
    assert any(m["extra_turn"] for m in doc["moves"])
    code, out, _ = run_cli(["hint", "start", "21", "--variant", AD, "-n", "3"], capsys)
    assert code == 0 and "the 1 and the 2, then the double chosen and its play" in out
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\s", line)]
    assert len(rows) == 3
