"""The unicode profile against Corrigendum #1, Table 3.1B, row by row.

Each case below is read off the table: a row's code point range, its first and
last legal sequence, and the bytes just outside its underlined ranges.
"""

import pytest

import utf8fuzz

# (first bytes, first code point, last bytes, last code point) per row of Table 3.1B
TABLE_3_1B = [
    ("00", 0x0000, "7F", 0x007F),
    ("C2 80", 0x0080, "DF BF", 0x07FF),
    ("E0 A0 80", 0x0800, "E0 BF BF", 0x0FFF),
    ("E1 80 80", 0x1000, "EF BF BF", 0xFFFF),
    ("F0 90 80 80", 0x10000, "F0 BF BF BF", 0x3FFFF),
    ("F1 80 80 80", 0x40000, "F3 BF BF BF", 0xFFFFF),
    ("F4 80 80 80", 0x100000, "F4 8F BF BF", 0x10FFFF),
]


@pytest.mark.parametrize(("first", "cp_first", "last", "cp_last"), TABLE_3_1B)
def test_each_row_at_both_ends(first: str, cp_first: int, last: str, cp_last: int) -> None:
    for hexs, cp in ((first, cp_first), (last, cp_last)):
        out = utf8fuzz.decode(bytes.fromhex(hexs))
        assert out.codepoints() == [cp]
        assert out.first_error is None
        assert utf8fuzz.encode([cp]) == bytes.fromhex(hexs)


# Just outside an underlined range: the Corrigendum's own examples and their kin.
ILLEGAL = [
    "C0 AF",  # "the byte sequence <C0, AF> is illegal since C0 is not legal in the 1st Byte column"
    "C1 BF",
    "E0 9F 80",  # "<E0, 9F, 80> is illegal since ... 9F is not legal as a second byte"
    "F0 8F BF BF",
    "F4 90 80 80",  # above U+10FFFF
    "F5 80 80 80",
    "ED A0 80",  # U+D800: surrogates are excluded (ISO/IEC 10646 per Corrigendum #1, C.3)
    "ED BF BF",
    "F8 88 80 80 80",  # 5- and 6-byte forms are illegal for Unicode
    "FC 84 80 80 80 80",
    "FE",
    "FF",
    "80",
]


@pytest.mark.parametrize("hexs", ILLEGAL)
def test_illegal_sequences(hexs: str) -> None:
    out = utf8fuzz.decode(bytes.fromhex(hexs))
    assert out.first_error is not None
    assert all(t.kind == "error" for t in out.tokens)


def test_corrigendum_legal_example() -> None:
    # "The byte sequence <F4, 80, 83, 92> is legal"
    assert utf8fuzz.decode(bytes.fromhex("F4 80 83 92")).codepoints() == [0x1000D2]


def test_surrogate_edges_and_noncharacters() -> None:
    assert utf8fuzz.decode(bytes.fromhex("ED 9F BF")).codepoints() == [0xD7FF]
    assert utf8fuzz.decode(bytes.fromhex("EE 80 80")).codepoints() == [0xE000]
    # noncharacters are scalar values and well-formed
    assert utf8fuzz.decode(bytes.fromhex("EF BF BE")).codepoints() == [0xFFFE]
    assert utf8fuzz.decode(bytes.fromhex("EF B7 90")).codepoints() == [0xFDD0]


def test_rfc2279_examples_are_unicode_too() -> None:
    # RFC 2279 section 4 examples, all within Unicode
    assert utf8fuzz.decode(bytes.fromhex("41 E2 89 A2 CE 91 2E")).codepoints() == [
        0x41, 0x2262, 0x391, 0x2E]
    assert utf8fuzz.decode(bytes.fromhex("ED 95 9C EA B5 AD EC 96 B4")).codepoints() == [
        0xD55C, 0xAD6D, 0xC5B4]
    assert utf8fuzz.decode(bytes.fromhex("E6 97 A5 E6 9C AC E8 AA 9E")).codepoints() == [
        0x65E5, 0x672C, 0x8A9E]


@pytest.mark.parametrize("cp", [0xD800, 0xDFFF, 0x110000, -1])
def test_encoder_refuses_non_scalar_values(cp: int) -> None:
    with pytest.raises(utf8fuzz.EncodeError, match=f"U\\+{cp:04X}" if cp >= 0 else "U\\+"):
        utf8fuzz.encode([0x41, cp])
