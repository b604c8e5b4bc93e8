"""CPython's own codec in every mode: ``utf-8`` (five error handlers, recorded
spans, incremental) and ``utf-8-sig``.

=========================  =============  ==========================================
name                       profile        shows
=========================  =============  ==========================================
``cpython:strict``         unicode        strict, reason (+ the text when valid)
``cpython:replace``        unicode        replace
``cpython:ignore``         unicode        ignore
``cpython:surrogateescape``unicode        escape
``cpython:surrogatepass``  surrogatepass  tokens (surrogatepass, other errors recorded)
``cpython:spans``          unicode        tokens (a recording error handler)
``cpython:incremental``    unicode        tokens, fed the chunks of :mod:`.chunks`
``cpython:utf-8-sig``      unicode        tokens; a stripped BOM is the token U+FEFF
=========================  =============  ==========================================

*Recording.* The error handler ``utf8fuzz.record`` appends each error's span and
reason and returns nothing in its place, so the text holds only decoded
characters; :func:`utf8fuzz.decoders._tiling.tile_text` then gives every character its
span and checks the text re-encodes the bytes between errors (so the tokens tile
the input by construction, and the outcome does not check it again). CPython's reason
``"unexpected end of data"`` is ``truncated``; every other reason is ``illegal``.
The handlers and the tiling run once per error and per character of every sampled
fuzz input, so both are in C (:mod:`utf8fuzz.decoders._cpython`; tests hold the
handlers to Python ones, the tiling to :func:`~utf8fuzz.decoders._tiling.tile_text_py`);
the codec calls are CPython's own.

*When a strict decoder succeeds* there was nothing to replace, so its text is its
replace, ignore and escape view too, and ``spans`` is empty: a strict outcome on
valid input shows those, and on invalid input only ``strict`` and ``reason``.
``shows`` lists what every outcome shows.

*Screens* (``screen``, :mod:`utf8fuzz.engine.screening`: the fuzz loop's cheap
tier) call the codec with CPython's built-in handlers, which run in C: the
one-handler decoders screen their own view, ``strict`` its span and reason. The
recording decoders (tokens) screen ``replace`` from ``errors="replace"`` and, when
that has a U+FFFD, ``strict`` and ``reason`` from a strict decode: the codec finds
each error's span before it looks at the handler, so these are the views the
recording handler's tokens give (tests check it). ``cpython:incremental`` screens
through an incremental decoder fed the same chunks; ``cpython:utf-8-sig`` through
the ``utf-8-sig`` codec, a stripped BOM shown as U+FEFF; ``cpython:surrogatepass``
by plain ``errors="surrogatepass"``: everything when it succeeds, else the span
and reason of the first error it could not pass. The screens of ``strict``, the
three handlers, ``spans`` and ``surrogatepass`` are ``_cpython.codec_screen``: the
same decodes (``PyUnicode_DecodeUTF8``, what ``bytes.decode`` calls) and the same
answers (tests hold them to the methods below), without a Python frame, which cost
about as much as the decode; a subclass (a planted bug) keeps the method. Text
views are screened as the ``str`` the codec returns (the differ compares it with
the reference's text as a string); a screen that meets no error gives the text as
every text view and no spans (there was nothing to replace). Tokens, and the spans
of input with errors, are compared only when the full outcome is built.

*The incremental screen* is CPython's ``BufferedIncrementalDecoder.decode``
written out: each call decodes the held-back bytes plus the new chunk with
``codecs.utf_8_decode`` and holds back what it did not consume, which the
standard library's ``utf-8`` incremental decoder is, exactly (checked when this
module loads; otherwise the screen feeds real incremental decoders, as the full
outcome always does). That saves a Python method call per chunk, and one pass
gives both screened views: in replace mode, the first call whose text has a
U+FFFD is repeated in strict mode on the same bytes. Until the first error both
modes consume the same bytes (the codec holds back a truncated tail before it
looks at the handler), so that repeated call raises exactly the first error a
strict incremental decoder would, or nothing when the U+FFFD was the input's.

*Offsets are absolute.* The incremental decoder raises with offsets into its own
buffer (the bytes it held back plus the new chunk); ``utf-8-sig`` raises with
offsets after the BOM it stripped. The adapters add the buffer's absolute start
(and keep the library's raw values in ``last_raw`` for tests to show).
"""

