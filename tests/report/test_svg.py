"""svg: the two figures are well-formed XML with escaped labels."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from utf8fuzz.report.matrix import Matrix
from utf8fuzz.report.svg import matrix_svg, trend_svg
from utf8fuzz.report.trend import Point


def test_matrix_svg() -> None:
    names = ["a", "evil\u202e<x>&"]
    m = Matrix(names, {("a", names[1]): 4, (names[1], "a"): 4},
               {("a", names[1]): 3, (names[1], "a"): 3})
    svg = matrix_svg(m)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "\u202e" not in svg and "evil\\u202e&lt;x&gt;&amp;" in svg
    assert "disagree on 3 of 4 inputs" in svg
    assert matrix_svg(Matrix([], {}, {})) == ""


def test_trend_svg() -> None:
    pts = [Point(f"2026-01-{d:02d}", d * 2, d % 3) for d in range(1, 20)]
    svg = trend_svg(pts)
    ET.fromstring(svg)
    assert svg.count("<circle") == 2 * len(pts) and svg.count("<polyline") == 2
    one = trend_svg([Point("2026-01-01", 0, 0)])
    ET.fromstring(one)
    assert "<polyline" not in one
