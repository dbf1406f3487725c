"""The SVG pictures of `vrhcaby.io.plot`: well-formed, each value where it belongs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from vrhcaby.io.plot import points_svg

NS = "{http://www.w3.org/2000/svg}"


def test_points_are_drawn_at_their_values_with_their_error_bars_and_references():
    svg = points_svg(
        ["a", "b", "c"], [0.006, 0.004, 0.005], [0.001, 0.0005, 0.0], {"ref": 0.002}, "t & u", "eq"
    )
    root = ET.fromstring(svg)  # well-formed, the title escaped
    circles = root.findall(f"{NS}circle")
    assert len(circles) == 3
    ys = [float(c.get("cy")) for c in circles]
    zero = float(root.findall(f"{NS}line")[0].get("y1"))  # the x axis, at 0
    # Heights above the axis are proportional to the values (SVG's y grows downwards).
    heights = [zero - y for y in ys]
    assert heights[0] > heights[2] > heights[1] > 0
    assert abs(heights[1] / heights[0] - 0.004 / 0.006) < 2e-3
    dashed = [l for l in root.findall(f"{NS}line") if l.get("stroke-dasharray")]
    assert len(dashed) == 1 and abs((zero - float(dashed[0].get("y1"))) / heights[0] - 2 / 6) < 2e-3
    texts = [t.text for t in root.findall(f"{NS}text")]
    assert "t & u" in texts and {"a", "b", "c", "ref"} <= set(texts)