from __future__ import annotations

import codecs
import platform
import sys
import unicodedata
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from utf8fuzz.decoders import _cpython
from utf8fuzz.decoders._tiling import Event, tile_text
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.decoders.chunks import cuts
from utf8fuzz.outcome import Outcome, Reason, Token

# What _cpython.codec_screen does (its ``how``; _cpython.c's HOW_*): decode with
# ``errors`` that raise (every text view, else the first error's span and reason);
# give one handler's view; or the replace text and, when it has a U+FFFD, a strict
# decode's first error (a recording decoder's views).
HOW_STRICT, HOW_VIEW, HOW_RECORDING = 0, 1, 2

HANDLER = "utf8fuzz.record"
PASS_HANDLER = "utf8fuzz.record-surrogatepass"
BASED_HANDLER = "utf8fuzz.record-based"
BOM = codecs.BOM_UTF8


_END_OF_DATA = "unexpected end of data"


def reason_of(exc: UnicodeDecodeError) -> Reason:
    return "truncated" if exc.reason == _END_OF_DATA else "illegal"


class _Recorder:
    """Where the registered handlers write. ``handle`` records the codec's own
    offsets, which are absolute when the codec decodes the whole input (``spans``,
    ``surrogatepass``; ``utf-8-sig`` adds its BOM's 3 itself); ``handle_based``
    adds the base set by ``set_base`` (the absolute offset of the first byte of the
    object the codec is decoding right now: the incremental decoder's buffer) and
    keeps the raw offsets; ``handle_pass`` is surrogatepass, recording what it
    cannot pass.

    The handler runs for every error of every sampled fuzz input (about 20 on a
    64-byte one), and as a Python function it cost more than the decode: the
    handlers are the C ``record``, ``record_based`` and ``record_pass`` of
    :mod:`utf8fuzz.decoders._cpython`, and the lists are its ``recorded`` and
    ``recorded_raw`` (tests/decoders/test_cpython.py holds them to Python
    handlers). The lists are cleared in place by :meth:`reset` (nobody keeps them
    past the decode that filled them)."""

    def __init__(self) -> None:
        self.events: list[Event] = _cpython.recorded
        self.raw: list[tuple[int, int]] = _cpython.recorded_raw
        self.handle: Callable[[UnicodeError], tuple[str, int]] = _cpython.record
        self.handle_based: Callable[[UnicodeError], tuple[str, int]] = _cpython.record_based
        self.handle_pass: Callable[[UnicodeError], tuple[str | bytes, int]] = (
            _cpython.record_pass)
        self.set_base: Callable[[int], None] = _cpython.record_base

    def reset(self) -> None:
        self.events.clear()
        self.raw.clear()


_REC = _Recorder()
codecs.register_error(HANDLER, _REC.handle)
codecs.register_error(BASED_HANDLER, _REC.handle_based)
codecs.register_error(PASS_HANDLER, _REC.handle_pass)


def _cps(text: str) -> tuple[int, ...]:
    return tuple(map(ord, text))


def _plain_buffered() -> bool:
    """``codecs.getincrementaldecoder("utf-8")`` is ``BufferedIncrementalDecoder``
    around ``codecs.utf_8_decode``, unchanged (what :meth:`Incremental.screen`
    writes out)."""
    # typeshed gives a factory Protocol; the codec registry holds the class itself
    cls: object = codecs.getincrementaldecoder("utf-8")
    return (isinstance(cls, type) and issubclass(cls, codecs.BufferedIncrementalDecoder)
            and cls.decode is codecs.BufferedIncrementalDecoder.decode
            and cls.getstate is codecs.BufferedIncrementalDecoder.getstate
            and cls.__dict__.get("_buffer_decode") is codecs.utf_8_decode)


_PLAIN_BUFFERED = _plain_buffered()


