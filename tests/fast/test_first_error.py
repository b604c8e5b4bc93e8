"""fast.first_error: what strict fast.decode raises, returned instead: CPython's
UnicodeDecodeError (start, end, reason), which the unicode reference's first error
and reason agree with."""

from __future__ import annotations

from functools import cache

import pytest
from _fastcases import (
    PATHS,
    boundary_inputs,
    cpython,
    forced,
    length_inputs,
    path_params,
    structured,
)
from hypothesis import given, settings

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


@pytest.mark.parametrize("path", path_params())
def test_boundary_inputs(path: str) -> None:
    _check(boundary_inputs(), path)


@pytest.mark.parametrize("path", path_params())
def test_every_length_0_to_200(path: str) -> None:
    _check(length_inputs(), path)


@settings(max_examples=200, deadline=None)
@given(structured())
def test_structured_inputs(data: bytes) -> None:
    for path in PATHS:
        _check((data,), path)


def test_examples() -> None:
    assert fast.first_error(b"") is None
    assert fast.first_error(b"\xf0\x9f\x98\x80") is None
    assert fast.first_error(b"a\xf1\x80\x80\xe1\x80") == (1, 4, "invalid continuation byte")
    assert fast.first_error(b"\xff") == (0, 1, "invalid start byte")
    assert fast.first_error(bytearray(b"ok\xe2\x82")) == (2, 4, "unexpected end of data")


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.first_error("text")  # type: ignore[arg-type]
