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


def test_the_matrix_of_forty_long_named_decoders_fits_the_page() -> None:
    # 29 decoders in this repository's corpus today (33-character names); the Go,
    # Java and Rust peers bring 8 more: drawn as before (44-px cells) it was 1,516 px
    names = [f"plugin:some.package.module:decoder_number_{i:02d}"[:48] for i in range(40)]
    m = Matrix(names, {(a, b): 10 for a in names for b in names if a != b},
               {(a, b): 1 for a in names for b in names if a != b})
    root = ET.fromstring(matrix_svg(m))
    assert int(root.get("width", "0")) <= 1150  # the report's body is 1,200 px wide


def test_trend_svg() -> None:
    pts = [Point(f"2026-01-{d:02d}", d * 2, d % 3) for d in range(1, 20)]
    svg = trend_svg(pts)
    ET.fromstring(svg)
    assert svg.count("<circle") == 2 * len(pts) and svg.count("<polyline") == 2
    one = trend_svg([Point("2026-01-01", 0, 0)])
    ET.fromstring(one)
    assert "<polyline" not in one
