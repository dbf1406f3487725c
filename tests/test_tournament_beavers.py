"""Beavers in tournaments: in money play with the cube, a side doubled may take and at
once redouble, keeping the cube at four times its value (GNU Backgammon's default rules);
never in match play, never with `--no-beavers`, never by an agent that does not know
beavers. References are worked out by hand in each test; the `.mat` files are read back
by GNU Backgammon's own import."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers_agents import CubeBot  # doubles and takes, knows no beavers
from test_tournament_command import parse

import engine
from agents import load_agent
from agents.base import GameContext
from agents.pubeval import PubevalAgent
from vrhcaby.cli import tournament as command
from vrhcaby.io import matchfile
from vrhcaby.play.tournament import CHUNK, PairSettings, _cube_phase, _Games, play_pair


class Eager(PubevalAgent):
    """Pubeval's checker play; doubles whenever it may, takes and beavers every double."""

    cube_aware = True

    def __init__(self, name: str, beavers: bool = True) -> None:
        self.name = name
        self.asked_beaver = 0
        if not beavers:
            self.beaver_decision = None  # an agent that does not know beavers

    def double_decision(self, position, context) -> bool:
        return True

    def take_decision(self, position, context) -> bool:
        return True

    def beaver_decision(self, position, context) -> bool:
        self.asked_beaver += 1
        return True


class Doubler(Eager):
    """Doubles whenever it may; takes, never beavers."""

    def beaver_decision(self, position, context) -> bool:
        return False


class Beaverer(Eager):
    """Never doubles; takes and beavers every double."""

    def double_decision(self, position, context) -> bool:
        return False


def cube_actions(record: dict) -> list[tuple]:
    return [(t["player"], t["action"], t.get("cube")) for t in record["turns"] if "action" in t]


def first_mover(record: dict) -> int:
    return next(t["player"] for t in record["turns"] if "action" not in t)


def test_beavers_escalate_to_the_cube_limit_and_score_by_the_cube():
    pair = play_pair(
        Eager("a"),
        Eager("b"),
        games=6,
        seed=11,
        settings=PairSettings(record=True, beavers=True, jacoby=True),
    )
    for g in pair.results:
        rec = g.record
        # By hand: the second side to move is the first that may double (ply > 0): 1 -> 2,
        # beavered to 4, the beaverer owns it; it doubles to 8, beavered to 16; 32, beavered
        # to 64 = the highest cube; no one may double to 128.
        d = 1 - first_mover(rec)
        o = 1 - d
        assert cube_actions(rec) == [
            (d, "double", 2),
            (o, "beaver", 4),
            (o, "double", 8),
            (d, "beaver", 16),
            (d, "double", 32),
            (o, "beaver", 64),
        ]
        assert g.cube == rec["cube"] == 64
        # The cube was turned, so the Jacoby rule does not apply: value times the cube.
        assert g.points == rec["points"] == 64 * g.value
    a_points = sum(g.a_points for g in pair.results) / len(pair.results)
    assert pair.ppg == pytest.approx(a_points)


def test_a_beaver_takes_the_cube_to_four_and_the_beaverer_owns_it():
    a, b = Doubler("doubler"), Beaverer("beaverer")
    pair = play_pair(
        a, b, games=8, seed=2, settings=PairSettings(record=True, beavers=True, jacoby=True)
    )
    for g in pair.results:
        # By hand: A doubles at its first chance (2), B beavers (4) and owns the cube, and
        # never doubles: A may not. A game is worth its value times 4 (the cube turned,
        # the Jacoby rule does not apply).
        assert cube_actions(g.record) == [(g.a_seat, "double", 2), (1 - g.a_seat, "beaver", 4)]
        assert g.cube == 4
        assert g.points == 4 * g.value
        assert g.a_points == (4 * g.value if g.winner == g.a_seat else -4 * g.value)
    assert pair.ppg == pytest.approx(sum(g.a_points for g in pair.results) / 8)


