"""Saved games: JSON lines, and export to the `.mat` match files of Jellyfish, GNU
Backgammon and eXtreme Gammon.

One JSON line per game: the pair (`a`, `b`), the sample, mirror copy and seed, where A
sat (`a_seat`), the turns (player seat, dice, play in notation and as `(from, to, hit)`
steps, position ID before the move; or a cube action: double, take, drop, or beaver with
the cube's new value), the winner's seat, the game value, cube and points. The `.mat`
export writes each player's moves as single checker steps from its own view (`25` the
bar, `0` off, `*` a hit), which both programs import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

import engine
from vrhcaby.nn import checkpoint
from vrhcaby.play.match import MatchScore


def append_jsonl(path: str | Path, records: Iterable[dict]) -> None:
    """Append game records to a JSON lines file."""
    with open(path, "a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def read_jsonl(path: str | Path) -> list[dict]:
    """All game records of a JSON lines file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _move_text(turn: dict) -> str:
    d1, d2 = sorted(turn["dice"], reverse=True)
    steps = " ".join(f"{s}/{t}{'*' if h else ''}" for s, t, h in turn["steps"])
    return f"{d1}{d2}: {steps}".rstrip()


def _line(n: int, left: str, right: str) -> str:
    return f"{n:3d}) {left:<31} {right}".rstrip()


def game_lines(
    record: dict, number: int, names: tuple[str, str], score: tuple[int, int]
) -> list[str]:
    """The `.mat` lines of one game; player 1 (left column) is agent A."""
    a_seat = record["a_seat"]
    column = {a_seat: 0, 1 - a_seat: 1}  # seat -> column
    out = [f" Game {number}", f" {names[0]} : {score[0]:<28d}{names[1]} : {score[1]}"]
    cells: list[list[str]] = []  # rows of [left, right]

    def put(col: int, text: str) -> None:
        if not cells or cells[-1][col] or (col == 0 and cells[-1][1]):
            cells.append(["", ""])
        cells[-1][col] = text

    for turn in record["turns"]:
        col = column[turn["player"]]
        action = turn.get("action")
        if action is None:
            put(col, _move_text(turn))
        elif action == "double":
            put(col, f" Doubles => {turn['cube']}")
        elif action == "beaver":
            # The .mat spelling GNU Backgammon's import reads as a beaver (ParseMatMove):
            # a redouble, taken by the doubler's next roll. (Its own export writes
            # "Doubles" and "Takes", which its import then misreads.)
            put(col, f" Beavers => {turn['cube']}")
        elif action == "take":
            put(col, " Takes")
        elif action == "drop":
            put(col, " Drops")
        else:
            put(col, f" Resigns {turn['value']}")
    winner = column[record["winner"]]
    points = record["points"]
    put(winner, f" Wins {points} point{'s' if points != 1 else ''}")
    out += [_line(i + 1, left, right) for i, (left, right) in enumerate(cells)]
    return out


def export_mat(records: list[dict], path: str | Path, names: tuple[str, str] | None = None) -> None:
    """Write the games of one match (or a money session, as a 0-point match) in order,
    atomically."""
    if not records:
        raise ValueError("no games to export")
    if any(r.get("variant", "standard") != "standard" for r in records):
        raise ValueError(".mat files hold standard backgammon only")
    match_to = records[0].get("match_to", 0)
    names = names or (_name(records[0]["a"]), _name(records[0]["b"]))
    lines = [f" {match_to} point match", ""]
    score = [0, 0]
    for k, r in enumerate(records, start=1):
        lines += game_lines(r, k, names, (score[0], score[1]))
        lines.append("")
        a_won = r["winner"] == r["a_seat"]
        score[0 if a_won else 1] += r["points"]
    checkpoint.write_atomic(path, "\n".join(lines) + "\n")


def _name(spec: str) -> str:
    """A player name without spaces or colons (the format's field separators)."""
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in spec) or "player"


# --- reading .mat files ----------------------------------------------------------------

