"""Codecs ``f(data, errors) -> str`` with ONE planted bug each, in spec terms (the
docstring), built on the correct decoder of :mod:`.spec`. Each deviates from it in
one place: how a sequence is read (acceptance, rejection, error cutting), how an
error is rendered (spans, replacement), or where (position-dependent)."""

from __future__ import annotations

from tests.triage.planted import spec
from tests.triage.planted.spec import decode, read, render


def correct(data: bytes, errors: str = "strict") -> str:
    """No bug: Unicode's UTF-8 with maximal subparts."""
    return decode(data, errors)


# -- acceptance: an ill-formed sequence decoded as a character ---------------------------

def _value(data: bytes, i: int, n: int) -> tuple[int, int | None]:
    """The ``n``-byte sequence at ``i`` read without value checks, if its bytes are
    there and are continuation bytes; else None for the caller to fall back."""
    seq = data[i:i + n]
    if len(seq) < n or any(b & 0xC0 != 0x80 for b in seq[1:]):
        return i, None
    cp = seq[0] & (0x7F >> n)
    for b in seq[1:]:
        cp = cp << 6 | b & 0x3F
    return i + n, cp


def accepts_overlong2(data: bytes, errors: str = "strict") -> str:
    """Accepts the 2-byte overlongs: C0..C1 followed by 80..BF decodes to U+0000..U+007F
    (Table 3-7 has no C0 or C1 lead)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] in (0xC0, 0xC1) and (got := _value(d, i, 2))[1] is not None:
            return got
        return read(d, i)
    return decode(data, errors, reader)


def accepts_overlong3(data: bytes, errors: str = "strict") -> str:
    """Accepts the 3-byte overlongs: E0 followed by 80..9F then 80..BF decodes to
    U+0000..U+07FF (Table 3-7: after E0 the second byte is A0..BF)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xE0 and i + 1 < len(d) and 0x80 <= d[i + 1] <= 0x9F \
                and (got := _value(d, i, 3))[1] is not None:
            return got
        return read(d, i)
    return decode(data, errors, reader)


def accepts_overlong4(data: bytes, errors: str = "strict") -> str:
    """Accepts the 4-byte overlongs: F0 followed by 80..8F then two of 80..BF decodes
    to U+0000..U+FFFF (Table 3-7: after F0 the second byte is 90..BF)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xF0 and i + 1 < len(d) and 0x80 <= d[i + 1] <= 0x8F \
                and (got := _value(d, i, 4))[1] is not None:
            return got
        return read(d, i)
    return decode(data, errors, reader)


def accepts_surrogates(data: bytes, errors: str = "strict") -> str:
    """Accepts encoded surrogates: ED followed by A0..BF then 80..BF decodes to
    U+D800..U+DFFF (Table 3-7: after ED the second byte is 80..9F)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xED and i + 1 < len(d) and 0xA0 <= d[i + 1] <= 0xBF \
                and (got := _value(d, i, 3))[1] is not None:
            return got
        return read(d, i)
    return decode(data, errors, reader)


def accepts_above_10ffff(data: bytes, errors: str = "strict") -> str:
    """Accepts 4-byte sequences above U+10FFFF (F4 90..BF, and leads F5..F7, each with
    three continuation bytes) as one character, which it writes as U+FFFD without
    reporting an error (Table 3-7 ends at F4 80..8F)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        above = d[i] in (0xF5, 0xF6, 0xF7) or (d[i] == 0xF4 and i + 1 < len(d) and d[i + 1] >= 0x90)
        if above and (got := _value(d, i, 4))[1] is not None:
            return got[0], 0xFFFD
        return read(d, i)
    return decode(data, errors, reader)


def accepts_continuation_as_latin1(data: bytes, errors: str = "strict") -> str:
    """Decodes a stray continuation byte 80..BF as the Latin-1 character of the same
    value, U+0080..U+00BF (a continuation byte begins no well-formed sequence)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if 0x80 <= d[i] <= 0xBF:
            return i + 1, d[i]
        return read(d, i)
    return decode(data, errors, reader)


