"""Decoders with planted bugs that only long inputs reach, as a vectorized
decoder has them: each is CPython's UTF-8 codec with one deviation past the first
64 bytes, written as a ``run()``-only adapter (the shape of
``tests/engine/minimal_adapter.py``), for ``--decoder tests.engine.planted_long:NAME``.

* :class:`Lead255`: a 2-byte character whose lead byte is the last byte of a
  256-byte block (offset % 256 == 255) is decoded as another code point (the
  next block's load sees its continuation byte alone, and a fix-up guesses);
* :class:`Run101`: in a run of consecutive 2-byte characters, the 101st is
  decoded as another code point (a counter of 100 that wraps);
* :class:`PageTail`: in an input of exactly 4,096 bytes, a 3-byte lead cut short
  in the last 3 bytes is accepted (the page's tail is checked as if it
  continued).

The deviation is a code point with its lowest bit flipped: never the right one.
"""

from __future__ import annotations

import re
import sys

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome


def _two_byte_at(data: bytes, i: int) -> bool:
    """Whether a well-formed 2-byte character starts at ``i`` (C2..DF, 80..BF:
    Table 3.1B's row; neither byte can be part of another sequence)."""
    return i + 1 < len(data) and 0xC2 <= data[i] <= 0xDF and 0x80 <= data[i + 1] <= 0xBF


def _with_wrong(data: bytes, at: list[int]) -> str:
    """``data`` decoded with ``replace``, except the 2-byte characters at offsets
    ``at``, whose code point gets its lowest bit flipped. Each is a character
    start, so the pieces between decode as the whole does."""
    out, pos = [], 0
    for i in at:
        out.append(data[pos:i].decode("utf-8", "replace"))
        cp = (data[i] & 0x1F) << 6 | (data[i + 1] & 0x3F)
        out.append(chr(cp ^ 1))
        pos = i + 2
    out.append(data[pos:].decode("utf-8", "replace"))
    return "".join(out)


#: A run of at least 101 well-formed 2-byte characters.
_RUNS = re.compile(rb"(?:[\xc2-\xdf][\x80-\xbf]){101,}")


class _Planted(Decoder):
    profile = "unicode"
    shows = frozenset({"replace"})

    def versions(self) -> dict[str, str]:
        return {"python": sys.version.split()[0]}


class Lead255(_Planted):
    name = "planted-long:lead255"

    def run(self, data: bytes) -> Outcome:
        at = [i for i in range(255, len(data) - 1, 256) if _two_byte_at(data, i)]
        return Outcome.partial(len(data), replace=_with_wrong(data, at))


class Run101(_Planted):
    name = "planted-long:run101"

    def run(self, data: bytes) -> Outcome:
        # The 101st of each run (a C2..DF byte always starts a pair, so a match
        # starts at a run's first character); a regex, as a loop in Python is slow.
        at = [m.start() + 200 for m in _RUNS.finditer(data)]
        return Outcome.partial(len(data), replace=_with_wrong(data, at))


class PageTail(_Planted):
    name = "planted-long:page-tail"
    shows = frozenset({"strict"})

    def run(self, data: bytes) -> Outcome:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            if (len(data) == 4096 and e.start >= 4093 and 0xE0 <= data[e.start] <= 0xEF
                    and e.end == len(data)):
                return Outcome.partial(len(data), strict=None)
            return Outcome.partial(len(data), strict=(e.start, e.end))
        return Outcome.partial(len(data), strict=None)
