"""Tokens from a library's text and recorded error spans, checked against the input."""

from __future__ import annotations

import pytest

from utf8fuzz.decoders._tiling import TilingError, tile, utf16_codepoints


def test_chars_and_errors_tile_the_input():
    data = bytes.fromhex("61 C3 A9 80 F0 9F 98 80")
    toks = tile(data, [0x61, 0xE9, 0x1F600], [(3, 4, "illegal")])
    assert [t.as_list() for t in toks] == [
        ["char", 0x61, 0, 1], ["char", 0xE9, 1, 3], ["error", None, 3, 4],
        ["char", 0x1F600, 4, 8],
    ]


@pytest.mark.parametrize("cps,errors,match", [
    ([0x61, 0x62], [], "left after"),                   # invented a character
    ([], [], "not reported"),                           # dropped one
    ([0x62], [], "does not encode"),                    # changed one
    ([0x61], [(0, 1, "illegal")], "overlaps|left after"),
    ([0xE9], [(1, 2, "illegal")], "spans the error"),   # a char across an error
])
def test_a_library_that_does_not_account_for_its_input_is_caught(cps, errors, match):
    data = b"a" if cps != [0xE9] else bytes.fromhex("C3 A9")
    with pytest.raises(TilingError, match=match):
        tile(data, cps, errors)


def test_offset_skips_a_prefix_the_library_consumed():
    toks = tile(b"\xef\xbb\xbfa", [0x61], [], offset=3)
    assert [t.as_list() for t in toks] == [["char", 0x61, 3, 4]]


def test_utf16_pairs_combine_and_lone_surrogates_stay():
    assert utf16_codepoints("😀".encode("utf-16-le")) == [0x1F600]
    assert utf16_codepoints(b"\x00\xd8") == [0xD800]
