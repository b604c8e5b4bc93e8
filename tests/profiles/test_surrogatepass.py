"""The surrogatepass profile: Unicode plus lone encoded surrogates."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8fuzz import decode, encode
from utf8fuzz.profiles import get_profile

P = "surrogatepass"


def chars(h: str) -> list[int]:
    return [t.value for t in decode(bytes.fromhex(h), P).tokens if t.kind == "char"]


def test_encoded_surrogates_are_code_points_one_at_a_time():
    assert chars("ED A0 80") == [0xD800]
    assert chars("ED BF BF") == [0xDFFF]
    # a pair stays two code points: combining them would be CESU-8
    assert chars("ED A0 80 ED B0 80") == [0xD800, 0xDC00]


@pytest.mark.parametrize("h", ["C0 80", "E0 80 80", "F4 90 80 80", "F8 88 80 80 80", "FE", "80"])
def test_what_unicode_refuses_it_refuses_too(h):
    assert decode(bytes.fromhex(h), P).valid is False


def test_it_differs_from_unicode_only_on_the_surrogate_row():
    uni, sp = get_profile("unicode"), get_profile(P)
    uni_rows = {r.describe() for r in uni.rows}
    assert [r.describe() for r in sp.rows if r.describe() not in uni_rows] == ["ED A0..BF 80..BF"]


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_cpython_surrogatepass_encoder_agrees(s):
    # CPython's encoder is a real implementation of what this profile claims.
    data = s.encode("utf-8", "surrogatepass")
    assert encode([ord(c) for c in s], P) == data
    assert [t.value for t in decode(data, P).tokens] == [ord(c) for c in s]
