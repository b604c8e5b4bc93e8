"""fast.validate: None when valid, else the first error's span (CPython's and the
unicode reference's, which agree)."""

from __future__ import annotations

import pytest
from _fastcases import boundary_inputs, cpython, each_path, length_inputs, structured
from hypothesis import given, settings

import utf8fuzz
from utf8fuzz import fast


def _check(inputs: tuple[bytes, ...]) -> None:
    expected = {d: utf8fuzz.decode(d).first_error for d in inputs}
    for d in inputs:  # the oracles agree with each other
        c = cpython(d)
        assert (None if c[0] == "ok" else (c[3], c[4])) == expected[d]
    for path in each_path():
        for d in inputs:
            assert fast.validate(d) == expected[d], (path, d.hex())


def test_boundary_inputs() -> None:
    _check(boundary_inputs())


def test_every_length_0_to_200() -> None:
    _check(length_inputs())


@settings(max_examples=300, deadline=None)
@given(structured())
def test_structured_inputs(data: bytes) -> None:
    _check((data,))


def test_examples() -> None:
    assert fast.validate(b"") is None
    assert fast.validate(b"\xf0\x9f\x98\x80") is None
    assert fast.validate(b"a\xf1\x80\x80\xe1\x80") == (1, 4)
    assert fast.validate(b"\xed\xa0\x80") == (0, 1)  # a surrogate is ill-formed
    assert fast.validate(bytearray(b"ok\xc3")) == (2, 3)


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.validate("text")  # type: ignore[arg-type]
