"""The six-byte surrogate-pair row shared by CESU-8 and Java's modified UTF-8.

Both encode a supplementary character by "separately encoding the two surrogate
code units of [its] UTF-16 representation" (JVM Specification, section 4.4.7;
Unicode Technical Report #26, section 2): ``ED A0..AF 80..BF`` (a high
surrogate, D800..DBFF) then ``ED B0..BF 80..BF`` (a low one, DC00..DFFF). The
row's value is the supplementary code point the pair stands for (UTF-16, Unicode
section 3.9, D91), not the two surrogates.
"""

from __future__ import annotations

from utf8fuzz.profiles.table import Row, bits_encode, bits_value, parse_range


def pair_value(seq: bytes) -> int:
    hi, lo = bits_value(seq[:3]), bits_value(seq[3:])
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)


def pair_encode(cp: int) -> bytes | None:
    if not 0x10000 <= cp <= 0x10FFFF:
        return None
    v = cp - 0x10000
    hi, lo = 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)
    first, second = bits_encode(hi, 3), bits_encode(lo, 3)
    assert first is not None and second is not None  # a 16-bit value fits the 3-byte form
    return first + second


def pair_row(clause: str) -> Row:
    ranges = tuple(parse_range(c) for c in ("ED", "A0..AF", "80..BF", "ED", "B0..BF", "80..BF"))
    return Row(ranges, clause=clause, value_fn=pair_value, encode_fn=pair_encode)
