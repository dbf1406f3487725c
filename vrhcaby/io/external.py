"""GNU Backgammon's external-player protocol: FIBS board states in, decisions out.

A client (a program written for gnubg's ``external`` command) connects over TCP and sends
one command a line; each gets its answer as gnubg's ``CommandExternal`` gives it
(gnubg 1.06+, interface version 2; grammar in gnubg's external_l.l / external_y.y):

* ``board:You:Opponent:...`` (a FIBS "boardstyle 3" board state, 53 ``:``-separated
  fields) optionally followed by session options ``jacobyrule BOOL``, ``crawfordrule
  BOOL``, ``beavers BOOL``, ``resignation N`` (BOOL is on/off, yes/no, true/false). The
  answer, in gnubg's order of precedence (``ExtFIBSBoard``): with a double pending,
  ``take``, ``drop`` or ``beaver`` for the side doubled; with ``resignation N`` (1 single,
  2 gammon, 3 backgammon), offered by the side on turn, ``accept`` or ``reject`` for its
  opponent; with dice, the play in gnubg's plain notation (``13/7 8/7*``; 25 the bar, 0
  off; an empty line when no play is legal); without dice, ``double`` or ``roll``.
* ``evaluation fibsboard board:... [plies N] [cube on|off] [cubeful] [cubeless] [noise X]
  [prune] [deterministic]`` and the session options: ``P(win) P(wg) P(wbg) P(lg) P(lbg)
  E`` for the side on turn before its roll, E its equity (money) or match winning chance,
  cubeless unless asked cubeful (``ExtEvaluation``).
* ``set debug on|off`` (debug lines ``DBG: ...`` before each board's answer), ``set
  interface new|old``, ``version`` (four lines: Interface, RFBF, Engine, Software),
  ``help``, ``exit``/``quit`` (closes the connection); an empty line or anything else gets
  ``Error: ...``.

gnubg's external protocol has no way for the external side to offer a resignation; gnubg
itself, when it drives an external player (``set player N external``), reads an answer
``resign normal|gammon|backgammon`` instead of a play or a cube action. The server sends
that only when asked to (``resign=True``, ``--resign``), when the agent gives up.

The board state (FIBS client protocol, "board state"): names, match length (9999 for
money), both scores, 26 board fields (positive X, negative O; direction -1 moves from 24
to 1 with the bar at 25), turn (1 X, -1 O), both pairs of dice, the cube, the two may-double
flags, was-doubled, colour, direction, home, bar, men off and on the bar, can-move,
forced-move, and the non-Crawford and post-Crawford flags gnubg reads for the Crawford
game. As in gnubg, the side on turn is the one analysed, whichever the "You" player is;
with a double pending the turn stays with the doubler (as gnubg writes the board when it
drives an external player). gnubg ends each request with a newline and a NUL byte; NULs
are dropped.
"""

from __future__ import annotations

import logging
import select
import socket
import socketserver
import threading
from dataclasses import dataclass, replace

import numpy as np

import engine
from agents.base import GameContext
from engine.text import ascii_float, ascii_int
from vrhcaby import analysis
from vrhcaby.equity.context import check_match_length

__all__ = [
    "FibsBoard",
    "Options",
    "Server",
    "Session",
    "answer",
    "fibs_board",
    "format_plain",
    "parse_fibs_board",
]

FIELDS = 53
#: gnubg's EXTERNAL_INTERFACE_VERSION and RFBF_VERSION_SUPPORTED (external.h).
INTERFACE_VERSION, RFBF_VERSION = "2", "0"
RESIGNATIONS = {1: "normal", 2: "gammon", 3: "backgammon"}
_BOOLEANS = {"yes": True, "on": True, "true": True, "no": False, "off": False, "false": False}


@dataclass(frozen=True)
class FibsBoard:
    """A FIBS board state, from the view of the side whose decision it asks for (row 1 of
    `board`): the side on turn, or with a double pending, the doubler."""

    board: np.ndarray
    dice: tuple[int, int]
    context: GameContext
    #: A double is pending: the side on turn doubled and its opponent must answer.
    doubled: bool


#: How much of a client's text an error message quotes.
QUOTE = 60
#: The longest line read; a longer one is skipped to its end and answered with an error.
MAX_LINE = 65536
#: gnubg's MAXSCORE (longer matches are read as this long, as gnubg does) and MAX_CUBE.
MAX_MATCH, MAX_CUBE = 64, 4096
log = logging.getLogger(__name__)