#: One action of a `.mat` line: a roll and its play (`63: 24/18 13/10`, `52:` for no
#: legal play), a cube action, a resignation or the end of a game.
_ACTION = re.compile(
    r"(?P<dice>[1-6][1-6]):(?P<play>(?:\s+(?:\d+|bar)/(?:\d+|off)\*?(?:\(\d\))?)*)"
    r"|Doubles\s*=>\s*(?P<double>\d+)"
    r"|Beavers\s*=>\s*(?P<beaver>\d+)"
    r"|(?P<take>Takes|Accepts)"
    r"|(?P<drop>Drops|Passes|Rejects)"
    r"|Resigns(?:\s+(?P<resign>\d+))?"
    r"|Wins\s+(?P<wins>\d+)\s+points?(?:\s+and\s+the\s+match)?",
    re.IGNORECASE,
)
_MATCH = re.compile(r"\s*(\d+)\s+point\s+match\s*", re.IGNORECASE)
_GAME = re.compile(r"\s*Game\s+(\d+)\s*", re.IGNORECASE)
_PLAYERS = re.compile(r"\s*(\S.*?)\s*:\s*(\d+)\s+(\S.*?)\s*:\s*(\d+)\s*")
_NUMBERED = re.compile(r"\s*(\d+)\)(.*)")


#: Bytes no text file holds (tab, line feed, form feed and carriage return aside).
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")


class MatError(ValueError):
    """A `.mat` file that cannot be read: its message is `PATH:LINE: what is wrong`."""


@dataclass(frozen=True)
class MatTurn:
    """One action of a `.mat` game, replayed: who took it, and the game's state before it.

    `board` is the position before the action from the view of `seat` (its checkers in row
    1, int8 (2, 25)); for a move, `after` is the position the play reached (the mover still
    in row 1; None when the roll had no legal play). The cube (`cube_value`, `cube_owner`:
    the owning seat, -1 centred) is the cube before the action.
    """

    line: int
    seat: int
    #: "move", "double", "take", "drop" or "beaver" (resignations are not kept).
    kind: str
    board: np.ndarray
    cube_value: int
    cube_owner: int
    dice: tuple[int, int] | None = None
    play: str = ""
    after: np.ndarray | None = None
    #: The number of distinct legal plays of the roll (moves only).
    legal: int = 0


@dataclass(frozen=True)
class MatGame:
    """One game of a `.mat` file: the score before it (seats 0 and 1: the left and right
    columns), whether it is the Crawford game, its turns and who won how many points."""

    number: int
    line: int
    score: tuple[int, int]
    crawford: bool
    turns: tuple[MatTurn, ...]
    winner: int
    points: int


@dataclass(frozen=True)
class MatMatch:
    """A `.mat` file read and replayed: the match length (0 for a money session), the two
    players' names (left column first) and the games."""

    path: str
    match_to: int
    names: tuple[str, str]
    games: tuple[MatGame, ...]


