"""Long inputs: realistic text with one structured edge where vectorized decoders
change code path, for both engines.

The short-input loop (Hypothesis's :func:`utf8fuzz.strategies.inputs`, libFuzzer
with ``-max_len=64``) never reaches what a SIMD decoder does past its first
blocks: loops unrolled over 4 x 64 bytes, counters that wrap, reads that cross a
4 KiB page, the tail of a 64 KiB buffer. :func:`long_input` makes such inputs, the
one generator behind both engines: the Hypothesis strategy
:func:`utf8fuzz.strategies.long_inputs` draws its choices from Hypothesis, the
Atheris custom mutator's long mode (:mod:`utf8fuzz.loop.mutator`) from its
seeded stream.

An input is text of one class - :data:`CLASSES`: ASCII, Latin (accented letters
among ASCII), Cyrillic, CJK, emoji (with ZWJ sequences, skin tones, flags), or a
mix of them - encoded by the profile's own encoder (so Corrected UTF-8 where the
profile is ``corrected``, CESU-8's surrogate pairs where it is ``cesu8``), with
exactly one *edge*: an ill-formed sequence, a truncated character, an encoded
boundary code point, a character of the class, or an FE/FF run. The edge is
placed in one of three layouts:

``block``  at a boundary of :data:`LONG_BLOCKS` (64 bytes to 64 KiB, or a small
           multiple of one): starting there, ending there or straddling it;
``end``    at the end of an input whose length is a power of two (half the time
           exactly, else a few bytes either side): a page's or a buffer's tail,
           where a decoder's last partial block is handled; truncations mostly;
``run``    right after a run of one class without a single ASCII byte, of a
           length around a power of two, or of a hundred, or any up to 600
           characters: where a counter of characters or of bytes wraps.

Lengths and offsets are exact: a text is cut at character boundaries and padded
with ASCII to the byte. Texts are cut from pools built once per process and
profile from a fixed seed (:func:`_pool`), so one input costs a few draws and a
few slices whatever its length.

Budget. :data:`LONG_SHARE` (a quarter) of each Hypothesis worker's time goes to
long inputs (:func:`utf8fuzz.loop.hypothesis_worker.hypothesis_worker` alternates short
and long calls by the time each took, less the time spent minimizing what they
found; ``$UTF8FUZZ_LONG_SHARE`` changes it); the Atheris mutator, when libFuzzer
allows long inputs, gives them the same share of the target's time
(:func:`utf8fuzz.loop.mutator.make_custom_mutator`). The short
loop's own examples are unchanged.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Sequence
from functools import cache
from typing import Protocol, TypeVar

from utf8fuzz.engine.boundaries import BOUNDARY_CODEPOINTS, bad_snippets
from utf8fuzz.profiles import get_profile

__all__ = [
    "CLASSES",
    "LONG_BLOCKS",
    "LONG_SHARE",
    "LONG_SHARE_ENV",
    "MAX_LONG",
    "SHORT_MAX",
    "Rng",
    "SplitMix64",
    "long_input",
    "long_share",
    "mutate_long",
]

_T = TypeVar("_T")
_MASK = (1 << 64) - 1

#: The text classes.
CLASSES: tuple[str, ...] = ("ascii", "latin", "cyrillic", "cjk", "emoji", "mixed")
#: Classes a run is made of (no ASCII in a run but in the ``ascii`` one).
RUN_CLASSES: tuple[str, ...] = ("ascii", "latin", "cyrillic", "cjk", "emoji")
#: Boundaries long inputs put their edge at: 64-byte blocks (and four of them),
#: 512 bytes, a 4 KiB page, a 64 KiB buffer.
LONG_BLOCKS: tuple[int, ...] = (64, 128, 256, 512, 4096, 65536)
#: How often each boundary is chosen (weights): pages often, 64 KiB rarely (an
#: input of that length costs sixteen pages' decoding).
_BLOCK_WEIGHTS: tuple[tuple[int, int], ...] = (
    (64, 3), (128, 3), (256, 6), (512, 4), (4096, 9), (65536, 1))
#: The same for the length of an input whose edge is at its end: a page's tail
#: most often.
_END_WEIGHTS: tuple[tuple[int, int], ...] = (
    (64, 2), (128, 2), (256, 3), (512, 3), (4096, 8), (65536, 1))
#: The longest input the short loop makes (libFuzzer's ``-max_len`` for it).
SHORT_MAX = 64
#: The longest long input: a 64 KiB buffer and a few bytes past it.
MAX_LONG = 65536 + 64
#: The share of a Hypothesis worker's time given to long inputs
#: (``$UTF8FUZZ_LONG_SHARE`` when set: :func:`long_share`).
LONG_SHARE = 0.25
LONG_SHARE_ENV = "UTF8FUZZ_LONG_SHARE"
#: Run lengths (characters) tried more often than others: around powers of two
#: and a hundred, where counters wrap.
_RUN_LENGTHS: tuple[int, ...] = (
    15, 16, 17, 31, 32, 33, 63, 64, 65, 99, 100, 101, 127, 128, 129, 255, 256, 257)
_POOL_CHARS = 24_000


def long_share() -> float:
    """``$UTF8FUZZ_LONG_SHARE`` when set (a number from 0, no long inputs, to 1,
    only long inputs), else :data:`LONG_SHARE`."""
    raw = os.environ.get(LONG_SHARE_ENV, "").strip()
    if not raw:
        return LONG_SHARE
    try:
        share = float(raw)
    except ValueError:
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"{LONG_SHARE_ENV}={raw!r}: expected a number from 0 to 1")
    return share


class Rng(Protocol):
    """What a generator draws on (:class:`random.Random` has it too)."""

    def random(self) -> float: ...
    def randrange(self, stop: int, /) -> int: ...
    def randint(self, a: int, b: int) -> int: ...
    def choice(self, seq: Sequence[_T]) -> _T: ...


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: a 64-bit state, one add and two
    multiplies per draw. Draws are reduced modulo the range; the bias (below
    2**-50 for the ranges used here) does not matter to a generator."""

    __slots__ = ("_s",)

    def __init__(self, seed: int) -> None:
        self._s = seed & _MASK

    def _next(self) -> int:
        self._s = z = (self._s + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        return (self._next() >> 11) / (1 << 53)

    def randrange(self, stop: int) -> int:
        return self._next() % stop

    def randint(self, a: int, b: int) -> int:
        return a + self._next() % (b - a + 1)

    def choice(self, seq: Sequence[_T]) -> _T:
        return seq[self._next() % len(seq)]


# -- the texts ------------------------------------------------------------------------
# Code point ranges, not literals: the source stays ASCII, and confusable letters
# (Cyrillic a, Latin a) stay apart.

_ACCENTED = [*range(0xE0, 0xF7), *range(0xF8, 0x100), *range(0x100, 0x180)]
_CYRILLIC = [*range(0x430, 0x450), 0x451]
_CYRILLIC_UPPER = list(range(0x410, 0x430))
_CJK_PUNCT = [0x3001, 0x3002, 0xFF0C, 0x300C, 0x300D]
_EMOJI = [*range(0x1F600, 0x1F650), *range(0x1F300, 0x1F400), *range(0x1F900, 0x1FA00)]
_SKIN = list(range(0x1F3FB, 0x1F400))
_FLAGS = list(range(0x1F1E6, 0x1F200))
_PUNCT = [ord(c) for c in ",.;:!?"]


def _word(rng: Rng, cls: str) -> list[int]:
    n = rng.randint(1, 9)
    if cls == "ascii":
        return [rng.randint(0x61, 0x7A) for _ in range(n)]
    if cls == "latin":  # a French or Polish word: mostly ASCII letters
        return [rng.choice(_ACCENTED) if rng.random() < 0.18 else rng.randint(0x61, 0x7A)
                for _ in range(n)]
    if cls == "cyrillic":
        w = [rng.choice(_CYRILLIC) for _ in range(n)]
        if rng.random() < 0.1:
            w[0] = rng.choice(_CYRILLIC_UPPER)
        return w
    if cls == "cjk":  # a clause: no spaces; kana among the ideographs
        return [rng.randint(0x3041, 0x3093) if rng.random() < 0.2 else rng.randint(0x4E00, 0x9FA5)
                for _ in range(rng.randint(2, 14))]
    # emoji among ASCII words: presentation selectors, skin tones, ZWJ families, flags
    r = rng.random()
    if r < 0.5:
        return [rng.randint(0x61, 0x7A) for _ in range(n)]
    if r < 0.7:
        return [rng.choice(_EMOJI)] + ([0xFE0F] if rng.random() < 0.3 else [])
    if r < 0.8:
        return [rng.choice(_EMOJI), rng.choice(_SKIN)]
    if r < 0.9:
        return [0x1F468, 0x200D, 0x1F469, 0x200D, 0x1F467]
    return [rng.choice(_FLAGS), rng.choice(_FLAGS)]


def _text_cps(rng: Rng, cls: str, chars: int) -> list[int]:
    out: list[int] = []
    classes = RUN_CLASSES
    cur = cls
    while len(out) < chars:
        if cls == "mixed" and rng.random() < 0.08:
            cur = rng.choice(classes)
        out += _word(rng, cur)
        r = rng.random()
        if cur == "cjk":
            out.append(rng.choice(_CJK_PUNCT) if r < 0.3 else 0x3002 if r < 0.35 else 0x20
                       if r < 0.4 else 0x4E00 + rng.randrange(0x5000))
        elif r < 0.08:
            out += [rng.choice(_PUNCT), 0x20]
        elif r < 0.1:
            out.append(0x0A)
        else:
            out.append(0x20)
    return out


def _run_cps(rng: Rng, cls: str, chars: int) -> list[int]:
    if cls == "ascii":
        return [rng.randint(0x61, 0x7A) for _ in range(chars)]
    if cls == "latin":
        return [rng.choice(_ACCENTED) for _ in range(chars)]
    if cls == "cyrillic":
        return [rng.choice(_CYRILLIC) for _ in range(chars)]
    if cls == "cjk":
        return [rng.randint(0x4E00, 0x9FA5) for _ in range(chars)]
    return [rng.choice(_EMOJI) for _ in range(chars)]


#: Profiles whose encoding of every pool code point (U+0001..U+10FFFF, no
#: surrogate, no noncharacter) is UTF-8's.
_UTF8_SAME = frozenset({"unicode", "rfc2279", "kuhn", "legacy", "surrogatepass"})
#: Profiles that encode a supplementary character as a UTF-8-encoded surrogate pair.
_PAIRS = frozenset({"cesu8", "mutf8"})


def _encode(profile: str, cps: Sequence[int]) -> tuple[bytes, list[int]]:
    """The bytes of ``cps`` in ``profile`` and the offset of each character.

    Why not ``Profile.encode`` alone: it costs a few microseconds a code point, and
    a pool has tens of thousands. The shortcuts are checked against it by
    ``tests/loop/test_long_inputs.py``."""
    if profile in _UTF8_SAME or profile in _PAIRS:
        units = []
        for cp in cps:
            c = chr(cp)
            if cp > 0xFFFF and profile in _PAIRS:
                v = cp - 0x10000
                c = chr(0xD800 | v >> 10) + chr(0xDC00 | v & 0x3FF)
            units.append(c.encode("utf-8", "surrogatepass"))
    else:
        prof = get_profile(profile)
        units = [prof.encode_one(cp) for cp in cps]
    starts, at = [], 0
    for u in units:
        starts.append(at)
        at += len(u)
    return b"".join(units), starts


class _Pool:
    """A long text in one profile's encoding, and where each character starts."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes, starts: Sequence[int]) -> None:
        self.data = data
        self.starts = array("q", starts)

    def cut(self, rng: Rng, n: int) -> bytes:
        """Whole characters from a random place: as many as fit in ``n`` bytes."""
        starts, data = self.starts, self.data
        a = starts[rng.randrange(len(starts))]
        if a + n >= len(data):
            return data[a:]  # the pool ends with a whole character
        return data[a:starts[bisect.bisect_right(starts, a + n) - 1]]

    def char(self, rng: Rng) -> bytes:
        """One character."""
        i = rng.randrange(len(self.starts) - 1)
        return self.data[self.starts[i]:self.starts[i + 1]]


@cache
def _pool(profile: str, cls: str, run: bool) -> _Pool:
    rng = SplitMix64(_seed_of(cls, run))
    chars = _POOL_CHARS if profile in _UTF8_SAME or profile in _PAIRS else _POOL_CHARS // 4
    cps = _run_cps(rng, cls, chars) if run else _text_cps(rng, cls, chars)
    data, starts = _encode(profile, cps)
    return _Pool(data, starts)


def _seed_of(cls: str, run: bool) -> int:
    # Fixed per class (str hashes change per process): the same pools everywhere.
    return int.from_bytes(f"{cls}/{run}".encode(), "little") & _MASK


def _fill(rng: Rng, profile: str, cls: str, n: int, *, run: bool = False) -> bytes:
    """Exactly ``n`` bytes of well-formed text: whole characters of the class,
    padded with ASCII (a space, or letters) to the byte."""
    if n <= 0:
        return b""
    pool = _pool(profile, cls, run)
    parts, have, tries = [], 0, 0
    while n - have > 4 and tries < 8:
        s = pool.cut(rng, n - have)
        tries += not s  # a character longer than what is left: try elsewhere
        parts.append(s)
        have += len(s)
    pad = n - have
    return b"".join(parts) + (b"a" * pad if run and cls == "ascii" else b" " * pad)


def _run(rng: Rng, profile: str, cls: str, chars: int) -> bytes:
    """``chars`` characters of the class and nothing else."""
    pool = _pool(profile, cls, True)
    out, left = [], chars
    starts = pool.starts
    while left > 0:
        i = rng.randrange(len(starts))
        j = min(len(starts) - 1, i + left)
        if j <= i:
            continue
        out.append(pool.data[starts[i]:starts[j]])
        left -= j - i
    return b"".join(out)


# -- the edges ------------------------------------------------------------------------

@cache
def _boundary_chars(profile: str) -> tuple[bytes, ...]:
    prof = get_profile(profile)
    out = []
    for cp in BOUNDARY_CODEPOINTS:
        try:
            out.append(prof.encode_one(cp))
        except ValueError:
            continue
    return tuple(out)


def _multibyte(rng: Rng, profile: str, n: int) -> bytes:
    """A character whose encoding in ``profile`` is ``n`` bytes long (2, 3 or 4;
    in a CESU-8-like profile, 4 gives a surrogate pair's first half's 3)."""
    lo, hi = {2: (0x80, 0x7FF), 3: (0x800, 0xFFFD), 4: (0x10000, 0x10FFFF)}[n]
    for _ in range(8):
        cp = rng.randint(lo, hi)
        if 0xD800 <= cp <= 0xDFFF or cp in (0xFFFE, 0xFFFF):
            continue
        try:
            return get_profile(profile).encode_one(cp)
        except ValueError:
            continue
    return "\u00e9".encode()


def _truncated(rng: Rng, profile: str) -> bytes:
    # 3-byte characters twice as often: the commonest multi-byte ones in text
    seq = _multibyte(rng, profile, rng.choice((2, 3, 3, 4)))
    return seq[: rng.randint(1, len(seq) - 1)]


def _edge(rng: Rng, profile: str, cls: str, at_end: bool) -> tuple[bytes, bool]:
    """One edge, and whether a continuation byte right after it could change it
    (a truncation or a lone lead: what follows it must not complete it)."""
    r = rng.random()
    if (at_end and r < 0.6) or r < 0.25:
        return _truncated(rng, profile), True
    if r < 0.55 or (at_end and r < 0.8):
        s = rng.choice(bad_snippets())
        return s, True
    if r < 0.7:
        return rng.choice(_boundary_chars(profile)), False
    if r < 0.85:
        return _pool(profile, cls if cls != "mixed" else "cyrillic", True).char(rng), False
    return bytes(rng.choice((0xFE, 0xFF)) for _ in range(rng.randint(1, 4))), False


def _block(rng: Rng, weights: tuple[tuple[int, int], ...] = _BLOCK_WEIGHTS) -> int:
    total = sum(w for _, w in weights)
    r = rng.randrange(total)
    for b, w in weights:
        if r < w:
            return b
        r -= w
    return LONG_BLOCKS[-1]


def long_input(rng: Rng, profile: str = "unicode") -> bytes:
    """One long input of ``profile`` (module docstring); longer than
    :data:`SHORT_MAX` and at most :data:`MAX_LONG` bytes. ``rng`` makes the choices;
    the text itself comes from a :class:`SplitMix64` seeded by one draw of it, so a
    Hypothesis strategy spends a dozen draws on an input whatever its length."""
    cls = rng.choice(CLASSES)
    mode = rng.choice(("block", "end", "run"))
    edge, open_end = _edge(rng, profile, cls, mode == "end")
    text = SplitMix64(rng.randrange(1 << 62))
    if mode == "end":
        b = _block(rng, _END_WEIGHTS)
        d = 0 if rng.random() < 0.6 else rng.choice((-3, -2, -1, 1, 2, 3))
        total = max(SHORT_MAX + 1, b + d)
        return _fill(text, profile, cls, total - len(edge)) + edge
    if mode == "block":
        b = _block(rng)
        b *= rng.choice((1, 1, 2, 3)) if b < 65536 else 1
        at = max(0, b + rng.randint(-len(edge) - 1, 1))  # ends at, straddles or starts at b
        tail_n = rng.choice((0, rng.randint(1, 16), rng.randint(1, min(b, 4096))))
        head = _fill(text, profile, cls, at)
    else:
        run_cls = rng.choice(RUN_CLASSES)
        r = rng.random()
        chars = rng.choice(_RUN_LENGTHS) if r < 0.6 else rng.randint(1, 600)
        lead = rng.choice((0, rng.randint(1, 64), rng.randint(1, 600)))
        head = _fill(text, profile, cls, lead) + _run(text, profile, run_cls, chars)
        tail_n = rng.choice((0, rng.randint(1, 16), rng.randint(1, 300)))
    tail = _fill(text, profile, cls, tail_n)
    if open_end and tail[:1] and 0x80 <= tail[0] <= 0xBF:
        tail = b" " + tail[1:]  # never completes the edge (pool text starts whole)
    out = head + edge + tail
    if len(out) <= SHORT_MAX:
        out = _fill(text, profile, cls, SHORT_MAX + 1 - len(out)) + out
    return out[:MAX_LONG]


def mutate_long(data: bytes, max_size: int, rng: Rng, profile: str = "unicode") -> bytes:
    """A long mutation of ``data`` (at most ``max_size`` bytes): half the time a
    new :func:`long_input`; else ``data`` with a new edge at a boundary it crosses,
    or cut or padded to a power of two (give or take a few bytes) with an edge at
    its end. For the Atheris custom mutator's long mode."""
    if len(data) <= SHORT_MAX or rng.random() < 0.5:
        return long_input(rng, profile)[:max_size]
    edge, _ = _edge(rng, profile, "ascii", False)
    buf = bytearray(data)
    bounds = [b * k for b in LONG_BLOCKS for k in (1, 2, 3) if b * k < len(buf)]
    if bounds and rng.random() < 0.6:
        at = max(0, rng.choice(bounds) + rng.randint(-len(edge) - 1, 1))
        buf[at:at + len(edge)] = edge
    else:
        target = _block(rng) + (0 if rng.random() < 0.5 else rng.randint(-3, 3))
        target = max(SHORT_MAX + 1, min(target, max_size))
        edge, _ = _edge(rng, profile, "ascii", True)
        body = bytes(buf[: max(0, target - len(edge))])
        body += b" " * (target - len(edge) - len(body))
        buf = bytearray(body + edge)
    return bytes(buf[:max_size])