class CPythonDecoder(Decoder):
    """Shared versions; subclasses implement ``run``."""

    def versions(self) -> dict[str, str]:
        return {
            "python": platform.python_version(),
            "implementation": sys.implementation.name,
            "unicode": unicodedata.unidata_version,
        }


class Strict(CPythonDecoder):
    name = "cpython:strict"
    shows = frozenset({"strict", "reason"})
    screen_is_whole = True

    def __init__(self) -> None:
        # the screen in C; a subclass (a planted bug) keeps the method it may override
        if type(self) is Strict:
            self.screen = partial(  # type: ignore[method-assign]  # the C screen, per instance
                _cpython.codec_screen, HOW_STRICT, "strict", "")

    def run(self, data: bytes) -> Outcome:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            return Outcome.partial(len(data), strict=(e.start, e.end), reason=reason_of(e))
        return valid_outcome(len(data), _cps(text))

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            return {"strict": (e.start, e.end), "reason": reason_of(e)}
        except Exception:
            return None
        return _no_error(text)


def valid_outcome(length: int, cps: tuple[int, ...]) -> Outcome:
    """A strict decoder accepted the input: its text is every substitution view."""
    return Outcome.partial(
        length, strict=None, reason=None, spans=(), replace=cps, ignore=cps, escape=cps
    )


class Handler(CPythonDecoder):
    """One of CPython's built-in error handlers; shows the view it produces."""

    screen_is_whole = True

    VIEW: ClassVar[dict[str, str]] = {
        "replace": "replace", "ignore": "ignore", "surrogateescape": "escape",
    }

    def __init__(self, errors: str) -> None:
        self.errors = errors
        self.name = f"cpython:{errors}"
        self.view = self.VIEW[errors]
        self.shows = frozenset({self.view})
        # the screen in C; a subclass (a planted bug) keeps the method it may override
        if type(self) is Handler:
            self.screen = partial(  # type: ignore[method-assign]  # the C screen, per instance
                _cpython.codec_screen, HOW_VIEW, errors, self.view)

    def run(self, data: bytes) -> Outcome:
        views: dict[str, Any] = {self.view: _cps(data.decode("utf-8", self.errors))}
        return Outcome.partial(len(data), **views)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            return {self.view: data.decode("utf-8", self.errors)}
        except Exception:
            return None


def _no_error(text: str) -> dict[str, Any]:
    """The screen of a recording decoder that met no error: its text is every
    text view, and there are no spans."""
    return {"replace": text, "ignore": text, "escape": text, "spans": (),
            "strict": None, "reason": None}


def _screen_text(text: str, strict: Callable[[], object], base: int = 0) -> dict[str, Any]:
    """The screen of a recording decoder from its replace-mode ``text``: without a
    U+FFFD no error was met (each error gives one); with one, ``strict()`` (the same
    decode in strict mode) raises the first error, offsets shifted by ``base``."""
    if "\ufffd" not in text:
        return _no_error(text)
    try:
        strict()
    except UnicodeDecodeError as e:
        return {"replace": text, "strict": (base + e.start, base + e.end),
                "reason": reason_of(e)}
    return _no_error(text)  # the U+FFFD was the input's


class Recording(CPythonDecoder):
    """Every error span, through the recording handler: the full token view."""

    name = "cpython:spans"
    shows = frozenset({"tokens", "spans", "strict", "reason", "replace", "ignore", "escape"})
    handler = HANDLER

    def __init__(self) -> None:
        # the screen in C; a subclass (a planted bug) keeps the method it may override
        if type(self) is Recording:
            self.screen = partial(  # type: ignore[method-assign]  # the C screen, per instance
                _cpython.codec_screen, HOW_RECORDING, "replace", "")

    def run(self, data: bytes) -> Outcome:
        _REC.reset()
        text = data.decode("utf-8", self.handler)
        toks = tile_text(data, text, _REC.events)
        return Outcome.from_tokens(toks, len(data), data=data, check=False)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            return _screen_text(data.decode("utf-8", "replace"), data.decode)
        except Exception:
            return None


