"""A UTF-8-aware custom mutator for libFuzzer (through Atheris).

libFuzzer's own mutations flip bits and splice bytes; they rarely build ``F4 90 80
80`` or put a bad byte exactly at a 16-byte boundary. Half of the time this mutator
does one of these instead (the other half it defers to ``atheris.Mutate``, so
coverage-guided byte mutations still happen):

* insert or overwrite an encoded boundary code point, a non-shortest form, an
  encoded surrogate, a value above U+10FFFF, a 5- or 6-byte form, an FE/FF run
  (:mod:`utf8fuzz.engine.boundaries`);
* truncate a multi-byte sequence (cut its last bytes, at the end or mid-input);
* place a bad sequence at, just before or just after a 16-, 32- or 64-byte boundary,
  padding with 'A' when the input is shorter.

Long mode (``-max_len`` above 64): a share of the calls make or mutate long
inputs instead (:func:`make_custom_mutator`, :mod:`utf8fuzz.engine.long`).

It is deterministic in ``seed`` (libFuzzer replays mutations by seed). libFuzzer
calls it for every execution, so its randomness is a SplitMix64 stream seeded from
``seed``: seeding :class:`random.Random` (the Mersenne Twister's initialisation) cost
about 5 µs, more than the mutation itself, and libFuzzer asks for determinism,
not for the Twister.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from utf8fuzz.engine.boundaries import all_snippets, bad_snippets
from utf8fuzz.engine.long import SHORT_MAX, Rng, SplitMix64, long_share, mutate_long
from utf8fuzz.profiles.walk import BLOCKS

__all__ = ["Rng", "SplitMix64", "make_custom_mutator", "utf8_mutate"]

_ALL = all_snippets()
_BAD = bad_snippets()


def utf8_mutate(data: bytes, max_size: int, rng: Rng) -> bytes:
    buf = bytearray(data)
    op = rng.randrange(5)
    if op == 0:  # insert a snippet
        s = rng.choice(_ALL)
        i = rng.randint(0, len(buf))
        buf[i:i] = s
    elif op == 1:  # overwrite with a snippet
        s = rng.choice(_ALL)
        i = rng.randint(0, len(buf))
        buf[i : i + len(s)] = s
    elif op == 2:  # truncate a multi-byte sequence
        leads = [i for i, b in enumerate(buf) if b >= 0xC0]
        if leads:
            i = rng.choice(leads)
            j = i + 1
            while j < len(buf) and 0x80 <= buf[j] <= 0xBF:
                j += 1
            cut = rng.randint(1, max(1, j - i - 1))
            del buf[j - cut : j]
        else:
            buf += rng.choice(_BAD)[:1]
    elif op == 3:  # bad bytes at a block boundary
        block = rng.choice([b for b in BLOCKS if b < max_size] or [BLOCKS[0]])
        s = rng.choice(_BAD)
        at = max(0, block + rng.randint(-len(s), 1))
        if len(buf) < at:
            buf += b"A" * (at - len(buf))
        buf[at : at + len(s)] = s
    else:  # FE/FF run
        i = rng.randint(0, len(buf))
        buf[i:i] = bytes(rng.choice((0xFE, 0xFF)) for _ in range(rng.randint(1, 4)))
    return bytes(buf[:max_size])


#: What one input costs the target besides its bytes, in bytes: the Atheris
#: engine's long share is counted in bytes plus this per input. On the full decoder
#: set a long input (5 KB on average) cost about a hundred short ones (measured
#: 2026-11-27, docs/performance.md), which 40 reproduces within a factor of two;
#: the time between two mutator calls cannot be used, since the target compares
#: its inputs in rounds of 32 and a round's time falls on whichever call ends it.
PER_INPUT_BYTES = 40


def make_custom_mutator(
    fallback: Callable[[bytes, int], bytes] | None,
    profiles: Sequence[str] = ("unicode",),
    share: float | None = None,
) -> Callable[[bytes, int, int], bytes]:
    """The ``custom_mutator`` for ``atheris.Setup``; ``fallback`` is ``atheris.Mutate``.

    Long mode: when libFuzzer allows inputs longer than :data:`~.long.SHORT_MAX`
    (``-max_len``), long inputs get ``share`` of the target's work (default
    :func:`~.long.long_share`, the share the Hypothesis engine gives them), an
    input's work being its length plus :data:`PER_INPUT_BYTES`: a call makes or
    mutates a long input (:func:`~.long.mutate_long`, text of one of ``profiles``)
    only while the long ones have had less than their share. The other calls are
    the short mutations above, held to :data:`~.long.SHORT_MAX` bytes (a long input
    libFuzzer hands back is cut to a window of that size first), so the short loop
    keeps its inputs and most of its speed: a share of the calls instead gave long
    inputs nearly all of the time."""
    profiles = tuple(profiles) or ("unicode",)
    part = long_share() if share is None else share
    spent = [0, 0]  # work of the short and of the long inputs made

    def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rng = SplitMix64(seed)
        if max_size > SHORT_MAX:
            total = spent[0] + spent[1]
            if part >= 1.0 or (part > 0.0 and total > 0 and spent[1] < part * total):
                out = mutate_long(data, max_size, rng, rng.choice(profiles))
                spent[1] += len(out) + PER_INPUT_BYTES
                return out
            max_size = SHORT_MAX
            if len(data) > SHORT_MAX:
                at = rng.randrange(len(data) - SHORT_MAX + 1)
                data = data[at:at + SHORT_MAX]
        out = (fallback(data, max_size) if fallback is not None and rng.random() < 0.5
               else utf8_mutate(data, max_size, rng))
        spent[0] += len(out) + PER_INPUT_BYTES
        return out

    return custom_mutator
