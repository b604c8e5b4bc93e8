"""fast.decode is a drop-in for bytes.decode("utf-8", errors): same str, same error."""

from __future__ import annotations

import array
import sys
from functools import cache

import pytest

from tests.fast._fastcases import (
    cpython,
    forced,
    mine,
    path_params,
    path_suite,
)
from utf8fuzz import fast

HANDLERS = ("strict", "replace", "ignore", "surrogateescape")


expected = cache(cpython)  # computed once, compared on every path


def _check(inputs: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in inputs:
            for h in HANDLERS:
                got, want = mine(d, h), expected(d, h)
                assert got == want, (path, h, d.hex())
                if got[0] == "ok":  # same PEP 393 kind and size, not just equal text
                    assert sys.getsizeof(got[1]) == sys.getsizeof(want[1])


(test_boundary_inputs_match_cpython, test_every_length_0_to_200_matches_cpython,
 test_structured_inputs_match_cpython) = path_suite(_check)


@pytest.mark.parametrize(
    "make", [bytes, bytearray, memoryview, lambda b: array.array("B", b),
             lambda b: memoryview(b"xx" + b + b"yy")[2:-2]],
    ids=["bytes", "bytearray", "memoryview", "array", "memoryview-slice"],
)
def test_accepts_any_contiguous_buffer(make: object) -> None:
    data = "aé中😀".encode() * 40 + b"\xff\xc3"
    for h in HANDLERS:
        assert mine(make(data), h) == cpython(data, h)  # type: ignore[operator]


@pytest.mark.parametrize("bad", ["text", 5, None, [1, 2], object()])
def test_non_buffer_is_typeerror(bad: object) -> None:
    with pytest.raises(TypeError):
        fast.decode(bad)  # type: ignore[arg-type]


def test_non_contiguous_buffer_is_refused() -> None:
    with pytest.raises(BufferError):
        fast.decode(memoryview(b"abcdef")[::2])


def test_errors_must_be_a_str() -> None:
    with pytest.raises(TypeError):
        fast.decode(b"a", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b"a".decode("utf-8", None)  # type: ignore[arg-type]


def test_unknown_handler_is_lookuperror_exactly_when_cpython_raises_it() -> None:
    with pytest.raises(LookupError):
        b"\xff".decode("utf-8", "no-such-handler")
    with pytest.raises(LookupError):
        fast.decode(b"\xff", "no-such-handler")
    # CPython looks the handler up only when there is an error to handle.
    assert fast.decode("é".encode(), "no-such-handler") == b"\xc3\xa9".decode(
        "utf-8", "no-such-handler")


@pytest.mark.parametrize("handler", ["backslashreplace", "surrogatepass"])
def test_other_handlers_behave_as_cpython(handler: str) -> None:
    for data in (b"a\xff\xed\xa0\x80b", "中".encode() * 30 + b"\xe4\xb8", b"plain"):
        assert mine(data, handler) == cpython(data, handler)


def test_keyword_arguments() -> None:
    assert fast.decode(data=b"\xffa", errors="replace") == "\ufffda"


@pytest.mark.parametrize("path", path_params())
@pytest.mark.parametrize("filler", ["a", "é", "Ж", "中", "😀", "aé中😀 "])
def test_large_inputs_match_cpython(filler: str, path: str) -> None:
    data = (filler * (1 << 20))[: 1 << 19].encode()
    noisy = bytearray(data)
    noisy[100_000 :: 50_000] = b"\xff" * len(noisy[100_000 :: 50_000])
    with forced(path):
        assert fast.decode(data) == data.decode()
        assert mine(bytes(noisy), "replace") == cpython(bytes(noisy), "replace")