def test_no_beavers_means_plain_takes_and_the_agents_are_not_asked():
    a, b = Eager("a"), Eager("b")
    pair = play_pair(
        a, b, games=4, seed=11, settings=PairSettings(record=True, beavers=False, jacoby=True)
    )
    for g in pair.results:
        d = 1 - first_mover(g.record)
        want, owner, cube = [], d, 1
        while cube < 64:  # by hand: double, take, the taker doubles back, ... up to 64
            cube *= 2
            want += [(owner, "double", cube), (1 - owner, "take", None)]
            owner = 1 - owner
        assert cube_actions(g.record) == want
        assert g.points == 64 * g.value
    assert a.asked_beaver == b.asked_beaver == 0
    # Match play has no beavers either, even with the flag on.
    a, b = Eager("a"), Eager("b")
    pair = play_pair(
        a, b, games=2, seed=5, settings=PairSettings(record=True, beavers=True, match_to=5)
    )
    assert not any(t == "beaver" for g in pair.results for _, t, _ in cube_actions(g.record))
    assert a.asked_beaver == b.asked_beaver == 0


def test_agents_without_beavers_play_the_same_games_and_chunks_agree():
    kw = dict(games=12, seed=4)
    beavers = PairSettings(record=True, jacoby=True, beavers=True)
    none = PairSettings(record=True, jacoby=True, beavers=False)
    on = play_pair(CubeBot("x"), CubeBot("y"), **kw, settings=beavers)
    off = play_pair(CubeBot("x"), CubeBot("y"), **kw, settings=none)
    assert any(cube_actions(g.record) for g in on.results)
    assert [g.record for g in on.results] == [g.record for g in off.results]
    # Eager agents that do not know beavers play exactly the no-beavers games.
    on = play_pair(Eager("a", beavers=False), Eager("b", beavers=False), **kw, settings=beavers)
    off = play_pair(Eager("a"), Eager("b"), **kw, settings=none)
    assert [g.record for g in on.results] == [g.record for g in off.results]


def test_beavers_survive_the_process_pool():
    kw = dict(games=2 * CHUNK + 4, seed=9, settings=PairSettings(beavers=True))
    one = play_pair(Doubler("a"), Eager("b"), jobs=1, **kw)
    two = play_pair(Doubler("a"), Eager("b"), jobs=2, **kw)

    def key(p):
        return sorted((g.sample, g.copy, g.points, g.cube, g.winner) for g in p.results)

    assert key(one) == key(two)
    assert {g.cube for g in one.results} == {64}


# --- a constructed position: the doubled side is the favourite ----------------------

#: The doubler (row 1, on roll) has two checkers on its 6-point; the taker (row 0) two
#: on its 1-point and bears them off with any roll. The doubler wins only by bearing
#: both off now: a double of 3s or more (6/3(2) 3/off(2) and so on), 4 rolls in 36. So
#: taking, the doubled side's equity is 2 * (1 - 2 * 4/36) = +14/9 > 0, and GNU
#: Backgammon's rule (beaver when the taker's equity after the double is positive) says
#: beaver.
BOARD = np.zeros((2, 25), dtype=np.int8)
BOARD[1, 5] = 2
BOARD[0, 0] = 2
DOUBLER_WINS = sum(1 for d1 in range(1, 7) for d2 in range(1, 7) if d1 == d2 and 2 * d1 >= 6) / 36


def _state(agents, settings: PairSettings) -> _Games:
    """One game (and its mirror) in BOARD, seat 0 on roll after the opening."""
    games = _Games.new(agents, range(1), 0, settings)
    games.boards[:] = BOARD
    games.ply[:] = 1
    return games


def _finish(*args):
    raise AssertionError(f"the game should go on, not end: {args}")


@pytest.mark.parametrize("spec", ["td", "gnubg"])
def test_td_and_gnubg_beaver_in_the_constructed_position(spec):
    if spec == "gnubg":
        pytest.importorskip("gnubg_nn")
        p = load_agent("gnubg").before_roll(BOARD)
        assert p[0] == pytest.approx(DOUBLER_WINS, abs=0.002)  # gnubg's bear-off database
    taker = load_agent(spec)
    money = PairSettings(cube=True, jacoby=True, beavers=True)
    games = _state((Doubler("doubler"), taker), money)
    assert list(_cube_phase(games, np.array([0]), _finish)) == [0]
    assert games.events[0] == [("double", 0, 2), ("beaver", 1, 4)]
    assert (games.cube[0], games.owner[0]) == (4, 1)
    # The beaverer now owns the cube at 4: its context says so, and the doubler's too.
    games.on_roll[0] = 1
    assert games.context(0) == GameContext(cube_value=4, cube_owner="me", jacoby=True, beavers=True)
    # --no-beavers: a plain take.
    games = _state((Doubler("doubler"), taker), PairSettings(cube=True, jacoby=True))
    _cube_phase(games, np.array([0]), _finish)
    assert games.events[0] == [("double", 0, 2), ("take", 1)]
    assert (games.cube[0], games.owner[0]) == (2, 1)
    # The same board in a match: no beaver.
    pos = engine.Position(BOARD)
    assert not taker.beaver_decision(pos.flip(), GameContext(match_to=7).flip())