def accepts_cesu8_pairs(data: bytes, errors: str = "strict") -> str:
    """Decodes a CESU-8 surrogate pair (ED A0..AF xx, then ED B0..BF xx) to the one
    supplementary character it encodes; lone surrogates stay errors (both halves
    are ill-formed in UTF-8)."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xED and i + 6 <= len(d) and 0xA0 <= d[i + 1] <= 0xAF \
                and d[i + 3] == 0xED and 0xB0 <= d[i + 4] <= 0xBF:
            hi, lo = _value(d, i, 3), _value(d, i + 3, 3)
            if hi[1] is not None and lo[1] is not None:
                return i + 6, 0x10000 + ((hi[1] - 0xD800) << 10) + (lo[1] - 0xDC00)
        return read(d, i)
    return decode(data, errors, reader)


# -- rejection: a well-formed sequence taken for an error ---------------------------------

def _rejecting(data: bytes, errors: str, bad: frozenset[int] | range) -> str:
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        end, cp = read(d, i)
        return (end, None) if cp in bad else (end, cp)
    return decode(data, errors, reader)


def rejects_fffe_ffff(data: bytes, errors: str = "strict") -> str:
    """Rejects U+FFFE and U+FFFF (EF BF BE, EF BF BF), each one error: they are
    noncharacters, but well-formed (Unicode section 23.7: not ill-formed)."""
    return _rejecting(data, errors, frozenset({0xFFFE, 0xFFFF}))


def rejects_noncharacters(data: bytes, errors: str = "strict") -> str:
    """Rejects every noncharacter (U+FDD0..U+FDEF and the last two code points of
    each plane), each sequence one error: they are well-formed scalar values."""
    nonchars = frozenset([*range(0xFDD0, 0xFDF0),
                          *(p << 16 | low for p in range(17) for low in (0xFFFE, 0xFFFF))])
    return _rejecting(data, errors, nonchars)


def rejects_f090(data: bytes, errors: str = "strict") -> str:
    """Rejects the 4-byte sequences whose second byte is 90 after F0 (U+10000..U+10FFF):
    an off-by-one range check; the lead F0 is then a one-byte error and the rest stray
    continuation bytes, as for any F0 followed by a byte outside 90..BF."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if d[i] == 0xF0 and i + 1 < len(d) and d[i + 1] == 0x90:
            return i + 1, None
        return read(d, i)
    return decode(data, errors, reader)


def rejects_fffd(data: bytes, errors: str = "strict") -> str:
    """Rejects a genuine U+FFFD in the input (EF BF BD) as one error, taking it for a
    replacement made upstream; it is a well-formed character."""
    return _rejecting(data, errors, frozenset({0xFFFD}))


def rejects_nul(data: bytes, errors: str = "strict") -> str:
    """Rejects the byte 00 (U+0000) as an error, as a C-string decoder would; it is a
    well-formed one-byte sequence."""
    return _rejecting(data, errors, frozenset({0}))


# -- error spans: where an error begins and ends -------------------------------------------

def cuts_per_byte(data: bytes, errors: str = "strict") -> str:
    """Cuts errors per byte (one error per ill-formed byte, as Go counts) while
    maximal subparts are claimed."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        end, cp = read(d, i)
        return (end, cp) if cp is not None else (i + 1, None)
    return decode(data, errors, reader)


def cuts_per_sequence(data: bytes, errors: str = "strict") -> str:
    """Cuts errors per sequence (RFC 2279: a lead byte and as many continuation bytes
    as its high bits announce are one error; a continuation byte, FE or FF alone)
    while maximal subparts are claimed."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        end, cp = read(d, i)
        if cp is not None:
            return end, cp
        ones = 8 - (~d[i] & 0xFF).bit_length()  # RFC 2279: 2..6 announced; FE, FF none
        n = ones if 2 <= ones <= 6 else 1
        j = i + 1
        while j < min(len(d), i + n) and d[j] & 0xC0 == 0x80:
            j += 1
        return j, None
    return decode(data, errors, reader)


def strict_end_off_by_one(data: bytes, errors: str = "strict") -> str:
    """In strict mode, reports each error's end one byte too far (its maximal subpart
    and the byte after it, at most to the input's end); every other mode is right."""
    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return render(d, start, min(end + 1, len(d)) if mode == "strict" else end, mode)
    return decode(data, errors, renderer=renderer)


# -- replacement: what replace mode writes for an error ----------------------------------

def two_fffd_per_error(data: bytes, errors: str = "strict") -> str:
    """In replace mode, writes two U+FFFD for each maximal subpart (one is right)."""
    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return "\ufffd\ufffd" if mode == "replace" else render(d, start, end, mode)
    return decode(data, errors, renderer=renderer)


def replace_drops_errors(data: bytes, errors: str = "strict") -> str:
    """In replace mode, writes nothing for an error (it drops, as ignore does; one
    U+FFFD per maximal subpart is right)."""
    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return "" if mode == "replace" else render(d, start, end, mode)
    return decode(data, errors, renderer=renderer)


def replace_with_question_mark(data: bytes, errors: str = "strict") -> str:
    """In replace mode, writes "?" (U+003F) for each error instead of U+FFFD."""
    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        return "?" if mode == "replace" else render(d, start, end, mode)
    return decode(data, errors, renderer=renderer)


# -- position-dependent ---------------------------------------------------------------------

def surrogates_from_offset_16(data: bytes, errors: str = "strict") -> str:
    """Accepts an encoded surrogate (ED A0..BF 80..BF) only where it starts at offset 16
    or later: a fast path for the blocks after the first that skips the ED check."""
    def reader(d: bytes, i: int) -> tuple[int, int | None]:
        if i >= 16 and d[i] == 0xED and i + 1 < len(d) and 0xA0 <= d[i + 1] <= 0xBF \
                and (got := _value(d, i, 3))[1] is not None:
            return got
        return read(d, i)
    return decode(data, errors, reader)


def drops_lead_at_last_byte(data: bytes, errors: str = "strict") -> str:
    """A lead byte C2..F4 that is the input's last byte is dropped without an error
    (a loop that stops one byte early); it is a truncated sequence, one error."""
    def renderer(d: bytes, start: int, end: int, mode: str) -> str:
        if start == len(d) - 1 and spec.truncated(d, start, end):
            return ""
        return render(d, start, end, mode)
    return decode(data, errors, renderer=renderer)
