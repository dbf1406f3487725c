"""Boards as pictures: a position drawn as an SVG document, built as a string (no I/O).

The side on roll is X (light checkers) at the bottom, moving from its 24-point (top right)
round to its home board (bottom right), as `vrhcaby show` draws it in text; O is the other
side (dark checkers). Points are numbered from X's view. Stacks taller than five show
five checkers and the count; the bar holds each side's hit checkers (X's in its upper
half, O's in its lower half), the tray at the right the checkers borne off (O's at the
top, X's at the bottom), the column at the left the cube (at O's side, in the middle or at
X's side, by its owner). The roll, the pip counts, the IDs and the match state are
written in and under the board; a play is drawn as one arrow per checker step.

Notebooks draw `engine.Position` with it (`Position._repr_svg_`), as python-chess draws
its boards.

>>> import engine
>>> svg = board_svg(engine.Position.start().board)
>>> svg.startswith("<svg") and svg.count('class="checker x"') == 15
True
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import numpy as np

from engine.board import CHECKERS, pips, validate_board
from engine.formats import MatchState, match_id, position_id, xgid_or_none

__all__ = ["board_svg"]

WIDTH, HEIGHT = 650, 600
_PW = 40  # point width
_R = 16  # checker radius
_STEP = 34  # distance between stacked checkers
_LEFT = 60  # left edge of the board (the cube column is to its left)
_BAR = _LEFT + 6 * _PW  # left edge of the bar
_RIGHT = _BAR + _PW  # left edge of the right half
_TRAY = _RIGHT + 6 * _PW  # left edge of the borne-off tray
_TOP, _BOTTOM = 30, 450  # inner edges of the board
_MIDDLE = (_TOP + _BOTTOM) // 2
_SHOWN = 5  # checkers drawn in a stack; taller stacks show their count

_STYLE = """
.frame { fill: #6b4423; }
.field { fill: #2f6f4e; }
.bar { fill: #5a3a1e; }
.tray { fill: #c9b189; }
.light { fill: #e8d9b0; }
.dark { fill: #a3472f; }
.checker { stroke-width: 1.5; }
.checker.x { fill: #f6f1e4; stroke: #3b3b3b; }
.checker.o { fill: #2b2b2b; stroke: #000; }
.off.x { fill: #f6f1e4; stroke: #3b3b3b; }
.off.o { fill: #2b2b2b; stroke: #000; }
.count { font: bold 15px sans-serif; text-anchor: middle; dominant-baseline: central; }
.count.x { fill: #000; }
.count.o { fill: #fff; }
.point-number { font: 12px sans-serif; fill: #222; text-anchor: middle; }
.label { font: 11px sans-serif; fill: #f0e6d0; text-anchor: middle; }
.tray-label { fill: #4a2f18; }
.cube rect { fill: #fff; stroke: #000; stroke-width: 1.5; }
.cube text { font: bold 18px sans-serif; text-anchor: middle; dominant-baseline: central; }
.die rect { fill: #fff; stroke: #000; stroke-width: 1.5; }
.die circle { fill: #000; }
.arrow { stroke: #ff8c1a; stroke-width: 4; stroke-opacity: 0.85; fill: none; }
.info { font: 13px monospace; fill: #222; }
"""


def _attrs(**kw: object) -> str:
    return " ".join(f'{k.rstrip("_").replace("_", "-")}="{v}"' for k, v in kw.items())


def _column_x(point: int) -> float:
    """Centre x of point 1..24 (X's numbering)."""
    col = point - 13 if point >= 13 else 12 - point  # 0..11 from the left
    left = _LEFT + col * _PW if col < 6 else _RIGHT + (col - 6) * _PW
    return left + _PW / 2


def _stack_y(point: int, k: int) -> float:
    """Centre y of the k-th checker (0 at the edge) of a stack on point 1..24."""
    k = min(k, _SHOWN - 1)
    return _TOP + _R + 2 + k * _STEP if point >= 13 else _BOTTOM - _R - 2 - k * _STEP


def _bar_y(side: str, k: int) -> float:
    """Centre y of the k-th bar checker of a side (X's above the middle, O's below)."""
    k = min(k, _SHOWN - 1)
    offset = 40 + k * _STEP
    return _MIDDLE - offset if side == "x" else _MIDDLE + offset


def _tray_y(side: str, k: int) -> float:
    """Centre y of the k-th borne-off checker of a side (O's from the top, X's from the
    bottom)."""
    return _TOP + 8 + 11 * k if side == "o" else _BOTTOM - 8 - 11 * k


def _stack(out: list[str], side: str, x: float, ys: list[float], count: int, where: str) -> None:
    """Checkers of one place: the first `_SHOWN` drawn, the count on the last if taller."""
    out.append(f'<g class="stack" {_attrs(data_side=side.upper(), data_place=where)}>')
    for y in ys[: min(count, _SHOWN)]:
        out.append(f'<circle class="checker {side}" {_attrs(cx=x, cy=y, r=_R)}/>')
    if count > _SHOWN:
        y = ys[_SHOWN - 1]
        out.append(f'<text class="count {side}" {_attrs(x=x, y=y)}>{count}</text>')
    out.append("</g>")


def _die(out: list[str], x: float, y: float, value: int) -> None:
    size = 30
    spots = {
        1: [(0, 0)],
        2: [(-1, -1), (1, 1)],
        3: [(-1, -1), (0, 0), (1, 1)],
        4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
        5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
        6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
    }[value]
    out.append(f'<g class="die" {_attrs(data_value=value)}>')
    out.append(f"<rect {_attrs(x=x - size / 2, y=y - size / 2, width=size, height=size, rx=5)}/>")
    for dx, dy in spots:
        out.append(f"<circle {_attrs(cx=x + 8 * dx, cy=y + 8 * dy, r=3)}/>")
    out.append("</g>")


def _cube(out: list[str], x: float, y: float, value: int, owner: str) -> None:
    out.append(f'<g class="cube" {_attrs(data_value=value, data_owner=owner)}>')
    out.append(f"<rect {_attrs(x=x - 20, y=y - 20, width=40, height=40, rx=5)}/>")
    out.append(f"<text {_attrs(x=x, y=y)}>{value}</text>")
    out.append("</g>")


def _arrows(out: list[str], board: np.ndarray, steps: tuple[tuple[int, int], ...]) -> None:
    """One arrow per checker step of X's play (points 25 = bar, 0 = off), from the top
    checker of the source to where it lands, the stacks updated step by step."""
    mine = board[1].astype(int).copy()
    off = CHECKERS - int(mine.sum())

    def anchor(point: int, k: int) -> tuple[float, float]:
        if point == 25:
            return _BAR + _PW / 2, _bar_y("x", k)
        if point == 0:
            return _TRAY + 22, _tray_y("x", k)
        return _column_x(point), _stack_y(point, k)

    for src, dst in steps:
        i = 24 if src == 25 else src - 1
        start = anchor(src, int(mine[i]) - 1)
        mine[i] -= 1
        if dst == 0:
            end = anchor(0, off)
            off += 1
        else:
            end = anchor(dst, int(mine[dst - 1]))
            mine[dst - 1] += 1
        (x1, y1), (x2, y2) = start, end
        out.append(
            f'<line class="arrow" {_attrs(x1=x1, y1=y1, x2=x2, y2=y2)} '
            f'marker-end="url(#arrowhead)" {_attrs(data_step=f"{src}/{dst}")}/>'
        )


def board_svg(
    board: np.ndarray,
    state: MatchState | None = None,
    play_steps: tuple[tuple[int, int], ...] = (),
    *,
    waiting: tuple[int, int] = (0, 0),
    width: int | None = None,
) -> str:
    """An SVG document of a (2, 25) board (row 1 the side on roll, drawn as X).

    `state` adds the cube, the roll, the score and the Match ID and XGID; `play_steps`
    (a `Play`'s `steps`, X's points, 25 the bar and 0 off) draws an arrow per checker
    step; `waiting` counts acey-deucey checkers not yet entered; `width` sets the drawn
    width in pixels (default the natural size, 650 wide).
    """
    b = np.asarray(board)
    validate_board(b, waiting)
    b = b.astype(int)
    size = "" if width is None else f' width="{width}" height="{round(width * HEIGHT / WIDTH)}"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}"{size}>',
        f"<title>{escape(position_id(b))}</title>",
        f"<style>{_STYLE}</style>",
        '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="7" refY="5" '
        'markerWidth="4" markerHeight="4" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#ff8c1a"/></marker></defs>',
        f'<rect fill="#fbf8f0" {_attrs(x=0, y=0, width=WIDTH, height=HEIGHT)}/>',
        f'<rect class="frame" {_attrs(x=_LEFT - 8, y=_TOP - 8)} '
        f"{_attrs(width=_TRAY + 60 - _LEFT + 8, height=_BOTTOM - _TOP + 16, rx=6)}/>",
    ]
    for left in (_LEFT, _RIGHT):
        out.append(
            f'<rect class="field" {_attrs(x=left, y=_TOP, width=6 * _PW, height=_BOTTOM - _TOP)}/>'
        )
    out.append(f'<rect class="bar" {_attrs(x=_BAR, y=_TOP, width=_PW, height=_BOTTOM - _TOP)}/>')
    out.append(
        f'<rect class="tray" {_attrs(x=_TRAY + 4, y=_TOP, width=44, height=_BOTTOM - _TOP)}/>'
    )
    depth = _SHOWN * _STEP + 8
    for point in range(1, 25):
        x = _column_x(point)
        tone = "dark" if point % 2 else "light"
        base, tip = (_TOP, _TOP + depth) if point >= 13 else (_BOTTOM, _BOTTOM - depth)
        corners = f"{x - _PW / 2},{base} {x + _PW / 2},{base} {x},{tip}"
        out.append(f'<polygon class="{tone}" points="{corners}"/>')
        label_y = _TOP - 12 if point >= 13 else _BOTTOM + 22
        out.append(f'<text class="point-number" {_attrs(x=x, y=label_y)}>{point}</text>')
    # Checkers on the points: X's point p is index p - 1 of row 1, O's index 24 - p of row 0.
    for point in range(1, 25):
        x = _column_x(point)
        ys = [_stack_y(point, k) for k in range(_SHOWN)]
        if b[1, point - 1]:
            _stack(out, "x", x, ys, int(b[1, point - 1]), str(point))
        if b[0, 24 - point]:
            _stack(out, "o", x, ys, int(b[0, 24 - point]), str(point))
    bar_x = _BAR + _PW / 2
    for side, row in (("x", 1), ("o", 0)):
        if b[row, 24]:
            ys = [_bar_y(side, k) for k in range(_SHOWN)]
            _stack(out, side, bar_x, ys, int(b[row, 24]), "bar")
    # Borne-off checkers, seen edge on in the tray.
    for side, row in (("x", 1), ("o", 0)):
        off = CHECKERS - int(b[row].sum()) - waiting[row]
        out.append(f'<g class="tray-stack" {_attrs(data_side=side.upper(), data_off=off)}>')
        for k in range(off):
            y = _tray_y(side, k)
            out.append(
                f'<rect class="off {side}" {_attrs(x=_TRAY + 8, y=y - 5, width=36, height=10)} '
                'rx="2"/>'
            )
        out.append("</g>")
    out.append(f'<text class="label tray-label" {_attrs(x=_TRAY + 26, y=_MIDDLE + 4)}>off</text>')
    out.append(f'<text class="label" {_attrs(x=bar_x, y=_MIDDLE + 4)}>bar</text>')
    # The cube, and the roll or the offered cube.
    if state is None or not state.crawford:
        value = 1 if state is None else state.cube_value
        owner = (
            "centre"
            if state is None or state.cube_owner < 0
            else state.player_name(state.cube_owner)
        )
        y = {"centre": _MIDDLE, "O": _TOP + 22, "X": _BOTTOM - 22}[owner]
        if state is not None and state.doubled:  # offered: in X's half, at twice its value
            _cube(out, (_RIGHT + _TRAY) / 2, _MIDDLE, 2 * value, "offered")
        else:
            _cube(out, _LEFT / 2 - 4, y, 64 if owner == "centre" and value == 1 else value, owner)
    if state is not None and state.dice != (0, 0):
        centre = (_RIGHT + _TRAY) / 2
        _die(out, centre - 22, _MIDDLE, state.dice[0])
        _die(out, centre + 22, _MIDDLE, state.dice[1])
    if play_steps:
        _arrows(out, b, tuple(play_steps))
    # Pip counts, IDs and the state, under the board.
    p = pips(b)
    off_x, off_o = (CHECKERS - int(b[r].sum()) - waiting[r] for r in (1, 0))
    info = [
        f"X (on roll): pips {int(p[1]) + 25 * waiting[1]}, off {off_x}; "
        f"O: pips {int(p[0]) + 25 * waiting[0]}, off {off_o}"
    ]
    if any(waiting):
        info.append(f"waiting to enter: X {waiting[1]}, O {waiting[0]}")
    ids = f"Position ID: {position_id(b)}"
    if state is not None:
        ids += f"   Match ID: {match_id(state)}"
    info.append(ids)
    xg = xgid_or_none(b, state)
    if xg is not None:
        info.append(xg)
    if state is not None:
        game, cube, action = state.describe().split("; ", 2)
        info += [f"{game}; {cube}", action]
    for k, line in enumerate(info):
        out.append(
            f'<text class="info" {_attrs(x=12, y=_BOTTOM + 46 + 18 * k)}>{escape(line)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)
