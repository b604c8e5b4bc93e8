"""Plug-ins for tests/hostile/test_processes_*.py, run in worker processes: each
decodes like CPython's UTF-8 codec except on inputs holding FE."""

from __future__ import annotations

import os
import threading

#: What ``floods`` returns for an input holding FE: 10 MB of text.
FLOOD = 10_000_000


def floods(data: bytes) -> str:
    """A ``+text`` decoder that returns 10 MB of text for any input holding FE."""
    if b"\xfe" in data:
        return "x" * FLOOD
    return data.decode("utf-8", "replace")


def spins(data: bytes) -> str:
    """Never returns on an input holding FE (the worker spins forever)."""
    if b"\xfe" in data:
        threading.Event().wait()
    return data.decode("utf-8")


def exits(data: bytes) -> str:
    """A ``+text`` decoder whose process exits (status 3) on an input holding FE."""
    if b"\xfe" in data:
        os._exit(3)
    return data.decode("utf-8", "replace")
