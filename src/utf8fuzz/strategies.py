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


def _encodable(profile: str, cp: int) -> bool:
    try:
        get_profile(profile).encode_one(cp)
    except EncodeError:
        return False
    return True


def boundary_codepoints(profile: str = "unicode") -> st.SearchStrategy[int]:
    """Boundary code points the profile can encode."""
    cps = [cp for cp in BOUNDARY_CODEPOINTS if _encodable(profile, cp)]
    return st.sampled_from(cps)


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


def well_formed(profile: str = "unicode", max_size: int = 40) -> st.SearchStrategy[bytes]:
    """Well-formed byte strings of the profile (encoded code point lists)."""
    prof = get_profile(profile)
    return st.lists(codepoints(profile), max_size=max_size).map(prof.encode)


_SNIPPETS = st.sampled_from(all_snippets())


@st.composite
def near_valid(draw: st.DrawFn, profile: str = "unicode", max_size: int = 40) -> bytes:
    """Well-formed text with one to four ill-formed mutations."""
    buf = bytearray(draw(well_formed(profile, max_size)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("insert", "replace", "delete", "truncate", "flip", "fefe")))
        i = draw(st.integers(0, len(buf)))
        if op == "insert":
            buf[i:i] = draw(_SNIPPETS)
        elif op == "replace" and buf:
            s = draw(_SNIPPETS)
            buf[i : i + len(s)] = s
        elif op == "delete" and buf:
            del buf[min(i, len(buf) - 1)]
        elif op == "truncate" and buf:
            del buf[i:]
        elif op == "flip" and buf:
            j = min(i, len(buf) - 1)
            buf[j] ^= draw(st.sampled_from((0x40, 0x80, 0xC0, 0x20)))
        elif op == "fefe":
            buf[i:i] = bytes(draw(st.lists(st.sampled_from((0xFE, 0xFF)), min_size=1,
                                           max_size=6)))
    return bytes(buf)


@st.composite
def block_boundary_inputs(draw: st.DrawFn, profile: str = "unicode") -> bytes:
    """A bad sequence at, just before or just after a 16/32/64-byte boundary, in
    well-formed padding (ASCII, or a few multi-byte characters)."""
    block = draw(st.sampled_from(BLOCKS))
    k = draw(st.integers(1, 2))
    bad = draw(st.sampled_from(bad_snippets()))
    # Place the bad sequence so that it starts, ends or straddles the boundary.
    shift = draw(st.integers(-len(bad), 1))
    at = max(0, block * k + shift)
    pad = draw(st.sampled_from((b"A", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80")))
    head = pad * (at // len(pad)) + b"A" * (at % len(pad))  # whole characters only
    tail = draw(st.binary(max_size=8)) if draw(st.booleans()) else b"A" * draw(st.integers(0, 17))
    if tail[:1] and 0x80 <= tail[0] <= 0xBF:
        # A continuation byte could complete a truncated snippet (F0 BE BF + 80 is
        # well-formed); the point of the input is a bad sequence at the boundary.
        tail = b"A" + tail
    return head + bad + tail


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
