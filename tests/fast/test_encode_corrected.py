"""fast.encode_corrected: the corrected reference's bytes, and its refusals."""

from __future__ import annotations

import array
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import utf8fuzz
from utf8fuzz import fast

EDGES = [0, 0x7F, 0x80, 0x9F, 0xA0, 0x89F, 0x8A0, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFF,
         0x1109F, 0x110A0, 0x10FFFF, 0x21109F, 0x2110A0, 0x421109F, 0x42110A0, 0x8421109F,
         0x842110A0, 0xFFFFFFFF, 1 << 32, 1 << 70, -1, -(1 << 70)]


def outcome(fn: Any, cps: Any) -> tuple[Any, ...]:
    try:
        return ("ok", fn(cps))
    except utf8fuzz.EncodeError as e:
        return ("refused", type(e), str(e), e.codepoint, e.index)


@pytest.mark.parametrize("cp", EDGES)
def test_row_edges_match_the_reference(cp: int) -> None:
    cps = [0x41, cp]
    assert outcome(fast.encode_corrected, cps) == outcome(
        lambda c: utf8fuzz.encode(c, "corrected"), cps)


@given(st.lists(st.integers(-5, 0x8421109F + 5)))
def test_any_integers_match_the_reference(cps: list[int]) -> None:
    assert outcome(fast.encode_corrected, cps) == outcome(
        lambda c: utf8fuzz.encode(c, "corrected"), cps)


@given(st.lists(st.integers(0, 0x8421109F)))
def test_round_trip_with_decode(cps: list[int]) -> None:
    ok = [c for c in cps if not (0x80 <= c <= 0x9F or 0xD800 <= c <= 0xDFFF)]
    assert list(fast.decode_corrected(fast.encode_corrected(ok))) == ok


def test_input_forms() -> None:
    text = "aé中😀"
    want = utf8fuzz.encode(text, "corrected")
    assert fast.encode_corrected(text) == want
    assert fast.encode_corrected([ord(c) for c in text]) == want
    assert fast.encode_corrected(ord(c) for c in text) == want
    assert fast.encode_corrected(array.array("I", [ord(c) for c in text])) == want
    assert fast.encode_corrected(b"abc") == b"abc"
    assert fast.encode_corrected([True]) == b"\x01"
    assert fast.encode_corrected([]) == b""


def test_str_refusal_matches_the_reference() -> None:
    s = "ok\x85"
    assert outcome(fast.encode_corrected, s) == outcome(
        lambda c: utf8fuzz.encode(c, "corrected"), s)


@pytest.mark.parametrize("bad", [[1.5], ["a"], [None], 5, None])
def test_non_integers_are_typeerror(bad: object) -> None:
    with pytest.raises(TypeError):
        fast.encode_corrected(bad)  # type: ignore[arg-type]
