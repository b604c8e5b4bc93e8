"""The only place where bytes, code points and untrusted strings become text.

Everything shown to a person passes through here: a report, the terminal, a log,
a test id. Fuzz inputs are hostile, and so is anything a decoder said about them:
a crash message may quote the input, a plug-in's version string may hold anything.
So the rule is simple and strict:

* bytes are shown as upper-case hex (``C0 80``), code points as ``U+XXXX``;
* any other string is reduced to printable ASCII: every character outside
  U+0020..U+007E (controls, ESC, NUL, bidi overrides such as U+202E, lone
  surrogates from ``surrogateescape``, line separators, non-ASCII look-alikes) is
  written as a Python-style escape (``\\x1b``, ``\\u202e``, ``\\U0001f600``).
  Restricting to ASCII rather than to "printable" Unicode categories is on
  purpose: it leaves no room for homoglyphs or for categories a terminal or
  browser treats specially;
* then the result is escaped for its target: :func:`html` (``& < > " '``),
  :func:`md` (Markdown punctuation and inline HTML), :func:`xml` for SVG.

Renderers never call ``str()`` on decoded data themselves; they call these.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable

_PRINTABLE = re.compile(r"[^\x20-\x7e]")


def _escape_char(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c < 0x100:
        return f"\\x{c:02x}"
    if c < 0x10000:
        return f"\\u{c:04x}"
    return f"\\U{c:08x}"


def text(s: object, limit: int | None = 2000) -> str:
    """Any value as printable ASCII (see module docstring); long strings are cut
    with a visible marker so that one giant crash message cannot bloat a report."""
    raw = s if isinstance(s, str) else str(s)
    # Backslashes are left alone, which makes text() idempotent: layers of the report
    # may pass an already-safe label through again without "\\x1b" becoming
    # "\\\\x1b". The price (a literal "\\x1b" looks like an escaped ESC) is only
    # cosmetic: the output is printable ASCII either way.
    out = _PRINTABLE.sub(_escape_char, raw)
    if limit is not None and len(out) > limit:
        out = out[:limit] + f"...[{len(out) - limit} more characters cut]"
    return out


def hexbytes(data: bytes) -> str:
    """``C0 80``; ``(empty)`` for no bytes."""
    return data.hex(" ").upper() if data else "(empty)"


def hexbyte(b: int) -> str:
    return f"{b:02X}"


def cp(c: int) -> str:
    """A code point as U+XXXX, never the character itself."""
    return f"U+{c:04X}"


def cps(cs: Iterable[int]) -> str:
    return " ".join(cp(c) for c in cs)


def html(s: object) -> str:
    """Printable ASCII, HTML-escaped for text and attribute values."""
    return _html.escape(text(s), quote=True)


def xml(s: object) -> str:
    """For inline SVG (XML): the same escaping as HTML suffices."""
    return html(s)


# Enough to stop emphasis, links and images, code spans, table cells, headings and
# strikethrough; "." "-" "+" are left alone so that U+0041 and 80..BF stay readable.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]#!|~>])")


def md(s: object) -> str:
    """Printable ASCII with Markdown punctuation backslash-escaped and ``<``/``&``
    as entities, so that no input can open a link, an image, a table cell, inline
    HTML or a code span in a Markdown viewer."""
    t = text(s)
    t = t.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(r"\\\1", t)


def code(s: object) -> str:
    """Text for a fenced Markdown code block: printable ASCII line by line (the
    newlines of a layout are kept, any other control is escaped), with backticks
    replaced so that the fence cannot be closed from inside."""
    lines = (s if isinstance(s, str) else str(s)).split("\n")
    return "\n".join(text(ln, None) for ln in lines).replace("`", "'")


def md_code(s: object) -> str:
    """An inline Markdown code span that is also safe inside a table cell."""
    return "`" + code(s).replace("|", "\\|") + "`"


def ident(s: object) -> str:
    """A safe HTML id / file-name fragment: [a-z0-9-] only."""
    return re.sub(r"[^a-z0-9]+", "-", text(s).lower()).strip("-") or "x"
