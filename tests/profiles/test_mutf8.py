"""The mutf8 profile (JVM Specification 4.4.7)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8fuzz import decode, encode

P = "mutf8"


def toks(h: str) -> list[list]:
    return [t.as_list() for t in decode(bytes.fromhex(h), P).tokens]


def test_null_is_c0_80_and_byte_00_is_ill_formed():
    assert toks("C0 80") == [["char", 0, 0, 2]]
    assert encode([0], P) == bytes.fromhex("C0 80")
    assert decode(b"\x00", P).error_spans == [(0, 1)]


def test_other_overlongs_stay_ill_formed():
    assert decode(bytes.fromhex("C1 BF"), P).valid is False
    assert decode(bytes.fromhex("E0 80 80"), P).valid is False


def test_supplementary_as_pair_and_lone_surrogates_allowed():
    assert toks("ED A0 BD ED B8 80") == [["char", 0x1F600, 0, 6]]
    assert toks("ED A0 BD 41") == [["char", 0xD83D, 0, 3], ["char", 0x41, 3, 4]]
    assert encode([0xDC00], P) == bytes.fromhex("ED B0 80")


@pytest.mark.parametrize("h", ["F0 9F 98 80", "F8 88 80 80 80", "FE", "FF"])
def test_four_byte_forms_and_high_bytes_are_ill_formed(h):
    assert decode(bytes.fromhex(h), P).valid is False


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF,
                                      blacklist_categories=("Cs",))))
def test_encoder_agrees_with_the_mutf8_package(s):
    mutf8 = pytest.importorskip("mutf8", reason="PyPI mutf8 not installed")
    cps = [ord(c) for c in s]
    assert encode(cps, P) == mutf8.encode_modified_utf8(s)
    assert [t.value for t in decode(encode(cps, P), P).tokens] == cps
