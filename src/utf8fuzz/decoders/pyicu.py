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

*Cost.* A raising ``UnicodeString`` call costs about ten accepting ones (measured
here: ~7 against ~0.6 us), so the searches memoize PyICU's verdict on each piece
(at most 4 bytes): whether strict mode accepts it, and whether replace mode makes
it one U+FFFD; and the searches' answer for each 4-byte window they look at. PyICU
keeps no state between calls, so a verdict is a function of the piece alone, and
the searches stay exactly as described, mostly as cache look-ups
(``functools.lru_cache``; a fuzz loop meets the same short pieces again and again).
A byte PyICU accepts on its own is a step of one wherever it is, so the start's
search steps over a run of such bytes (ASCII, mostly) with one regex search.

The screen (the fuzz loop's cheap tier) is one ``UnicodeString`` call: a mode's
text as the ``str`` PyICU gives; in strict mode "no error" when PyICU accepts the
input, else the span from the memoized searches. The last call's result is kept,
so the full outcome built for the same input right after a screen does not call
PyICU again.

*Slow.* PyICU's decoders declare themselves ``slow``: the fuzz loop gives them its
slow decoders' share of the inputs (every one that brought new coverage or a new
set of divergences, and a steady sample), not every input; the same ICU is
compared on every input through its C API (:mod:`.icu`).
"""

from __future__ import annotations

import functools
import re
from typing import Any, cast

from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome

_POSITION = re.compile(r"in position (\d+)")


_MEMO_LIMIT = 1 << 17  # pieces per memo (at most 4 bytes each), least recent dropped


class PyIcu(Decoder):
    screen_is_whole = True
    # A call opens a converter, and raises a C++ exception and a ValueError on
    # ill-formed input: the fuzz loop gives PyICU the slow decoders' share
    # (engine/screening.py), while ICU itself is screened on every input (icu.py).
    slow = True

    def __init__(self, icu: Any, mode: str | None) -> None:
        # PyICU's module: a C extension with neither py.typed nor stubs
        self.icu, self.mode = icu, mode
        self._new = icu.UnicodeString
        self.name = "pyicu" if mode is None else f"pyicu:{mode}"
        self.shows = frozenset({"strict"} if mode is None else {mode})
        # PyICU's verdicts on pieces, and the searches' answers per 4-byte window
        # (one look-up a step), memoized per decoder
        memo = functools.lru_cache(maxsize=_MEMO_LIMIT)
        self._accepts = memo(self._accepts_piece)
        self._one_replacement = memo(self._one_replacement_piece)
        self._step = memo(self._step_window)
        self._error_length = memo(self._error_length_window)
        # the last input and what the library call gave for it: its text, or the
        # ValueError's message (strict) - the screen's call, reused by run()
        self._last: tuple[bytes, str | None, str | None] | None = None
        # finds the next byte that PyICU does not accept on its own (see error_start)
        self._not_alone: re.Pattern[bytes] | None = None

    def versions(self) -> dict[str, str]:
        icu = self.icu
        return {"pyicu": icu.VERSION, "icu": icu.ICU_VERSION, "unicode": icu.UNICODE_VERSION}

    def _call(self, data: bytes) -> tuple[str | None, str | None]:
        """(text, None), or in strict mode (None, message) when PyICU raises."""
        last = self._last
        if last is not None and last[0] == data:
            return last[1], last[2]
        try:
            u = self._new(data, "utf-8") if self.mode is None else \
                self._new(data, "utf-8", self.mode)
        except ValueError as e:
            if self.mode is not None:
                raise
            res: tuple[str | None, str | None] = (None, str(e))
        else:
            res = (str(u), None)
        # bytes only: a mutable buffer could change under the kept result
        self._last = (data, *res) if type(data) is bytes else None
        return res

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        text, message = self._call(data)
        if self.mode is not None:
            # a mode's call raises rather than give no text (_call): text is a str
            views: dict[str, Any] = {self.mode: tuple(map(ord, cast(str, text)))}
            return Outcome.partial(n, **views)
        if text is None:
            start = self.error_start(data)
            prov = {**self.versions(), "reported_position": str(error_position(str(message)))}
            return Outcome.partial(n, strict=(start, self.error_end(data, start)),
                                   provenance=prov)
        cps = tuple(map(ord, text))
        return Outcome.partial(n, strict=None, spans=(), replace=cps, ignore=cps, escape=cps)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            text, _ = self._call(data)
            if self.mode is not None:
                return {self.mode: text}
            if text is not None:  # accepted: its text is every text view
                return {"strict": None, "spans": (), "replace": text, "ignore": text,
                        "escape": text}
            start = self.error_start(data)
            return {"strict": (start, self.error_end(data, start))}
        except Exception:
            return None  # the full path turns it into a crash outcome

    def _accepts_piece(self, piece: bytes) -> bool:
        """Does strict mode accept ``piece``?"""
        try:
            self._new(piece, "utf-8")
        except ValueError:
            return False
        return True

    def _one_replacement_piece(self, piece: bytes) -> bool:
        """Does replace mode make ``piece`` one U+FFFD?"""
        return str(self._new(piece, "utf-8", "replace")) == "\ufffd"

    def _step_window(self, window: bytes) -> int:
        """The length of the shortest prefix of ``window`` PyICU accepts, or 0."""
        return next((t for t in range(1, len(window) + 1) if self._accepts(window[:t])), 0)

    def _error_length_window(self, window: bytes) -> int:
        """The longest prefix of ``window`` (2 to 4 bytes) that replace mode makes
        one U+FFFD, else 1."""
        size = 1
        for t in range(2, len(window) + 1):
            if self._one_replacement(window[:t]):
                size = t
        return size

    def error_start(self, data: bytes) -> int:
        k, n = 0, len(data)
        step = self._step
        not_alone = self._not_alone or self._make_not_alone()
        while k < n:
            # A byte PyICU accepts on its own is a step of one (the shortest accepted
            # prefix of any window it starts): a run of them, ASCII mostly, is
            # stepped over by one regex search instead of a look-up each.
            m = not_alone.search(data, k)
            if m is None:
                break
            k = m.start()
            t = step(data[k : k + 4])
            if not t:
                return k
            k += t
        raise ValueError("PyICU rejected the input but accepts every sequence of it")

    def _make_not_alone(self) -> re.Pattern[bytes]:
        alone = [b for b in range(256) if self._accepts(bytes([b]))]
        self._not_alone = re.compile(
            b"[^" + b"".join(b"\\x%02x" % b for b in alone) + b"]" if alone else b"[\\x00-\\xff]")
        return self._not_alone

    def error_end(self, data: bytes, start: int) -> int:
        return start + self._error_length(data[start : start + 4])


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
