"""gnubg's external-player protocol: FIBS board states read from every colour and
direction, answers checked against GNU Backgammon's own moves, evaluations and resignation
rule and our cube analysis, over a real TCP socket on the loopback (and through the command
line).

The lines are written as gnubg's grammar (external_l.l / external_y.y, gnubg 1.06+) reads
them:

    commands:      EOL | SET setcommand EOL | INTERFACEVERSION EOL | HELP EOL | EXIT EOL
                   | command EOL
    setcommand:    DEBUG boolean_type | E_INTERFACE NEW | E_INTERFACE OLD
                   | PROMPT string_type
    boardcommand:  board sessionoptions
    evalcommand:   EVALUATION FIBSBOARD board evaloptions
    sessionoption: JACOBYRULE boolean_type | CRAWFORDRULE boolean_type
                   | RESIGNATION integer_type | BEAVERS boolean_type
    evaloption:    PLIES integer_type | NOISE float_type | NOISE integer_type | PRUNE
                   | PRUNE boolean_type | DETERMINISTIC | DETERMINISTIC boolean_type
                   | CUBE boolean_type | CUBEFUL | CUBELESS
    (lexer: "board:" starts a board, ended by white space; booleans yes|on|true and
    no|off|false; keywords case-insensitive)
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import gnubg
import gnubg_nn
import numpy as np
import pytest
from gnubg_oracle import GnubgEvaluator

import engine
from agents.base import GameContext
from agents.td import TDAgent
from vrhcaby import analysis
from vrhcaby.external import Server, Session, answer, fibs_board, parse_fibs_board

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
        # Row 1 doubles and keeps the turn; its opponent answers.
        take = answer(agent, fibs_board(board, doubled=True))
        assert take == ("take" if decision.take else "drop")
        answers.update((reply, take))
    assert {"roll", "take"} <= answers


def test_bad_lines_get_errors(agent: TDAgent) -> None:
    assert answer(agent, "board:a:b:1").startswith("Error: badly formed board")
    assert answer(agent, "frobnicate").startswith("Error: syntax error")
    assert answer(agent, "") == "Error: no command given"
    start = fibs_board(engine.Position.start().board)
    assert answer(agent, start + " resignation x").startswith("Error: resignation takes")
    assert answer(agent, start + " resignation 4").startswith("Error: resignation must be")
    assert answer(agent, start + " jacobyrule maybe").startswith("Error: jacobyrule takes")
    assert answer(agent, start + " plies 1").startswith("Error: syntax error")  # evaluation only
    assert answer(agent, "evaluation fibsboard " + start + " plies 5").startswith("Error: plies")
    board = engine.Position.start().board
    bad = fibs_board(board, match_to=3, score=(3, 0))
    assert "impossible score" in answer(agent, bad)


def _exchange(port: int, lines: list[str]) -> list[str]:
    """Each line's answer (``version`` answers four lines, joined here with newlines)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        f = conn.makefile("rw", encoding="utf-8", newline="\n")
        replies = []
        for line in lines:
            f.write(line + "\n")
            f.flush()
            count = 4 if line == "version" else 1
            replies.append("\n".join(f.readline().rstrip("\n") for _ in range(count)))
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
        assert replies[2].splitlines()[:2] == ["Interface: 2", "RFBF: 0"]
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


# --- resignations, evaluations and the other commands -----------------------------------

PRE_CRAWFORD = np.array(gnubg.met(15)[0])  # gnubg's own table: [i-away - 1][j-away - 1]


def _mwc(away_me: int, away_opp: int) -> float:
    """gnubg's pre-Crawford MWC (its 1-away rows are the Crawford game)."""
    if away_me <= 0:
        return 1.0
    if away_opp <= 0:
        return 0.0
    return float(PRE_CRAWFORD[away_me - 1, away_opp - 1])


