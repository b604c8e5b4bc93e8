"""The fast path on long inputs (:mod:`utf8fuzz.engine.long`: text of every class
with an edge at a 64-byte-to-4-KiB boundary, at a power-of-two end, after a run),
on every code path: ``fast.decode`` against CPython's codec, and
``fast.corrected_first_error`` against the corrected reference. A few inputs
only, none over 8 KiB: this runs under ``make asan-test`` too."""

from __future__ import annotations

from functools import cache

import pytest

from tests.fast._fastcases import cpython, forced, mine, path_params
from tests.fast.test_corrected_first_error import REASONS
from tests.fast.test_decode_corrected import expected
from utf8fuzz import fast
from utf8fuzz.engine.long import SplitMix64, long_input


@cache  # made when a test first asks (a second or two), not as the module is collected
def _inputs(profile: str, n: int) -> list[bytes]:
    rng = SplitMix64(0x10 + len(profile))  # fixed: the same inputs on every run
    out: list[bytes] = []
    while len(out) < n:
        x = long_input(rng, profile)
        if len(x) <= 8192:
            out.append(x)
    return out


def unicode_inputs() -> list[bytes]:
    return _inputs("unicode", 24)


def corrected_inputs() -> list[bytes]:
    return _inputs("corrected", 16)


@pytest.mark.parametrize("path", path_params())
def test_long_inputs_decode_as_cpython_does(path: str) -> None:
    with forced(path):
        for d in unicode_inputs():
            for h in ("strict", "replace"):
                assert mine(d, h) == cpython(d, h), (path, h, len(d))


@pytest.mark.parametrize("path", path_params())
def test_long_corrected_inputs_first_error_is_the_references(path: str) -> None:
    with forced(path):
        for d in corrected_inputs():
            got = fast.corrected_first_error(d)
            want = expected(d)
            if got is None:
                assert want["strict"] is None, (path, len(d))
            else:
                assert (got[:2], REASONS[got[2]]) == (want["strict"], want["reason"]), (
                    path, len(d))
