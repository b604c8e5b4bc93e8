"""Text decoders (``bytes -> str``, ``+text``) that do what three real npm libraries do
(scripts/triage_real/models.py checks each against its library on 20,000 random
inputs): their causes established by hand, built on the correct decoder of
:mod:`.spec`. In-process stand-ins for the libraries, so that a test of the
explanation model runs without Node."""

from __future__ import annotations

from tests.triage.planted.spec import Reader, decode, read


def cont(d: bytes, i: int, n: int) -> bool:
    """``d[i]`` is followed by n-1 continuation bytes (10xxxxxx)."""
    return i + n <= len(d) and all(b & 0xC0 == 0x80 for b in d[i + 1:i + n])


def value(d: bytes, i: int, n: int) -> int:
    """The value the bits of the n-byte sequence at ``i`` spell (RFC 2279 section 2)."""
    cp = d[i] & (0x7F >> n)
    for b in d[i + 1:i + n]:
        cp = cp << 6 | b & 0x3F
    return cp


def js(text: str) -> str:
    """``text`` as a JS string holds it: a high and a low surrogate one character."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def per_byte(reader: Reader) -> Reader:
    """``reader`` with each error one byte, the bytes after it read again."""
    def r(d: bytes, i: int) -> tuple[int, int | None]:
        end, cp = reader(d, i)
        return (end, cp) if cp is not None else (i + 1, None)
    return r


def surrogates(d: bytes, i: int) -> tuple[int, int | None]:
    """Table 3-7 without its surrogate check: ED A0..BF 80..BF read as its value."""
    if d[i] == 0xED and cont(d, i, 3) and d[i + 1] >= 0xA0:
        return i + 3, value(d, i, 3)
    return read(d, i)


def mutf8_reader(d: bytes, i: int) -> tuple[int, int | None]:
    """mutf-8's reading: 01..7F; a 2- or 3-byte lead and its continuation bytes,
    without a shortest-form check; anything else one byte in error."""
    b = d[i]
    if 0x01 <= b <= 0x7F:
        return i + 1, b
    if b & 0xE0 == 0xC0 and cont(d, i, 2):
        return i + 2, value(d, i, 2)
    if b & 0xF0 == 0xE0 and cont(d, i, 3):
        return i + 3, value(d, i, 3)
    return i + 1, None


def mutf8_stream_holds(data: bytes) -> bool:
    """mutf-8 1.2.4's fatal decoder in stream mode (``{stream: true}``): True where it
    takes ``data`` as the start of a stream, False where it throws. (3) A 2- or 3-byte
    lead the input ends before its length is held whatever bytes follow it (E0 41 is
    held; its continuation bytes are checked once the sequence is complete), so an
    error at the end surfaces late; before that, an error throws as in (1) and (2)."""
    i = 0
    while i < len(data):
        b = data[i]
        need = 2 if b & 0xE0 == 0xC0 else 3 if b & 0xF0 == 0xE0 else 1
        if len(data) - i < need:
            return True
        i, cp = mutf8_reader(data, i)
        if cp is None:
            return False
    return True


def fastest(data: bytes) -> str:
    """fastestsmallesttextencoderdecoder 1.0.22: (1) no surrogate check (two in a row
    the pair's character, in a JS string); (2) each error one U+FFFD for its lead,
    the bytes after it read again."""
    return js(decode(data, "replace", per_byte(surrogates)))


def mutf8(data: bytes) -> str:
    """mutf-8 1.2.4's text, where it claims modified UTF-8: (1) no shortest-form check
    (C0 81..BF, C1 xx, E0 80..9F xx decode); (2) errors per byte."""
    return js(decode(data, "replace", mutf8_reader))


def latin1(data: bytes) -> str:
    """@polkadot/x-textdecoder 14.0.3's fallback: each byte the character of its value."""
    return data.decode("latin-1")
