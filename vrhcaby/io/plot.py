"""Small SVG pictures with no plotting library: a round-robin table as a heat map, values
with error bars (one series or several, panels stacked), a reliability diagram (predicted
probabilities against realised).

SVG is text, so the pictures need nothing beyond the standard library, open in any
browser and show in the README.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import escape

import numpy as np

_CELL, _LABEL = 72, 150
_SVG = "http://www.w3.org/2000/svg"


def _colour(value: float, scale: float) -> str:
    """White at 0, green for the row agent winning, red for it losing."""
    t = max(-1.0, min(1.0, value / scale)) if scale else 0.0
    fade = int(255 * (1 - abs(t)))
    return f"rgb({fade},255,{fade})" if t > 0 else f"rgb(255,{fade},{fade})"


def heatmap_svg(names: list[str], table: np.ndarray, title: str) -> str:
    """Row agent's points per game against each column agent; the diagonal left empty."""
    n = len(names)
    finite = np.abs(table[np.isfinite(table)])
    scale = float(finite.max()) if finite.size else 1.0
    width, height = _LABEL + n * _CELL + 10, _LABEL + n * _CELL + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20">{escape(title)}</text>',
    ]
    for i, name in enumerate(names):
        y = _LABEL + i * _CELL + _CELL / 2 + 4
        x = _LABEL + i * _CELL + _CELL / 2
        out.append(f'<text x="{_LABEL - 6}" y="{y}" text-anchor="end">{escape(name)}</text>')
        out.append(
            f'<text x="{x}" y="{_LABEL - 6}" text-anchor="start" '
            f'transform="rotate(-45 {x} {_LABEL - 6})">{escape(name)}</text>'
        )
        for j in range(n):
            x0, y0 = _LABEL + j * _CELL, _LABEL + i * _CELL
            value = table[i, j]
            fill = "#ddd" if i == j or not np.isfinite(value) else _colour(value, scale)
            out.append(
                f'<rect x="{x0}" y="{y0}" width="{_CELL}" height="{_CELL}" '
                f'fill="{fill}" stroke="white"/>'
            )
            if i != j and np.isfinite(value):
                out.append(
                    f'<text x="{x0 + _CELL / 2}" y="{y0 + _CELL / 2 + 4}" '
                    f'text-anchor="middle">{value:+.3f}</text>'
                )
    out.append("</svg>")
    return "\n".join(out)


def points_svg(
    labels: list[str],
    values: list[float],
    errors: list[float],
    references: dict[str, float],
    title: str,
    unit: str,
) -> str:
    """Values with ±error bars at evenly spaced labels (a line through them), and
    `references` as dashed horizontal lines named at their right end; the y axis from 0."""
    return series_svg(labels, {"": (values, errors)}, references, title, unit)


#: The colours of the series of `series_svg` and `reliability_svg`, in order.
COLOURS = ("steelblue", "darkorange", "seagreen", "crimson", "purple")