def test_gnubg_takes_without_beaver_when_the_doubler_is_the_favourite():
    pytest.importorskip("gnubg_nn")
    gnubg = load_agent("gnubg")
    board = np.zeros((2, 25), dtype=np.int8)
    board[1, 5] = 2  # both sides two checkers on the 6-point, the doubler on roll
    board[0, 5] = 2
    pos, ctx = engine.Position(board), GameContext(jacoby=True, beavers=True)
    assert gnubg.before_roll(board)[0] > 0.5
    assert gnubg.take_decision(pos.flip(), ctx.flip())
    assert not gnubg.beaver_decision(pos.flip(), ctx.flip())


# --- the .mat file and the command line ---------------------------------------------


def test_a_mat_with_beavers_is_imported_by_gnubg(tmp_path):
    gnubg = pytest.importorskip("gnubg")
    pair = play_pair(
        Doubler("alice"),
        Eager("bob"),
        games=2,
        seed=3,
        settings=PairSettings(record=True, beavers=True, jacoby=True),
    )
    recs = pair.records(3)
    matchfile.export_mat(recs, tmp_path / "s.mat")
    assert " Beavers => 4" in (tmp_path / "s.mat").read_text()
    gnubg.command(f"import mat {tmp_path / 's.mat'}")
    games = gnubg.match()["games"]
    assert len(games) == len(recs)
    for rec, game in zip(recs, games, strict=True):
        who = {rec["a_seat"]: "X", 1 - rec["a_seat"]: "O"}  # gnubg's X: the left column, A
        ours = []
        for t in rec["turns"]:
            if "action" not in t:
                steps = sorted(tuple(s[:2]) for s in t["steps"])
                ours.append(("move", who[t["player"]], tuple(sorted(t["dice"])), steps))
            elif t["action"] == "beaver":  # gnubg: a redouble, and the doubler's take
                ours += [("double", who[t["player"]]), ("take", who[1 - t["player"]])]
            else:
                ours.append((t["action"], who[t["player"]]))
        theirs = []
        for e in game["game"]:
            if e["action"] == "move":
                steps = sorted(tuple(m) for m in e.get("move") or ())
                theirs.append(("move", e["player"], tuple(sorted(e["dice"])), steps))
            elif e["action"] in ("double", "take", "drop"):
                theirs.append((e["action"], e["player"]))
        assert theirs == ours
        assert game["info"]["winner"] == who[rec["winner"]]
        assert game["info"]["points-won"] == rec["points"] == 64 * rec["value"]


def test_the_command_says_which_rules_it_played(capsys):
    base = ["pubeval", "random?seed=3", "--games", "2", "--seed", "1", "--jobs", "1", "--cube"]
    for flags, beavers in (([], True), (["--beavers"], True), (["--no-beavers"], False)):
        assert command.run(parse([*base, "--json", *flags])) == 0
        rules = json.loads(capsys.readouterr().out)["rules"]
        assert rules == {"match_to": 0, "cube": True, "jacoby": True, "beavers": beavers}
    assert command.run(parse([*base, "--no-beavers", "--no-jacoby"])) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header == "money games with the cube, no Jacoby rule, no beavers"
    assert command.run(parse([*base, "--json", "--match-to", "3"])) == 0
    assert json.loads(capsys.readouterr().out)["rules"]["beavers"] is None
    assert command.run(parse([*base, "--json", "--no-cube"])) == 0
    assert json.loads(capsys.readouterr().out)["rules"]["beavers"] is None
    args = parse([*base, "--no-beavers"])
    assert args.beavers is False and parse(base).beavers is True
