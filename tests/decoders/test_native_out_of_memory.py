"""The decoders' C glue (``decoders/_native.c``: ICU, iconv, the C tiling walk and
CPython's incremental screen) when memory runs out: MemoryError or the same
answer, each Python allocation failing in turn (:mod:`tests.nomemory`). The
libraries' own allocations (ICU's, glibc's) are theirs and are not failed."""

from __future__ import annotations

import codecs
from functools import partial
from typing import Any

import pytest
from tests.nomemory import check_every_allocation, require_testcapi

from utf8fuzz.decoders import iconv, icu
from utf8fuzz.decoders.base import Decoder

_native = pytest.importorskip("utf8fuzz.decoders._native",
                              reason="utf8fuzz.decoders._native is not built")

INPUTS = [
    b"",
    "caf\u00e9 \u20ac \U0001f600".encode(),
    bytes.fromhex("41 c080 eda080 eda080edb080 f888808080 fe f09f98"),
    ("\u00e9\u4e2d\U0001f600" * 40).encode() + b"\xff\xe2\x82",
]
#: A result may be built a code point at a time here (an int object each).
LIMIT = 1000


def found(module: Any) -> list[Any]:
    return [d for d in module.discover() if isinstance(d, Decoder)]


def test_icu_glue() -> None:
    require_testcapi()
    decs = found(icu)
    if not decs:
        pytest.skip("no ICU here")
    for d in decs:
        for data in INPUTS:
            for fn in (_native.icu_screen, _native.icu_decode):
                what = f"{d.name} {fn.__name__} {data[:12].hex(' ')}"
                check_every_allocation(lambda fn=fn, d=d, data=data: partial(
                    fn, *d._args, data, d._cesu8), what, limit=LIMIT)


def test_iconv_glue() -> None:
    require_testcapi()
    decs = found(iconv)
    if not decs:
        pytest.skip("no iconv here")
    for d in decs:
        for data in INPUTS:
            what = f"{d.name} {data[:12].hex(' ')}"
            check_every_allocation(lambda d=d, data=data: partial(
                _native.iconv_run, d._cd, data, d._kind, True), what + " run", limit=LIMIT)
            check_every_allocation(lambda d=d, data=data: partial(
                _native.iconv_convert, d._cd, data), what + " convert", limit=LIMIT)


def test_tiling_and_the_incremental_screen() -> None:
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
            _native.tile_text, data, text, errors, 0), f"tile_text {data[:12].hex(' ')}",
            limit=LIMIT)
        check_every_allocation(lambda data=data: partial(
            _native.incremental_screen, codecs.utf_8_decode, data),
            f"incremental_screen {data[:12].hex(' ')}", limit=LIMIT)