def gnubg_accepts(p, value: int, *, cube: int, jacoby: bool, match=None) -> bool:
    """gnubg's ExtFIBSBoard on ``resignation N``: `p` is the resigner's (the side on turn)
    cubeless 0-ply probabilities; accept when resigning gives up equity (getResignEquities:
    Utility before, Utility of the certain loss after, 1e-6 slack). Match play compares
    MWC from gnubg's table; scores here have neither side 1-away."""
    win, wg, wbg, lg, lbg = p
    if match is None:
        price = 0.0 if jacoby else 1.0  # the cube is centred in these lines
        before = 2 * win - 1 + price * (wg - lg + wbg - lbg)
        after = -1 - price * (value > 1) - price * (value > 2)
    else:
        a, b = match
        outcomes = [
            (win - wg, _mwc(a - cube, b)),
            (wg - wbg, _mwc(a - 2 * cube, b)),
            (wbg, _mwc(a - 3 * cube, b)),
            (1 - win - lg, _mwc(a, b - cube)),
            (lg - lbg, _mwc(a, b - 2 * cube)),
            (lbg, _mwc(a, b - 3 * cube)),
        ]
        before = sum(w * m for w, m in outcomes)
        after = _mwc(a, b - value * cube)
    return after - 1e-6 < before


RESIGN_CASES = [
    # (line options, match (away me, away opp) or None, cube value, Jacoby, any rejected)
    ("", None, 1, False, True),
    # Gammons do not count: any resignation gives up equity unless the game is lost.
    (" jacobyrule on", None, 1, True, False),
    (" jacobyrule off beavers yes", None, 1, False, True),
    ("", (5, 3), 1, False, True),
    # Losing 2 points already costs the match's chances; none of these is that bad.
    (" crawfordrule on", (5, 3), 2, False, False),
]


@pytest.mark.parametrize(("options", "match", "cube", "jacoby", "rejects"), RESIGN_CASES)
def test_resignations_follow_gnubgs_rule(agent, options, match, cube, jacoby, rejects) -> None:
    """The side on turn offers to resign 1, 2 or 3 (``resignation N`` after the board, as
    gnubg reads it); the agent, its opponent, accepts exactly where gnubg would."""
    answers = []
    for board in random_boards(30, seed=11):
        p = gnubg_nn.probabilities(board.tolist(), 0)  # the resigner, on turn
        match_to, score = (7, (7 - match[0], 7 - match[1])) if match else (0, (0, 0))
        line = fibs_board(board, cube_value=cube, match_to=match_to, score=score)
        if cube > 1:
            line = fibs_board(
                board, cube_value=cube, cube_owner="me", match_to=match_to, score=score
            )
        for value in (1, 2, 3):
            reply = answer(agent, f"{line} resignation {value}{options}")
            expected = gnubg_accepts(p, value, cube=cube, jacoby=jacoby, match=match)
            assert reply == ("accept" if expected else "reject"), (board.tolist(), value)
            answers.append(reply)
    assert set(answers) == ({"accept", "reject"} if rejects else {"accept"})


def test_resignation_comes_after_a_pending_double_and_before_the_move(agent) -> None:
    board = random_boards(1, seed=12)[0]
    line = fibs_board(board, dice=(6, 5))
    assert answer(agent, line + " resignation 3") == "accept"  # a backgammon: always
    doubled = fibs_board(board, doubled=True)
    assert answer(agent, doubled + " resignation 3") in ("take", "drop", "beaver")
    assert answer(agent, line + " resignation 0") == answer(agent, line)


class Hopeless:
    """Certain results by pip lead (the side to roll gains 8 pips): over 60 behind, a
    certain single loss; over 90, a certain gammon loss; else even."""

    variant = "standard"

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        a = np.asarray(afterstates, dtype=np.float64)
        lead = a[:, 0] @ np.arange(1, 26) - a[:, 1] @ np.arange(1, 26) - 8
        out = np.tile([0.5, 0.1, 0.0, 0.1, 0.0], (len(a), 1))
        out[lead > 60] = [1.0, 0.0, 0.0, 0.0, 0.0]
        out[lead > 90] = [1.0, 1.0, 0.0, 0.0, 0.0]
        out[lead < -60] = [0.0, 0.0, 0.0, 0.0, 0.0]
        out[lead < -90] = [0.0, 0.0, 0.0, 1.0, 0.0]
        return out