class SurrogatePass(Recording):
    """``errors="surrogatepass"``: encoded surrogates decode; any other error is
    what plain surrogatepass would raise, recorded so decoding can go on."""

    name = "cpython:surrogatepass"
    profile = "surrogatepass"
    handler = PASS_HANDLER

    def __init__(self) -> None:
        # the screen in C; a subclass (a planted bug) keeps the method it may override
        if type(self) is SurrogatePass:
            self.screen = partial(  # type: ignore[method-assign]  # the C screen, per instance
                _cpython.codec_screen, HOW_STRICT, "surrogatepass", "")

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            text = data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as e:
            # surrogatepass re-raises what it cannot pass: the first recorded error
            return {"strict": (e.start, e.end), "reason": reason_of(e)}
        except Exception:
            return None
        return _no_error(text)


#: The chunking rule (:func:`utf8fuzz.decoders.chunks.cuts`), under its old name: the
#: C loops of ``_cpython.c`` write this rule out, and are used only while ``splits``
#: is this very function (:meth:`Incremental._written_out`).
input_splits = cuts


class Incremental(Recording):
    """``codecs.getincrementaldecoder("utf-8")`` fed chunk by chunk, then flushed."""

    name = "cpython:incremental"
    incremental = True

    def __init__(self, splits: Callable[[bytes], list[int]] = input_splits) -> None:
        self.splits = splits
        self.last_raw: list[tuple[int, int]] = []

    def _cuts(self, data: bytes) -> list[int]:
        """``splits(data)`` and the final flush's cut ``len(data)``."""
        return [*self.splits(data), len(data)]

    def _written_out(self, data: bytes) -> bool:
        """Can the C loops (``_cpython.incremental_screen`` and ``incremental_decode``)
        feed ``data``: the stdlib decoder is the plain buffered one they write out,
        the cuts are :func:`input_splits`' (the rule they know), ``data`` is bytes."""
        return (_PLAIN_BUFFERED and self.splits is input_splits
                and type(data) is bytes)

    def run(self, data: bytes) -> Outcome:
        rec = _REC
        rec.reset()
        if self._written_out(data):
            # the loop below in C, as the screen's (tests hold them equal)
            text = _cpython.incremental_decode(codecs.utf_8_decode, data, BASED_HANDLER)
            self.last_raw = list(rec.raw)
            toks = tile_text(data, text, rec.events)
            return Outcome.from_tokens(toks, len(data), data=data, check=False)
        dec = codecs.getincrementaldecoder("utf-8")(BASED_HANDLER)
        parts: list[str] = []
        append, feed, set_base, n, prev = parts.append, dec.decode, rec.set_base, len(data), 0
        plain = _PLAIN_BUFFERED
        for cut in self._cuts(data):
            # The codec decodes (held-back bytes + chunk): its offsets start there.
            # The held-back bytes are getstate()[0], read directly when that is
            # what it is (no Python call per chunk).
            set_base(prev - len(dec.buffer if plain else dec.getstate()[0]))
            append(feed(data[prev:cut], cut == n))
            prev = cut
        self.last_raw = list(rec.raw)
        toks = tile_text(data, "".join(parts), rec.events)
        return Outcome.from_tokens(toks, len(data), data=data, check=False)

    def _feed(self, data: bytes, errors: str) -> str:
        """The same chunks into an incremental decoder with a built-in handler;
        a strict one raises with offsets made absolute."""
        dec = codecs.getincrementaldecoder("utf-8")(errors)
        parts: list[str] = []
        prev = 0
        for cut in self._cuts(data):
            held = len(dec.getstate()[0]) if errors == "strict" else 0
            try:
                parts.append(dec.decode(data[prev:cut], final=cut == len(data)))
            except UnicodeDecodeError as e:
                base = prev - held
                e.start, e.end = base + e.start, base + e.end
                raise
            prev = cut
        return "".join(parts)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            if not _PLAIN_BUFFERED:
                return _screen_text(self._feed(data, "replace"),
                                    lambda: self._feed(data, "strict"))
            # the same loop in C, for the fuzz loop's cuts (tests hold them equal)
            if self._written_out(data):
                r = _cpython.incremental_screen(codecs.utf_8_decode, data)
                if r[1] is None:
                    return _no_error(r[0])
                return {"replace": r[0], "strict": r[1], "reason": r[2]}
            return self._screen_buffered(data)
        except Exception:
            return None

    def _screen_buffered(self, data: bytes) -> dict[str, Any]:
        """One replace-mode pass of the written-out incremental decoder (see the
        module docstring), the first error from repeating in strict mode the first
        call whose text has a U+FFFD. It runs on every fuzz input: names are local
        and the loop after the first error checks nothing."""
        n = len(data)
        decode = codecs.utf_8_decode
        parts: list[str] = []
        append = parts.append
        # The first error as plain values: keeping the exception would keep its
        # traceback, whose frame holds the exception - a cycle only the GC frees.
        first: tuple[int, int, str] | None = None
        base = 0  # the first byte held back (not yet consumed)
        cuts = iter(self._cuts(data))
        for cut in cuts:
            final = cut == n
            text, used = decode(data[base:cut], "replace", final)
            append(text)
            if "\ufffd" in text:
                try:
                    decode(data[base:cut], "strict", final)
                except UnicodeDecodeError as e:
                    first = (base + e.start, base + e.end,
                             "truncated" if e.reason == _END_OF_DATA else "illegal")
                    base += used
                    break
            base += used
        for cut in cuts:  # the rest, after the first error
            text, used = decode(data[base:cut], "replace", cut == n)
            append(text)
            base += used
        text = "".join(parts)
        if first is None:
            return _no_error(text)
        return {"replace": text, "strict": first[:2], "reason": first[2]}


