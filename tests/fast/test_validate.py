"""fast.validate: None when valid, else the first error's span (CPython's and the
unicode reference's, which agree)."""

from __future__ import annotations

from functools import cache

import pytest

import utf8fuzz
from tests.fast._fastcases import (
    cpython,
    forced,
    path_suite,
)
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


test_boundary_inputs, test_every_length_0_to_200, test_structured_inputs = path_suite(_check)


def test_examples() -> None:
    assert fast.validate(b"") is None
    assert fast.validate(b"\xf0\x9f\x98\x80") is None
    assert fast.validate(b"a\xf1\x80\x80\xe1\x80") == (1, 4)
    assert fast.validate(b"\xed\xa0\x80") == (0, 1)  # a surrogate is ill-formed
    assert fast.validate(bytearray(b"ok\xc3")) == (2, 3)


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.validate("text")  # type: ignore[arg-type]
