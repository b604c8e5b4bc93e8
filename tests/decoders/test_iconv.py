"""glibc iconv from UTF-8, to four targets whose behaviour differs."""

from __future__ import annotations

import pytest
from decoder_inputs import BOUNDARY, EXAMPLE

from utf8fuzz.decoders import iconv
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference

FOUND = {d.name: d for d in iconv.discover() if isinstance(d, Decoder)}
pytestmark = pytest.mark.skipif(
    len(FOUND) < 4 or not iconv.libc_version().startswith("glibc"),
    reason="glibc iconv with UTF-32LE, UCS-4LE, WCHAR_T and UTF-8 is needed",
)
REF = reference("unicode")
VALID = ["bom", "max-scalar", "noncharacter", "valid-mix", "empty", "overlong-nul"]


def test_version_is_recorded():
    for d in FOUND.values():
        assert d.decode(b"a").provenance["libc"].startswith("glibc 2.")


@pytest.mark.parametrize("name", sorted(FOUND))
def test_unicode_example_first_error(name):
    out = FOUND[name].decode(EXAMPLE)
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "illegal")
    assert out.shows == {"strict", "reason"}


def test_raw_position_and_searched_end():
    # iconv reports only where it stopped (1, EILSEQ); the end, 4, is searched:
    # F1 80 80 is the longest piece iconv itself calls incomplete (EINVAL).
    d = FOUND["iconv:utf32le"]
    assert d.convert(EXAMPLE)[:2] == (1, "EILSEQ")
    assert [d.convert(EXAMPLE[1:1 + t])[1] for t in (1, 2, 3, 4)] == [
        "EINVAL", "EINVAL", "EINVAL", "EILSEQ"]
    d.decode(EXAMPLE)
    assert d.last_raw == (1, "EILSEQ")


@pytest.mark.parametrize("name", sorted(FOUND))
@pytest.mark.parametrize("key", VALID)
def test_valid_input_matches_the_reference(name, key):
    data = bytes.fromhex(BOUNDARY[key])
    out, ref = FOUND[name].decode(data), REF.decode(data)
    if key == "overlong-nul":
        assert out.view("strict") == ref.view("strict") == (1, 2)
    else:
        assert out.view("strict") is None and out.view("replace") == ref.view("replace")


@pytest.mark.parametrize("name", sorted(FOUND))
def test_truncation_is_einval_to_the_end(name):
    out = FOUND[name].decode(bytes.fromhex(BOUNDARY["truncated-4"]))
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "truncated")


def test_utf32_refuses_what_the_internal_31_bit_form_accepts():
    # glibc's UCS-4 / WCHAR_T / UTF-8 paths read values above U+10FFFF and 5- and
    # 6-byte forms (RFC 2279's range); only UTF-32 applies Unicode's limit.
    for key, value in (("above-10ffff", 0x110000), ("five-byte", 0x200000),
                       ("six-byte", 0x4000000)):
        data = bytes.fromhex(BOUNDARY[key])
        assert FOUND["iconv:utf32le"].decode(data).view("strict")[0] == 0
        for name in ("iconv:ucs4", "iconv:wchar_t", "iconv:utf8"):
            assert FOUND[name].decode(data).view("replace") == (value,), (name, key)


def test_glibc_calls_an_impossible_prefix_incomplete():
    # E0 80 and ED A0 can never be completed (Corrigendum #1 Table 3.1B), but glibc
    # reports EINVAL for them at the end of the input: reason truncated where the
    # reference says illegal - a real difference the reason view shows.
    d = FOUND["iconv:utf32le"]
    for h in ("E0 80", "ED A0"):
        out = d.decode(bytes.fromhex(h))
        assert (out.view("strict"), out.view("reason")) == ((0, 2), "truncated")
        assert REF.decode(bytes.fromhex(h)).view("reason") == "illegal"


@pytest.mark.parametrize("key", ["surrogate-high", "overlong-2", "fe", "ff", "lone-continuation"])
def test_ill_formed_inputs_start_where_the_reference_says(key):
    data = bytes.fromhex(BOUNDARY[key])
    ref = REF.decode(data).view("strict")
    for d in FOUND.values():
        out = d.decode(data)
        assert out.view("strict")[0] == ref[0] and out.view("reason") == "illegal"
