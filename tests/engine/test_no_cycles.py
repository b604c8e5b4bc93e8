"""The fuzz loop leaves no reference cycles behind.

A kept exception is the usual culprit: its traceback holds the frame that holds
it, and from there the whole stack's locals. Nothing fails - the garbage collector
frees it later - but at 50 objects an input that was a measurable part of every
execution's cost. Every in-process decoder, screened and in full, on inputs that
reach each adapter's error paths.
"""

from __future__ import annotations

import gc
import random
from collections import Counter

import pytest

from tests.engine.planted import Crashes
from utf8fuzz import decoders
from utf8fuzz.engine.boundaries import all_snippets
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.screening import is_out_of_process


def _inputs() -> list[bytes]:
    rng = random.Random(5)
    snippets = all_snippets()
    out = [b"", b"plain", b"\xef\xbb\xbfBOM", b"\xed\xa0\x80\xed\xb0\x80", b"\xc0\x80\xfe"]
    for _ in range(150):
        out.append(b"".join(rng.choice(snippets) for _ in range(rng.randint(1, 8)))[:64])
        out.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))))
    return out


@pytest.mark.parametrize(("full_every", "round_size"), [(1, 1), (8, 1), (8, 32)])
def test_a_differ_run_leaves_no_cyclic_garbage(full_every, round_size):
    """Run input by input, and in rounds as the Atheris loop does (which
    is why that loop can leave the collector off between rare collections)."""
    decs = [d for d in decoders.available() if not is_out_of_process(d)] + [Crashes()]
    differ = Differ(decs, full_every=full_every)
    inputs = _inputs()
    for x in inputs:  # warm up: caches, lazily opened converters
        differ.run(x)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for i in range(0, len(inputs), round_size):
            for res in differ.run_many(inputs[i:i + round_size]):
                res.divergences  # noqa: B018 - as the fuzz loop does
        gc.collect()
        garbage = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not garbage, f"reference cycles left per input: {garbage.most_common(8)}"
