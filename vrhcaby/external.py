"""GNU Backgammon's external-player protocol: FIBS board-state lines in, actions out.

A client (a program written for gnubg's ``external`` command) connects over TCP and sends
one line per decision; each is answered with one line, as gnubg's ``ExtFIBSBoard`` does:

* a FIBS board state (``board:You:Opponent:...``, FIBS "boardstyle 3", 53 fields) with
  dice for the side on turn: the play in gnubg's plain notation (``13/7 8/7*``; 25 the
  bar, 0 off; an empty line when no play is legal);
* without dice: ``double`` or ``roll``;
* with a double pending (the "was doubled" field): ``take`` or ``drop`` (``beaver`` when
  beavers are allowed and right) for the side doubled;
* ``version``, ``help`` and ``exit`` (closes the connection); anything else gets
  ``Error: ...``.

The board state (FIBS client protocol, "board state"): names, match length (9999 for
money), both scores, 26 board fields (positive X, negative O; direction -1 moves from 24
to 1 with the bar at 25), turn (1 X, -1 O), both pairs of dice, the cube, the two may-double
flags, was-doubled, colour, direction, home, bar, men off and on the bar, can-move,
forced-move, and the non-Crawford and post-Crawford flags gnubg reads for the Crawford
game. As in gnubg, the side on turn is the one analysed, whichever the "You" player is.
"""

from __future__ import annotations

import socketserver
import threading
from dataclasses import dataclass

import numpy as np

import engine
from agents.base import GameContext
from vrhcaby import analysis

__all__ = ["FibsBoard", "Server", "answer", "fibs_board", "format_plain", "parse_fibs_board"]

FIELDS = 53
VERSION = "Interface: vrhcaby external 1 (gnubg external-compatible FIBS board states)"


@dataclass(frozen=True)
class FibsBoard:
    """A FIBS board state, from the view of the side whose decision it asks for (row 1 of
    `board`): the side on turn, or with a double pending, the doubler."""

    board: np.ndarray
    dice: tuple[int, int]
    context: GameContext
    #: A double is pending: the side on turn doubled and its opponent must answer.
    doubled: bool


def _int(field: str, name: str) -> int:
    try:
        return int(field)
    except ValueError:
        raise ValueError(f"FIBS board: {name} is not a number: {field!r}") from None


def parse_fibs_board(line: str, *, jacoby: bool = False, crawford_rule: bool = True) -> FibsBoard:
    """Read a ``board:...`` line; ValueError (one line) if it is malformed."""
    f = line.strip().split(":")
    if f[0] != "board" or len(f) != FIELDS:
        raise ValueError(f"a FIBS board state has {FIELDS} ':'-separated fields, got {len(f)}")
    n = [0, 0, 0] + [_int(x, f"field {i + 1}") for i, x in enumerate(f[3:], start=3)]
    match_to, score, opp_score = n[3], n[4], n[5]
    cells = n[6:32]
    turn, dice, opp_dice = n[32], (n[33], n[34]), (n[35], n[36])
    cube_value, may_double, opp_may_double, was_doubled = n[37], n[38], n[39], n[40]
    colour, direction = n[41], n[42]
    non_crawford, post_crawford = n[51], n[52]
    if turn not in (1, -1) or colour not in (1, -1) or direction not in (1, -1):
        raise ValueError("FIBS board: turn, colour and direction must be 1 or -1 (game over?)")
    if match_to == 9999:
        match_to = 0
    board = np.zeros((2, 25), dtype=np.int8)  # the "You" player in row 1
    for k in range(1, 25):
        value = cells[k] if direction < 0 else cells[25 - k]
        if value * colour > 0:
            board[1, k - 1] = abs(value)
        elif value:
            board[0, 24 - k] = abs(value)
    mine_bar, theirs_bar = (25, 0) if direction < 0 else (0, 25)
    board[1, 24] = abs(cells[mine_bar])
    board[0, 24] = abs(cells[theirs_bar])
    engine.validate_board(board)
    if not (was_doubled or may_double or opp_may_double):
        was_doubled = 1  # FIBS clears both flags while a double is pending (as gnubg reads it)
    # The side analysed: the side on turn; with a double pending the turn is the answering
    # side's (as gnubg's ProcessFIBSBoardInfo reads it), so the doubler, the other one.
    player_analysed = (turn == colour) != bool(was_doubled)
    if not dice[0]:
        dice = opp_dice
    if not player_analysed:
        board = board[::-1].copy()
        score, opp_score = opp_score, score
        may_double, opp_may_double = opp_may_double, may_double
    owner = "centre"
    if bool(may_double) != bool(opp_may_double):
        owner = "me" if may_double else "opponent"
    crawford = False
    if match_to and 1 in (match_to - score, match_to - opp_score):
        crawford = crawford_rule and not (non_crawford or post_crawford)
    if crawford or was_doubled:
        owner = "centre"
    if match_to and (max(score, opp_score) >= match_to or match_to < 1):
        raise ValueError(f"FIBS board: impossible score {score}-{opp_score} to {match_to}")
    if cube_value < 1 or cube_value & (cube_value - 1):
        raise ValueError(f"FIBS board: the cube must be a power of two, got {cube_value}")
    if dice != (0, 0):
        engine.check_dice(dice)
    context = GameContext(
        cube_value=cube_value,
        cube_owner=owner,  # type: ignore[arg-type]
        match_to=match_to,
        score=(score, opp_score),
        crawford=crawford,
        jacoby=jacoby and not match_to,
        max_cube=max(64, cube_value),
    )
    return FibsBoard(board, dice, context, bool(was_doubled))


