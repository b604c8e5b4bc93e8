"""Decoders with planted bugs, for testing that the engine finds, names, minimizes,
saves and replays them.

Each bug is a plain function ``bytes -> str`` (the shape of a user's plug-in,
``--decoder tests.engine.planted:accepts_c080``) built on CPython's real UTF-8
codec with one deliberate deviation, and a :class:`Planted` decoder wrapping it for
tests that pass decoders to the engine API directly.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome


def accepts_c080(data: bytes) -> str:
    """Java's modified UTF-8 habit: C0 80 decodes to U+0000 (a non-shortest form)."""
    return "\x00".join(part.decode("utf-8", "replace") for part in data.split(b"\xc0\x80"))


# A maximal subpart of a 4-byte sequence (its lead, then at most two continuation
# bytes Table 3.1B allows there), cut short by any other byte.
_TRUNC4 = re.compile(rb"(?:\xf0(?:[\x90-\xbf][\x80-\xbf]?)?|[\xf1-\xf3](?:[\x80-\xbf][\x80-\xbf]?)?"
                     rb"|\xf4(?:[\x80-\x8f][\x80-\xbf]?)?)(?![\x80-\xbf])[\x00-\xff]", re.S)


def swallows_after_truncated4(data: bytes) -> str:
    """One U+FFFD for a truncated 4-byte sequence *and* the byte after it (a bug
    class real decoders have had: the byte that ended the sequence is lost)."""
    out: list[str] = []
    pos = 0
    for m in _TRUNC4.finditer(data):
        out.append(data[pos : m.start()].decode("utf-8", "replace"))
        out.append("\ufffd")
        pos = m.end()
    out.append(data[pos:].decode("utf-8", "replace"))
    return "".join(out)


def block_boundary_bug(data: bytes) -> str:
    """A fast-path bug that depends on position: an overlong C0 xx whose lead is the
    last byte of a 16-byte block is decoded as if it were well-formed."""
    out: list[str] = []
    pos = 0
    i = 15
    while i + 1 < len(data):
        if data[i] in (0xC0, 0xC1) and 0x80 <= data[i + 1] <= 0xBF:
            out.append(data[pos:i].decode("utf-8", "replace"))
            out.append(chr(((data[i] & 0x1F) << 6) | (data[i + 1] & 0x3F)))
            pos = i + 2
        i += 16
    out.append(data[pos:].decode("utf-8", "replace"))
    return "".join(out)


class Planted(Decoder):
    """A replace-mode decoder from a ``bytes -> str`` function; shows ``replace``."""

    shows = frozenset({"replace"})

    def __init__(self, name: str, fn: Callable[[bytes], str], profile: str = "unicode") -> None:
        self.name = name
        self.profile = profile
        self._fn = fn

    def run(self, data: bytes) -> Outcome:
        return Outcome.partial(len(data), replace=[ord(c) for c in self._fn(data)])

    def versions(self) -> dict[str, str]:
        return {"planted": "1"}


class Crashes(Decoder):
    """Raises on any FE byte: the engine must turn it into a crash outcome."""

    name = "planted:crashes-on-fe"
    shows = frozenset({"replace"})

    def run(self, data: bytes) -> Outcome:
        if b"\xfe" in data:
            raise IndexError("planted crash")
        return Outcome.partial(len(data), replace=[ord(c) for c in data.decode("utf-8", "replace")])


class CrashesOnFirstSight(Decoder):
    """Raises the first time it meets an input with an FE byte, and decodes it when it
    meets it again: a decoder whose state (here, what it has seen) changes what it
    does, so no full re-run shows the crash again."""

    name = "planted:crashes-on-first-sight"
    shows = frozenset({"replace"})

    def __init__(self) -> None:
        self.seen: set[bytes] = set()

    def run(self, data: bytes) -> Outcome:
        if b"\xfe" in data and data not in self.seen:
            self.seen.add(bytes(data))
            raise IndexError("planted crash, first sight only")
        return Outcome.partial(len(data), replace=[ord(c) for c in data.decode("utf-8", "replace")])


# An encoded surrogate (ED A0..BF, then any continuation byte): ill-formed in
# Unicode's UTF-8, where maximal subparts make it three errors.
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")


def _cpython_errors(data: bytes) -> list[tuple[int, int]]:
    """Where CPython's strict decoder reports each error, decoding on after each."""
    out: list[tuple[int, int]] = []
    i = 0
    while True:
        try:
            data[i:].decode("utf-8")
            return out
        except UnicodeDecodeError as e:
            out.append((i + e.start, i + e.end))
            i += e.end


class SurrogateAsOneError(Decoder):
    """Java's habit: an encoded surrogate ``ED A0..BF xx`` is one error (one U+FFFD);
    everything else as CPython's ``replace`` cuts it, by maximal subparts. So it
    follows maximal-subpart except at the ``surrogate`` feature. Shows its error
    spans and its replacement output."""

    name = "planted:surrogate-as-one-error"
    profile = "unicode"
    shows = frozenset({"spans", "replace"})

    def run(self, data: bytes) -> Outcome:
        spans: list[tuple[int, int]] = []
        text: list[int] = []
        pos = 0
        for m in [*_SURROGATE.finditer(data), None]:
            part = data[pos : m.start() if m else len(data)]
            spans += [(pos + a, pos + b) for a, b in _cpython_errors(part)]
            text += map(ord, part.decode("utf-8", "replace"))
            if m:
                spans.append(m.span())
                text.append(0xFFFD)
                pos = m.end()
        return Outcome.partial(len(data), spans=spans, replace=text)

    def versions(self) -> dict[str, str]:
        return {"planted": "1"}


def planted_c080() -> Planted:
    return Planted("planted:accepts-c080", accepts_c080)


def planted_truncated4() -> Planted:
    return Planted("planted:swallows-after-truncated4", swallows_after_truncated4)


def planted_block() -> Planted:
    return Planted("planted:block-boundary", block_boundary_bug)


#: Module-level instances for ``--decoder tests.engine.planted:PLANTED_C080``.
PLANTED_C080 = planted_c080()
PLANTED_TRUNCATED4 = planted_truncated4()
CRASHES_ON_FIRST_SIGHT = CrashesOnFirstSight()
SURROGATE_AS_ONE_ERROR = SurrogateAsOneError()