def quote(text: str, limit: int = QUOTE) -> str:
    """`text` quoted for an error line: at most `limit` characters, then "…"."""
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _int(field: str, name: str, lo: int, hi: int) -> int:
    """A board field as an int in lo..hi; ValueError naming the field otherwise."""
    try:
        value = ascii_int(field)
    except ValueError:
        raise ValueError(f"FIBS board: {name} is not a number: {quote(field)}") from None
    if not lo <= value <= hi:
        raise ValueError(f"FIBS board: {name} must be {lo}..{hi}, got {quote(field)}")
    return value


# Each field after the names: (what it is, the range gnubg's FIBS boards can hold).
_RANGES = (
    [("the match length", 0, 9999), ("the score", 0, 9999), ("the opponent's score", 0, 9999)]
    + [(f"board field {k}", -15, 15) for k in range(26)]
    + [("the turn", -1, 1)]
    + [("a die", 0, 6)] * 4
    + [("the cube", 1, MAX_CUBE), ("may double", 0, 1), ("may double", 0, 1)]
    + [("was doubled", -1, 1), ("the colour", -1, 1), ("the direction", -1, 1)]
    + [("the home", 0, 25), ("the bar", 0, 25), ("men off", 0, 15), ("men off", 0, 15)]
    + [("men on the bar", 0, 15), ("men on the bar", 0, 15), ("can move", 0, 4)]
    + [("forced move", 0, 1), ("non-Crawford", 0, 99), ("post-Crawford", 0, 99)]
)


