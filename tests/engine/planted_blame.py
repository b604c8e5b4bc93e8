"""Decoders with planted bugs whose divergence shows where no positions are, or
beside other bugs at the same feature: for testing that each cause is blamed on its
own bytes and gets its own finding (tests/engine/test_blame.py).

Each is a user's plug-in function, plugged in by its shape (``+codec``, ``+text``).
"""

from __future__ import annotations

import re

from utf8fuzz.decoders.reference import Reference

# C0 or C1 and a continuation byte: a 2-byte overlong (Table 3.1B rules C0 and C1 out).
_OVERLONG2 = re.compile(rb"[\xc0\xc1][\x80-\xbf]")


def _cpython(part: bytes, errors: str, at: int) -> str:
    """CPython's codec on ``part``, which starts at offset ``at`` of the input."""
    try:
        return part.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise UnicodeDecodeError("utf-8", e.object, e.start + at, e.end + at, e.reason) from None


def accepts_overlong2(data: bytes, errors: str = "strict") -> str:
    """The codec shape, CPython's codec in every error mode but for one bug: a 2-byte
    overlong (C0..C1 80..BF) decodes to the value its bits spell (C0 BD: U+003D)."""
    out: list[str] = []
    pos = 0
    for m in _OVERLONG2.finditer(data):
        out.append(_cpython(data[pos : m.start()], errors, pos))
        out.append(chr((data[m.start()] & 0x1F) << 6 | data[m.start() + 1] & 0x3F))
        pos = m.end()
    out.append(_cpython(data[pos:], errors, pos))
    return "".join(out)


_CESU8 = Reference("cesu8", "maximal-subpart")
# A surrogate pair (left to the reference), or a low surrogate no high one leads,
# or C0 80.
_PAIR_LONE_NUL = re.compile(rb"\xed[\xa0-\xaf][\x80-\xbf]\xed[\xb0-\xbf][\x80-\xbf]"
                            rb"|(\xed[\xb0-\xbf][\x80-\xbf])|(\xc0\x80)")


def _cut_short(data: bytes) -> int | None:
    """Where the input ends inside a sequence: the offset of a lead byte that the end
    cuts short of the bytes its high bits announce (RFC 2279 section 2), only
    continuation bytes after it; else None."""
    for p in range(len(data) - 1, max(-1, len(data) - 6), -1):
        b = data[p]
        if 0x80 <= b <= 0xBF:
            continue
        n = 2 if b < 0xE0 else 3 if b < 0xF0 else 4 if b < 0xF8 else 5 if b < 0xFC else 6
        return p if b >= 0xC0 and n > len(data) - p else None
    return None


def cesu8_three_bugs(data: bytes) -> str:
    """The text shape of a CESU-8 decoder (replacing by maximal subparts) with three
    bugs: (1) where the input ends inside a sequence, it writes a "0" before the
    U+FFFD of the error that holds that sequence's lead (a flush that emits its
    pending count); (2) C0 80 decodes to U+0000, as modified UTF-8 does; (3) a low
    surrogate (ED B0..BF 80..BF) that no high one leads passes through as that
    surrogate (it pairs each high surrogate with the low one after it, or rejects
    it; a low one it meets alone it never checks)."""
    kept = {m.start(): m for m in _PAIR_LONE_NUL.finditer(data)
            if m.group(1) is not None or m.group(2) is not None}
    cut = _cut_short(data)
    out: list[str] = []
    skip = 0
    for t in _CESU8.decode(data).tokens:
        if t.start < skip:
            continue
        m = kept.get(t.start)
        if m is not None:
            out.append("\x00" if m.group(2) else m.group(1).decode("utf-8", "surrogatepass"))
            skip = m.end()
            continue
        if cut is not None and t.start <= cut < t.end:
            out.append("0")
        out.append(chr(t.value) if t.kind == "char" and t.value is not None else "\ufffd")
    return "".join(out)


def drops_lone_continuations(data: bytes) -> str:
    """The text shape, CPython's errors="replace" but for one bug: a continuation
    byte no lead claims is dropped, not replaced (as an ignore handler would)."""
    out: list[str] = []
    i = 0
    while True:
        try:
            out.append(data[i:].decode("utf-8"))
            return "".join(out)
        except UnicodeDecodeError as e:
            out.append(data[i : i + e.start].decode("utf-8"))
            if not 0x80 <= data[i + e.start] <= 0xBF:
                out.append("\ufffd")
            i += e.end


_PER_BYTE = Reference("unicode", "per-byte")
# A maximal subpart of a 4-byte sequence (its lead, then at most two continuation
# bytes Table 3.1B allows there), followed by a lead of a 3-byte sequence.
_TRUNC4_THEN_LEAD3 = re.compile(rb"(?:\xf0(?:[\x90-\xbf][\x80-\xbf]?)?|[\xf1-\xf3](?:[\x80-\xbf]"
                                rb"[\x80-\xbf]?)?|\xf4(?:[\x80-\x8f][\x80-\xbf]?)?)"
                                rb"(?![\x80-\xbf])[\xe0-\xef]")


def per_byte_loses_lead3(data: bytes) -> str:
    """The text shape of a decoder that claims maximal subparts, with two bugs at
    one feature: (a) it cuts errors per byte (F0 90 41: two U+FFFD); (b) after a
    4-byte sequence cut short, the lead of a 3-byte sequence is lost (F0 E2 82 AC:
    U+FFFD for F0, nothing for E2, one U+FFFD for each stray continuation byte)."""
    out: list[str] = []
    pos = 0
    for m in _TRUNC4_THEN_LEAD3.finditer(data):
        out.append("".join(map(chr, _PER_BYTE.decode(data[pos : m.end() - 1]).view("replace"))))
        pos = m.end()
    out.append("".join(map(chr, _PER_BYTE.decode(data[pos:]).view("replace"))))
    return "".join(out)
