"""Plug-in decoders that end or stop the process running them on one byte pattern,
and decode like CPython's strict UTF-8 codec (the reference's behaviour) otherwise,
so that the only divergence they show is the one planted.

Each is a plain ``bytes -> str`` function (``--decoder
tests.engine.killers:segfaults_on_fe+inprocess``)."""

from __future__ import annotations

import ctypes
import os
import threading


def segfaults_on_fe(data: bytes) -> str:
    """SIGSEGV (a read of address 0 through ctypes) on any input holding FE."""
    if b"\xfe" in data:
        ctypes.string_at(0)
    return data.decode("utf-8")


def aborts_on_fe(data: bytes) -> str:
    """SIGABRT (``os.abort()``) on any input holding FE."""
    if b"\xfe" in data:
        os.abort()
    return data.decode("utf-8")


def exits_on_fe(data: bytes) -> str:
    """``SystemExit`` (not an ``Exception``, still a crash outcome) on any input holding FE."""
    if b"\xfe" in data:
        raise SystemExit(3)
    return data.decode("utf-8")


def interrupts_on_fe(data: bytes) -> str:
    """``KeyboardInterrupt`` raised by the decoder itself on any input holding FE."""
    if b"\xfe" in data:
        raise KeyboardInterrupt
    return data.decode("utf-8")


def hangs_on_fe(data: bytes) -> str:
    """Never returns on an input holding FE."""
    if b"\xfe" in data:
        threading.Event().wait()
    return data.decode("utf-8")


def segfaults_on_fe_aborts_on_ff(data: bytes) -> str:
    """Two crash bugs in one decoder: SIGSEGV on FE, SIGABRT on FF."""
    if b"\xff" in data:
        os.abort()
    return segfaults_on_fe(data)
