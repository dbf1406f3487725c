"""gnubg's external-player protocol: FIBS board states read from every colour and
direction, answers checked against GNU Backgammon's own moves and our cube analysis, over a
real TCP socket on the loopback (and through the command line)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import gnubg_nn
import numpy as np
import pytest

import engine
from agents.base import GameContext
from agents.td import TDAgent
from vrhcaby import analysis
from vrhcaby.external import Server, answer, fibs_board, parse_fibs_board

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def small_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random network saved as a checkpoint, built without torch."""
    from vrhcaby import checkpoint
    from vrhcaby.net import NetConfig

    config = NetConfig("tesauro", (8,), "sigmoid")
    rng = np.random.default_rng(0)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(config.sizes[:-1], config.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.3, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = rng.normal(0, 0.3, n_out).astype(np.float32)
    path = tmp_path_factory.mktemp("net") / "net.pt"
    checkpoint.save(path, arrays, {"net": config.to_dict(), "config": {"variant": "standard"}})
    return path


class GnubgEvaluator:
    variant = "standard"

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        out = []
        for a in afterstates:
            q = gnubg_nn.probabilities(a[::-1].tolist(), 0)
            out.append([1 - q[0], q[3], q[4], q[1], q[2]])
        return np.array(out)


def fibs_line(
    board: np.ndarray,
    *,
    colour: int,
    direction: int,
    turn_is_you: bool,
    dice=(0, 0),
    score=(0, 0),
    match_to=0,
) -> str:
    """A board state written from the FIBS documentation: "You" owns row 1 of `board`,
    its checkers have sign `colour`; direction -1 means it moves from 24 to 1 (home 0, bar
    25), +1 from 1 to 24 (home 25, bar 0)."""
    cells = [0] * 26
    for k in range(1, 25):  # "You"'s point k
        index = k if direction < 0 else 25 - k
        if board[1, k - 1]:
            cells[index] = colour * int(board[1, k - 1])
        if board[0, 24 - k]:  # the opponent's own point 25 - k
            cells[index] = -colour * int(board[0, 24 - k])
    my_bar, their_bar = (25, 0) if direction < 0 else (0, 25)
    cells[my_bar] = colour * int(board[1, 24])
    cells[their_bar] = -colour * int(board[0, 24])
    turn = colour if turn_is_you else -colour
    home, bar = (0, 25) if direction < 0 else (25, 0)
    tail = [turn, *dice, 0, 0, 1, 1, 1, 0, colour, direction, home, bar, 0, 0, 0, 0, 0, 0, 0, 0]
    head = ["board", "You", "Them", str(match_to or 9999), str(score[0]), str(score[1])]
    return ":".join(head + [str(c) for c in cells + tail])


def random_boards(n: int, seed: int) -> list[np.ndarray]:
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


@pytest.mark.parametrize(("colour", "direction"), [(1, -1), (-1, -1), (1, 1), (-1, 1)])
def test_board_states_of_every_colour_and_direction(colour: int, direction: int) -> None:
    for board in random_boards(30, seed=(colour + 2) * (direction + 3)):
        line = fibs_line(
            board,
            colour=colour,
            direction=direction,
            turn_is_you=True,
            dice=(5, 2),
            score=(1, 3),
            match_to=7,
        )
        fb = parse_fibs_board(line)
        np.testing.assert_array_equal(fb.board, board)
        assert fb.dice == (5, 2) and fb.context.score == (1, 3) and fb.context.match_to == 7
        # The opponent on turn: it is the side analysed, from its own view.
        other = fibs_line(board, colour=colour, direction=direction, turn_is_you=False)
        theirs = parse_fibs_board(other)
        np.testing.assert_array_equal(theirs.board, board[::-1])
        assert theirs.context.match_to == 0


def test_writer_matches_gnubgs_layout() -> None:
    """gnubg's FIBSBoard: X = "You" on turn moving 24 to 1, then dice twice, cube, flags."""
    board = random_boards(1, seed=9)[0]
    line = fibs_board(board, dice=(6, 1), match_to=5, score=(2, 4))
    fields = line.split(":")
    reference = fibs_line(board, colour=1, direction=-1, turn_is_you=True).split(":")
    assert fields[:3] == ["board", "You", "Opponent"] and fields[3:6] == ["5", "2", "4"]
    assert fields[6:32] == reference[6:32]
    assert fields[32:45] == ["1", "6", "1", "6", "1", "1", "1", "1", "0", "1", "-1", "0", "25"]
    assert len(fields) == 53
    fb = parse_fibs_board(line)
    np.testing.assert_array_equal(fb.board, board)
    assert not fb.context.crawford  # the post-Crawford flag is set
    crawford = fibs_board(board, match_to=5, score=(2, 4), crawford=True)
    assert parse_fibs_board(crawford).context.crawford


def _apply(board: np.ndarray, steps) -> np.ndarray:
    b = np.array(board, dtype=np.int8)
    for src, dst in steps:
        b[1, src - 1] -= 1
        if dst > 0:
            b[1, dst - 1] += 1
            if b[0, 24 - dst] == 1:
                b[0, 24 - dst] = 0
                b[0, 24] += 1
    return b


def _parse_plain(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in step.rstrip("*").split("/")) for step in text.split()]


