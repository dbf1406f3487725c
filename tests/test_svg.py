"""Boards as pictures (`engine.svg`, `vrhcaby show --svg`) and `vrhcaby show` in words.

The pictures are parsed as XML and read back the way a person reads a board: each checker
belongs to the point whose printed number stands above (top half) or below (bottom half)
its column, a stack taller than five counts by the number written on it, the bar is the
column between points 18 and 19. The counts are compared with positions written out here
point by point from the side on roll's view; IDs are checked with GNU Backgammon.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections import Counter

import gnubg
import numpy as np
import pytest

import engine
from engine.formats import MatchState, match_id, position_id
from engine.svg import board_svg
from vrhcaby.cli import main as cli

NS = "{http://www.w3.org/2000/svg}"

# Positions from X's view (X on roll): {point: count} for X and for O (O's checkers on
# X's point numbers), and the bar.
START = {"X": {24: 2, 13: 5, 8: 3, 6: 5}, "O": {1: 2, 12: 5, 17: 3, 19: 5}}
BAR = {  # both sides hit, a tall stack of seven, some borne off
    "X": {"bar": 2, 6: 7, 5: 3, 13: 1},
    "O": {"bar": 1, 24: 2, 23: 2, 22: 9},
}
BEAR_OFF = {"X": {1: 3, 2: 2, 6: 1}, "O": {24: 4, 21: 2, 4: 1}}


def board_of(picture: dict) -> np.ndarray:
    """The (2, 25) board: X's point p is row 1 index p - 1; O's checker on X's point q
    is on O's own point 25 - q, row 0 index 24 - q; both bars at index 24."""
    board = np.zeros((2, 25), np.int8)
    for side, row in (("X", 1), ("O", 0)):
        for place, count in picture[side].items():
            if place == "bar":
                board[row, 24] = count
            else:
                board[row, place - 1 if side == "X" else 24 - place] = count
    return board


def read_picture(svg: str) -> tuple[dict, dict]:
    """What the picture shows: {side: {place: count}} on the points and the bar, and
    {side: count} in the borne-off tray."""
    root = ET.fromstring(svg)
    labels = {}
    for t in root.iter(f"{NS}text"):
        if t.get("class") == "point-number":
            labels[int(t.text)] = (float(t.get("x")), float(t.get("y")))
    assert sorted(labels) == list(range(1, 25))
    middle = (labels[1][1] + labels[24][1]) / 2
    bar_left, bar_right = labels[18][0], labels[19][0]

    def place(x: float, y: float) -> object:
        if bar_left + 20 < x < bar_right - 20:
            return "bar"
        row = range(13, 25) if y < middle else range(1, 13)
        point = min(row, key=lambda p: abs(labels[p][0] - x))
        assert abs(labels[point][0] - x) < 20, f"checker at x={x} is off every column"
        return point

    circles: Counter = Counter()
    written: dict = {}
    for c in root.iter(f"{NS}circle"):
        cls = (c.get("class") or "").split()
        if "checker" in cls:
            side = "X" if "x" in cls else "O"
            circles[side, place(float(c.get("cx")), float(c.get("cy")))] += 1
    for t in root.iter(f"{NS}text"):
        cls = (t.get("class") or "").split()
        if "count" in cls:
            side = "X" if "x" in cls else "O"
            written[side, place(float(t.get("x")), float(t.get("y")))] = int(t.text)
    shown: dict = {"X": {}, "O": {}}
    for (side, where), n in circles.items():
        if (side, where) in written:
            assert n == 5, "a tall stack shows five checkers and its count"
            n = written[side, where]
        else:
            assert n <= 5
        shown[side][where] = n
    assert set(written) <= set(circles)
    off = Counter()
    for r in root.iter(f"{NS}rect"):
        cls = (r.get("class") or "").split()
        if "off" in cls:
            off["X" if "x" in cls else "O"] += 1
    return shown, dict(off)


@pytest.mark.parametrize("picture", [START, BAR, BEAR_OFF], ids=["start", "bar", "bear-off"])
def test_checkers_per_point_match_the_board(picture):
    board = board_of(picture)
    svg = board_svg(board)
    shown, off = read_picture(svg)
    assert shown == picture
    on_board = {side: sum(picture[side].values()) for side in ("X", "O")}
    assert off.get("X", 0) == 15 - on_board["X"] and off.get("O", 0) == 15 - on_board["O"]
    # The pip counts and the Position ID (GNU Backgammon's encoder) are written under it.
    # (O's checker on X's point q is on its own point 25 - q.)
    pips = {
        "X": sum(n * (25 if p == "bar" else p) for p, n in picture["X"].items()),
        "O": sum(n * (25 if p == "bar" else 25 - p) for p, n in picture["O"].items()),
    }
    text = " ".join(t.text or "" for t in ET.fromstring(svg).iter(f"{NS}text"))
    assert f"pips {pips['X']}," in text and f"O: pips {pips['O']}," in text
    assert gnubg_position_id(board) in text