def parse_fibs_board(
    line: str, *, jacoby: bool = False, crawford_rule: bool = True, gnubg_scores: bool = False
) -> FibsBoard:
    """Read a ``board:...`` line; ValueError (one line) if it is malformed.

    `gnubg_scores`: the line comes from gnubg driving an external player. gnubg 1.07
    (play.c, ``ComputerTurn``) writes the name and score of player ``fTurn ^ fMove`` as
    "You"'s while the board's "You" is always player 1, so without a double pending the two
    scores belong to the other sides (the test that drives gnubg checks this)."""
    f = line.strip().split(":")
    if f[0] != "board" or len(f) != FIELDS:
        raise ValueError(f"a FIBS board state has {FIELDS} ':'-separated fields, got {len(f)}")
    n = [0, 0, 0] + [
        _int(x, f"field {i} ({name})", lo, hi)
        for i, (x, (name, lo, hi)) in enumerate(zip(f[3:], _RANGES, strict=True), start=4)
    ]
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
    # The side analysed: the side on turn, which with a double pending is the doubler (the
    # turn stays with it while the opponent answers: gnubg 1.07 writes the board so when
    # it asks an external player to take, and the test driving gnubg checks it).
    player_analysed = turn == colour
    if not dice[0]:
        dice = opp_dice
    if gnubg_scores and not was_doubled:
        score, opp_score = opp_score, score
    if not player_analysed:
        board = board[::-1].copy()
        score, opp_score = opp_score, score
        may_double, opp_may_double = opp_may_double, may_double
    owner = -1  # the seat owning the cube: 0 the side analysed, 1 its opponent
    if bool(may_double) != bool(opp_may_double):
        owner = 0 if may_double else 1
    crawford = False
    if match_to and 1 in (match_to - score, match_to - opp_score):
        crawford = crawford_rule and not (non_crawford or post_crawford)
    if crawford or was_doubled:
        owner = -1
    if match_to and max(score, opp_score) >= match_to:
        raise ValueError(f"FIBS board: impossible score {score}-{opp_score} to {match_to}")
    check_match_length(match_to, what="FIBS board: the match length")
    if cube_value & (cube_value - 1):
        raise ValueError(f"FIBS board: the cube must be a power of two, got {cube_value}")
    if crawford and (cube_value > 1 or was_doubled):
        raise ValueError("FIBS board: no double in the Crawford game, yet the cube was turned")
    if (dice[0] == 0) != (dice[1] == 0):
        raise ValueError(f"FIBS board: one die rolled and not the other ({dice[0]}, {dice[1]})")
    context = GameContext.of_side(
        0,
        cube_value=cube_value,
        cube_owner=owner,
        score=(score, opp_score),
        match_to=match_to,
        crawford=crawford,
        jacoby=jacoby,
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
    "You", moving from 24 to 1. With `doubled`, row 1 has doubled (still on turn) and
    its opponent must answer; both may-double flags are cleared."""
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


@dataclass(frozen=True)
class Options:
    """The session options of a board line, and an evaluation's options (gnubg's defaults
    for what the line does not say come from the server's settings)."""

    jacoby: bool = False
    crawford_rule: bool = True
    beavers: bool = False
    #: A resignation offered by the side on turn: 0 none, 1 single, 2 gammon, 3 backgammon.
    resignation: int = 0
    #: Evaluation only: look-ahead depth and cubeful or cubeless (gnubg's defaults).
    plies: int = 0
    cubeful: bool = False


def _boolean(words: list[str], name: str) -> bool:
    if not words or words[0].lower() not in _BOOLEANS:
        raise ValueError(f"{name} takes on/off, yes/no or true/false")
    return _BOOLEANS[words.pop(0).lower()]


def _number(words: list[str], name: str, kind: type = int) -> float:
    try:
        return (ascii_int if kind is int else ascii_float)(words.pop(0))
    except (IndexError, ValueError):
        raise ValueError(f"{name} takes a number") from None


def _read_options(words: list[str], options: Options, *, evaluation: bool = False) -> Options:
    """`options` updated by the words after a board (external_y.y's ``sessionoptions``,
    and with `evaluation` its ``evaloptions`` too); ValueError on anything else."""
    words = list(words)
    changes: dict = {}
    while words:
        word = words.pop(0).lower()
        if word == "jacobyrule":
            changes["jacoby"] = _boolean(words, word)
        elif word == "crawfordrule":
            changes["crawford_rule"] = _boolean(words, word)
        elif word == "beavers":
            changes["beavers"] = _boolean(words, word)
        elif word == "resignation":
            value = int(_number(words, word))
            if value not in (0, *RESIGNATIONS):
                raise ValueError(f"resignation must be 0, 1, 2 or 3, got {quote(str(value))}")
            changes["resignation"] = value
        elif evaluation and word == "plies":
            plies = int(_number(words, word))
            if plies not in (0, 1, 2):
                raise ValueError(f"plies must be 0, 1 or 2, got {quote(str(plies))}")
            changes["plies"] = plies
        elif evaluation and word == "cube":
            changes["cubeful"] = _boolean(words, word)
        elif evaluation and word in ("cubeful", "cubeless"):
            changes["cubeful"] = word == "cubeful"
        elif evaluation and word == "noise":
            if _number(words, word, float) != 0:
                raise ValueError("evaluations with noise are not supported")
        elif evaluation and word in ("prune", "deterministic"):
            if words and words[0].lower() in _BOOLEANS:
                words.pop(0)  # the agent's search is deterministic and prunes by its filters
        else:
            raise ValueError(f"syntax error, unexpected {quote(word)}")
    return replace(options, **changes)


class Session:
    """One client's conversation: the answer to each line, and the ``set`` state."""

    def __init__(
        self,
        agent,
        *,
        jacoby: bool = False,
        crawford_rule: bool = True,
        beavers: bool = False,
        resign: bool = False,
    ) -> None:
        self.agent = agent
        self.defaults = Options(jacoby=jacoby, crawford_rule=crawford_rule, beavers=beavers)
        #: Whether to answer ``resign ...`` when the agent gives up (see the module notes).
        self.resign = resign
        self.debug = False
        #: The last resignation offered: (the position and cube, the value). The same board
        #: asked again means the offer was declined (gnubg then asks the same side again).
        self._offered: tuple[bytes, int] | None = None
        #: The client is gnubg driving an external player (it ends each request with a
        #: NUL byte): its boards carry the scores as `parse_fibs_board` says.
        self.gnubg_client = False

    def respond(self, line: str) -> str | None:
        """The answer (lines without the final newline) to one line; None for ``exit``.

        Anything that goes wrong with a line is an ``Error: ...`` answer to that line; the
        session goes on."""
        try:
            return self._respond(line)
        except Exception as exc:  # a bug must not end the client's session: say so, go on
            log.exception("internal error on %s", quote(line))
            return f"Error: internal error ({type(exc).__name__}) on {quote(line.strip())}"

    def _respond(self, line: str) -> str | None:
        words = line.split()
        if not words:
            return "Error: no command given"
        word = words[0].lower()
        if word in ("exit", "quit"):
            return None
        if word == "version":
            engine_name = getattr(self.agent, "name", "td")
            return "\n".join(
                [
                    f"Interface: {INTERFACE_VERSION}",
                    f"RFBF: {RFBF_VERSION}",
                    f"Engine: vrhcaby {engine_name}",
                    "Software: vrhcaby",
                ]
            )
        if word == "help":
            return "\tNo help information available"
        if word == "set":
            return self._set(words[1:])
        try:
            if word.startswith("board:"):
                fb, options = self._read(words[0], words[1:], evaluation=False)
                return self._with_debug(fb, options, self._board(fb, options))
            if word == "evaluation":
                if len(words) < 3 or words[1].lower() != "fibsboard":
                    raise ValueError("evaluation takes 'fibsboard board:...'")
                fb, options = self._read(words[2], words[3:], evaluation=True)
                return self._with_debug(fb, options, self._evaluation(fb, options))
        except ValueError as exc:
            return f"Error: {exc}"
        return f"Error: syntax error, unexpected {quote(words[0])}"

    def _set(self, words: list[str]) -> str:
        name = words[0].lower() if words else ""
        if name == "debug" and len(words) == 2 and words[1].lower() in _BOOLEANS:
            self.debug = _BOOLEANS[words[1].lower()]
            return f"Debug output {'ON' if self.debug else 'OFF'}"
        if name == "interface" and len(words) == 2 and words[1].lower() in ("new", "old"):
            # gnubg records the choice but answers the same either way.
            return f"New interface {'ON' if words[1].lower() == 'new' else 'OFF'}"
        return f"Error: set option {quote(name)} not supported"

    def _read(self, board: str, rest: list[str], *, evaluation: bool):
        options = _read_options(rest, self.defaults, evaluation=evaluation)
        try:
            fb = parse_fibs_board(
                "board:" + board[6:],
                jacoby=options.jacoby,
                crawford_rule=options.crawford_rule,
                gnubg_scores=self.gnubg_client,
            )
        except ValueError as exc:
            raise ValueError(f"badly formed board ({exc})") from None
        return fb, options

    def _board(self, fb: FibsBoard, options: Options) -> str:
        agent, position = self.agent, engine.Position(fb.board)
        if fb.doubled:
            decision = agent.cube_decision(position, fb.context, beavers=options.beavers)
            if not decision.take:
                return "drop"
            return "beaver" if options.beavers and decision.beaver else "take"
        if options.resignation:
            # The side on turn resigns; its opponent, the agent here, answers.
            accepter = engine.Position(fb.board[::-1])
            accepted = agent.accept_resignation(accepter, fb.context.flip(), options.resignation)
            return "accept" if accepted else "reject"
        if self.resign:
            offer = self._resign_offer(fb)
            if offer:
                return f"resign {RESIGNATIONS[offer]}"
        if fb.dice[0]:
            if not engine.legal_plays(position, fb.dice):
                return ""
            return format_plain(agent.choose_play(position, fb.dice, fb.context))
        if fb.context.may_double() and agent.double_decision(position, fb.context):
            return "double"
        return "roll"

    def _resign_offer(self, fb: FibsBoard) -> int:
        """The resignation to offer, if any. gnubg refuses an offer no bigger than one its
        player declined until a move has been made (``CommandResign``: "has already
        declined your offer"), so an offer is not repeated on the board it was declined
        on; a bigger one may still be made."""
        key = fb.board.tobytes() + repr(fb.context).encode()
        offer = self.agent.resign_offer(engine.Position(fb.board), fb.context)
        if self._offered and self._offered[0] == key and offer <= self._offered[1]:
            return 0
        if offer:
            self._offered = (key, offer)
        return offer

    def _evaluation(self, fb: FibsBoard, options: Options) -> str:
        ctx = fb.context
        ev = analysis.evaluate(
            self.agent, fb.board, ctx, plies=options.plies, beavers=options.beavers
        )
        if ctx.match_to:
            value = ev.mwc_cubeful if options.cubeful else ev.mwc_cubeless
        elif options.cubeful:
            value = ev.cubeful
        else:  # gnubg's Utility: gammons count for nothing under Jacoby with a centred cube
            price = 0.0 if ctx.jacoby and ctx.cube_owner == "centre" else 1.0
            win, wg, wbg, lg, lbg = ev.probabilities
            value = 2 * win - 1 + price * (wg - lg + wbg - lbg)
        return " ".join(f"{v:f}" for v in [*ev.probabilities, value])

    def _with_debug(self, fb: FibsBoard, options: Options, reply: str) -> str:
        if not self.debug:
            return reply
        ctx = fb.context
        owner = {"centre": -1, "me": 1, "opponent": 0}[ctx.cube_owner]
        if ctx.match_to:
            rule = "with" if options.crawford_rule else "without"
            kind = f"Match Play {rule} Crawford Rule"
            score = f"Score: {ctx.score[0]}-{ctx.score[1]}/{ctx.match_to}{'*' * ctx.crawford}"
        else:
            kind = (
                f"Money Session {'with' if options.jacoby else 'without'} Jacoby Rule, "
                f"{'with' if options.beavers else 'without'} Beavers"
            )
            score = f"Score: {ctx.score[0]}-{ctx.score[1]}"
        lines = [
            f"Position ID: {engine.position_id(fb.board)}",
            kind,
            f"{score}, Roll: {fb.dice[0]}{fb.dice[1]}",
            f"CubeOwner: {owner}, Cube: {ctx.cube_value}, Turn: X, "
            f"Doubled: {int(fb.doubled)}, Resignation: {options.resignation}",
            "",
        ]
        return "\n".join([*(f"DBG: {line}" for line in lines), reply])


def answer(agent, line: str, **settings: bool) -> str | None:
    """The answer to one line in a new session (settings as `Session`'s); None for exit."""
    return Session(agent, **settings).respond(line)


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """Answers the protocol on a TCP socket, one thread (and `Session`) per connection.

    ``Server(agent, ("127.0.0.1", 0))`` binds an ephemeral port (``server.port``);
    ``serve_forever()`` runs until ``shutdown()``. `settings` go to each `Session`.
    """

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, agent, address: tuple[str, int], **settings: bool) -> None:
        self.agent = agent
        self.settings = settings
        self.lock = threading.Lock()  # one evaluation at a time
        super().__init__(address, _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _Handler(socketserver.StreamRequestHandler):
    server: Server
    #: Unbuffered, so that a NUL byte right after a line (gnubg's mark) is seen at once.
    rbufsize = 0

    def _nul_waits(self) -> bool:
        """Whether a NUL byte is already waiting on the socket (gnubg writes one with each
        request, in the same write as its newline)."""
        if not select.select([self.connection], [], [], 0)[0]:
            return False
        return self.connection.recv(1, socket.MSG_PEEK) == b"\0"

    def _skip_line(self) -> None:
        """Read past the rest of the current line (in blocks, keeping what follows it)."""
        while chunk := self.connection.recv(MAX_LINE, socket.MSG_PEEK):
            end = chunk.find(b"\n")
            self.connection.recv(len(chunk) if end < 0 else end + 1)
            if end >= 0:
                return

    def handle(self) -> None:
        host, port = self.client_address[:2]
        peer = f"{host}:{port}"
        log.info("connection from %s", peer)
        session = Session(self.server.agent, **self.server.settings)
        lines = 0
        try:
            while True:
                raw = self.rfile.readline(MAX_LINE + 1)
                if not raw:
                    break
                if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                    self._skip_line()
                    lines += 1
                    reply = f"Error: line longer than {MAX_LINE} bytes"
                else:
                    # gnubg ends each request with a newline and a NUL byte, which then
                    # starts the next line: NULs are not part of any command.
                    if b"\0" in raw or (not lines and self._nul_waits()):
                        session.gnubg_client = True
                    line = raw.replace(b"\0", b"").decode("utf-8", "replace")
                    if not raw.endswith(b"\n") and not line.strip():
                        break  # the client's last NUL, or trailing blanks, before it closed
                    lines += 1
                    with self.server.lock:
                        answer = session.respond(line)
                    log.debug("%s: %s -> %s", peer, quote(line.strip(), 200), quote(str(answer)))
                    if answer is None:
                        break
                    reply = answer
                if reply.startswith("Error"):
                    log.warning("%s: %s (line %d)", peer, reply, lines)
                self.wfile.write((reply + "\n").encode())
                self.wfile.flush()
        except (ConnectionError, TimeoutError) as exc:
            log.info("connection from %s lost: %s", peer, exc)
        finally:
            log.info("connection from %s closed after %d lines", peer, lines)
