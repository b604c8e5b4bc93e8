"""fast.validate: None when valid, else the first error's span (CPython's and the
unicode reference's, which agree)."""

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

import utf8fuzz
from utf8fuzz import fast


@cache
def expected(d: bytes) -> tuple[int, int] | None:
    first = utf8fuzz.decode(d).first_error
    c = cpython(d)  # the oracles agree with each other
    assert (None if c[0] == "ok" else (c[3], c[4])) == first, d.hex()
    return first


def _check(inputs: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in inputs:
            assert fast.validate(d) == expected(d), (path, d.hex())


@pytest.mark.parametrize("path", path_params())
def test_boundary_inputs(path: str) -> None:
    _check(boundary_inputs(), path)


@pytest.mark.parametrize("path", path_params())
def test_every_length_0_to_200(path: str) -> None:
    _check(length_inputs(), path)


@settings(max_examples=300, deadline=None)
@given(structured())
def test_structured_inputs(data: bytes) -> None:
    # every path on each example: generating examples costs more than checking them
    for path in PATHS:
        _check((data,), path)


def test_examples() -> None:
    assert fast.validate(b"") is None
    assert fast.validate(b"\xf0\x9f\x98\x80") is None
    assert fast.validate(b"a\xf1\x80\x80\xe1\x80") == (1, 4)
    assert fast.validate(b"\xed\xa0\x80") == (0, 1)  # a surrogate is ill-formed
    assert fast.validate(bytearray(b"ok\xc3")) == (2, 3)


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.validate("text")  # type: ignore[arg-type]
