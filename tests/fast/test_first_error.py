"""fast.first_error: what strict fast.decode raises, returned instead: CPython's
UnicodeDecodeError (start, end, reason), which the unicode reference's first error
and reason agree with."""

from __future__ import annotations

from functools import cache

import pytest

from tests.fast._fastcases import (
    cpython,
    forced,
    path_suite,
)
from utf8fuzz import fast


@cache
def expected(d: bytes) -> tuple[int, int, str] | None:
    c = cpython(d)
    return None if c[0] == "ok" else (c[3], c[4], c[5])


def _check(inputs: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in inputs:
            got = fast.first_error(d)
            assert got == expected(d), (path, d.hex())
            # the same walk as validate and decode's exception
            assert fast.validate(d) == (None if got is None else got[:2]), (path, d.hex())
            try:
                fast.decode(d)
                raised = None
            except UnicodeDecodeError as e:
                raised = (e.start, e.end, e.reason)
            assert raised == got, (path, d.hex())


(test_boundary_inputs, test_every_length_0_to_200,
 test_structured_inputs) = path_suite(_check, examples=200)


def test_examples() -> None:
    assert fast.first_error(b"") is None
    assert fast.first_error(b"\xf0\x9f\x98\x80") is None
    assert fast.first_error(b"a\xf1\x80\x80\xe1\x80") == (1, 4, "invalid continuation byte")
    assert fast.first_error(b"\xff") == (0, 1, "invalid start byte")
    assert fast.first_error(bytearray(b"ok\xe2\x82")) == (2, 4, "unexpected end of data")


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.first_error("text")  # type: ignore[arg-type]
