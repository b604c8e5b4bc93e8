"""markdown: the same report, safe in a terminal and a Markdown viewer."""

from __future__ import annotations

import re

import pytest

from tests.report.builder import HOSTILE_INPUT, hostile_decoders, write_corpus
from utf8fuzz.report import build_report


@pytest.fixture(scope="module")
def hostile_md(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("hostile-md")
    write_corpus(root / "corpus", inputs=[HOSTILE_INPUT], decoders=hostile_decoders(),
                 position_dependent=())
    out = build_report(root / "corpus", root / "reports", date="2026-02-03")
    raw = (out / "report.md").read_bytes()
    assert re.match(rb"^[\n\x20-\x7e]*$", raw)
    return raw.decode("ascii")


def test_no_raw_hostile_content(hostile_md: str) -> None:
    for bad in ("\x1b", "\x00", "\u202e", "\r"):
        assert bad not in hostile_md
    # No inline HTML can open: outside code spans and fenced blocks (where CommonMark
    # shows text literally) there is no '<' at all.
    prose = re.sub(r"```.*?```", "", hostile_md, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    assert "<" not in prose
    assert "&lt;b&gt;" in prose or "`plugin:\\u202eevil\\x1b[2J<b>&`" in hostile_md


def test_code_fences_are_balanced(hostile_md: str) -> None:
    fences = [ln for ln in hostile_md.splitlines() if ln.startswith("```")]
    assert len(fences) % 2 == 0 and fences


def test_table_rows_have_their_columns(hostile_md: str) -> None:
    # An escaped '|' cannot add a cell: every row of a table has its header's width.
    in_code = False
    table: list[str] = []
    tables: list[list[str]] = []
    for ln in hostile_md.splitlines():
        if ln.startswith("```"):
            in_code = not in_code
        if not in_code and ln.startswith("|"):
            table.append(ln)
        elif table:
            tables.append(table)
            table = []
    assert tables
    for t in tables:
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in t}
        assert len(widths) == 1, t


def test_grid_and_reproduction(hostile_md: str) -> None:
    assert "bytes" in hostile_md and "[C0]" in hostile_md
    assert "utf8fuzz diff " + HOSTILE_INPUT.hex() in hostile_md
    assert "def test_divergence_" in hostile_md