def test_the_agent_resigns_only_when_asked_to_and_by_the_rule() -> None:
    """With ``resign=True`` the answer is ``resign normal|gammon`` where playing on is no
    better than the loss (a certain single loss: normal; a certain gammon: gammon, or
    normal under Jacoby with a centred cube, where gammons do not count)."""
    agent = TDAgent(Hopeless())
    seen = set()
    for board in random_boards(60, seed=13):
        lead = int((board[0] - board[1]) @ np.arange(1, 26)) + 8  # the side on turn's
        expected = "resign gammon" if lead < -90 else "resign normal" if lead < -60 else None
        for jacoby in (False, True):
            line = fibs_board(board, dice=(3, 1))
            reply = answer(agent, line, resign=True, jacoby=jacoby)
            if expected is None:
                assert not reply.startswith("resign")
                continue
            assert reply == ("resign normal" if jacoby else expected)
            assert not answer(agent, line, jacoby=jacoby).startswith("resign")
            seen.add(reply)
    assert seen == {"resign normal", "resign gammon"}


def test_evaluations_are_gnubgs(agent) -> None:
    """``evaluation fibsboard board:... [plies 0] [cubeless]``: the five probabilities of
    the side on turn and its cubeless equity (money) or MWC (match), as gnubg's own
    evaluation (race and contact positions, where gnubg uses the networks `gnubg_nn` has)."""
    compared = 0
    for board in random_boards(40, seed=14):
        if gnubg.classify(board.tolist()) < 8:
            continue
        money = gnubg.cube_info(1, -1, 0, 0, (0, 0), 0)
        money["jacoby"] = 0
        ec = gnubg.eval_context(0, 0, 1, 0, 0.0)
        ref = gnubg.evaluate(board.tolist(), money, ec)
        reply = answer(agent, "evaluation fibsboard " + fibs_board(board) + " plies 0 cubeless")
        ours = [float(x) for x in reply.split()]
        assert ours[:5] == pytest.approx(ref[:5], abs=2e-6)
        assert ours[5] == pytest.approx(ref[5], abs=2e-5)
        match = gnubg.cube_info(1, -1, 0, 7, (2, 4), 0)  # player 0 on roll, 2 points
        ref = gnubg.evaluate(board.tolist(), match, ec)
        line = fibs_board(board, match_to=7, score=(2, 4), dice=(5, 5))  # dice: ignored
        ours = [float(x) for x in answer(agent, f"EVALUATION FIBSBOARD {line}").split()]
        assert ours[5] == pytest.approx(gnubg.eq2mwc(ref[5], match), abs=2e-5)
        compared += 1
    assert compared > 20


def test_cubeful_evaluations_follow_the_analysis(agent) -> None:
    for board in random_boards(6, seed=15):
        ctx = GameContext(cube_value=2, cube_owner="opponent")
        line = fibs_board(board, cube_value=2, cube_owner="opponent")
        ev = analysis.evaluate(agent, board, ctx, plies=0)
        values = [float(x) for x in answer(agent, f"evaluation fibsboard {line} cubeful").split()]
        assert values[5] == pytest.approx(ev.cubeful, abs=2e-6)
        assert values[5] != pytest.approx(ev.cubeless, abs=1e-4)
        match = answer(agent, f"evaluation fibsboard {fibs_board(board, match_to=5)} cube on")
        mctx = GameContext(match_to=5)
        assert float(match.split()[5]) == pytest.approx(
            analysis.evaluate(agent, board, mctx, plies=0).mwc_cubeful, abs=2e-6
        )


def test_session_commands(agent) -> None:
    session = Session(agent)
    assert session.respond("set interface new") == "New interface ON"
    assert session.respond("set prompt '>'") == "Error: set option 'prompt' not supported"
    assert session.respond("help") == "\tNo help information available"
    assert session.respond("Version").splitlines()[:2] == ["Interface: 2", "RFBF: 0"]
    board = random_boards(1, seed=16)[0]
    line = fibs_board(board, dice=(4, 2), match_to=7, score=(1, 3))
    quiet = session.respond(line)
    assert session.respond("set debug on") == "Debug output ON"
    loud = session.respond(line).splitlines()
    assert loud[-1] == quiet and all(x.startswith("DBG: ") for x in loud[:-1])
    assert f"DBG: Position ID: {engine.position_id(board)}" in loud
    assert "DBG: Score: 1-3/7, Roll: 42" in loud
    assert session.respond("set debug off") == "Debug output OFF"
    assert session.respond(line) == quiet
    assert session.respond("exit") is None and session.respond("QUIT") is None
