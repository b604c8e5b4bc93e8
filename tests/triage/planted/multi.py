"""Codecs ``f(data, errors) -> str`` with two (or three) independent planted bugs, each
named in the docstring as in :mod:`.single`; a triage that is right reports one
finding per bug."""

from __future__ import annotations

from tests.triage.planted import spec
from tests.triage.planted.single import _value
from tests.triage.planted.spec import decode, read, render


def _overlong2(d: bytes, i: int) -> tuple[int, int | None] | None:
    if d[i] in (0xC0, 0xC1) and (got := _value(d, i, 2))[1] is not None:
        return got
    return None


def _surrogate(d: bytes, i: int) -> tuple[int, int | None] | None:
    if d[i] == 0xED and i + 1 < len(d) and 0xA0 <= d[i + 1] <= 0xBF \
            and (got := _value(d, i, 3))[1] is not None:
        return got
    return None


def overlong2_and_per_byte(data: bytes, errors: str = "strict") -> str:
    """(1) Accepts the 2-byte overlongs C0..C1 80..BF; (2) cuts errors per byte while
    maximal subparts are claimed."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if got := _overlong2(d, i):
            return got
        end, cp = read(d, i)
        return (end, cp) if cp is not None else (i + 1, None)
    return decode(data, errors, reader)


def surrogates_and_two_fffd(data: bytes, errors: str = "strict") -> str:
    """(1) Accepts encoded surrogates ED A0..BF 80..BF; (2) in replace mode writes two
    U+FFFD per maximal subpart."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        return _surrogate(d, i) or read(d, i)

    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return "\ufffd\ufffd" if mode == "replace" else render(d, start, end, mode)
    return decode(data, errors, reader, renderer)


def fffe_ffff_and_strict_end(data: bytes, errors: str = "strict") -> str:
    """(1) Rejects U+FFFE and U+FFFF (EF BF BE/BF), each one error; (2) in strict mode
    reports each error's end one byte too far (at most to the input's end)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        end, cp = read(d, i)
        return (end, None) if cp in (0xFFFE, 0xFFFF) else (end, cp)

    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return render(d, start, min(end + 1, len(d)) if mode == "strict" else end, mode)
    return decode(data, errors, reader, renderer)


def overlong3_and_last_byte(data: bytes, errors: str = "strict") -> str:
    """(1) Accepts the 3-byte overlongs E0 80..9F 80..BF; (2) drops without an error a
    lead byte C2..F4 that is the input's last byte."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xE0 and i + 1 < len(d) and 0x80 <= d[i + 1] <= 0x9F \
                and (got := _value(d, i, 3))[1] is not None:
            return got
        return read(d, i)

    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        if start == len(d) - 1 and spec.truncated(d, start, end):
            return ""
        return render(d, start, end, mode)
    return decode(data, errors, reader, renderer)


def cesu8_like_trio(data: bytes, errors: str = "strict") -> str:
    """Three bugs, as a CESU-8 decoder used for UTF-8 has them: (1) a sequence cut short
    by the input's end (a lead C0..F4 and fewer continuation bytes than its high bits
    announce) gives "0" and U+FFFD, in every mode, without an error; (2) C0 80 decodes
    to U+0000; (3) an encoded surrogate ED A0..BF 80..BF, paired or not, decodes to
    U+D800..U+DFFF."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xC0 and d[i + 1:i + 2] == b"\x80":
            return i + 2, 0
        return _surrogate(d, i) or read(d, i)

    tail = len(data)
    while tail > 0 and len(data) - tail < 3 and data[tail - 1] & 0xC0 == 0x80:
        tail -= 1
    lead = tail - 1
    if lead >= 0 and 0xC0 <= data[lead] <= 0xF4 \
            and len(data) - lead < 8 - (~data[lead] & 0xFF).bit_length():
        return decode(data[:lead], errors, reader) + "0\ufffd"
    return decode(data, errors, reader)


def overlong2_and_strict_end(data: bytes, errors: str = "strict") -> str:
    """(1) Accepts the 2-byte overlongs C0..C1 80..BF; (2) in strict mode reports each
    error's end one byte too far (at most to the input's end)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        return _overlong2(d, i) or read(d, i)

    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return render(d, start, min(end + 1, len(d)) if mode == "strict" else end, mode)
    return decode(data, errors, reader, renderer)
