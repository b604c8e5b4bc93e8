"""Every adapter's screen (the fuzz loop's cheap tier) against its own full outcome.

A screen must never disagree with its own decoder: each view it gives must equal the
same view of ``decode()`` on the same input, on Unicode's example, the boundary
inputs and arbitrary bytes. Then, per adapter, what the screen is pinned to say.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE
from utf8fuzz import decoders
from utf8fuzz import strategies as u8
from utf8fuzz.decoders import fast as fast_adapter
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import TEXT_VIEWS, VIEWS, Outcome, Token, unpack_tokens

SCREENING = [d for d in decoders.available() if getattr(d, "screen", None) is not None]
BY_NAME = {d.name: d for d in decoders.available()}
INPUTS = [EXAMPLE, *(bytes.fromhex(h) for h in BOUNDARY.values())]


def check_screen(d: Decoder, data: bytes) -> dict | None:
    seen = d.screen(data)
    if seen is None:
        return None
    out = d.decode(data)
    if isinstance(seen, Outcome):  # a crash handed over: the very outcome decode() gives
        assert seen.status == "crash" and seen == out, (
            f"{d.name} on {data.hex(' ') or '(empty)'}: screen {seen}, full {out}")
        return None
    assert seen, f"{d.name}: an empty screen (say None instead)"
    assert out.ok, f"{d.name} screens {data.hex(' ')} but its full outcome is {out.status}"
    whole = getattr(d, "screen_is_whole", False)
    if whole and set(seen) == {"tokens"}:  # tokens alone: every view
        assert type(seen["tokens"]) is bytes and "tokens" in out.shows
    elif whole:  # the screen is the whole outcome: no view left out
        assert set(seen) == set(out.shows), (
            f"{d.name} on {data.hex(' ') or '(empty)'} says its screen is whole, but "
            f"screens {sorted(seen)} where its outcome shows {sorted(out.shows)}")
    for view, value in seen.items():
        assert view in VIEWS and view in out.shows, f"{d.name} screens {view!r}, not shown"
        if view in TEXT_VIEWS and type(value) is str:
            value = tuple(map(ord, value))  # a text view screened as the library's str
        elif view == "tokens" and type(value) is bytes:
            value = unpack_tokens(value)  # tokens screened packed
        assert value == out.view(view), (
            f"{d.name} on {data.hex(' ') or '(empty)'}: screen {view}={value}, "
            f"full {out.view(view)}")
        assert type(value) is type(out.view(view))
    return seen


def as_views(seen: dict | None) -> dict | None:
    """A screen with its str text views as the tuples of code points they stand for,
    and its packed tokens as Tokens."""
    if seen is None:
        return None
    return {v: tuple(map(ord, x)) if v in TEXT_VIEWS and type(x) is str
            else unpack_tokens(x) if v == "tokens" and type(x) is bytes else x
            for v, x in seen.items()}


def test_the_expensive_adapters_screen():
    names = {d.name for d in SCREENING}
    for family in ("cpython:", "fast:", "icu", "iconv:", "pyicu"):
        present = [n for n in BY_NAME if n.startswith(family)]
        assert set(present) <= names, f"not screening: {sorted(set(present) - names)}"
    # out of process, compared in batches already: no screen; mutf8, the plain adapter
    assert not any(n.startswith(("node:", "mutf8")) for n in names)


@pytest.mark.parametrize("d", SCREENING, ids=lambda d: d.name)
def test_screen_equals_own_full_outcome_on_example_and_boundaries(d):
    screened = [x for x in INPUTS if check_screen(d, x) is not None]
    assert screened, f"{d.name} screens none of the boundary inputs"


@pytest.mark.parametrize("d", SCREENING, ids=lambda d: d.name)
def test_screen_equals_own_full_outcome_on_arbitrary_bytes(d):
    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(st.binary(max_size=64), u8.inputs(d.profile)))
    def prop(data: bytes) -> None:
        check_screen(d, data)

    prop()


def screen(name: str, hexin: str) -> dict | None:
    if name not in BY_NAME:
        pytest.skip(f"{name} is not available here")
    return as_views(BY_NAME[name].screen(bytes.fromhex(hexin)))


def test_cpython_recording_decoders_screen_replace_and_the_first_error():
    for name in ("cpython:spans", "cpython:incremental", "cpython:utf-8-sig"):
        assert screen(name, EXAMPLE.hex()) == {
            "replace": EXAMPLE_REPLACE, "strict": (1, 4), "reason": "illegal"}
    # a literal U+FFFD is no error: no error met, the text is every text view
    assert screen("cpython:spans", "EF BF BD") == {
        "replace": (0xFFFD,), "ignore": (0xFFFD,), "escape": (0xFFFD,), "spans": (),
        "strict": None, "reason": None}
    # utf-8-sig: the stripped BOM is U+FEFF, offsets after it absolute
    assert screen("cpython:utf-8-sig", "EF BB BF 41 C3") == {
        "replace": (0xFEFF, 0x41, 0xFFFD), "strict": (4, 5), "reason": "truncated"}
    # incremental: the first error's offsets are absolute, whatever the chunks
    assert screen("cpython:incremental", "41 42 43 E2 82 41") == {
        "replace": (0x41, 0x42, 0x43, 0xFFFD, 0x41), "strict": (3, 5), "reason": "illegal"}


def test_cpython_surrogatepass_screens_the_first_error_it_cannot_pass():
    assert screen("cpython:surrogatepass", "ED A0 80 C0") == {
        "strict": (3, 4), "reason": "illegal"}
    assert screen("cpython:surrogatepass", "ED A0 80") == {
        "strict": None, "reason": None, "spans": (),
        "replace": (0xD800,), "ignore": (0xD800,), "escape": (0xD800,)}


def test_icu_screens_its_tokens_alone():
    # every view follows from them: the differ compares them first, and makes the
    # views from them where it does not compare tokens
    seen = screen("icu", EXAMPLE.hex())
    assert set(seen) == {"tokens"}
    out = Outcome.from_tokens(seen["tokens"], len(EXAMPLE))
    assert out.view("replace") == EXAMPLE_REPLACE
    if "icu:cesu8" in BY_NAME:
        cesu = screen("icu:cesu8", "ED A0 BD ED B8 80")["tokens"]
        assert cesu == (Token("char", 0x1F600, 0, 6),)


def test_a_differ_not_comparing_tokens_makes_the_views_of_a_tokens_only_screen():
    from utf8fuzz.engine.differ import Differ

    if "icu" not in BY_NAME:
        pytest.skip("ICU is not available here")
    data = bytes.fromhex("41 C3 28 E2 82")
    for views in (["strict", "spans", "reason"], ["replace", "ignore", "escape"]):
        differ = Differ([BY_NAME["icu"]], views=views, full_every=1000)
        differ.run(data)  # the first input is sampled
        res = differ.run(data)
        assert not res.full and not res.diverged
        assert res.outcomes["icu"].view("spans") == ((1, 2), (3, 5))


def test_icu_screens_every_token_packed():
    for name in ("icu", "icu:cesu8"):
        if name not in BY_NAME:
            continue
        seen = BY_NAME[name].screen(bytes.fromhex("41 C3 28 ED A0 BD ED B8 80 E2 82"))
        assert type(seen["tokens"]) is bytes
        # a CESU-8 pair is one character of six bytes; UTF-8 calls each half an error
        toks = unpack_tokens(seen["tokens"])
        assert toks[0] == Token("char", 0x41, 0, 1) and toks[1] == Token("error", None, 1, 2,
                                                                         "illegal")
        assert toks[-1] == Token("error", None, 9, 11, "truncated")
        assert (Token("char", 0x1F600, 3, 9) in toks) == (name == "icu:cesu8")


VALID_41_E9 = {"strict": None, "spans": (), "replace": (0x41, 0xE9), "ignore": (0x41, 0xE9),
               "escape": (0x41, 0xE9)}


def test_iconv_screens_its_whole_outcome():
    assert screen("iconv:utf32le", "41 E2 82") == {"strict": (1, 3), "reason": "truncated"}
    # accepted: its text as well, as its full outcome shows it
    assert screen("iconv:utf32le", "41 C3 A9") == {"reason": None, **VALID_41_E9}
    # EILSEQ: the span searched in C
    assert screen("iconv:utf32le", EXAMPLE.hex()) == {"strict": (1, 4), "reason": "illegal"}


def test_strict_decoders_screen_their_text_on_valid_input():
    for name in ("cpython:strict", "pyicu"):
        extra = {"reason": None} if name == "cpython:strict" else {}
        if name in BY_NAME:
            assert screen(name, "41 C3 A9") == {**VALID_41_E9, **extra}, name


def test_the_screens_that_say_they_are_whole():
    whole = sorted(d.name for d in SCREENING if getattr(d, "screen_is_whole", False))
    expected = ["cpython:ignore", "cpython:replace", "cpython:strict", "cpython:surrogateescape",
                "iconv:ucs4", "iconv:utf32le", "iconv:utf8", "iconv:wchar_t", "icu",
                "icu:bundled", "icu:bundled-cesu8", "icu:cesu8", "pyicu",
                "pyicu:ignore", "pyicu:replace"]
    assert whole == [n for n in expected if n in BY_NAME]


def test_pyicu_strict_screens_the_searched_span():
    # the span comes from the (memoized) searches, not from PyICU's message
    assert screen("pyicu", EXAMPLE.hex()) == {"strict": (1, 4)}
    assert screen("pyicu", "EF 90 80 80") == {"strict": (3, 4)}


def test_text_screens_are_the_librarys_str():
    for name, hexin in (("cpython:replace", EXAMPLE.hex()), ("pyicu:replace", "41 C3"),
                        ("fast:unicode", "41 C3"), ("cpython:spans", "41 C3")):
        if name in BY_NAME:
            assert type(BY_NAME[name].screen(bytes.fromhex(hexin))["replace"]) is str


def test_fast_path_screens_replace_and_strict():
    assert not getattr(BY_NAME["fast:unicode"], "screen_is_whole", False)
    assert screen("fast:unicode", EXAMPLE.hex()) == {"replace": EXAMPLE_REPLACE,
                                                    "strict": (1, 4)}
    assert screen("fast:corrected", "41 FE") == {
        "replace": (0x41, 0xFFFD), "strict": (1, 2), "reason": "reserved"}


def whole(name: str, hexin: str) -> dict | None:
    return as_views(BY_NAME[name].whole_views(bytes.fromhex(hexin)))


def test_fast_path_whole_views_give_every_view():
    seen = whole("fast:unicode", EXAMPLE.hex())
    assert seen["replace"] == EXAMPLE_REPLACE and seen["strict"] == (1, 4)
    assert seen["tokens"] == BY_NAME["fast:unicode"].decode(EXAMPLE).tokens
    assert whole("fast:corrected", "41 FE") == {
        "tokens": (Token("char", 0x41, 0, 1), Token("reserved", None, 1, 2)),
        "replace": (0x41, 0xFFFD), "ignore": (0x41,), "escape": (0x41, 0xDCFE),
        "strict": (1, 2), "reason": "reserved", "spans": ((1, 2),)}
    # a code point above U+10FFFF has no str: the text views are code points
    above = whole("fast:corrected", "FD BF BF BF BF BF")
    assert above["replace"] == above["ignore"] == above["escape"] == (0x8421109F,)  # the top
    # a subclass (a planted bug may override what the C derives) has none
    class Unicode(fast_adapter.FastUnicode):
        pass

    assert not hasattr(Unicode(fast_adapter.fast_module()), "whole_views")


WHOLE_VIEWS = [d for d in decoders.available() if getattr(d, "whole_views", None) is not None]


def test_the_decoders_with_whole_views_besides_their_screen():
    assert sorted(d.name for d in WHOLE_VIEWS) == ["fast:corrected", "fast:unicode"]


@pytest.mark.exhaustive
@pytest.mark.parametrize("d", WHOLE_VIEWS, ids=lambda d: d.name)
def test_whole_views_are_the_whole_full_outcome(d):
    # the same check as a screen that says screen_is_whole, on arbitrary bytes, and
    # None exactly where the full outcome is not made from tokens
    @settings(max_examples=300, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(st.binary(max_size=80), u8.inputs(d.profile)))
    def prop(data: bytes) -> None:
        seen, out = d.whole_views(data), d.decode(data)
        if seen is None:
            assert "tokens" not in out.shows
            return
        assert set(seen) == set(out.shows) - {"accept"}
        assert as_views(seen) == {v: out.view(v) for v in out.shows if v != "accept"}
        assert unpack_tokens(seen["tokens"]) == out.tokens

    # every view but accept, a validator's, which the strict view already says
    for data in INPUTS:
        assert as_views(d.whole_views(data)) == {
            v: d.decode(data).view(v) for v in d.decode(data).shows if v != "accept"}
    prop()

