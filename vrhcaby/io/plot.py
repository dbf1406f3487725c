"""Small SVG pictures with no plotting library: a round-robin table as a heat map.

SVG is text, so the pictures need nothing beyond the standard library, open in any
browser and show in the README.
"""

from __future__ import annotations

from html import escape

import numpy as np

_CELL, _LABEL = 72, 150


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
