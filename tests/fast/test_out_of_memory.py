"""Every function of the fast path when memory runs out: MemoryError, never a crash,
a wrong result or a half-built object.

CPython's ``_testcapi.set_nomemory(start, stop)`` makes the allocations numbered
``start`` to ``stop - 1`` after the call fail (all three allocator domains). Each
call below is repeated with its first, second, ... allocation failing until one
run completes without meeting the failure; each run must either raise
MemoryError or return exactly what the call returns with memory to spare. Under
``make asan-test`` the same runs also catch a leak's use-after-free or a write
through a NULL that a missed check would cause.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from tests.fast._fastcases import each_path

from utf8fuzz import fast

_testcapi = pytest.importorskip("_testcapi", reason="CPython's _testcapi is not installed")

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

# Called directly (functools.partial is C): a Python frame in between would have
# the interpreter allocate a traceback entry under the failing allocator, and
# CPython 3.11 can answer that with a SystemError of its own.
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

#: Allocations to fail in turn before giving up on a call that keeps meeting them
#: (none of these calls makes nearly as many).
LIMIT = 200


def outcome(fn: Callable[[Any], Any], data: Any) -> tuple[str, Any]:
    """What the call gives: ("ok", value) or ("raises", exception type and args)."""
    try:
        return ("ok", fn(data))
    except Exception as e:  # any exception is the call's answer here
        return ("raises", (type(e), e.args))


def starved(fn: Callable[[Any], Any], data: Any, start: int) -> tuple[str, Any] | None:
    """The call with allocation ``start`` failing: its outcome, or None on MemoryError.

    The hooks are removed right after the call, before anything else allocates:
    this test's own bookkeeping under them fails in the interpreter's ways, not
    the fast path's."""
    error: BaseException | None = None
    _testcapi.set_nomemory(start, start + 1)
    try:
        value = fn(data)
    except BaseException as e:
        _testcapi.remove_mem_hooks()
        error = e
    else:
        _testcapi.remove_mem_hooks()
        return ("ok", value)
    if isinstance(error, MemoryError):
        return None
    if not isinstance(error, Exception):
        raise error
    return ("raises", (type(error), error.args))


@pytest.mark.parametrize(("name", "fn"), CALLS, ids=[n for n, _ in CALLS])
def test_an_allocation_failure_is_a_memory_error_or_nothing(name: str,
                                                             fn: Callable[[Any], Any]) -> None:
    for path in each_path():
        for data in ENCODE_INPUTS if name == "encode_corrected" else INPUTS:
            want = outcome(fn, data)
            clean = 0  # runs in a row that met no failure
            for start in range(LIMIT):
                got = starved(fn, data, start)
                if got is None:
                    clean = 0
                    continue
                assert got == want, (path, name, bytes(data[:40]).hex(" "), start)
                clean += 1
                if clean == 8:
                    break  # past the call's last allocation
            else:
                pytest.fail(f"{name} on {path} kept allocating past {LIMIT} allocations")
