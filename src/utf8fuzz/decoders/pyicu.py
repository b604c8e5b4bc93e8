"""PyICU's ``icu.UnicodeString(data, "utf-8"[, mode])``: ICU through its most
used Python binding, a second ICU surface beside :mod:`.icu`'s C API.

==================  =======  =======================================================
name                profile  shows
==================  =======  =======================================================
``pyicu``           unicode  strict (the default mode raises); the text when valid
``pyicu:replace``   unicode  replace
``pyicu:ignore``    unicode  ignore (PyICU's "ignore" mode; see below)
==================  =======  =======================================================

PyICU's strict mode raises ``ValueError("'UTF-8' codec can't decode byte 0xf1 in
position 1: reason code 1 ...")``. That position cannot be trusted: for
``EF 90 80 80`` (U+F400, then a lone 80 at byte 3) PyICU 2.17 says "byte 0x80 in
position 2", and for ``F0 9F 98 80 F0`` it says position 0. So the error's start
is *searched* with PyICU itself: UTF-8 synchronizes itself, so a prefix PyICU
accepts is extended one sequence at a time (the shortest ``data[k:k+t]``,
t <= 4, that it accepts) until none is accepted; that k is the start. The end is
searched the same way: the longest ``data[start:start+t]`` (t <= 4) that PyICU's
replace mode turns into a single U+FFFD. The message's own position is kept in
the outcome's provenance as ``reported_position``. The reason code is 1
(illegal) for truncated input too, so no reason view is claimed.

PyICU's ``ignore`` mode substitutes U+FFFD like ``replace`` (PyICU 2.17 with
ICU 72): the adapter shows what the mode produces, so that is reported as a
difference in the ignore view, not hidden.

The screen (the fuzz loop's cheap tier) is one ``UnicodeString`` call: a mode's
text, or, in strict mode, "no error" when PyICU accepts the input. When it raises,
the error's span takes the searches above, so the screen says None and the full
outcome is built.
"""

from __future__ import annotations

import re
from typing import Any

from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome

_POSITION = re.compile(r"in position (\d+)")


class PyIcu(Decoder):
    def __init__(self, icu: object, mode: str | None) -> None:
        self.icu, self.mode = icu, mode
        self.name = "pyicu" if mode is None else f"pyicu:{mode}"
        self.shows = frozenset({"strict"} if mode is None else {mode})

    def versions(self) -> dict[str, str]:
        icu = self.icu
        return {"pyicu": icu.VERSION, "icu": icu.ICU_VERSION,  # type: ignore[attr-defined]
                "unicode": icu.UNICODE_VERSION}  # type: ignore[attr-defined]

    def _text(self, data: bytes, mode: str | None) -> tuple[int, ...]:
        u = (self.icu.UnicodeString(data, "utf-8") if mode is None  # type: ignore[attr-defined]
             else self.icu.UnicodeString(data, "utf-8", mode))  # type: ignore[attr-defined]
        return tuple(map(ord, str(u)))

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        if self.mode is not None:
            return Outcome.partial(n, **{self.mode: self._text(data, self.mode)})
        try:
            cps = self._text(data, None)
        except ValueError as e:
            start = self.error_start(data)
            prov = {**self.versions(), "reported_position": str(error_position(str(e)))}
            return Outcome.partial(n, strict=(start, self.error_end(data, start)),
                                   provenance=prov)
        return Outcome.partial(n, strict=None, spans=(), replace=cps, ignore=cps, escape=cps)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            if self.mode is not None:
                return {self.mode: self._text(data, self.mode)}
            self._text(data, None)
            return {"strict": None}
        except Exception:
            return None  # strict mode raised: the span needs the searches

    def _accepts(self, piece: bytes) -> bool:
        try:
            self._text(piece, None)
        except ValueError:
            return False
        return True

    def error_start(self, data: bytes) -> int:
        k, n = 0, len(data)
        while k < n:
            t = next((t for t in range(1, min(4, n - k) + 1) if self._accepts(data[k : k + t])),
                     0)
            if not t:
                return k
            k += t
        raise ValueError("PyICU rejected the input but accepts every sequence of it")

    def error_end(self, data: bytes, start: int) -> int:
        end = start + 1
        for t in range(2, min(4, len(data) - start) + 1):
            if self._text(data[start : start + t], "replace") == (0xFFFD,):
                end = start + t
        return end


def error_position(message: str) -> int:
    m = _POSITION.search(message)
    if m is None:
        raise ValueError(f"PyICU's error names no position: {message[:200]}")
    return int(m.group(1))


def discover() -> list[Decoder | Unavailable]:
    try:
        import icu
    except ImportError as e:
        return [Unavailable("pyicu", f"PyICU is not installed (pip install PyICU): {e}")]
    return [PyIcu(icu, None), PyIcu(icu, "replace"), PyIcu(icu, "ignore")]