def series_svg(
    labels: list[str],
    series: dict[str, tuple[list[float], list[float]]],
    references: dict[str, float],
    title: str,
    unit: str,
    *,
    digits: int = 4,
) -> str:
    """Several series of values with ±error bars at the same evenly spaced labels, each
    a line of its own colour (named in a legend under the title, unless there is one
    series named ""); a NaN value is not measured: no point, the line broken there.
    `references` are dashed horizontal lines named at their right end; the y axis from 0
    (from below it when an error bar reaches below 0: points per game), its ticks written
    with `digits` decimals."""
    named = len(series) > 1 or any(series)
    height, left, top, bottom, right = 300, 70, 40 + 18 * named, 50, 150
    width = max(560, round(left + right + 75 * (len(labels) - 1) / 0.9))  # labels 75 apart
    drawn = [
        v + e
        for values, errors in series.values()
        for v, e in zip(values, errors, strict=True)
        if np.isfinite(v)
    ]
    top_value = max(drawn + list(references.values()) + [0.0])
    lows = [
        v - e
        for values, errors in series.values()
        for v, e in zip(values, errors, strict=True)
        if np.isfinite(v)
    ]
    base = 1.15 * min(lows + list(references.values()) + [0.0])  # 0 unless a bar dips below
    span = 1.15 * top_value - base
    scale = (height - top - bottom) / (span if span > 0 else 1.0)

    def y(v: float) -> float:
        return height - bottom - (v - base) * scale

    step = (width - left - right) / max(len(labels) - 1, 1)
    xs = [left + 20 + i * step * 0.9 for i in range(len(labels))]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
        f'<line x1="{left}" y1="{y(0)}" x2="{width - right + 20}" y2="{y(0)}" stroke="black"/>',
        f'<line x1="{left}" y1="{y(base)}" x2="{left}" y2="{top}" stroke="black"/>',
        f'<text x="15" y="{(top + height - bottom) / 2}" transform="rotate(-90 15 '
        f'{(top + height - bottom) / 2})" text-anchor="middle">{escape(unit)}</text>',
    ]
    for k in range(5):
        v = base + span * k / 4
        out.append(
            f'<text x="{left - 5}" y="{y(v) + 4}" text-anchor="end">{v:.{digits}f}</text>'
            f'<line x1="{left - 3}" y1="{y(v)}" x2="{left}" y2="{y(v)}" stroke="black"/>'
        )
    for name, v in references.items():
        out.append(
            f'<line x1="{left}" y1="{y(v)}" x2="{width - right + 20}" y2="{y(v)}" '
            'stroke="grey" stroke-dasharray="5,4"/>'
            f'<text x="{width - right + 25}" y="{y(v) + 4}">{escape(name)}</text>'
        )
    for x, label in zip(xs, labels, strict=True):
        out.append(
            f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    legend_x = left
    for k, (name, (values, errors)) in enumerate(series.items()):
        colour = COLOURS[k % len(COLOURS)]
        shift = 6 * (k - (len(series) - 1) / 2)  # side by side where series meet
        points = [(x + shift, v, e) for x, v, e in zip(xs, values, errors, strict=True)]
        run: list[str] = []
        for x, v, _ in [*points, (0.0, np.nan, 0.0)]:  # a NaN ends the line drawn so far
            if np.isfinite(v):
                run.append(f"{x:.1f},{y(v):.1f}")
                continue
            if len(run) > 1:
                out.append(
                    f'<polyline points="{" ".join(run)}" fill="none" stroke="{colour}" '
                    'stroke-width="2"/>'
                )
            run = []
        for x, v, e in points:
            if np.isfinite(v):
                out.append(
                    f'<line x1="{x:.1f}" y1="{y(v - e):.1f}" x2="{x:.1f}" y2="{y(v + e):.1f}" '
                    f'stroke="{colour}"/>'
                    f'<circle cx="{x:.1f}" cy="{y(v):.1f}" r="4" fill="{colour}"/>'
                )
        if named:
            out.append(
                f'<rect x="{legend_x}" y="{top - 26}" width="10" height="10" fill="{colour}"/>'
                f'<text x="{legend_x + 14}" y="{top - 17}">{escape(name)}</text>'
            )
            legend_x += 24 + 7 * len(name)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def stacked_svg(pictures: list[str]) -> str:
    """SVG pictures (this module's) one above the other in one picture, each keeping its
    own size; the whole is as wide as the widest."""
    ET.register_namespace("", _SVG)
    parts = [ET.fromstring(p) for p in pictures]
    width = max(float(p.get("width", 0)) for p in parts)
    height = sum(float(p.get("height", 0)) for p in parts)
    whole = ET.Element(f"{{{_SVG}}}svg", {"width": f"{width:g}", "height": f"{height:g}"})
    at = 0.0
    for part in parts:
        part.set("y", f"{at:g}")
        at += float(part.get("height", 0))
        whole.append(part)
    return ET.tostring(whole, encoding="unicode") + "\n"


def reliability_svg(
    series: dict[str, tuple[list[float], list[float], list[float]]],
    title: str,
    band: float = 0.02,
) -> str:
    """A reliability diagram: for each named series (mean predicted probabilities, the
    frequencies realised, their standard errors) points joined by a line over the diagonal
    a calibrated predictor would follow (left, both axes 0 to 1), and beside it the gaps
    (realised minus predicted, in percentage points) with ±2 standard error bars, against
    a grey band of ±`band` (right): gaps of a few points are invisible on the left."""
    size, left, top, bottom, gap_left, legend = 400, 55, 40, 50, 60, 150
    plot = size - top - bottom
    gaps = [
        100 * (r - p) + sign * 200 * e
        for predicted, realised, se in series.values()
        for p, r, e in zip(predicted, realised, se, strict=True)
        for sign in (-1, 1)
    ]
    reach = float(np.ceil(max([100 * band * 1.5, *map(abs, gaps)])))
    x2 = left + plot + gap_left

    def x(v: float, at: float = left) -> float:
        return at + v * plot

    def y(v: float) -> float:
        return top + (1 - v) * plot

    def yg(points: float) -> float:
        return top + plot / 2 - points / reach * plot / 2

    width = x2 + plot + legend
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{size}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{size}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
        f'<rect x="{x2}" y="{yg(100 * band):.1f}" width="{plot}" '
        f'height="{yg(-100 * band) - yg(100 * band):.1f}" fill="#eee"/>',
        f'<line x1="{x2}" y1="{yg(0)}" x2="{x2 + plot}" y2="{yg(0)}" stroke="grey" '
        'stroke-dasharray="5,4"/>',
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="grey" '
        'stroke-dasharray="5,4"/>',
    ]
    for at, label in ((left, "realised"), (x2, "gap (points)")):
        out.append(
            f'<rect x="{at}" y="{top}" width="{plot}" height="{plot}" fill="none" stroke="black"/>'
            f'<text x="{at + plot / 2}" y="{size - 12}" text-anchor="middle">predicted</text>'
            f'<text x="{at - 40}" y="{top + plot / 2}" text-anchor="middle" '
            f'transform="rotate(-90 {at - 40} {top + plot / 2})">{label}</text>'
        )
    for k in range(6):
        v = k / 5
        out.append(
            f'<text x="{x(v)}" y="{y(0) + 16}" text-anchor="middle">{v:.1f}</text>'
            f'<text x="{x(v, x2)}" y="{y(0) + 16}" text-anchor="middle">{v:.1f}</text>'
            f'<text x="{left - 5}" y="{y(v) + 4}" text-anchor="end">{v:.1f}</text>'
        )
    for k in range(-2, 3):
        g = reach * k / 2
        out.append(f'<text x="{x2 - 5}" y="{yg(g) + 4}" text-anchor="end">{g:+g}</text>')
    for i, (name, (predicted, realised, se)) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        rows = list(zip(predicted, realised, se, strict=True))
        for at, f in ((left, lambda p, r: y(r)), (x2, lambda p, r: yg(100 * (r - p)))):
            path = " ".join(f"{x(p, at):.1f},{f(p, r):.1f}" for p, r, _ in rows)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
            )
        for p, r, e in rows:
            out.append(
                f'<circle cx="{x(p):.1f}" cy="{y(r):.1f}" r="3" fill="{colour}"/>'
                f'<line x1="{x(p, x2):.1f}" y1="{yg(100 * (r - p - 2 * e)):.1f}" '
                f'x2="{x(p, x2):.1f}" y2="{yg(100 * (r - p + 2 * e)):.1f}" stroke="{colour}"/>'
                f'<circle cx="{x(p, x2):.1f}" cy="{yg(100 * (r - p)):.1f}" r="3" fill="{colour}"/>'
            )
        ly = top + 10 + 18 * i
        out.append(
            f'<circle cx="{x2 + plot + 15}" cy="{ly}" r="4" fill="{colour}"/>'
            f'<text x="{x2 + plot + 25}" y="{ly + 4}">{escape(name)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