def fibs_board(
    board: np.ndarray,
    *,
    dice: tuple[int, int] = (0, 0),
    cube_value: int = 1,
    cube_owner: str = "centre",
    match_to: int = 0,
    score: tuple[int, int] = (0, 0),
    doubled: bool = False,
    crawford: bool = False,
    names: tuple[str, str] = ("You", "Opponent"),
) -> str:
    """The board-state line gnubg's ``FIBSBoard`` writes, the side on turn (row 1) as X,
    "You", moving from 24 to 1. With `doubled`, row 1 is the side that must answer the
    double and both may-double flags are cleared, as on FIBS."""
    b = np.asarray(board)
    cells = [-int(b[0, 24])]
    for i in range(24):
        theirs = int(b[0, 23 - i])
        cells.append(-theirs if theirs else int(b[1, i]))
    cells.append(int(b[1, 24]))
    off = [15 - int(b[1].sum()), 15 - int(b[0].sum())]
    may = (0, 0) if doubled else (int(cube_owner != "opponent"), int(cube_owner != "me"))
    tail = [
        1,
        *dice,
        *dice,
        cube_value,
        *may,
        int(doubled),
        1,
        -1,
        0,
        25,
        *off,
        0,
        0,
        0,
        0,
        0,
        int(bool(match_to) and not crawford),
    ]
    fields = ["board", *names, str(match_to or 9999), *map(str, score)]
    return ":".join(fields + [str(c) for c in cells + tail])


def format_plain(play: engine.Play) -> str:
    """gnubg's FormatMovePlain: each checker step ``from/to`` (25 bar, 0 off), ``*`` on a
    hit, sources in descending order."""
    steps = sorted(zip(play.steps, play.hits, strict=True), key=lambda s: s[0], reverse=True)
    return " ".join(f"{a}/{b}{'*' if hit else ''}" for (a, b), hit in steps)


def answer(
    agent, line: str, *, jacoby: bool = False, crawford_rule: bool = True, beavers: bool = False
) -> str:
    """The response (without newline) to one line of the protocol, as gnubg gives it."""
    text = line.strip()
    word = text.split(" ", 1)[0].lower()
    if word == "version":
        return VERSION
    if word == "help":
        return "Send a FIBS board state (board:...) for a move, cube or take decision; exit."
    if not text.startswith("board:"):
        return f"Error: unsupported command {word!r}"
    try:
        fb = parse_fibs_board(text, jacoby=jacoby, crawford_rule=crawford_rule)
    except ValueError as exc:
        return f"Error: badly formed board ({exc})"
    position = engine.Position(fb.board)
    if fb.doubled:
        p = agent.before_roll(fb.board[None])[0]
        decision = analysis.cube_decision(p, fb.board, fb.context, beavers=beavers)
        if not decision.take:
            return "drop"
        return "beaver" if beavers and decision.beaver else "take"
    if fb.dice[0]:
        if not engine.legal_plays(position, fb.dice):
            return ""
        return format_plain(agent.choose_play(position, fb.dice))
    if fb.context.may_double() and agent.double_decision(position, fb.context):
        return "double"
    return "roll"


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """Answers the protocol on a TCP socket, one thread per connection.

    ``Server(agent, ("127.0.0.1", 0))`` binds an ephemeral port (``server.port``);
    ``serve_forever()`` runs until ``shutdown()``.
    """

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, agent, address: tuple[str, int], **options: bool) -> None:
        self.agent = agent
        self.options = options
        self.lock = threading.Lock()  # one evaluation at a time
        super().__init__(address, _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _Handler(socketserver.StreamRequestHandler):
    server: Server

    def handle(self) -> None:
        for raw in self.rfile:
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            if line.lower() in ("exit", "quit"):
                return
            with self.server.lock:
                try:
                    reply = answer(self.server.agent, line, **self.server.options)
                except ValueError as exc:
                    reply = f"Error: {exc}"
            self.wfile.write((reply + "\n").encode())
            self.wfile.flush()
