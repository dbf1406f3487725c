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

import logging
import socket
import subprocess
import sys
import threading
from pathlib import Path

import gnubg
import gnubg_nn
import numpy as np
import pytest
from corpus import walk_positions
from gnubg_oracle import GnubgEvaluator

import engine
from agents.base import GameContext
from agents.td import TDAgent
from vrhcaby import analysis
from vrhcaby.equity import decisions
from vrhcaby.io.external import Server, Session, answer, fibs_board, parse_fibs_board

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def small_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random network saved as a checkpoint, built without torch."""
    from vrhcaby.nn import checkpoint
    from vrhcaby.nn.net import NetConfig

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
    return walk_positions(n, seed)


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
        decision = decisions.cube_decision(p, board, ctx)
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
        "import sys, vrhcaby.cli.main as cli; cli.COMMANDS = ('external',); "
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "external", "--port", "0", "--agent", f"td:{small_net}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        port = int(first.rsplit(":", 1)[1].split()[0])
        start = fibs_board(engine.Position.start().board, dice=(3, 1))
        reply, version, error = _exchange(port, [start, "version", "frobnicate"])
        played = _apply(engine.Position.start().board, _parse_plain(reply))
        legal = engine.legal_plays(engine.Position.start(), (3, 1))
        assert any(np.array_equal(played, p.position.board) for p in legal)
        assert version.startswith("Interface:")
        assert error.startswith("Error: syntax error")
    finally:
        proc.terminate()
        _, log = proc.communicate(timeout=30)
    # Each connection and each error line is logged on stderr.
    assert "connection from 127.0.0.1" in log and "closed after 4 lines" in log, log
    assert "WARNING" in log and "Error: syntax error, unexpected 'frobnicate'" in log, log


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


# --- hostile lines ------------------------------------------------------------------------


def _with_field(line: str, index: int, value: str) -> str:
    fields = line.split(":")
    fields[index] = value
    return ":".join(fields)


HOSTILE = [
    # (field index, value, what the error names)
    (10, "300", "board field"),
    (10, "-300", "board field"),
    (10, str(10**20), "board field"),
    (6, "-200", "board field"),  # the opponent's bar (direction -1)
    (31, "-200", "board field"),  # our bar
    (4, "-1", "the score"),
    (5, "-3", "the opponent's score"),
    (3, "-7", "the match length"),
    (33, "9", "a die"),
    (37, "3", "power of two"),
    (37, str(2**40), "the cube"),
    (41, "0", "colour"),
    (38, "2", "may double"),
]


@pytest.mark.parametrize(("index", "value", "named"), HOSTILE)
def test_out_of_range_fields_get_one_error_line(agent, index, value, named) -> None:
    line = _with_field(fibs_board(engine.Position.start().board, match_to=7), index, value)
    reply = answer(agent, line)
    assert reply.startswith("Error: badly formed board") and named in reply, reply
    assert "\n" not in reply and len(reply) < 200


def test_impossible_states_are_refused(agent) -> None:
    start = engine.Position.start().board
    crawford = fibs_board(start, match_to=5, score=(4, 2), crawford=True, cube_value=2)
    assert "Crawford" in answer(agent, crawford)
    one_die = fibs_board(start, dice=(3, 0))
    assert "one die" in answer(agent, one_die)
    long = fibs_board(start, match_to=99)
    assert "a match is 1 to 25 points" in answer(agent, long)
    sixteen = start.copy()
    sixteen[1, 5] += 1
    line = _with_field(fibs_board(sixteen), 45, "0")  # men off: -1 is refused first
    assert "16 checkers" in answer(agent, line)


def test_errors_quote_a_short_prefix(agent) -> None:
    garbage = "x" * 1_000_000
    for line in (garbage, "board:" + garbage, "set " + garbage, "set debug " + garbage):
        reply = answer(agent, line)
        assert reply.startswith("Error") and len(reply) < 200, reply[:300]
    field = _with_field(fibs_board(engine.Position.start().board), 10, "9" * 5000)
    reply = answer(agent, field)
    assert reply.startswith("Error") and "…" in reply and len(reply) < 200


class Broken:
    """An agent whose every answer fails in a way no input check foresees."""

    name = "broken"

    def before_roll(self, boards):
        raise ZeroDivisionError("weights are NaN")

    def resign_offer(self, position, context):
        raise ZeroDivisionError("weights are NaN")

    def double_decision(self, position, context):
        raise ZeroDivisionError("weights are NaN")

    def choose_play(self, position, dice, context):
        raise ZeroDivisionError("weights are NaN")


def _raw_exchange(port: int, payload: bytes, replies: int) -> list[bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(payload)
        f = conn.makefile("rb")
        return [f.readline() for _ in range(replies)]


def _serving(agent, **settings):
    server = Server(agent, ("127.0.0.1", 0), **settings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def test_hostile_lines_keep_the_connection(agent, caplog) -> None:
    """Over the socket: each hostile line gets one ``Error:`` line, the next line is still
    answered, and the server logs the connection and every error line."""
    start = fibs_board(engine.Position.start().board, dice=(3, 1))
    lines = [_with_field(start, 10, v) for v in ("300", "-300", str(10**20))]
    lines += [_with_field(start, 4, "-1"), "z" * 1_000_000, "\x00\x00", start]
    server, thread = _serving(agent)
    try:
        with caplog.at_level(logging.INFO, logger="vrhcaby.io.external"):
            payload = "".join(line + "\n" for line in lines).encode() + b"x" * 70_000 + b"\n"
            replies = _raw_exchange(server.port, payload + (start + "\n").encode(), 9)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert all(r.endswith(b"\n") for r in replies)
    assert all(r.startswith(b"Error: ") for r in replies[:5])
    assert all(len(r) < 200 for r in replies)
    assert replies[5] == b"Error: no command given\n"  # NULs are no command
    assert replies[6] == replies[8] == (answer(agent, start) + "\n").encode()
    assert replies[7].startswith(b"Error: line longer than")
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("connection from 127.0.0.1") for m in messages)
    assert sum("Error: " in m for m in messages) == 7


def test_gnubgs_nul_bytes_and_an_internal_error(agent) -> None:
    """gnubg writes each request as ``line\\n\\0``; an agent that fails answers ``Error:``
    and the session goes on."""
    start = fibs_board(engine.Position.start().board, dice=(3, 1))
    server, thread = _serving(agent)
    try:
        payload = (start + "\n\0").encode() * 2 + b"version\n\0"
        replies = _raw_exchange(server.port, payload, 6)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert replies[0] == replies[1] == (answer(agent, start) + "\n").encode()
    assert replies[2] == b"Interface: 2\n"
    session = Session(Broken())
    reply = session.respond(start)
    assert reply.startswith("Error: internal error (ZeroDivisionError)")
    assert session.respond("version").startswith("Interface: 2")


def test_gnubg_scores_are_read_the_other_way_round(agent) -> None:
    """As gnubg 1.07 writes them when it drives an external player (the gnubg-driven test
    checks it against gnubg's own record): the two scores swapped, unless doubled."""
    board = random_boards(1, seed=21)[0]
    line = fibs_board(board, dice=(4, 2), match_to=7, score=(1, 3))
    session = Session(agent)
    session.respond("set debug on")
    assert "DBG: Score: 1-3/7, Roll: 42" in session.respond(line)
    session.gnubg_client = True
    assert "DBG: Score: 3-1/7, Roll: 42" in session.respond(line)
    doubled = fibs_board(board, match_to=7, score=(1, 3), doubled=True)
    assert "DBG: Score: 1-3/7, Roll: 00" in session.respond(doubled)


def test_seeded_mutations_of_board_lines(agent) -> None:
    """2,000 board lines with a field replaced, dropped, repeated or garbled: every answer
    is one short line and never an internal error (no exception escapes the checks); a
    line with a field missing or repeated is refused for its field count."""
    rng = np.random.default_rng(22)
    boards = random_boards(20, seed=23)
    values = [
        "0",
        "1",
        "-1",
        "15",
        "16",
        "-16",
        "25",
        "9999",
        "-9999",
        str(10**20),
        "",
        "x",
        "1.5",
        "٣",
        "0x10",
        " 3",
        "+2",
        "１",
        "6",
        "7",
        "64",
        "4096",
        "8192",
    ]
    session = Session(agent)
    errors = 0
    for _ in range(2000):
        board = boards[rng.integers(len(boards))]
        line = fibs_board(board, dice=tuple(int(d) for d in rng.integers(1, 7, 2)), match_to=7)
        fields = line.split(":")
        kind = rng.integers(4)
        if kind == 0:
            fields[rng.integers(3, len(fields))] = values[rng.integers(len(values))]
        elif kind == 1:
            del fields[rng.integers(1, len(fields))]
        elif kind == 2:
            i = rng.integers(1, len(fields))
            fields.insert(i, fields[i])
        else:
            i = rng.integers(3, len(fields))
            fields[i] = fields[i] + chr(int(rng.integers(32, 0x2FFF)))
        text = ":".join(fields)
        reply = session.respond(text)
        assert isinstance(reply, str) and "\n" not in reply and len(reply) < 300, reply
        assert not reply.startswith("Error: internal error"), (text, reply)
        errors += reply.startswith("Error")
        if kind in (1, 2):
            assert reply.startswith("Error: badly formed board (a FIBS board state has")
    assert 500 < errors < 2000
