"""Every function of the fast path when memory runs out: MemoryError, never a crash,
a wrong result or a half-built object (:mod:`tests.nomemory` says how), on every
code path and on inputs that reach each kind of allocation.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from tests.fast._fastcases import each_path
from tests.nomemory import check_every_allocation, require_testcapi
from utf8fuzz import fast

#: Inputs that reach each kind of allocation: none (ASCII kept as is), the str of
#: each width (1, 2 and 4 bytes a character), error lists and handler calls, and
#: a result large enough to come from the allocator's big-block path.
INPUTS = [
    b"",
    b"plain ascii",
    "caf\u00e9 \u20ac \U0001f600".encode(),
    b"A\xc0\x80B\xed\xa0\x80C\xf0\x9f\x98",
    b"\xff" * 3 + "\u0416".encode() * 20,
    ("x\u00e9\u4e2d\U0001f600" * 4096).encode() + b"\xe2\x82",
]

CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("validate", fast.validate),
    ("first_error", fast.first_error),
    ("error_spans", fast.error_spans),
    ("decode strict", fast.decode),
    ("decode replace", partial(fast.decode, errors="replace")),
    ("decode ignore", partial(fast.decode, errors="ignore")),
    ("decode surrogateescape", partial(fast.decode, errors="surrogateescape")),
    ("decode backslashreplace", partial(fast.decode, errors="backslashreplace")),
    ("decode_corrected", partial(fast.decode_corrected, errors="replace")),
    ("decode_corrected_text", partial(fast.decode_corrected_text, errors="replace")),
    ("corrected_first_error", fast.corrected_first_error),
    ("corrected_error_spans", fast.corrected_error_spans),
    ("encode_corrected", fast.encode_corrected),
]
#: encode_corrected takes code points: each input's, as CPython decodes it.
ENCODE_INPUTS = [array("I", map(ord, d.decode("utf-8", "replace"))) for d in INPUTS]


@pytest.mark.parametrize(("name", "fn"), CALLS, ids=[n for n, _ in CALLS])
def test_an_allocation_failure_is_a_memory_error_or_nothing(name: str,
                                                             fn: Callable[[Any], Any]) -> None:
    require_testcapi()
    for path in each_path():
        for data in ENCODE_INPUTS if name == "encode_corrected" else INPUTS:
            what = f"{name} on the {path} path, input {bytes(data[:20]).hex(' ')}"
            check_every_allocation(lambda data=data: partial(fn, data), what)
