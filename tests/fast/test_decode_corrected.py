"""fast.decode_corrected against the corrected reference, in every mode.

A reserved FE/FF unit has no code point: strict raises with its span, replace gives
U+FFFD, ignore drops it, surrogateescape escapes its bytes - the outcome model's
views of a ``reserved`` token.
"""

from __future__ import annotations

import array
from functools import cache

import pytest
from hypothesis import strategies as st

import utf8fuzz
from tests.fast._fastcases import forced, path_params, path_suite, placed
from utf8fuzz import fast

CP_SAMPLES = [0x41, 0xA0, 0x89F, 0x8A0, 0xD7FF, 0xE000, 0x1109F, 0x110A0, 0x21109F, 0x2110A0,
              0x421109F, 0x42110A0, 0x8421109F, 0xE9, 0x4E2D, 0x1F600]
VALID = tuple(utf8fuzz.encode([c], "corrected") for c in CP_SAMPLES)
INVALID = (b"\x80", b"\xbf", b"\xc0", b"\xe0\x80", b"\xfc\x80\x80\x80\x80", b"\xfe", b"\xff",
           b"\xfe\x80\x80\xff", b"\xfdA")
FILLERS = (b"a", utf8fuzz.encode("é", "corrected"), utf8fuzz.encode("中", "corrected"),
           utf8fuzz.encode([0x1F600, 0x41], "corrected"))


@cache
def inputs() -> tuple[bytes, ...]:
    lengths = tuple(
        (f * 201)[:n] for n in range(201) for f in (*FILLERS, b"".join(VALID + INVALID))
    )
    return placed(VALID + INVALID, FILLERS) + lengths


@cache
def expected(data: bytes) -> dict[str, object]:
    o = utf8fuzz.decode(data, "corrected")
    return {
        "strict": o.first_error, "reason": o.view("reason"), "replace": o.codepoints(),
        "ignore": o.codepoints(None), "surrogateescape": list(o.escape_view(data)),
        "spans": o.error_spans,
    }


def got(data: bytes) -> dict[str, object]:
    try:
        out = fast.decode_corrected(data)
        strict, reason = None, None
        assert isinstance(out, array.array) and out.typecode == "I"
    except UnicodeDecodeError as e:
        assert e.encoding == "corrected-utf-8" and e.object == bytes(data)
        strict = (e.start, e.end)
        reason = {"unexpected end of data": "truncated",
                  "reserved sequence (FE/FF)": "reserved"}.get(e.reason, "illegal")
    r = {"strict": strict, "reason": reason, "spans": fast.corrected_error_spans(data)}
    for mode in ("replace", "ignore", "surrogateescape"):
        r[mode] = list(fast.decode_corrected(data, mode))
    if strict is None:
        assert list(fast.decode_corrected(data)) == r["replace"]
    return r


def _check(data_list: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in data_list:
            assert got(d) == expected(d), (path, d.hex())


def structured_corrected() -> st.SearchStrategy[bytes]:
    """Corrected UTF-8 in pieces: valid sequences of every length, errors, reserved
    units, ASCII runs long enough to fill blocks, arbitrary bytes."""
    return st.lists(st.one_of(st.sampled_from(VALID + INVALID + FILLERS), st.binary(max_size=6),
                              st.integers(1, 70).map(lambda n: b"z" * n)),
                    max_size=30).map(b"".join)


(test_boundaries_and_every_length_0_to_200,
 test_structured_inputs) = path_suite(
    _check, families=(inputs,), strategy=structured_corrected)


def test_examples() -> None:
    assert list(fast.decode_corrected(b"\xc0\x80")) == [0xA0]
    assert list(fast.decode_corrected(b"\xfd\xbf\xbf\xbf\xbf\xbf")) == [0x8421109F]
    assert list(fast.decode_corrected(b"a\xfe\x80b", "replace")) == [0x61, 0xFFFD, 0x62]
    with pytest.raises(UnicodeDecodeError) as e:
        fast.decode_corrected(b"a\xfe\x80\xffb")
    assert (e.value.start, e.value.end, e.value.reason) == (1, 4, "reserved sequence (FE/FF)")


def test_handlers() -> None:
    with pytest.raises(LookupError):
        fast.decode_corrected(b"a", "no-such-handler")
    with pytest.raises(ValueError, match="strict, replace, ignore and surrogateescape"):
        fast.decode_corrected(b"a", "backslashreplace")
    with pytest.raises(TypeError):
        fast.decode_corrected("text")  # type: ignore[arg-type]


@pytest.mark.exhaustive
@pytest.mark.parametrize("path", path_params())
def test_large_input(path: str) -> None:
    text, data = _large()
    with forced(path):
        assert list(fast.decode_corrected(data)) == [ord(c) for c in text]


@cache
def _large() -> tuple[str, bytes]:
    text = "The quick 中文 Ж é 😀 " * 20000
    return text, utf8fuzz.encode(text, "corrected")
