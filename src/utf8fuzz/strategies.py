"""Hypothesis strategies for UTF-8 decoder tests; import them into your own tests.

::

    from hypothesis import given
    from utf8fuzz import strategies as u8

    @given(u8.inputs("unicode"))
    def test_my_decoder(data):
        assert my_decode(data) == data.decode("utf-8", "replace")

``well_formed(profile)``      byte strings every decoder of the profile must accept;
``boundary_codepoints(p)``    the code points at the edges of the profile's table;
``near_valid(profile)``       well-formed text with a few ill-formed mutations
                              (inserted overlongs, surrogates, truncations, FE/FF,
                              deleted or flipped bytes);
``block_boundary_inputs(p)``  ASCII-padded inputs with a bad sequence at, just
                              before or just after a 16-, 32- or 64-byte boundary
                              (where SIMD fast paths switch code);
``inputs(profile)``           all of the above plus raw bytes;
``long_inputs(profile)``      65 bytes to 64 KiB of realistic text (ASCII, Latin,
                              Cyrillic, CJK, emoji, mixed; in the profile's own
                              encoding) with one edge at a 64-byte-to-64-KiB
                              boundary, at the end of a power-of-two length, or
                              after a long run of one class
                              (:mod:`utf8fuzz.engine.long`).

The material (boundaries, ill-formed sequences) is shared with the Atheris mutator
and the libFuzzer dictionary (:mod:`utf8fuzz.engine.boundaries`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Protocol, TypeVar

from hypothesis import strategies as st

from utf8fuzz.engine import long as long_mod
from utf8fuzz.engine.boundaries import BOUNDARY_CODEPOINTS, all_snippets, bad_snippets
from utf8fuzz.profiles import get_profile
from utf8fuzz.profiles.table import EncodeError
from utf8fuzz.profiles.walk import BLOCKS

__all__ = [
    "block_boundary_inputs",
    "boundary_codepoints",
    "inputs",
    "long_inputs",
    "near_valid",
    "well_formed",
]


# Strategies are immutable: each is built once per profile and argument, not on
# every draw (near_valid draws well_formed in each example, and building it walked
# the boundary code points through the profile's table every time).
@lru_cache(maxsize=1 << 16)
def _encodable(profile: str, cp: int) -> bool:
    try:
        get_profile(profile).encode_one(cp)
    except EncodeError:
        return False
    return True


@cache
def _boundaries(profile: str) -> tuple[int, ...]:
    return tuple(cp for cp in BOUNDARY_CODEPOINTS if _encodable(profile, cp))


@cache
def boundary_codepoints(profile: str = "unicode") -> st.SearchStrategy[int]:
    """Boundary code points the profile can encode."""
    return st.sampled_from(_boundaries(profile))


@cache
def codepoints(profile: str = "unicode") -> st.SearchStrategy[int]:
    """Any code point the profile encodes, biased to short forms and boundaries."""
    prof = get_profile(profile)
    top = prof.max_codepoint
    return st.one_of(
        st.integers(0x00, 0x7F),
        boundary_codepoints(profile),
        st.integers(0x80, min(top, 0xFFFF)),
        st.integers(0x80, top),
    ).filter(lambda cp: _encodable(profile, cp))


@cache
def well_formed(profile: str = "unicode", max_size: int = 40) -> st.SearchStrategy[bytes]:
    """Well-formed byte strings of the profile (encoded code point lists)."""
    prof = get_profile(profile)
    return st.lists(codepoints(profile), max_size=max_size).map(prof.encode)


_SNIPPET_LIST = all_snippets()
_SNIPPETS = st.sampled_from(_SNIPPET_LIST)
_OPS = ("insert", "replace", "delete", "truncate", "flip", "fefe")
_FLIPS = (0x40, 0x80, 0xC0, 0x20)
_PADS = (b"A", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80")

T = TypeVar("T")


class _Choices(Protocol):
    """Where a generator's choices come from: Hypothesis's draws (:class:`_Drawn`: the
    public strategies, which shrink) or a random stream (:class:`_Streamed`: the fuzz
    engine's batches). The generators below are written once, over this."""

    def integer(self, lo: int, hi: int) -> int: ...
    def pick(self, seq: Sequence[T]) -> T: ...
    def picks(self, seq: Sequence[T], lo: int, hi: int) -> list[T]: ...
    def boolean(self) -> bool: ...
    def binary(self, max_size: int) -> bytes: ...
    def well_formed(self, profile: str, max_size: int) -> bytes: ...


class _Drawn:
    """Each choice one Hypothesis draw (so the example shrinks choice by choice)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def pick(self, seq: Sequence[T]) -> T:
        return self.draw(st.sampled_from(seq))

    def picks(self, seq: Sequence[T], lo: int, hi: int) -> list[T]:
        return self.draw(st.lists(st.sampled_from(seq), min_size=lo, max_size=hi))

    def boolean(self) -> bool:
        return self.draw(st.booleans())

    def binary(self, max_size: int) -> bytes:
        return self.draw(st.binary(max_size=max_size))

    def well_formed(self, profile: str, max_size: int) -> bytes:
        return self.draw(well_formed(profile, max_size))


class _Streamed:
    """Each choice from one :class:`random.Random`: a few microseconds, where a
    Hypothesis draw costs tens (the fuzz engine's batches, :func:`batches`)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def pick(self, seq: Sequence[T]) -> T:
        return self.rng.choice(seq)

    def picks(self, seq: Sequence[T], lo: int, hi: int) -> list[T]:
        return self.rng.choices(seq, k=self.rng.randint(lo, hi))

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def binary(self, max_size: int) -> bytes:
        return self.rng.randbytes(self.rng.randint(0, max_size))

    def well_formed(self, profile: str, max_size: int) -> bytes:
        # as codepoints(): short lists mostly (Hypothesis's lists average 5), each
        # code point ASCII, a boundary, in the BMP or anywhere, a quarter each
        rng, prof = self.rng, get_profile(profile)
        top, bounds = prof.max_codepoint, _boundaries(profile)
        n = rng.randint(0, max_size) if rng.random() < 0.125 else rng.randint(0, min(10, max_size))
        cps: list[int] = []
        while len(cps) < n:
            kind = rng.randrange(4)
            cp = (rng.randint(0, 0x7F) if kind == 0 else rng.choice(bounds) if kind == 1
                  else rng.randint(0x80, min(top, 0xFFFF)) if kind == 2
                  else rng.randint(0x80, top))
            if _encodable(profile, cp):
                cps.append(cp)
        return prof.encode(cps)


def _near_valid(c: _Choices, profile: str, max_size: int) -> bytes:
    buf = bytearray(c.well_formed(profile, max_size))
    for _ in range(c.integer(1, 4)):
        op = c.pick(_OPS)
        i = c.integer(0, len(buf))
        if op == "insert":
            buf[i:i] = c.pick(_SNIPPET_LIST)
        elif op == "replace" and buf:
            s = c.pick(_SNIPPET_LIST)
            buf[i : i + len(s)] = s
        elif op == "delete" and buf:
            del buf[min(i, len(buf) - 1)]
        elif op == "truncate" and buf:
            del buf[i:]
        elif op == "flip" and buf:
            j = min(i, len(buf) - 1)
            buf[j] ^= c.pick(_FLIPS)
        elif op == "fefe":
            buf[i:i] = bytes(c.picks((0xFE, 0xFF), 1, 6))
    return bytes(buf)


def _block_boundary(c: _Choices) -> bytes:
    block = c.pick(BLOCKS)
    k = c.integer(1, 2)
    bad = c.pick(_BAD)
    # Place the bad sequence so that it starts, ends or straddles the boundary.
    shift = c.integer(-len(bad), 1)
    at = max(0, block * k + shift)
    pad = c.pick(_PADS)
    head = pad * (at // len(pad)) + b"A" * (at % len(pad))  # whole characters only
    tail = c.binary(8) if c.boolean() else b"A" * c.integer(0, 17)
    if tail[:1] and 0x80 <= tail[0] <= 0xBF:
        # A continuation byte could complete a truncated snippet (F0 BE BF + 80 is
        # well-formed); the point of the input is a bad sequence at the boundary.
        tail = b"A" + tail
    return head + bad + tail


_BAD = bad_snippets()


@st.composite
def near_valid(draw: st.DrawFn, profile: str = "unicode", max_size: int = 40) -> bytes:
    """Well-formed text with one to four ill-formed mutations."""
    return _near_valid(_Drawn(draw), profile, max_size)


@st.composite
def block_boundary_inputs(draw: st.DrawFn, profile: str = "unicode") -> bytes:
    """A bad sequence at, just before or just after a 16/32/64-byte boundary, in
    well-formed padding (ASCII, or a few multi-byte characters)."""
    return _block_boundary(_Drawn(draw))


def long_inputs(profile: str = "unicode") -> st.SearchStrategy[bytes]:
    """A long input (65 bytes to 64 KiB and a few): realistic text of one class
    in ``profile``'s encoding with one edge - ill-formed, truncated, a boundary
    code point, FE/FF - at a 64/128/256/512/4096/65536-byte boundary, at the end
    of a power-of-two length, or after a run of one class
    (:func:`utf8fuzz.engine.long.long_input`, which Atheris's mutator uses too).

    Its choices come from one random stream per example, not one Hypothesis draw
    each: drawn one by one they cost more than decoding the input (2 ms against
    0.5), and Hypothesis would shrink a choice of layout no better than the
    engine's minimizer shrinks the bytes."""
    return st.randoms(use_true_random=True).map(lambda r: long_mod.long_input(r, profile))


def inputs(profile: str = "unicode") -> st.SearchStrategy[bytes]:
    """Everything a decoder of ``profile`` should be tested on."""
    return st.one_of(
        near_valid(profile),
        block_boundary_inputs(profile),
        well_formed(profile),
        st.binary(max_size=64),
        st.lists(_SNIPPETS, max_size=6).map(b"".join),
    )


def _one_input(c: _Choices, profile: str) -> bytes:
    """One input of :func:`inputs`' five shapes, a fifth each."""
    kind = c.integer(0, 4)
    if kind == 0:
        return _near_valid(c, profile, 40)
    if kind == 1:
        return _block_boundary(c)
    if kind == 2:
        return c.well_formed(profile, 40)
    if kind == 3:
        return c.binary(64)
    return b"".join(c.picks(_SNIPPET_LIST, 0, 6))


def batches(profiles: Sequence[str], size: int, salt: int = 0) -> st.SearchStrategy[list[bytes]]:
    """Lists of ``size`` inputs of :func:`inputs`' shapes, each of one of ``profiles``:
    the fuzz engine's draw (:mod:`utf8fuzz.loop.hypothesis_worker`). ``salt`` goes
    into every batch's stream: Hypothesis starts each run of a test with its simplest
    example (the same seed, 0), which would otherwise be the same batch every run.

    One Hypothesis draw a batch, a random stream, and the same generators as the
    strategies above take their choices from it: a Hypothesis draw costs tens of
    microseconds, and a near-valid input makes about thirty choices, so drawn one by
    one they cost several times what comparing the input with every in-process
    decoder does. Nothing is lost to the engine: it never shrinks through Hypothesis
    (its minimizer shrinks the bytes, as :func:`long_inputs`' docstring says)."""
    names = tuple(profiles)

    def make(drawn: random.Random) -> list[bytes]:
        rng = random.Random(f"{salt}:{drawn.getrandbits(64)}")
        c = _Streamed(rng)
        return [_one_input(c, rng.choice(names)) for _ in range(size)]

    return st.randoms(use_true_random=True).map(make)
