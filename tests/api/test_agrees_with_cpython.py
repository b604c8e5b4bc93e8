"""``unicode`` + ``maximal-subpart`` agrees with CPython on every input.

Replacement output equals ``bytes.decode('utf-8', 'replace')`` and first_error
equals UnicodeDecodeError's (start, end): exhaustively on every 1- and 2-byte
input, on every lead byte with every second byte and a sample of continuations,
and as Hypothesis properties over arbitrary and near-valid bytes.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import utf8fuzz


def cpython(data: bytes) -> tuple[list[int], tuple[int, int] | None, str | None]:
    try:
        data.decode("utf-8")
        first, reason = None, None
    except UnicodeDecodeError as e:
        first = (e.start, e.end)
        reason = "truncated" if e.reason == "unexpected end of data" else "illegal"
    return [ord(c) for c in data.decode("utf-8", "replace")], first, reason


def ours(data: bytes) -> tuple[list[int], tuple[int, int] | None, str | None]:
    out = utf8fuzz.decode(data)
    return out.codepoints(), out.first_error, out.view("reason")


@pytest.mark.exhaustive
def test_every_one_and_two_byte_input() -> None:
    for a in range(256):
        assert ours(bytes([a])) == cpython(bytes([a]))
        for b in range(256):
            d = bytes([a, b])
            assert ours(d) == cpython(d), d.hex()


@pytest.mark.exhaustive
def test_every_lead_with_every_second_byte_and_sampled_tails() -> None:
    rng = random.Random(2279)  # fixed: the sample is the same on every run
    tails = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xF4, 0xFF]
    for a in range(0x80, 0x100):
        for b in range(256):
            for _ in range(3):
                c, d = rng.choice(tails), rng.choice(tails)
                for data in (bytes([a, b, c]), bytes([a, b, c, d])):
                    assert ours(data) == cpython(data), data.hex()


@settings(max_examples=500)
@given(st.binary(max_size=64))
def test_arbitrary_bytes(data: bytes) -> None:
    assert ours(data) == cpython(data)


BOUNDARY = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
            0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFC,
            0xFE, 0xFF]
_chunk = st.one_of(
    st.characters(codec="utf-8").map(lambda c: c.encode()),
    st.sampled_from(BOUNDARY).map(lambda b: bytes([b])),
)


@pytest.mark.exhaustive
@settings(max_examples=500)
@given(st.lists(_chunk, max_size=24).map(b"".join))
def test_near_valid_bytes(data: bytes) -> None:
    assert ours(data) == cpython(data)
