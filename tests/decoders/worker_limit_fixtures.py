"""Plug-ins that test a worker's bounds (tests/decoders/test_worker_limits.py):
each misbehaves only on its trigger input."""

from __future__ import annotations

import ctypes
import os
import sys
import time

#: What the chatty plug-in writes to stderr before it dies, and its last words.
CHATTER_BYTES = 200 << 20
LAST_WORDS = "the last words of a chatty plug-in"


def chatty_segfault(data: bytes) -> str:
    """Writes CHATTER_BYTES to stderr, then its last words, then segfaults."""
    if data == b"die":
        block = b"chatter " * (1 << 17)  # 1 MiB
        err = sys.stderr.buffer
        for _ in range(CHATTER_BYTES // len(block)):
            err.write(block)
        err.write(f"\n{LAST_WORDS}\n".encode())
        err.flush()
        ctypes.string_at(0)
    return data.decode("utf-8")


def hoards(data: bytes) -> str:
    """Allocates (and touches) memory without bound: a MemoryError under a limit."""
    if data == b"grow":
        hoard = []
        while True:
            hoard.append(b"x" * (16 << 20))
    return data.decode("utf-8")


def hoards_in_c(data: bytes) -> str:
    """Touches malloc'd memory until malloc fails, then aborts, as C libraries'
    xmalloc does: dies without a word about memory."""
    if data == b"grow":
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        step = 16 << 20
        while True:
            p = libc.malloc(step)
            if not p:
                os.abort()
            ctypes.memset(p, 1, step)
    return data.decode("utf-8")


def hangs(data: bytes) -> str:
    """Sleeps forever on b"hang", once it has made the file named by
    ``$UTF8FUZZ_TEST_HANG_FLAG`` (if set)."""
    if data == b"hang":
        flag = os.environ.get("UTF8FUZZ_TEST_HANG_FLAG")
        if flag:
            with open(flag, "w") as f:
                f.write(str(os.getpid()))
        while True:
            time.sleep(0.05)
    return data.decode("utf-8")
