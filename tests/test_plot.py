"""The SVG pictures of `vrhcaby.io.plot`: well-formed, each value where it belongs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from vrhcaby.io.plot import points_svg, series_svg, stacked_svg

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


def test_values_and_bars_below_zero_are_drawn_inside_the_picture_on_the_same_scale():
    """Points per game (a duel's): the axis reaches below 0, each point and bar end inside
    the plot, heights from the x axis (at 0) proportional to the values, signs kept."""
    svg = points_svg(["g1", "g2"], [-0.05, 0.1], [0.04, 0.03], {"level": 0.0}, "t", "ppg")
    root = ET.fromstring(svg)
    height, top, bottom = 300, 40, 250  # the picture's frame (points_svg's fixed layout)
    zero = float(root.findall(f"{NS}line")[0].get("y1"))
    assert top < zero < bottom
    heights = [zero - float(c.get("cy")) for c in root.findall(f"{NS}circle")]
    assert heights[0] < 0 < heights[1] and abs(heights[0] / heights[1] + 0.5) < 2e-3
    bars = [l for l in root.findall(f"{NS}line") if l.get("stroke") == "steelblue"]
    ends = [float(l.get(k)) for l in bars for k in ("y1", "y2")]
    assert all(top <= y <= bottom for y in ends) and max(ends) < height


def test_several_series_share_one_scale_and_a_nan_is_a_gap():
    nan = float("nan")
    svg = series_svg(
        ["a", "b", "c"],
        {"one": ([0.006, 0.004, 0.005], [0.0] * 3), "two": ([0.003, nan, 0.002], [0.0] * 3)},
        {"ref": 0.002},
        "t",
        "eq",
    )
    root = ET.fromstring(svg)
    zero = float(root.findall(f"{NS}line")[0].get("y1"))
    circles = root.findall(f"{NS}circle")
    assert len(circles) == 5  # the NaN is not drawn
    fills = [c.get("fill") for c in circles]
    assert fills.count("steelblue") == 3 and fills.count("darkorange") == 2  # one colour each
    by_colour = sorted(zero - float(c.get("cy")) for c in circles if c.get("fill") == "darkorange")
    top = max(zero - float(c.get("cy")) for c in circles)
    assert abs(by_colour[1] / top - 0.003 / 0.006) < 2e-3
    assert abs(by_colour[0] / top - 0.002 / 0.006) < 2e-3
    # The second series' line is broken at the NaN: no line of it joins its two points.
    assert not [p for p in root.findall(f"{NS}polyline") if p.get("stroke") == "darkorange"]
    texts = [t.text for t in root.findall(f"{NS}text")]
    assert {"one", "two", "ref", "a", "b", "c"} <= set(texts)


def test_stacked_pictures_keep_their_sizes_one_above_the_other():
    a = points_svg(["x"], [1.0], [0.1], {}, "first", "u")
    b = points_svg(["x", "y"], [1.0, 2.0], [0.1, 0.1], {}, "second", "u")
    root = ET.fromstring(stacked_svg([a, b]))
    panels = root.findall(f"{NS}svg")
    assert [p.get("y") for p in panels] == ["0", "300"]
    assert (root.get("width"), root.get("height")) == ("560", "600")
    assert [p.find(f"{NS}text").text for p in panels] == ["first", "second"]
