"""fast.error_spans: every maximal-subpart error span, as the unicode reference cuts them."""

from __future__ import annotations

from functools import cache

import pytest

import utf8fuzz
from tests.fast._fastcases import (
    forced,
    path_suite,
)
from utf8fuzz import fast


@cache
def expected(d: bytes) -> list[tuple[int, int]]:
    return utf8fuzz.decode(d).error_spans


def _check(inputs: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in inputs:
            assert fast.error_spans(d) == expected(d), (path, d.hex())


test_boundary_inputs, test_every_length_0_to_200, test_structured_inputs = path_suite(_check)


def test_examples() -> None:
    assert fast.error_spans(b"") == []
    assert fast.error_spans(b"a\xf1\x80\x80\xe1\x80") == [(1, 4), (4, 6)]
    assert fast.error_spans(b"\xe0\x80\x80") == [(0, 1), (1, 2), (2, 3)]
    assert fast.error_spans(memoryview(b"\xf0\x90\x80A")) == [(0, 3)]


def test_dense_errors_on_a_long_input() -> None:
    data = b"\xff" * 5000 + "中".encode() * 100 + b"\x80"
    assert fast.error_spans(data) == [(i, i + 1) for i in range(5000)] + [(5300, 5301)]


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.error_spans(12)  # type: ignore[arg-type]
