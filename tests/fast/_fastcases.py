"""Inputs and oracles shared by the fast path's tests.

Oracles are real decoders: CPython's ``bytes.decode`` and the references
(``utf8fuzz.decode``). The inputs are built so that every code path's block
handling is reached: sequences placed at, one before and one after every 16-,
32- and 64-byte block boundary (with ASCII and non-ASCII filler, since an ASCII
block takes a shortcut), and every length from 0 to 200.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utf8fuzz import fast

#: The paths this CPU runs (the module asks the CPU): a new path joins by itself.
PATHS: list[str] = list(fast.info()["available"])
#: Every path the module knows, in order of preference, with the CPU feature whose
#: absence keeps it from running (its other needs come with that one on real CPUs).
ALL_PATHS = ("scalar", "sse2", "ssse3", "avx2", "avx512")
NEEDS = {"ssse3": "SSSE3", "avx2": "AVX2", "avx512": "AVX-512BW"}


def skip_reason(path: str) -> str:
    if path not in fast.info()["built"]:
        return f"the {path} path is not built into this module (not an x86-64 build)"
    return f"this CPU has no {NEEDS.get(path, path)}"


def path_params() -> list[Any]:
    """Every path as a pytest parameter; one this CPU cannot run is skipped, saying why."""
    return [pytest.param(p, id=p, marks=pytest.mark.skipif(p not in PATHS, reason=skip_reason(p)))
            for p in ALL_PATHS]

VALID_PIECES = [
    b"\xc2\x80", b"\xc3\xa9", b"\xd0\x96", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xe4\xb8\xad",
    b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf0\x9f\x98\x80",
    b"\xf4\x8f\xbf\xbf",
]
INVALID_PIECES = [
    b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xc2", b"\xe0\x80\x80", b"\xe0\xa0",
    b"\xe1", b"\xed\xa0\x80", b"\xf0\x80\x80\x80", b"\xf0\x90\x80", b"\xf4\x90\x80\x80",
    b"\xf5\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff", b"\xfe\x80\xff",
]
FILLERS = [b"a", "é".encode(), "Ж".encode(), "中".encode(), "😀".encode(), "aé中".encode()]


def _fill(unit: bytes, size: int) -> bytes:
    """``size`` bytes of repeated ``unit``, topped up with ASCII."""
    reps = size // len(unit)
    return unit * reps + b"x" * (size - reps * len(unit))


@cache
def boundary_inputs() -> tuple[bytes, ...]:
    return placed(tuple(VALID_PIECES + INVALID_PIECES), tuple(FILLERS))


def placed(pieces: tuple[bytes, ...], fillers: tuple[bytes, ...]) -> tuple[bytes, ...]:
    """Each piece starting, and ending, at, one before and one after every block
    boundary, in each filler."""
    out: list[bytes] = []
    for k in range(16, 193, 16):  # every 16-byte boundary (so every 32 and 64) up to 192
        for piece in pieces:
            for filler in fillers:
                for d in (-1, 0, 1):
                    start = k + d  # the piece begins at, before or after the boundary
                    out.append(_fill(filler, start) + piece + _fill(filler, 20))
                    end = k + d  # ... or ends there
                    if end >= len(piece):
                        out.append(_fill(filler, end - len(piece)) + piece + _fill(filler, 20))
    return tuple(out)


@cache
def length_inputs() -> tuple[bytes, ...]:
    """For every length 0..200: prefixes (cut anywhere, even inside a sequence) of
    valid text in each script, and of text with errors."""
    rng = random.Random(20240601)
    texts = [_fill(f, 220) for f in FILLERS]
    noisy = bytearray(b"".join(rng.choice([*VALID_PIECES, b"ab"]) for _ in range(120)))
    for _ in range(20):
        noisy[rng.randrange(len(noisy))] = rng.choice([0x80, 0xC0, 0xE0, 0xF5, 0xFF, 0xED])
    texts.append(bytes(noisy))
    return tuple(t[:n] for n in range(201) for t in texts)


def structured() -> st.SearchStrategy[bytes]:
    """Text in pieces: valid characters of every length, ill-formed sequences,
    ASCII runs (long enough to fill SIMD blocks) and arbitrary bytes."""
    piece = st.one_of(
        st.characters(codec="utf-8").map(lambda c: c.encode()),
        st.sampled_from(VALID_PIECES + INVALID_PIECES),
        st.integers(1, 70).map(lambda n: b"q" * n),
        st.tuples(st.sampled_from(FILLERS), st.integers(1, 40)).map(lambda t: t[0] * t[1]),
        st.binary(min_size=1, max_size=8),
    )
    return st.lists(piece, max_size=40).map(b"".join)


@contextmanager
def forced(path: str) -> Iterator[None]:
    prev = fast.set_path(path)
    try:
        yield
    finally:
        fast.set_path(prev)


def each_path() -> Iterator[str]:
    for p in PATHS:
        with forced(p):
            yield p


def run(fn: Any, *args: Any) -> tuple[Any, ...]:
    """A call's result or its UnicodeDecodeError as comparable data."""
    try:
        return ("ok", fn(*args))
    except UnicodeDecodeError as e:
        return ("err", e.encoding, e.object, e.start, e.end, e.reason)


def cpython(data: bytes, errors: str = "strict") -> tuple[Any, ...]:
    return run(lambda d, e: bytes(d).decode("utf-8", e), data, errors)


def mine(data: bytes, errors: str = "strict") -> tuple[Any, ...]:
    return run(fast.decode, data, errors)


Check = Callable[[tuple[bytes, ...], str], None]


def path_suite(check: Check, *, examples: int = 300,
               families: tuple[Callable[[], tuple[bytes, ...]], ...] = (
                   boundary_inputs, length_inputs),
               strategy: Callable[[], st.SearchStrategy[bytes]] = structured,
               ) -> tuple[Any, ...]:
    """The tests every per-function file runs ``check(inputs, path)`` in: one per
    input family (by default the boundary inputs and every length 0..200), on each
    code path this CPU has (``exhaustive``: left to make test), then Hypothesis's
    ``strategy`` on every path per example (generating an example costs more than
    checking it). A module binds them to
    test names: ``test_boundary_inputs, test_every_length_0_to_200,
    test_structured_inputs = path_suite(_check)``."""

    def family_test(family: Callable[[], tuple[bytes, ...]]) -> Any:
        # a whole family on every path: make test's (and asan-test's), not make check's
        @pytest.mark.exhaustive
        @pytest.mark.parametrize("path", path_params())
        def test(path: str) -> None:
            check(family(), path)

        return test

    @settings(max_examples=examples, deadline=None)
    @given(strategy())
    def structured_inputs(data: bytes) -> None:
        for path in PATHS:
            check((data,), path)

    return (*map(family_test, families), structured_inputs)
