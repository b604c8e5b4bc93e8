"""The decoders' C glue (``decoders/_icu.c``, ``_iconv.c``, ``_cpython.c``: the
library calls, the C tiling walk, CPython's incremental loops and screens; and the
fast path's whole views, ``fast/screen.c``) when memory runs out: MemoryError or
the same answer, each Python allocation failing in turn (:mod:`tests.nomemory`).
The libraries' own allocations (ICU's, glibc's) are theirs and are not failed."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from tests.nomemory import check_every_allocation, require_testcapi
from utf8fuzz.decoders import _cpython, _iconv, _icu, cpython, fast, iconv, icu
from utf8fuzz.decoders.base import Decoder

INPUTS = [
    b"",
    "caf\u00e9 \u20ac \U0001f600".encode(),
    bytes.fromhex("41 c080 eda080 eda080edb080 f888808080 fe f09f98"),
    ("\u00e9\u4e2d\U0001f600" * 40).encode() + b"\xff\xe2\x82",
]
#: A result may be built a code point at a time here (an int object each).
LIMIT = 1000


#: Each library's adapters, and the C calls each makes on an input.
GLUE: dict[str, tuple[Any, Callable[[Any, bytes], list[Any]]]] = {
    "icu": (icu, lambda d, data: [partial(_icu.icu_screen, *d._args, data, d._cesu8),
                                  partial(_icu.icu_decode, *d._args, data, d._cesu8)]),
    "iconv": (iconv, lambda d, data: [partial(_iconv.iconv_run, d._cd, data, d._kind, True),
                                      partial(_iconv.iconv_convert, d._cd, data),
                                      partial(d.screen, data)]),  # iconv_screen
    # the fast path's whole views are a partial of _fast.fast_screen already
    "fast": (fast, lambda d, data: [partial(d.whole_views, data)]),
}


@pytest.mark.parametrize("library", GLUE)
def test_library_glue(library: str) -> None:
    require_testcapi()
    module, calls = GLUE[library]
    decs = [d for d in module.discover() if isinstance(d, Decoder)]
    if not decs:
        pytest.skip(f"no {library} here")
    for d in decs:
        for data in INPUTS:
            for call in calls(d, data):
                what = f"{d.name} {getattr(call.func, '__name__', call.func)} {data[:12].hex(' ')}"
                check_every_allocation(lambda call=call: call, what, limit=LIMIT)


def test_tiling_and_the_cpython_loops_and_screens() -> None:
    require_testcapi()
    for data in INPUTS:
        text = data.decode("utf-8", "ignore")
        errors: list[tuple[int, int, str]] = []
        k = 0
        while k < len(data):  # the errors CPython reports, as a recording handler sees them
            try:
                data[k:].decode("utf-8")
                break
            except UnicodeDecodeError as e:
                reason = "truncated" if e.reason == "unexpected end of data" else "illegal"
                errors.append((k + e.start, k + e.end, reason))
                k += e.end
        check_every_allocation(lambda data=data, text=text, errors=errors: partial(
            _cpython.tile_text, data, text, errors, 0), f"tile_text {data[:12].hex(' ')}",
            limit=LIMIT)
        check_every_allocation(lambda data=data: partial(
            _cpython.incremental_screen, codecs.utf_8_decode, data),
            f"incremental_screen {data[:12].hex(' ')}", limit=LIMIT)
        check_every_allocation(lambda data=data: partial(
            _cpython.incremental_decode, codecs.utf_8_decode, data, cpython.BASED_HANDLER),
            f"incremental_decode {data[:12].hex(' ')}", limit=LIMIT)
        for how, errors, view in ((cpython.HOW_STRICT, "strict", ""),
                                  (cpython.HOW_STRICT, "surrogatepass", ""),
                                  (cpython.HOW_VIEW, "replace", "replace"),
                                  (cpython.HOW_RECORDING, "replace", "")):
            check_every_allocation(lambda data=data, how=how, errors=errors, view=view: partial(
                _cpython.codec_screen, how, errors, view, data),
                f"codec_screen {how} {errors} {data[:12].hex(' ')}", limit=LIMIT)
