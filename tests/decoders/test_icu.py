"""ICU's C converter API (system libicuuc and icu4py's bundled copy)."""

from __future__ import annotations

import pytest
from decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE, EXAMPLE_SPANS
from hypothesis import given, settings
from hypothesis import strategies as st

from utf8fuzz.decoders import icu
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference

FOUND = [d for d in icu.discover() if isinstance(d, Decoder)]
pytestmark = pytest.mark.skipif(
    not FOUND, reason="; ".join(u.reason for u in icu.discover() if not isinstance(u, Decoder))
)
UTF8 = [d for d in FOUND if d.profile == "unicode"]
CESU = [d for d in FOUND if d.profile == "cesu8"]
ids = lambda d: d.name  # noqa: E731


def test_versions_are_recorded():
    for d in FOUND:
        v = d.versions()
        assert v["icu"].split(".")[0].isdigit() and v["unicode"].count(".") >= 1
        assert v["library"].startswith("libicuuc")
        assert d.decode(b"a").provenance["icu"] == v["icu"]


@pytest.mark.parametrize("dec", FOUND, ids=ids)
def test_unicode_example_maximal_subparts(dec):
    out = dec.decode(EXAMPLE)
    assert out.ok, out.detail
    assert out.view("replace") == EXAMPLE_REPLACE
    assert out.view("spans") == EXAMPLE_SPANS


@pytest.mark.parametrize("hexin", BOUNDARY.values(), ids=BOUNDARY.keys())
@pytest.mark.parametrize("dec", UTF8, ids=ids)
def test_utf8_converter_matches_the_reference_on_boundary_inputs(dec, hexin):
    data = bytes.fromhex(hexin)
    out = dec.decode(data)
    assert out.ok, out.detail
    assert out.tokens == reference("unicode").decode(data).tokens


def test_truncation_reason_comes_from_u_truncated_char_found():
    out = UTF8[0].decode(bytes.fromhex("41 F0 9F 98"))
    assert [(t.start, t.end, t.reason) for t in out.tokens[1:]] == [(1, 4, "truncated")]
    out = UTF8[0].decode(bytes.fromhex("41 F0 9F 98 42"))
    assert [(t.start, t.end, t.reason) for t in out.tokens[1:2]] == [(1, 4, "illegal")]


@pytest.mark.skipif(not CESU, reason="no ICU CESU-8 converter")
@pytest.mark.parametrize("dec", CESU, ids=ids)
def test_cesu8_converter_pairs_and_its_documented_differences(dec):
    ref = reference("cesu8")
    pair = bytes.fromhex("41 ED A0 BD ED B8 80")
    assert dec.decode(pair).tokens == ref.decode(pair).tokens  # U+1F600 as a pair
    # ICU's CESU-8 converter lets a lone surrogate through (UTR #26 does not):
    lone = bytes.fromhex("ED A0 80")
    assert [t.as_list() for t in dec.decode(lone).tokens] == [["char", 0xD800, 0, 3]]
    assert ref.decode(lone).valid is False
    # ...and cuts a four-byte UTF-8 form as one error, where maximal subparts are four.
    four = bytes.fromhex("F0 9F 98 80")
    assert dec.decode(four).view("spans") == ((0, 4),)
    assert ref.decode(four).view("spans") == ((0, 1), (1, 2), (2, 3), (3, 4))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=32))
def test_utf8_converters_agree_with_the_reference_on_random_bytes(data):
    ref = reference("unicode").decode(data)
    for dec in UTF8:
        out = dec.decode(data)
        assert out.ok, out.detail
        assert out.tokens == ref.tokens, dec.name


def test_long_input_and_empty_input():
    data = ("é€😀" * 2000).encode() + b"\xff"
    out = UTF8[0].decode(data)
    assert out.view("spans") == ((len(data) - 1, len(data)),)
    assert UTF8[0].decode(b"").view("tokens") == ()


@pytest.mark.parametrize(
    "hexin", ["ED A0 BF BF ED B0 80", "ED A0 BD 41 ED B8 80", "ED A0 BD ED B8 80"])
def test_cesu8_surrogates_are_not_paired_across_an_error(hexin):
    # ICU's CESU-8 converter passes a lone surrogate through. The adapter skips
    # errors, so the UTF-16 it reads has no U+FFFD between two lone surrogates;
    # they must still not be paired. PyICU's replace mode, a second surface of
    # the same ICU, is the witness.
    icu_py = pytest.importorskip("icu")
    data = bytes.fromhex(hexin)
    witness = [ord(c) for c in str(icu_py.UnicodeString(data, "CESU-8", "replace"))]
    for dec in [d for d in FOUND if d.name.endswith("cesu8")]:
        out = dec.decode(data)
        assert out.ok, out.detail
        if dec.versions()["icu"].split(".")[0] == icu_py.ICU_VERSION.split(".")[0]:
            assert out.codepoints() == witness
        else:  # the bundled ICU: not the one PyICU links, so only the shape
            assert len(out.codepoints()) == len(witness)
