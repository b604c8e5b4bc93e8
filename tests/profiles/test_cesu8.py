"""The cesu8 profile (Unicode Technical Report #26)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8fuzz import decode, encode

P = "cesu8"


def toks(h: str) -> list[list]:
    return [t.as_list() for t in decode(bytes.fromhex(h), P).tokens]


def test_supplementary_character_is_a_six_byte_pair():
    # U+1F600 = D83D DE00 in UTF-16 (Unicode 3.9 D91) -> ED A0 BD ED B8 80
    assert toks("ED A0 BD ED B8 80") == [["char", 0x1F600, 0, 6]]
    assert encode([0x1F600], P) == bytes.fromhex("ED A0 BD ED B8 80")
    assert encode([0x10000, 0x10FFFF], P).hex(" ") == "ed a0 80 ed b0 80 ed af bf ed bf bf"


def test_four_byte_utf8_is_not_cesu8():
    assert decode(bytes.fromhex("F0 9F 98 80"), P).error_spans == [(0, 1), (1, 2), (2, 3), (3, 4)]


@pytest.mark.parametrize("h", ["ED A0 80", "ED B0 80", "ED B0 80 ED A0 80", "ED A0 80 41"])
def test_unpaired_or_reversed_surrogates_are_ill_formed(h):
    assert decode(bytes.fromhex(h), P).valid is False


def test_truncated_pair_is_one_truncated_error():
    out = decode(bytes.fromhex("ED A0 BD ED B8"), P)
    assert [(t.start, t.end, t.reason) for t in out.tokens] == [(0, 5, "truncated")]


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF,
                                      blacklist_categories=("Cs",))))
def test_round_trip_and_bmp_agrees_with_utf8(s):
    cps = [ord(c) for c in s]
    data = encode(cps, P)
    assert [t.value for t in decode(data, P).tokens] == cps
    if all(c < 0x10000 for c in cps):
        assert data == s.encode("utf-8")
    # the UTF-16 code units, each encoded alone, are the CESU-8 bytes
    units = s.encode("utf-16-be")
    cus = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    assert data == "".join(chr(u) for u in cus).encode("utf-8", "surrogatepass")
