"""The generations log (`docs/generations.json`, drawn as `docs/generations.svg` by
`bench/generations.py`): every generation carries every field, its figures finite (or
null where a field says not measured), the figures copied from earlier sessions are the
ones written where they were measured, and the picture draws each generation's figures
at their heights in both panels (the checker cost by depth, the cube error by depth)."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers_bench import bench_script

ROOT = Path(__file__).resolve().parent.parent
NS = "{http://www.w3.org/2000/svg}"
RECORD = json.loads((ROOT / "docs" / "generations.json").read_text())
#: The figures every generation has, measured by the bench each time it runs.
MEASURED = (
    "core_hours",
    "mean",
    "se",
    "paired_diff",
    "paired_se",
    "mean_1ply",
    "se_1ply",
    "cube_error",
    "cube_se",
    "cube_error_1ply",
    "cube_se_1ply",
)
TWO_PLY = ("mean_2ply", "se_2ply", "pruned_2ply", "source_2ply")


def test_every_generation_has_every_field_and_finite_figures() -> None:
    bench = bench_script("generations")
    assert set(RECORD["fields"]) == set(bench.FIELDS)
    names = [g["generation"] for g in RECORD["generations"]]
    assert names == [name for name, *_ in bench.GENERATIONS]
    for g in RECORD["generations"]:
        assert set(g) == set(RECORD["fields"]), g["generation"]
        for key in MEASURED:
            assert isinstance(g[key], float) and math.isfinite(g[key]), (g["generation"], key)
        assert 0 < g["mean"] < 0.05 and 0 < g["mean_1ply"] < 0.05 and g["se"] > 0
        assert 0 < g["cube_error"] < 200 and 0 < g["cube_error_1ply"] < 200
        assert g["labels"] is None or (isinstance(g["labels"], int) and g["labels"] > 0)
        two = [g[k] for k in TWO_PLY]
        assert two == [None] * 4 or None not in two, g["generation"]
        if g["mean_2ply"] is not None:
            assert math.isfinite(g["mean_2ply"]) and 0 < g["mean_2ply"] < g["mean"]
    assert any(g["mean_2ply"] is None for g in RECORD["generations"])  # left unmeasured
    for references in (RECORD["references"], RECORD["cube_references"]):
        assert all(math.isfinite(v) and v > 0 for v in references.values())
    assert RECORD["decisions"] == 2400 and RECORD["cube_decisions"] == 1200


def test_the_copied_two_ply_figures_are_those_written_where_they_were_measured() -> None:
    """Each 2-ply figure is copied, not judged again: its source says it, to five places."""
    for g in RECORD["generations"]:
        if g["mean_2ply"] is None:
            continue
        page = ROOT / g["source_2ply"].split(",")[0]
        text = re.sub(r"\*\*", "", page.read_text(encoding="utf-8"))
        assert f"{g['mean_2ply']:.5f} ± {g['se_2ply']:.5f}" in text, g["generation"]


def _panels(svg: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    panels = root.findall(f"{NS}svg")
    assert len(panels) == 2
    return panels


def test_the_picture_draws_each_generation_at_its_values() -> None:
    """docs/generations.svg is the json drawn; in each panel each generation is named,
    and each measured figure is a point at a height proportional to it (one scale a
    panel), the series told apart by colour."""
    from vrhcaby.io.plot import COLOURS

    svg = (ROOT / "docs" / "generations.svg").read_text()
    assert svg == bench_script("generations").picture(RECORD)
    rows = RECORD["generations"]
    names = [g["generation"] for g in rows]
    panels = _panels(svg)
    for panel, keys in zip(
        panels,
        (("mean", "mean_1ply", "mean_2ply"), ("cube_error", "cube_error_1ply")),
        strict=True,
    ):
        texts = [t.text for t in panel.findall(f"{NS}text")]
        assert all(texts.count(name) == 1 for name in names)
        zero = float(panel.findall(f"{NS}line")[0].get("y1"))  # the x axis, at 0
        scales = []
        for colour, key in zip(COLOURS, keys, strict=False):
            values = [g[key] for g in rows if g[key] is not None]
            circles = [c for c in panel.findall(f"{NS}circle") if c.get("fill") == colour]
            circles.sort(key=lambda c: float(c.get("cx")))
            assert len(circles) == len(values) > 0, key
            scales += [
                (zero - float(c.get("cy"))) / v for c, v in zip(circles, values, strict=True)
            ]
        assert max(scales) == pytest.approx(min(scales), rel=0.01)


def test_only_refuses_a_generation_it_does_not_know(capsys: pytest.CaptureFixture[str]) -> None:
    """`--only NAME` names generations of `GENERATIONS`; another name is one line and exit 2,
    before anything is judged or written."""
    before = (ROOT / "docs" / "generations.json").read_text()
    with pytest.raises(SystemExit) as exit_info:
        bench_script("generations").main(["--only", "contact3", "contact99"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--only: no generation contact99" in error and "contact4" in error
    assert (ROOT / "docs" / "generations.json").read_text() == before