def gnubg_position_id(board: np.ndarray) -> str:
    import gnubg_nn

    return gnubg_nn.position_id(board.tolist())


def test_position_draws_itself_in_notebooks():
    pos = engine.Position(board_of(BAR))
    svg = pos._repr_svg_()
    assert read_picture(svg)[0] == BAR
    assert svg == board_svg(pos.board)


def cube_and_dice(svg: str) -> tuple[list, list]:
    root = ET.fromstring(svg)
    cubes = [
        (g.get("data-owner"), int(g.find(f"{NS}text").text))
        for g in root.iter(f"{NS}g")
        if g.get("class") == "cube"
    ]
    dice = []
    for g in root.iter(f"{NS}g"):
        if g.get("class") == "die":
            dice.append(len(g.findall(f"{NS}circle")))  # the spots show the value
    return cubes, dice


def test_cube_owner_and_dice_are_drawn():
    # GNU Backgammon's manual example: player 0 owns a 2-cube, player 1 (X) rolled 5-2.
    state = MatchState.from_id("QYkqASAAIAAA")
    svg = board_svg(board_of(START), state)
    cubes, dice = cube_and_dice(svg)
    assert cubes == [("O", 2)] and dice == [5, 2]
    root = ET.fromstring(svg)
    (cube,) = (g for g in root.iter(f"{NS}g") if g.get("class") == "cube")
    board_top = min(float(t.get("y")) for t in root.iter(f"{NS}text") if t.text == "13")
    assert float(cube.find(f"{NS}rect").get("y")) < board_top + 60  # at O's (top) side
    text = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "QYkqASAAIAAA" in text and "score X 4, O 2" in text
    # A centred cube shows 64; a pending double shows the cube offered at twice its value.
    assert cube_and_dice(board_svg(board_of(START)))[0] == [("centre", 64)]
    doubled = MatchState(cube_value=2, cube_owner=1, dice_owner=1, doubled=True)
    assert cube_and_dice(board_svg(board_of(START), doubled)) == ([("offered", 4)], [])


def arrows(svg: str) -> list[tuple[float, float, float, float]]:
    root = ET.fromstring(svg)
    return [
        tuple(float(line.get(k)) for k in ("x1", "y1", "x2", "y2"))
        for line in root.iter(f"{NS}line")
        if line.get("class") == "arrow"
    ]


def label_x(svg: str) -> dict[int, float]:
    root = ET.fromstring(svg)
    return {
        int(t.text): float(t.get("x"))
        for t in root.iter(f"{NS}text")
        if t.get("class") == "point-number"
    }


def test_a_play_is_one_arrow_per_checker_step():
    board = board_of(START)
    play = engine.Play.parse("8/5 6/5", engine.Position(board), (3, 1))
    svg = board_svg(board, None, play.steps)
    xs = label_x(svg)
    got = sorted((round(x1), round(x2)) for x1, _, x2, _ in arrows(svg))
    assert got == sorted([(round(xs[8]), round(xs[5])), (round(xs[6]), round(xs[5]))])
    # 24/18/13 moves one checker in two steps: two arrows, the second from where the
    # first ended.
    play = engine.Play.parse("24/13", engine.Position(board), (6, 5))
    (a, b) = arrows(board_svg(board, None, play.steps))
    assert (a[2], a[3]) == (b[0], b[1]) and {round(a[0]), round(b[2])} == {
        round(xs[24]),
        round(xs[13]),
    }


