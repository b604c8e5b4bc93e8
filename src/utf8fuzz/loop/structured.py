"""Hypothesis's strategies inside the coverage-guided loop: a share of libFuzzer's
inputs are Hypothesis buffers, which :mod:`utf8fuzz.strategies` turn into inputs.

The rule is a function of the input's bytes alone (:func:`input_of`), so a replay of
libFuzzer's input, its crash file and its minimizer all get the same bytes:

* an input that starts with :data:`TAG` (``FF 48 59 50``, ``"\\xffHYP"``) is a
  *structured* one: the input compared is what :func:`utf8fuzz.strategies.inputs`
  (of every profile, in a fixed order) draws from the bytes after the tag, through
  Hypothesis's ``fuzz_one_input``, each choice read from those bytes (past their end,
  zeros: the simplest choice);
* an input that starts with the tag twice is the rest, as it is (:func:`escape`
  makes any input run as itself);
* any other input is compared as it is.

libFuzzer's coverage is that of the drawn input, so it steers the choices Hypothesis
reads: :func:`mutator` mutates a structured input's buffer with libFuzzer's own byte
mutations, and starts new ones from random bytes while structured inputs have had
less than their share of the target's work (:data:`SHARE_ENV`). The finder, and so
the corpus, only ever see the drawn input, never the buffer. A buffer means the same
input only under the same Hypothesis version: libFuzzer's own corpus of buffers is a
cache, like Hypothesis's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache, lru_cache

from utf8fuzz.engine.long import SplitMix64

#: The first bytes of a structured input.
TAG = b"\xffHYP"
#: The share of the Atheris target's work structured inputs get (``0``: none).
SHARE_ENV = "UTF8FUZZ_STRUCTURED_SHARE"
SHARE = 0.25
#: The work a structured input costs, in plain inputs: drawing it through Hypothesis
#: (about 1.2 ms) costs some twenty times comparing it (docs/performance.md).
COST = 20
#: The longest buffer the mutator makes (a short input's choices take 20-60 bytes).
MAX_BUFFER = 256
#: Zeros appended to every buffer: a short one still draws a whole input.
_PAD = bytes(MAX_BUFFER)


def share() -> float:
    """:data:`SHARE_ENV`, else :data:`SHARE`."""
    text = os.environ.get(SHARE_ENV)
    if not text:
        return SHARE
    try:
        value = float(text)
    except ValueError:
        raise SystemExit(f"utf8fuzz: ${SHARE_ENV} must be a number from 0 to 1") from None
    if not 0.0 <= value <= 1.0:
        raise SystemExit(f"utf8fuzz: ${SHARE_ENV} must be a number from 0 to 1")
    return value


def is_structured(data: bytes) -> bool:
    return data.startswith(TAG) and not data.startswith(TAG, len(TAG))


def escape(data: bytes) -> bytes:
    """The libFuzzer input that :func:`input_of` reads as ``data`` itself."""
    return TAG + data if data.startswith(TAG) else data


@cache
def _draw() -> Callable[[bytes], bytes | None]:
    """Hypothesis's ``fuzz_one_input`` over the strategies of every profile."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from utf8fuzz import strategies as u8
    from utf8fuzz.profiles import REGISTRY

    drawn: list[bytes] = []

    # database=None: nothing fails here, and nothing is to be written anywhere
    @settings(database=None, deadline=None)
    @given(st.one_of(*[u8.inputs(p) for p in sorted(REGISTRY)]))
    def target(data: bytes) -> None:
        drawn.append(data)

    run = target.hypothesis.fuzz_one_input  # type: ignore[attr-defined]

    def draw(buffer: bytes) -> bytes | None:
        drawn.clear()
        run(buffer + _PAD)
        return drawn[0] if drawn else None

    return draw


def input_of(data: bytes) -> bytes | None:
    """The input libFuzzer's ``data`` stands for (the module docstring); None when a
    buffer draws none (a filter of the strategies rejected it)."""
    if not data.startswith(TAG):
        return data
    rest = data[len(TAG):]
    if rest.startswith(TAG):
        return rest
    return _drawn(rest[:MAX_BUFFER])


@lru_cache(maxsize=4096)
def _drawn(buffer: bytes) -> bytes | None:
    """What ``buffer`` draws; the last few kept, for the mutator (:func:`mutator`)."""
    return _draw()(buffer)


def mutator(inner: Callable[[bytes, int, int], bytes],
            mutate: Callable[[bytes, int], bytes] | None,
            part: float | None = None) -> Callable[[bytes, int, int], bytes]:
    """A custom mutator: ``inner`` (the UTF-8 one) for plain inputs, ``mutate``
    (``atheris.Mutate``, libFuzzer's byte mutations; None: random bytes set) for a
    structured input's buffer. While structured inputs have had less than ``part``
    (default :func:`share`) of the work (a plain input 1, a structured one
    :data:`COST`), a plain input is replaced by a new structured one; while they
    have had more, a structured input libFuzzer picks from its corpus is mutated as
    the plain input it drew, so their share holds whatever the corpus holds."""
    part = share() if part is None else part
    spent = [0, 0]  # work of the plain and of the structured inputs made

    def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
        room = min(max_size, len(TAG) + MAX_BUFFER) - len(TAG)
        total = spent[0] + spent[1]
        over = part <= 0.0 or (part < 1.0 and total > 0 and spent[1] >= part * total)
        if is_structured(data) and (over or room <= 0):
            drawn = _drawn(data[len(TAG):len(TAG) + MAX_BUFFER])  # kept: no draw again
            data = b"" if drawn is None else drawn
        elif room > 0 and is_structured(data):
            buf = data[len(TAG):len(TAG) + room]
            if mutate is not None:
                buf = mutate(buf, room)
            else:
                rng = SplitMix64(seed)
                b = bytearray(buf or b"\0")
                b[rng.randrange(len(b))] = rng.randrange(256)
                buf = bytes(b)
            spent[1] += COST
            return TAG + buf[:room]
        elif room > 0 and not over and total > 0:
            rng = SplitMix64(seed)
            spent[1] += COST
            return TAG + bytes(rng.randrange(256) for _ in range(rng.randint(1, min(64, room))))
        spent[0] += 1
        return inner(data, max_size, seed)

    return custom_mutator