# What codecs.decode(data, "utf-8-sig", errors) calls: the codec registry caches a
# lookup for the life of the process, so this is the same function, minus the
# name normalisation and lookup on every call.
_SIG_DECODE = codecs.lookup("utf-8-sig").decode


class Utf8Sig(Recording):
    """``utf-8-sig``: strips one leading BOM, then decodes as ``utf-8``.

    Unicode's UTF-8 reads EF BB BF as U+FEFF, so the stripped BOM is shown as
    the token U+FEFF over bytes [0, 3): the outcome tiles the input and compares
    with the unicode profile, and a codec that strips a BOM anywhere else, or
    twice, still differs. Error offsets come after the BOM; 3 is added.
    """

    name = "cpython:utf-8-sig"

    def __init__(self) -> None:
        self._last_events: tuple[Event, ...] = ()

    @property
    def last_raw(self) -> list[tuple[int, int]]:
        """The last run's error spans as the codec gave them (after the BOM)."""
        return [(s, e) for s, e, _ in self._last_events]

    def run(self, data: bytes) -> Outcome:
        base = 3 if data.startswith(BOM) else 0
        _REC.reset()
        text = _SIG_DECODE(data, HANDLER)[0]
        events = _REC.events
        self._last_events = tuple(events)
        if base:  # the codec's offsets come after the BOM it stripped
            events = [(s + 3, e + 3, r) for s, e, r in events]
        toks = tile_text(data, text, events, offset=base)
        if base:
            toks = (Token("char", 0xFEFF, 0, 3), *toks)
        prov = {**self.provenance(), "signature": "stripped" if base else "none"}
        return Outcome.from_tokens(toks, len(data), prov, data=data, check=False)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            base = 3 if data.startswith(BOM) else 0
            text = _SIG_DECODE(data, "replace")[0]
            out = _screen_text(text, lambda: _SIG_DECODE(data), base)
        except Exception:
            return None
        if base:
            for v in ("replace", "ignore", "escape"):
                if v in out:
                    out[v] = "\ufeff" + out[v]
        return out


def discover() -> list[Decoder | Unavailable]:
    return [
        Strict(),
        Handler("replace"),
        Handler("ignore"),
        Handler("surrogateescape"),
        SurrogatePass(),
        Recording(),
        Incremental(),
        Utf8Sig(),
    ]