def run_cli(args, capsys):
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_show_svg_writes_the_picture(tmp_path, capsys):
    out_file = tmp_path / "board.svg"
    pid = position_id(board_of(BAR))
    code, out, _ = run_cli(["show", pid, "--svg", str(out_file)], capsys)
    assert code == 0 and out == ""
    assert read_picture(out_file.read_text())[0] == BAR
    args = ["show", "4HPwATDgc/ABMA", "--svg", str(out_file), "--play", "8/5 6/5"]
    code, _, _ = run_cli(args, capsys)
    assert code == 0 and len(arrows(out_file.read_text())) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["board.svg"]  # no temporary file left


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["show", "4HPwATDgc/ABMA", "--play", "8/5 6/5"], "--svg"),
        (["show", "4HPwATDgc/ABMA", "--svg", "/nonexistent/x.svg"], "does not exist"),
        (["show", "4HPwATDgc/ABMA", "--svg", "X.svg", "--play", "8/1"], "not a legal play"),
        (["show", "4HPwATDgc/ABMA:QYkqASAAIAAA", "--svg", "X.svg", "--play", "8/5 6/5"], "5-2"),
    ],
)
def test_show_bad_input_is_one_line(args, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(args, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err
    assert not list(tmp_path.iterdir())


def gnubg_reads_xgid(x: str) -> tuple[str, MatchState]:
    """The Position ID and state GNU Backgammon's `set xgid` makes of an XGID, with the
    Jacoby bit (which an XGID drops in match play) taken from ours."""
    gnubg.set_gnubg_id(x)
    pid, mid = gnubg.gnubg_id().split(":")
    return pid, MatchState.from_id(mid)


def same_as_gnubg(x: str, pid: str, state: MatchState) -> bool:
    got_pid, got = gnubg_reads_xgid(x)
    return got_pid == pid and dataclasses.replace(got, jacoby=state.jacoby) == state


def test_show_json_names_players_and_state(capsys):
    code, out, _ = run_cli(["show", "4HPwATDgc/ABMA:QYkqASAAIAAA", "--json"], capsys)
    got = json.loads(out)
    assert code == 0
    assert got["position_id"] == "4HPwATDgc/ABMA" and got["match_id"] == "QYkqASAAIAAA"
    # GNU Backgammon reads the XGID back into the same Position ID and Match ID.
    assert same_as_gnubg(got["xgid"], "4HPwATDgc/ABMA", MatchState.from_id("QYkqASAAIAAA"))
    assert got["pips"] == {"X": 167, "O": 167} and got["off"] == {"X": 0, "O": 0}
    assert got["board"]["X"] == board_of(START)[1].tolist()
    state = got["state"]
    # The manual: 9-point match, player 0 has 2 and owns the 2-cube, player 1 rolled 52.
    assert state["players"] == {"X": 1, "O": 0}
    assert state["score"] == {"X": 4, "O": 2} and state["match_length"] == 9
    assert state["cube_value"] == 2 and state["cube_owner"] == "O"
    assert state["dice"] == [5, 2] and state["turn"] == "X" and not state["doubled"]


@pytest.mark.parametrize(
    ("state", "needles"),
    [
        (MatchState.from_id("QYkqASAAIAAA"), ["score X 4, O 2", "cube 2 owned by O", "rolled 5-2"]),
        (
            MatchState(
                cube_value=2, cube_owner=0, dice_owner=0, doubled=True, match_length=7, score=(1, 3)
            ),
            ["score X 1, O 3", "X doubles to 4; O to take or pass"],
        ),
        (
            MatchState(dice_owner=1, resign=2, jacoby=True),
            ["money game (Jacoby rule)", "X offers to resign a gammon (2 points); O to accept"],
        ),
        (
            MatchState(dice_owner=0, turn=0, resign=1, cube_value=4, cube_owner=0),
            ["cube 4 owned by X", "O offers to resign a single game (4 points); X to accept"],
        ),
        (MatchState(match_length=5, score=(4, 2), crawford=True), ["Crawford game", "no cube"]),
    ],
)
def test_show_text_tells_the_state_in_players_names(state, needles, capsys):
    pid = "4HPwATDgc/ABMA"
    code, out, _ = run_cli(["show", f"{pid}:{match_id(state)}"], capsys)
    assert code == 0
    for needle in needles:
        assert needle in out
    assert f"Match ID   : {match_id(state)}" in out
    has_xgid = not state.resign
    assert ("XGID=" in out) == has_xgid
    if has_xgid and not state.doubled:  # gnubg steps back from a pending double
        xg = next(line for line in out.splitlines() if "XGID=" in line).split(":", 1)[1].strip()
        assert same_as_gnubg(xg, pid, state)


def test_an_xgid_starting_with_a_dash_needs_no_double_dash(capsys):
    x = "-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
    code, out, err = run_cli(["show", x, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["position_id"] == "4HPwATDgc/ABMA"
    code, out, _ = run_cli(["moves", x, "31"], capsys)
    assert code == 0 and "8/5 6/5" in out.splitlines()
