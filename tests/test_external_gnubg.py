"""GNU Backgammon itself (Debian's ``gnubg`` command line) drives `vrhcaby external`.

gnubg plays player 0 at 0-ply; player 1 is ``external localhost:PORT``, our server in this
process (the agent inside plays with gnubg's own 0-ply network, `gnubg_oracle`). After a
3-point match and a money session, gnubg exports its record of the games (``export match
mat``), and the record is replayed here with a plain ``.mat`` reader: every request the
server read must show the position, dice, cube, score and Crawford state gnubg was in at
that moment, every play it answered must be the play gnubg recorded (gnubg records an
illegal play as no play at all), every double must be answered as gnubg recorded it, and
every game must end. The agent resigns when the game is lost by its rule (``--resign``),
so gnubg accepts some offers and declines others; a declined offer must not stall the game
(gnubg refuses a repeated offer with "has already declined your offer" and stops playing).

Skipped only where the gnubg program is absent and the environment variable CI is unset;
under CI a missing gnubg fails (the install step installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from gnubg_oracle import GnubgEvaluator

import engine
import vrhcaby.io.external as external
from agents.td import TDAgent

#: gnubg's left (player 0, gnubg itself) and right (player 1, the external) columns.
GNUBG, OURS = 0, 1
#: Where an entry of the right column starts in gnubg's ``.mat`` lines.
RIGHT_COLUMN = 20
ENTRY = re.compile(r"(\d)(\d):|Doubles => (\d+)|Takes|Drops|Wins (\d+) points?")


def gnubg_program() -> str:
    """The gnubg binary (Debian installs it under /usr/games, often not on PATH)."""
    path = shutil.which("gnubg") or next(
        (p for p in ("/usr/games/gnubg", "/usr/bin/gnubg") if os.access(p, os.X_OK)), None
    )
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("the gnubg program is missing under CI (scripts/install.sh installs it)")
        pytest.skip("the gnubg program is not installed (apt-get install gnubg)")
    return path


# --- a plain reader of gnubg's .mat export --------------------------------------------


@dataclass
class Event:
    """One entry of a game: `player` (column) and `kind` (move, double, take, drop, win)."""

    player: int
    kind: str
    dice: tuple[int, int] = (0, 0)
    play: str = ""
    value: int = 0


@dataclass
class Game:
    score: tuple[int, int]  # (gnubg, ours) before the game
    events: list[Event] = field(default_factory=list)


def read_mat(text: str) -> list[Game]:
    """The games of a ``.mat`` file: each game's score line, then its numbered lines of
    two columns (gnubg left, the external right)."""
    games: list[Game] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*Game \d+$", line):
            scores = re.findall(r":\s*(\d+)", lines[i + 1])
            games.append(Game((int(scores[0]), int(scores[1]))))
            continue
        if not games or not (re.match(r"\s*\d+\)", line) or "Wins" in line):
            continue
        starts = list(ENTRY.finditer(line))
        for k, m in enumerate(starts):
            player = OURS if m.start() >= RIGHT_COLUMN else GNUBG
            end = starts[k + 1].start() if k + 1 < len(starts) else len(line)
            if m.group(1):
                text_ = line[m.end() : end].strip()
                games[-1].events.append(
                    Event(player, "move", (int(m.group(1)), int(m.group(2))), text_)
                )
            elif m.group(3):
                games[-1].events.append(Event(player, "double", value=int(m.group(3))))
            elif m.group(4):
                games[-1].events.append(Event(player, "win", value=int(m.group(4))))
            else:
                games[-1].events.append(Event(player, m.group(0).lower()[:-1]))
    return games


# --- the server's side ------------------------------------------------------------------


@dataclass
class Request:
    board: np.ndarray
    dice: tuple[int, int]
    context: object
    doubled: bool
    reply: str


class RecordingSession(external.Session):
    """A session that keeps each board request as the server read it, and its answer."""

    requests: ClassVar[list[Request]] = []

    def _board(self, fb, options):
        reply = super()._board(fb, options)
        self.requests.append(Request(fb.board, fb.dice, fb.context, fb.doubled, reply))
        return reply


def drive(gnubg: str, agent, commands: list[str], tmp: Path, monkeypatch) -> tuple:
    """Run gnubg on `commands` against a server; (requests, gnubg's output, the games)."""
    requests: list[Request] = []
    monkeypatch.setattr(RecordingSession, "requests", requests)
    monkeypatch.setattr(external, "Session", RecordingSession)
    server = external.Server(agent, ("127.0.0.1", 0), resign=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    mat = tmp / "games.mat"
    script = [
        "set rng mersenne",
        *commands[:1],  # the seed
        "set player 0 gnubg",
        "set player 0 chequerplay evaluation plies 0",
        "set player 0 cubedecision evaluation plies 0",
        "set player 0 name gnubg",
        "set player 1 name vrhcaby",
        f"set player 1 external localhost:{server.port}",
        "set display off",
        "set jacoby off",
        "set beavers 0",
        *commands[1:],
        f"export match mat {mat}",
        "quit",
    ]
    env = dict(os.environ, HOME=str(tmp))  # gnubg keeps its settings under $HOME
    try:
        done = subprocess.run(
            [gnubg, "-t", "-q"],
            input="\n".join(script) + "\n",
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp,
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    return requests, done.stdout + done.stderr, read_mat(mat.read_text())


@dataclass
class Tally:
    doubles: list[int] = field(default_factory=lambda: [0, 0])  # by gnubg, by us
    takes: list[int] = field(default_factory=lambda: [0, 0])  # by gnubg, by us
    drops: list[int] = field(default_factory=lambda: [0, 0])
    resigns_declined: int = 0
    resigns_accepted: int = 0
    plays: int = 0
    crawford_games: int = 0


class Replay:
    """Walks gnubg's record and the server's requests side by side (see the module notes):
    the state of the game being replayed, and the requests not yet matched."""

    def __init__(self, requests: list[Request], match_to: int, tally: Tally) -> None:
        self.queue = list(requests)
        self.match_to = match_to
        self.tally = tally
        self.crawford_done = False

    def ours(self) -> engine.Position:
        """Our position, from our side, as it stands now."""
        return self.position if self.on_roll == OURS else self.position.flip()

    def check(self, r: Request, board: np.ndarray, *, doubled: bool = False) -> None:
        """`r` was read as gnubg's state: the board (the doubler's with a double pending,
        as the context is), cube, score, Crawford game."""
        assert r.doubled == doubled, (r, doubled)
        np.testing.assert_array_equal(r.board, board)
        assert r.context.cube_value == self.cube
        me, them = (GNUBG, OURS) if doubled else (OURS, GNUBG)
        if not doubled:
            owner = self.owner
            assert r.context.cube_owner == (
                "centre" if owner is None else "me" if owner == me else "opponent"
            )
        if self.match_to:
            assert r.context.match_to == self.match_to
            assert r.context.score == (self.game.score[me], self.game.score[them])
            assert r.context.crawford == self.crawford

    def questions(self, final: bool) -> Request | None:
        """Skip our requests before our next action: pre-roll questions answered with
        ``roll``, and resignations, declined where the game went on. At the game's end
        (`final`), the resignation that ended it, if one did."""
        queue, tally = self.queue, self.tally
        while queue and queue[0].reply not in ("double", "take", "drop"):
            r = queue[0]
            if r.dice[0] and not r.reply.startswith("resign"):
                break  # a play
            if final and not np.array_equal(r.board, self.ours().board):
                return None  # the next game's
            queue.pop(0)
            self.check(r, self.ours().board)
            if r.reply.startswith("resign"):
                if final and not (queue and np.array_equal(queue[0].board, r.board)):
                    return r  # the game's last word: gnubg accepted it
                tally.resigns_declined += 1
            else:
                assert r.reply == "roll", r
        return None

    def game_(self, game: Game) -> None:
        """Replay one game."""
        self.game, self.position, self.on_roll = game, None, None
        self.cube, self.owner = 1, None
        self.crawford = False
        if self.match_to:
            self.crawford = not self.crawford_done and self.match_to - 1 in game.score
            self.crawford_done |= self.crawford
            self.tally.crawford_games += self.crawford
        queue, tally, events = self.queue, self.tally, game.events
        for k, ev in enumerate(events):
            if self.position is None:
                self.position, self.on_roll = engine.Position.start(), ev.player
            if ev.kind == "win":
                continue
            if ev.player != self.on_roll and ev.kind in ("move", "double"):
                self.position, self.on_roll = self.position.flip(), ev.player
            position = self.position
            if ev.kind == "move" and ev.player == OURS:
                self.questions(False)
                r = queue.pop(0)
                self.check(r, position.board)
                assert sorted(r.dice) == sorted(ev.dice)
                if not ev.play:
                    assert not engine.legal_plays(position, ev.dice) and r.reply == "", (r, ev)
                    continue
                recorded = engine.Play.parse(ev.play, position, ev.dice)
                answered = engine.Play.parse(r.reply, position, ev.dice)
                assert answered.position == recorded.position, (r.reply, ev.play)
                self.position = recorded.position
                tally.plays += 1
            elif ev.kind == "move":
                if ev.play:
                    self.position = engine.Play.parse(ev.play, position, ev.dice).position
            elif ev.kind == "double" and ev.player == OURS:
                self.questions(False)
                r = queue.pop(0)
                assert r.reply == "double", r
                self.check(r, position.board)
                tally.doubles[OURS] += 1
            elif ev.kind == "double":
                r = queue.pop(0)
                self.check(r, position.board, doubled=True)
                answer = events[k + 1].kind
                assert r.reply == answer[:4], (r.reply, answer)
                tally.doubles[GNUBG] += 1
            elif ev.kind in ("take", "drop"):
                getattr(tally, f"{ev.kind}s")[ev.player] += 1
                if ev.kind == "take":
                    self.cube, self.owner = self.cube * 2, ev.player
        win = events[-1]
        assert win.kind == "win", f"game {game} did not end"
        resigned = self.questions(True)
        if engine.game_value(self.position.board[None])[0] or events[-2].kind == "drop":
            assert resigned is None  # an accepted offer would have ended the game
        elif win.player == GNUBG:  # neither played out nor dropped: an offer accepted
            assert resigned is not None, f"game {game} ended without an offer of ours"
            value = {"resign normal": 1, "resign gammon": 2, "resign backgammon": 3}
            assert win.value == value[resigned.reply] * self.cube
            tally.resigns_accepted += 1
        else:  # gnubg resigned; against an external player it accepts only a backgammon
            assert win.value == 3 * self.cube


def replay(requests: list[Request], games: list[Game], match_to: int, tally: Tally) -> None:
    """Every game of gnubg's record against the server's requests, all of them used."""
    walk = Replay(requests, match_to, tally)
    for game in games:
        walk.game_(game)
    assert not walk.queue, walk.queue[:3]


@pytest.fixture(scope="module")
def agent() -> TDAgent:
    return TDAgent(GnubgEvaluator())


def test_gnubg_drives_a_match_and_a_money_session(agent, tmp_path, monkeypatch) -> None:
    """A 3-point match (with its Crawford game) and a 6-game money session, every request
    as gnubg's record has it; the seeds give doubles, takes and drops by both sides and
    resignations accepted and declined (about 5 s)."""
    gnubg = gnubg_program()
    tally = Tally()
    requests, output, games = drive(
        gnubg, agent, ["set seed 6", "new match 3"], tmp_path, monkeypatch
    )
    assert "has won the match" in output, output[-2000:]
    replay(requests, games, 3, tally)
    assert len(games) >= 2 and tally.crawford_games == 1
    session = ["set seed 4", "set automatic game off", "new session", *["new game"] * 5]
    requests, output, more = drive(gnubg, agent, session, tmp_path, monkeypatch)
    assert len(more) == 6
    replay(requests, more, 0, tally)
    for bad in ("already declined", "badly formed", "Error", "Warning"):
        assert bad not in output, output[-2000:]
    assert tally.plays > 100
    assert min(tally.doubles) >= 1 and min(tally.takes) >= 1 and min(tally.drops) >= 1
    assert tally.resigns_declined >= 1 and tally.resigns_accepted >= 1, tally


def test_a_missing_gnubg_fails_under_ci_and_is_skipped_elsewhere(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="missing under CI"):
        gnubg_program()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        gnubg_program()