@pytest.fixture(scope="module")
def agent() -> TDAgent:
    return TDAgent(GnubgEvaluator())


def test_moves_are_gnubgs_best_moves(agent: TDAgent) -> None:
    """With gnubg's network inside, the answer reaches the position of gnubg's 0-ply move."""
    rng = np.random.default_rng(4)
    agreed = 0
    for board in random_boards(40, seed=5):
        dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        reply = answer(agent, fibs_board(board, dice=dice))
        plays = engine.legal_plays(engine.Position(board), dice)
        if not plays:
            assert reply == ""
            continue
        ours = _apply(board, _parse_plain(reply))
        assert any(np.array_equal(ours, p.position.board) for p in plays)
        theirs = _apply(board, gnubg_nn.best_move(board.tolist(), dice[0], dice[1], n=0))
        agreed += np.array_equal(ours, theirs)
    assert agreed >= 36  # a few near-ties may go either way in float32


def test_cube_answers_follow_the_analysis(agent: TDAgent) -> None:
    answers = set()
    for board in random_boards(40, seed=6):
        ctx = GameContext()
        p = agent.before_roll(board[None])[0]
        decision = analysis.cube_decision(p, board, ctx)
        reply = answer(agent, fibs_board(board))
        assert reply == ("double" if decision.double else "roll")
        # Row 1 doubles; the opponent, on turn to answer, is "You" in the line.
        take = answer(agent, fibs_board(board[::-1], doubled=True))
        assert take == ("take" if decision.take else "drop")
        answers.update((reply, take))
    assert {"roll", "take"} <= answers


def test_bad_lines_get_errors(agent: TDAgent) -> None:
    assert answer(agent, "board:a:b:1").startswith("Error: badly formed board")
    assert answer(agent, "frobnicate").startswith("Error: unsupported command")
    board = engine.Position.start().board
    bad = fibs_board(board, match_to=3, score=(3, 0))
    assert "impossible score" in answer(agent, bad)


def _exchange(port: int, lines: list[str]) -> list[str]:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        f = conn.makefile("rw", encoding="utf-8", newline="\n")
        replies = []
        for line in lines:
            f.write(line + "\n")
            f.flush()
            replies.append(f.readline().rstrip("\n"))
        f.write("exit\n")
        f.flush()
        assert f.readline() == ""  # the server closes the connection
    return replies


def test_real_socket_session(agent: TDAgent) -> None:
    server = Server(agent, ("127.0.0.1", 0))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        board = random_boards(1, seed=7)[0]
        lines = [fibs_board(board, dice=(3, 1)), fibs_board(board), "version"]
        replies = _exchange(server.port, lines)
        assert replies[0] == answer(agent, lines[0])
        assert replies[1] in ("double", "roll")
        assert replies[2].startswith("Interface:")
        assert _exchange(server.port, [lines[0]]) == replies[:1]  # serves the next client
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_command_line_server(small_net: Path) -> None:
    code = (
        "import sys, vrhcaby.cli as cli; cli.COMMANDS = ('external',); "
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "external", "--port", "0", "--agent", f"td:{small_net}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        port = int(first.rsplit(":", 1)[1].split()[0])
        start = fibs_board(engine.Position.start().board, dice=(3, 1))
        reply, version = _exchange(port, [start, "version"])
        played = _apply(engine.Position.start().board, _parse_plain(reply))
        legal = engine.legal_plays(engine.Position.start(), (3, 1))
        assert any(np.array_equal(played, p.position.board) for p in legal)
        assert version.startswith("Interface:")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
