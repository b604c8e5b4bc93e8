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
from utf8fuzz.engine.long import MUTATE_SHARE, SHORT_MAX, Rng, SplitMix64, mutate_long
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


def make_custom_mutator(
    fallback: Callable[[bytes, int], bytes] | None,
    profiles: Sequence[str] = ("unicode",),
) -> Callable[[bytes, int, int], bytes]:
    """The ``custom_mutator`` for ``atheris.Setup``; ``fallback`` is ``atheris.Mutate``.

    Long mode: when libFuzzer allows inputs longer than :data:`~.long.SHORT_MAX`
    (``-max_len``), :data:`~.long.MUTATE_SHARE` of the calls, and every call on an
    input that is long already, make or mutate a long input
    (:func:`~.long.mutate_long`, text of one of ``profiles``); the other calls
    are the short mutations above, held to :data:`~.long.SHORT_MAX` bytes, so the
    short loop's inputs stay as short as with ``-max_len=64``."""
    profiles = tuple(profiles) or ("unicode",)

    def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rng = SplitMix64(seed)
        if max_size > SHORT_MAX:
            if len(data) > SHORT_MAX or rng.random() < MUTATE_SHARE:
                return mutate_long(data, max_size, rng, rng.choice(profiles))
            max_size = SHORT_MAX
        if fallback is not None and rng.random() < 0.5:
            return fallback(data, max_size)
        return utf8_mutate(data, max_size, rng)

    return custom_mutator
