"""Tokens from a library's text and recorded error spans, checked against the input."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utf8fuzz.decoders._tiling import TilingError, tile, tile_text, tile_text_py, utf16_codepoints


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


_RAW: list = []


def _record(exc):
    _RAW.append((exc.start, exc.end,
                 "truncated" if exc.reason == "unexpected end of data" else "illegal"))
    return "", exc.end


codecs.register_error("test.tile_text.record", _record)


def _tiled(fn, *args, **kw):
    try:
        return [[*t.as_list(), t.reason] for t in fn(*args, **kw)]
    except TilingError as e:
        return str(e)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=24), st.integers(0, 3), st.integers(0, 5), st.data())
def test_tile_text_gives_what_tile_gives(data, offset, how, draw):
    """The run-at-a-time tilings (C and Python): the same tokens, or the same TilingError, as the
    character-at-a-time one; on CPython's own output and on a corrupted one."""
    offset = min(offset, len(data))
    _RAW.clear()
    text = data[offset:].decode("utf-8", "test.tile_text.record")
    events = [(a + offset, b + offset, r) for a, b, r in _RAW]
    if how == 1 and text:  # drop a character
        i = draw.draw(st.integers(0, len(text) - 1))
        text = text[:i] + text[i + 1:]
    elif how == 2:  # invent one
        text += draw.draw(st.characters(codec="utf-8", exclude_categories=["Cs"]))
    elif how == 3 and events:  # move an error
        s, e, r = events.pop(draw.draw(st.integers(0, len(events) - 1)))
        events.append((s + draw.draw(st.integers(-2, 2)), e, r))
    elif how == 4 and text:  # change a character
        i = draw.draw(st.integers(0, len(text) - 1))
        text = text[:i] + chr((ord(text[i]) + 1) % 0xD800) + text[i + 1:]
    want = _tiled(tile, data, tuple(map(ord, text)), list(events), offset=offset)
    # tile_text is the C walk (on bytes), tile_text_py the Python one
    assert _tiled(tile_text, data, text, list(events), offset=offset) == want
    assert _tiled(tile_text_py, data, text, list(events), offset=offset) == want
    if how == 0:
        assert not isinstance(want, str)
