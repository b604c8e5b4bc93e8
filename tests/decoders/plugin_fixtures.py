"""Plug-ins the plug-in tests load by name: well-behaved and misbehaving ones.

Each misbehaves only on its trigger input, so a batch shows that the inputs
after a crash or a hang are still decoded (by a restarted worker).
"""

from __future__ import annotations

import ctypes
import os
import time

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome

__version__ = "0.0-test"


def strict_utf8(data: bytes) -> str:
    """The plain form: CPython's strict codec, raising UnicodeDecodeError."""
    return data.decode("utf-8")


def overlong_ok(data: bytes) -> str:
    """A deliberately naive decoder: reads C0 80 as U+0000 (a bug to find)."""
    return data.replace(b"\xc0\x80", b"\x00").decode("utf-8")


class _Spans:
    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def __call__(self, exc: UnicodeError) -> tuple[str, int]:
        assert isinstance(exc, UnicodeDecodeError)
        self.spans.append((exc.start, exc.end))
        return "\ufffd", exc.end


def with_spans(data: bytes) -> tuple[str, list[tuple[int, int]]]:
    """The richer form: replacement text and every error span."""
    import codecs

    rec = _Spans()
    codecs.register_error("plugin-fixtures.spans", rec)
    return data.decode("utf-8", "plugin-fixtures.spans"), rec.spans


def strict_and_replace(data: bytes, errors: str = "strict") -> str:
    """The codec shape, taking two of the four error modes: the others are
    rejected with LookupError, as CPython rejects an unknown error handler."""
    if errors not in ("strict", "replace"):
        raise LookupError(f"no error handler {errors!r} here\x1b[2J\u202e")
    return data.decode("utf-8", errors)


def takes_no_errors(data: bytes) -> str:
    """The plain shape: called with an errors argument it raises TypeError."""
    return data.decode("utf-8")


def as_tuple(data: bytes) -> tuple[str, int]:
    """Returns what a codec's decode function returns: a shape to declare."""
    return data.decode("utf-8", "replace"), len(data)


def says_maybe(data: bytes) -> str:
    """Not a validator: its answer is a string."""
    return "maybe"


def raises(data: bytes) -> str:
    if data == b"boom":
        raise RuntimeError("the plug-in broke")
    return data.decode("utf-8")


def aborts(data: bytes) -> str:
    if data == b"die":
        os.abort()
    return data.decode("utf-8")


def segfaults(data: bytes) -> str:
    if data == b"die":
        ctypes.string_at(0)  # SIGSEGV: a C decoder's typical death
    return data.decode("utf-8")


def hangs(data: bytes) -> str:
    if data == b"hang":
        while True:
            time.sleep(0.05)
    return data.decode("utf-8")


def chatty(data: bytes) -> str:
    print("plug-ins print things", data)  # must not corrupt the worker protocol
    return data.decode("utf-8")


def wrong_length(data: bytes) -> Outcome:
    return Outcome.partial(len(data) + 1, strict=None)


class FullDecoder(Decoder):
    """A Decoder subclass: tokens from CPython's surrogatepass adapter."""

    name = "fixture-full"
    profile = "surrogatepass"

    def __init__(self) -> None:
        from utf8fuzz.decoders.cpython import SurrogatePass

        self._inner = SurrogatePass()
        self.shows = self._inner.shows

    def run(self, data: bytes) -> Outcome:
        return self._inner.run(data)


not_callable = 42


def raises_its_own_type_error(data: bytes, errors: str = "strict") -> str:
    """A codec that takes every mode and then fails in its own code with a TypeError
    (what a bug looks like): that exception is its answer, not a refused mode."""
    return data.decode("utf-8", errors) + 1  # type: ignore[operator]


#: What a dying decoder writes on stderr: an ANSI colour, a bidi override and a
#: Cyrillic look-alike (printable, so only escaping to ASCII stops it).
HOSTILE_STDERR = "\x1b[31m\u202e\u0430dmin\n"


def dies_shouting(data: bytes) -> str:
    if data == b"die":
        os.write(2, HOSTILE_STDERR.encode())
        os._exit(3)
    return data.decode("utf-8")
