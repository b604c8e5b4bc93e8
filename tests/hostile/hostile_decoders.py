"""Not a test: in-process plug-in decoders that misbehave on one byte pattern (an
input holding FE) and decode like CPython's UTF-8 codec otherwise, so that the
only finding they can give is the planted one. ``SAID`` (ESC, U+202E, NUL) is in
whatever they say, to prove nothing of it reaches a terminal raw."""

from __future__ import annotations

import codecs
import ctypes
import sys
from typing import Any

from tests.cli.hostile import HOSTILE, SAID
from utf8fuzz.outcome import Outcome


def _strict(data: bytes) -> Outcome:
    """CPython's strict view of ``data``, as an outcome (what the ``+outcome``
    decoders give on inputs they do not misbehave on)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return Outcome.partial(len(data), strict=(e.start, e.end))
    return Outcome.partial(len(data), strict=None)


def huge_text(data: bytes) -> str:
    """``+text``: ten million characters for an input holding FE."""
    if b"\xfe" in data:
        return "A" * 10_000_000
    return data.decode("utf-8", "replace")


def spans_outside(data: bytes) -> Outcome:
    """``+outcome``: error spans outside the input, and out of order."""
    if b"\xfe" in data:
        return Outcome.partial(len(data), strict=(-1, len(data) + 5),
                               spans=((len(data) + 1, len(data) + 9), (-3, -1)))
    return _strict(data)


def negative_code_points(data: bytes) -> Outcome:
    """``+outcome``: a replace view of negative code points."""
    if b"\xfe" in data:
        return Outcome.partial(len(data), replace=(-5,) * len(data))
    return Outcome.partial(len(data), replace=data.decode("utf-8", "replace"))


def exits_zero(data: bytes) -> str:
    """``SystemExit(0)``: what ``sys.exit()`` raises."""
    if b"\xfe" in data:
        sys.exit(0)
    return data.decode("utf-8")


#: A BaseException (not an Exception) whose type name and message are hostile.
Hostile = type("Hostile" + HOSTILE, (BaseException,), {})


def raises_base_exception(data: bytes) -> str:
    if b"\xfe" in data:
        raise Hostile(SAID)
    return data.decode("utf-8")


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError(SAID)


def raises_unprintable(data: bytes) -> str:
    """An exception whose ``__str__`` raises."""
    if b"\xfe" in data:
        raise _Unprintable
    return data.decode("utf-8")


def raises_keyboard_interrupt(data: bytes) -> str:
    """``KeyboardInterrupt`` raised by the decoder itself: no one pressed Ctrl-C."""
    if b"\xfe" in data:
        raise KeyboardInterrupt
    return data.decode("utf-8")


def spins(data: bytes) -> str:
    """Never returns on an input holding FE: a busy loop in Python code."""
    while b"\xfe" in data:
        pass
    return data.decode("utf-8")


def mutates(data: bytes) -> str:
    """Overwrites its input (a bytes object, through ctypes) when it holds FE: FE
    becomes 'A'; then decodes what it now holds."""
    i = data.find(b"\xfe")
    if i >= 0:
        where = id(data) + sys.getsizeof(b"") - 1 + i  # ob_sval, then the bytes
        ctypes.memset(where, 0x41, 1)
    return data.decode("utf-8")


class NoGetstate(codecs.BufferedIncrementalDecoder):
    """``+incremental``: CPython's UTF-8, correct in every mode, whose ``getstate``
    raises (the IncrementalDecoder contract allows it to say nothing useful)."""

    def _buffer_decode(self, data: Any, errors: str, final: bool) -> tuple[str, int]:
        return codecs.utf_8_decode(data, errors, final)

    def getstate(self) -> tuple[bytes, int]:
        raise NotImplementedError("no state to give")


class Opaque(NoGetstate):
    """As :class:`NoGetstate`, and its errors' ``object`` is not the bytes their
    offsets index: where an error starts in the input cannot be told at all."""

    def _buffer_decode(self, data: Any, errors: str, final: bool) -> tuple[str, int]:
        try:
            return codecs.utf_8_decode(data, errors, final)
        except UnicodeDecodeError as e:
            raise UnicodeDecodeError(e.encoding, b"?" * len(e.object), e.start, e.end,
                                     e.reason) from None


def spins_after_saying(data: bytes) -> str:
    """As :func:`spins`, first creating the file ``$HOSTILE_SPINNING`` names: the
    test that interrupts it knows it is spinning."""
    if b"\xfe" in data:
        import os
        from pathlib import Path
        Path(os.environ["HOSTILE_SPINNING"]).touch()
    return spins(data)