def read_mat(path: str | Path) -> MatMatch:
    """Read a `.mat` match file (this project's export, GNU Backgammon's, Jellyfish's) and
    replay every game with the rules: each play must be legal for its roll, cube actions
    must come in turn, each game must end with a `Wins` line and each game's score must
    follow from the games before it. Anything else is a `MatError` naming the file and the
    line (a binary or foreign file, a truncated one, an illegal move)."""
    where = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise MatError(f"{where}: cannot read: {exc.strerror or exc}") from None
    control = _CONTROL.search(raw)
    if control:
        line = raw.count(b"\n", 0, control.start()) + 1
        raise MatError(
            f"{where}:{line}: not a text file (byte {control.start()} is a control code)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # older programs wrote names in a Windows code page
    return _MatReader(where, text.splitlines()).read()


class _MatReader:
    """The replay of one `.mat` file's lines (see `read_mat`)."""

    def __init__(self, where: str, lines: list[str]) -> None:
        self.where = where
        self.lines = lines
        self.k = 0  # index of the next line

    def fail(self, line: int, message: str) -> MatError:
        return MatError(f"{self.where}:{line}: {message}")

    def next_line(self) -> tuple[int, str] | None:
        """The next line that is neither blank nor a `;` comment, with its number."""
        while self.k < len(self.lines):
            self.k += 1
            text = self.lines[self.k - 1]
            if text.strip() and not text.lstrip().startswith(";"):
                return self.k, text
        return None

    def read(self) -> MatMatch:
        first = self.next_line()
        if first is None:
            raise self.fail(len(self.lines) or 1, "empty: no 'N point match' line")
        line, text = first
        m = _MATCH.fullmatch(text)
        if not m:
            raise self.fail(line, f"not a .mat file: expected 'N point match', got {_cut(text)}")
        match_to = int(m[1])
        score = MatchScore(match_to)
        games: list[MatGame] = []
        names: tuple[str, str] | None = None
        pending = self.next_line()
        while pending is not None:
            game, names, pending = self.game(pending, match_to, score, names, len(games) + 1)
            games.append(game)
            if match_to and score.over and pending is not None:
                raise self.fail(
                    pending[0], f"the match is over ({match_to} points): {_cut(pending[1])}"
                )
        if not games:
            raise self.fail(line, "no games")
        assert names is not None
        return MatMatch(self.where, match_to, names, tuple(games))

    def game(self, head, match_to, score, names, number):
        line, text = head
        if not _GAME.fullmatch(text):
            raise self.fail(line, f"expected 'Game {number}', got {_cut(text)}")
        got = self.next_line()
        if got is None:
            raise self.fail(line, "truncated: the game has no players' line")
        pline, ptext = got
        m = _PLAYERS.fullmatch(ptext)
        if not m:
            raise self.fail(pline, f"expected 'NAME : SCORE   NAME : SCORE', got {_cut(ptext)}")
        these = (m[1], m[3])
        if names is not None and these != names:
            raise self.fail(
                pline, f"players {these[0]!r} and {these[1]!r}, not {names[0]!r} and {names[1]!r}"
            )
        stated = (int(m[2]), int(m[4]))
        if match_to and stated != tuple(score.score):
            raise self.fail(
                pline,
                f"score {stated[0]}-{stated[1]} does not follow from the games before "
                f"({score.score[0]}-{score.score[1]})",
            )
        crawford = score.crawford
        game = _GameReplay(self, pline, crawford)
        nxt = self.next_line()
        while nxt is not None and not _GAME.fullmatch(nxt[1]):
            game.line(*nxt)
            nxt = self.next_line()
        winner, points = game.result()
        start = tuple(score.score) if match_to else stated
        score.after_game(points, winner)
        out = MatGame(number, line, start, crawford, tuple(game.turns), winner, points)
        return out, these, nxt


class _GameReplay:
    """One game's actions replayed on the board, checked as they come."""

    def __init__(self, reader: _MatReader, line: int, crawford: bool) -> None:
        self.reader = reader
        self.crawford = crawford
        self.last = line
        self.board = engine.Position.start().board.copy()  # seat 0 in row 1
        self.cube, self.owner = 1, -1
        self.on_roll: int | None = None  # the seat to act next, None before the first
        self.doubled: int | None = None  # the seat whose double awaits an answer
        self.turns: list[MatTurn] = []
        self.won: tuple[int, int] | None = None
        self.ended = False  # a drop or a resignation: only the Wins line may follow

    def view(self, seat: int) -> np.ndarray:
        return self.board if seat == 0 else self.board[::-1].copy()

    def line(self, number: int, text: str) -> None:
        fail = self.reader.fail
        self.last = number
        m = _NUMBERED.fullmatch(text)
        body = m[2] if m else text  # GNU Backgammon writes the Wins line unnumbered
        found = list(_ACTION.finditer(body))
        rest = _ACTION.sub(" ", body).strip()
        if rest or not (m or found):
            raise fail(number, f"cannot read {_cut(rest or text)}")
        if not found:
            return  # a numbered line with no action
        if len(found) > 2:
            raise fail(number, "more than two actions on one line")
        # Two actions: left and right column. One: the column it stands in (the right one
        # when the left cell is blank).
        seats = [0, 1] if len(found) == 2 else [1 if found[0].start() > 10 else 0]
        for seat, action in zip(seats, found, strict=True):
            self.act(number, seat, action)

    def act(self, number: int, seat: int, a: re.Match) -> None:
        fail = self.reader.fail
        name = "left" if seat == 0 else "right"
        if self.won is not None:
            raise fail(number, f"an action after the end of the game: {_cut(a[0])}")
        if a["wins"] is not None:
            self.won = (seat, int(a["wins"]))
            if self.ended or (self.doubled is None and _borne_off(self.view(seat))):
                return
            raise fail(
                number, f"the {name} player wins, but has not borne off nor been conceded the game"
            )
        if self.ended:
            raise fail(number, f"an action after the game was conceded: {_cut(a[0])}")
        if a["resign"] is not None or a[0].lower().startswith("resigns"):
            self.ended = True
            return
        answering = a["take"] or a["drop"] or a["beaver"]
        if answering:
            if self.doubled != 1 - seat:
                raise fail(number, f"{_cut(a[0])} by the {name} player, who was not doubled")
        elif self.doubled is not None:
            raise fail(number, f"{_cut(a[0])} by the {name} player while a double awaits an answer")
        elif self.on_roll is not None and seat != self.on_roll:
            raise fail(number, f"the {name} player acts out of turn: {_cut(a[0])}")
        state = MatTurn(number, seat, "", self.view(seat), self.cube, self.owner)
        if a["dice"]:
            self.move(number, seat, a, state)
        elif a["double"]:
            if self.on_roll is None or self.owner not in (-1, seat):
                raise fail(number, f"the {name} player doubles without access to the cube")
            if self.crawford:
                raise fail(number, "a double in the Crawford game")
            if int(a["double"]) != 2 * self.cube:
                raise fail(number, f"doubles to {a['double']}, but the cube is at {self.cube}")
            self.turns.append(replace(state, kind="double"))
            self.doubled = seat
        elif a["take"]:
            self.turns.append(replace(state, kind="take"))
            self.cube, self.owner, self.doubled = 2 * self.cube, seat, None
        elif a["beaver"]:
            if int(a["beaver"]) != 4 * self.cube:
                raise fail(number, f"beavers to {a['beaver']}, but the cube is at {self.cube}")
            self.turns.append(replace(state, kind="beaver"))
            self.cube, self.owner, self.doubled = 4 * self.cube, seat, None
        else:
            self.turns.append(replace(state, kind="drop"))
            self.doubled, self.ended = None, True

    def move(self, number: int, seat: int, a: re.Match, state: MatTurn) -> None:
        dice = (int(a["dice"][0]), int(a["dice"][1]))
        if self.on_roll is None and dice[0] == dice[1]:
            raise self.reader.fail(number, f"the opening roll {a['dice']} is a double")
        text = a["play"].strip()
        position = engine.Position(state.board)
        plays = engine.legal_plays(position, dice)
        if not text:
            if plays:
                raise self.reader.fail(
                    number, f"no play written for {a['dice']}, but {plays[0]} is legal"
                )
            after = None
        else:
            try:
                after = engine.Play.parse(text, position, dice).position.board
            except ValueError as exc:
                raise self.reader.fail(number, str(exc)) from None
        self.turns.append(
            replace(state, kind="move", dice=dice, play=text, after=after, legal=len(plays))
        )
        if after is not None:
            self.board = after if seat == 0 else after[::-1].copy()
        self.on_roll = 1 - seat

    def result(self) -> tuple[int, int]:
        if self.won is None:
            raise self.reader.fail(self.last, "truncated: the game ends without a 'Wins' line")
        return self.won


def _borne_off(board: np.ndarray) -> bool:
    """Whether the side in row 1 has borne off all its checkers."""
    return not board[1].any()


def _cut(text: str) -> str:
    """`text` quoted for an error message, cut to a readable length."""
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")
