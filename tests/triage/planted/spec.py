"""A correct UTF-8 decoder written from the Unicode Standard, the base of every
planted decoder: Table 3-7 (well-formed byte sequences) read a sequence at a time,
and each ill-formed stretch cut into maximal subparts (section 3.9, "U+FFFD
Substitution of Maximal Subparts"), rendered as CPython's error modes render it.

A decoder here is a codec function ``f(data, errors) -> str``: ``strict`` raises
``UnicodeDecodeError`` at the first error, ``replace`` writes one U+FFFD per error,
``ignore`` drops it, ``surrogateescape`` writes each of its bytes as U+DC80..U+DCFF.
"""

from __future__ import annotations

from collections.abc import Callable

#: (end, code point) of what starts at ``data[i]``: a well-formed sequence and its
#: scalar value, or an error (None) ending where its maximal subpart ends.
Reader = Callable[[bytes, int], "tuple[int, int | None]"]
#: What an error ``data[start:end]`` becomes in mode ``errors`` (or raises).
Render = Callable[[bytes, int, int, str], str]

# Table 3-7: lead bytes -> (length, allowed range of the second byte).
_SECOND = {**{b: (2, 0x80, 0xBF) for b in range(0xC2, 0xE0)},
           0xE0: (3, 0xA0, 0xBF),
           **{b: (3, 0x80, 0xBF) for b in [*range(0xE1, 0xED), 0xEE, 0xEF]},
           0xED: (3, 0x80, 0x9F),
           0xF0: (4, 0x90, 0xBF),
           **{b: (4, 0x80, 0xBF) for b in range(0xF1, 0xF4)},
           0xF4: (4, 0x80, 0x8F)}


def read(data: bytes, i: int) -> tuple[int, int | None]:
    """The sequence at ``i`` per Table 3-7; an error is its maximal subpart (the
    longest prefix of a well-formed sequence, at least one byte)."""
    lead = data[i]
    if lead < 0x80:
        return i + 1, lead
    if lead not in _SECOND:
        return i + 1, None
    n, lo, hi = _SECOND[lead]
    cp = lead & (0x7F >> n)
    j = i + 1
    for k in range(1, n):
        if j >= len(data):
            return j, None
        b = data[j]
        if not (lo <= b <= hi if k == 1 else 0x80 <= b <= 0xBF):
            return j, None
        cp = cp << 6 | b & 0x3F
        j += 1
    return j, cp


def truncated(data: bytes, i: int, end: int) -> bool:
    """The error ``data[i:end]`` is a well-formed sequence cut short by the input's
    end (so a streaming decoder holds it back)."""
    return end == len(data) and data[i] in _SECOND


def render(data: bytes, start: int, end: int, errors: str) -> str:
    """An error in each of CPython's error modes."""
    if errors == "strict":
        raise UnicodeDecodeError("utf-8", data, start, end, "invalid utf-8")
    if errors == "replace":
        return "\ufffd"
    if errors == "ignore":
        return ""
    if errors == "surrogateescape":
        return "".join(chr(0xDC00 + b) for b in data[start:end])
    raise LookupError(f"unknown error handler {errors!r}")


def decode(data: bytes, errors: str = "strict", reader: Reader = read,
           renderer: Render = render) -> str:
    """``data`` decoded: each sequence ``reader`` reads, each error ``renderer``
    renders. With the defaults, a correct decoder (it gives no finding)."""
    out: list[str] = []
    i = 0
    while i < len(data):
        end, cp = reader(data, i)
        out.append(chr(cp) if cp is not None else renderer(data, i, end, errors))
        i = end
    return "".join(out)


def decode_prefix(data: bytes, errors: str, final: bool) -> tuple[str, int]:
    """For an incremental decoder: the text of ``data`` and how many bytes it used;
    unless ``final``, a sequence cut short by the end is held back."""
    i = 0
    out: list[str] = []
    while i < len(data):
        end, cp = read(data, i)
        if cp is None and not final and truncated(data, i, end):
            break
        out.append(chr(cp) if cp is not None else render(data, i, end, errors))
        i = end
    return "".join(out), i
