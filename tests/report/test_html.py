"""html: one self-contained, fully escaped file."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.report.builder import HOSTILE_INPUT, hostile_decoders, write_corpus
from utf8fuzz.report import build_report

ALLOWED = re.compile(rb"^[\n\x20-\x7e]*$")


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("hostile")
    write_corpus(root / "corpus", inputs=[HOSTILE_INPUT], decoders=hostile_decoders(),
                 position_dependent=())
    out = build_report(root / "corpus", root / "reports", date="2026-02-03")
    raw = (out / "report.html").read_bytes()
    assert ALLOWED.match(raw), "the HTML holds a byte outside printable ASCII"
    return raw.decode("ascii")


def test_hostile_bytes_are_never_raw(hostile_html: str) -> None:
    for bad in ("\x1b", "\x00", "\u202e", "\u2028"):
        assert bad not in hostile_html
    # The decoder's hostile name and its crash message appear escaped.
    assert "plugin:\\u202eevil\\x1b[2J&lt;b&gt;&amp;" in hostile_html
    assert "\\udcff" in hostile_html  # the lone surrogate from surrogateescape, named
    assert "U+202E" in hostile_html and "U+001B" in hostile_html


def test_no_markup_from_data(hostile_html: str) -> None:
    assert "<b>&" not in hostile_html
    tags: list[str] = []

    class P(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append(tag)
            for name, value in attrs:
                assert not name.startswith("on"), name
                assert name not in ("src", "srcset", "background"), name
                if name == "href":
                    assert value is not None and value.startswith("#"), value

    P().feed(hostile_html)
    assert "script" not in tags and "img" not in tags and "link" not in tags
    assert "iframe" not in tags and "object" not in tags


def test_self_contained(hostile_html: str) -> None:
    urls = re.findall(r"(?:https?:)?//[^\s\"'<>)]+", hostile_html)
    assert set(urls) <= {"http://www.w3.org/2000/svg"}, urls
    assert "@import" not in hostile_html and "url(" not in hostile_html
    assert "default-src 'none'" in hostile_html


def test_sections(hostile_html: str) -> None:
    for anchor in ('id="fingerprints"', 'id="matrix"', 'id="trend"', 'id="decoders"'):
        assert anchor in hostile_html
    assert hostile_html.count("<svg") == 2
    assert "Clause:" in hostile_html


def test_empty_corpus_says_so(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    out = build_report(tmp_path / "corpus", tmp_path / "reports", date="2026-02-03")
    text = (out / "report.html").read_text()
    assert "The corpus has no entries" in text
