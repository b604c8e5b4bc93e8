"""Fault injection for the C extensions: run a call with each of its allocations
failing in turn (CPython's ``_testcapi.set_nomemory``) and hold every run to
"MemoryError, or exactly the answer it gives with memory to spare".

A missed NULL check shows as a crash (a segfault, or under ``make asan-test`` a
sanitizer report), a SystemError ("error return without exception set"), or a
wrong answer. Call the C function directly (``functools.partial`` is C): a Python
frame in between has the interpreter allocate a traceback entry under the failing
allocator, and CPython 3.11 can answer that with a SystemError of its own.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest

#: Allocations to fail in turn, by default, before giving up on a call that keeps
#: meeting them.
LIMIT = 200


def require_testcapi() -> Any:
    return pytest.importorskip("_testcapi", reason="CPython's _testcapi is not installed")


def _same(v: Any) -> Any:
    return v


def answer(fn: Callable[[], Any], key: Callable[[Any], Any] = _same) -> tuple[str, Any]:
    """What the call gives: ("ok", key(value)) or ("raises", exception type and args)."""
    try:
        return ("ok", key(fn()))
    except Exception as e:  # any exception is the call's answer here
        return ("raises", (type(e), e.args))


def starved(fn: Callable[[], Any], start: int,
            key: Callable[[Any], Any] = _same) -> tuple[str, Any] | None:
    """The call with allocation ``start`` failing: its answer, or None on MemoryError.
    The hooks are removed right after the call, before anything else allocates."""
    capi = require_testcapi()
    error: BaseException | None = None
    # No collection inside: a gc callback (Hypothesis has one) would meet the
    # failure and report it as an unraisable exception of its own.
    enabled = gc.isenabled()
    gc.disable()
    capi.set_nomemory(start, start + 1)
    try:
        value = fn()
    except BaseException as e:
        capi.remove_mem_hooks()
        error = e
    else:
        capi.remove_mem_hooks()
        return ("ok", key(value))
    finally:
        if enabled:
            gc.enable()
    if isinstance(error, MemoryError):
        return None
    if not isinstance(error, Exception):
        raise error
    return ("raises", (type(error), error.args))


def check_every_allocation(make: Callable[[], Callable[[], Any]], what: str = "",
                           key: Callable[[Any], Any] = _same, limit: int = LIMIT) -> int:
    """``make()`` gives a fresh call (state it caches is made anew each time); the
    call must give the same answer as with memory to spare, or MemoryError, with
    each of its allocations failing in turn (a value is compared as ``key(value)``,
    taken after the allocator is back). Returns the number of runs that met a
    failure (a caller can check that some did)."""
    want = answer(make(), key)
    failed = clean = 0  # runs that met the failure; runs in a row that did not
    for start in range(limit):
        got = starved(make(), start, key)
        if got is None:
            failed += 1
            clean = 0
            continue
        assert got == want, (what, start)
        clean += 1
        if clean == 8:
            return failed  # past the call's last allocation
    pytest.fail(f"{what}: still allocating after {limit} allocations")
