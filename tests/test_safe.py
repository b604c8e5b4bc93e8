"""safe: every output is printable ASCII, escaped for its target."""

from __future__ import annotations

import re

import pytest

from utf8fuzz import safe

HOSTILE = [
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\x1b[2J",  # ESC [ 2 J: clear the terminal
    "\x00",
    b"\xed\xa0\x80\xff".decode("utf-8", "surrogateescape"),  # lone surrogates U+DCxx
    "\u2028\u2029\x85\r\n\t",
    "\u200b\ufeff\u2066",  # zero width space, BOM, bidi isolate
    "\U0001f600",
    "<script>alert(1)</script>&\"'",
    "`| [x](http://e) ![i](y) *a* _b_ # ~~c~~",
]
ASCII_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")


@pytest.mark.parametrize("s", HOSTILE)
def test_text_is_printable_ascii(s: str) -> None:
    out = safe.text(s)
    assert ASCII_PRINTABLE.match(out), out


def test_text_names_each_escaped_character() -> None:
    assert safe.text("\u202e") == "\\u202e"
    assert safe.text("\x1b[2J") == "\\x1b[2J"
    assert safe.text("\x00") == "\\x00"
    assert safe.text("\udcff") == "\\udcff"
    assert safe.text("\U0001f600") == "\\U0001f600"


@pytest.mark.parametrize("s", HOSTILE)
def test_text_is_idempotent(s: str) -> None:
    once = safe.text(s)
    assert safe.text(once) == once


def test_text_cuts_long_strings_visibly() -> None:
    out = safe.text("x" * 5000, 100)
    assert out.startswith("x" * 100) and "4900 more characters cut" in out


@pytest.mark.parametrize("s", HOSTILE)
def test_html_escapes_markup(s: str) -> None:
    out = safe.html(s)
    assert ASCII_PRINTABLE.match(out)
    assert "<" not in out and ">" not in out and '"' not in out and "'" not in out
    assert re.sub(r"&(amp|lt|gt|quot|#x27);", "", out).count("&") == 0


def test_md_disarms_markdown() -> None:
    out = safe.md("`| [x](http://e) ![i](y) *a* _b_ <b>&")
    for ch in "`|[]!*_":
        assert re.search(r"(?<!\\)" + re.escape(ch), out) is None, (ch, out)
    assert "<" not in out and "&amp;" in out


def test_md_code_cannot_close_its_span_or_cell() -> None:
    out = safe.md_code("a`b|c\x1b")
    assert out == "`a'b\\|c\\x1b`"


def test_code_keeps_layout_newlines_and_escapes_other_controls() -> None:
    out = safe.code("line1\nli\rne2 ``` \x1b")
    assert out.split("\n") == ["line1", "li\\x0dne2 ''' \\x1b"]


def test_bytes_and_code_points() -> None:
    assert safe.hexbytes(b"\xc0\x80") == "C0 80"
    assert safe.hexbytes(b"") == "(empty)"
    assert safe.cp(0x202E) == "U+202E"
    assert safe.cp(0x10FFFF) == "U+10FFFF"
    assert safe.cps([0x41, 0xFFFD]) == "U+0041 U+FFFD"


def test_ident_is_a_safe_fragment() -> None:
    assert safe.ident("plugin:\u202eevil <x>") == "plugin-u202eevil-x"
