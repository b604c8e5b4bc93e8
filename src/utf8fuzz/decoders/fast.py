"""``fast:unicode`` and ``fast:corrected``: the project's own C fast path as decoders.

The fast path is judged like any other decoder, but it is ``own``: the corpus
requires it to agree with the reference, not merely to keep its behaviour.

Each view comes from the public function that a user would call for it, on the
whole input (so the SIMD paths, not only the scalar one, are what is compared):

=========  ======================================  ===================================
view       ``fast:unicode``                        ``fast:corrected``
=========  ======================================  ===================================
strict     ``first_error(data)``'s span            ``corrected_first_error(data)``'s
reason     its reason, in CPython's words          its reason
spans      ``error_spans(data)``                   ``corrected_error_spans(data)``
replace    ``decode(data, "replace")``             ``decode_corrected_text(data,
                                                   "replace")``
ignore     ``decode(data, "ignore")``              ``decode_corrected_text(.., "ignore")``
escape     ``decode(data, "surrogateescape")``     ``decode_corrected_text(..,
                                                   "surrogateescape")``
=========  ======================================  ===================================

``first_error`` and ``corrected_first_error`` are what strict ``decode`` and
``decode_corrected`` raise, returned instead (the same C walk, stopped at the same
place; tests/fast pins each to the exception): an exception costs more than the
rest of a screen. ``decode_corrected_text`` is ``decode_corrected`` (the same C
loop) handing back a str; when a code point is above U+10FFFF it says None, and
the view comes from ``decode_corrected``'s array. Text views are compared as the
str they come as; they become tuples of code points only in a partial outcome.

Tokens follow exactly from these: the spans cut the input, each span is one
U+FFFD of the replace output, and between spans each character's byte length is
its lead byte's (valid text has no other reading). Only the last error can be
truncated; its reason is what the strict decoder says of the input from that
error on. When the tokens and the direct views all agree, the outcome is built
from tokens (every view, derived one way); when they do not - the fast path
contradicts itself - the outcome is partial, built from the direct views, so the
differences surface at the views where they are rather than as one crash.

Screen (the fuzz loop's cheap tier): ``replace`` and ``strict`` from one call each -
``decode(data, "replace")`` and ``validate(data)`` for ``fast:unicode``,
``decode_corrected_text(data, "replace")`` and ``corrected_first_error(data)`` for
``fast:corrected`` (which also gives ``reason``). ``replace`` is screened as a
``str``: the text ``decode`` returns, and ``decode_corrected``'s code points as text
when they are all code points Python can hold (``decode_corrected_text`` says None
otherwise, and the screen falls back to ``decode_corrected``'s array, as a tuple).
Each view still comes from its own call: on valid input the strict result is not
reused as the replace text, so a mode that contradicts the other is still caught.

Whole views (``whole_views``, :mod:`utf8fuzz.engine.screening`: what the differ
runs on the inputs it samples instead of :meth:`_Fast.run`):
``utf8fuzz.fast._fast.fast_screen`` (``fast/screen.c``) makes the six calls above
and derives the tokens exactly as ``run`` does, with the same checks, in C. It gives
every view, the tokens packed (a text above U+10FFFF as a tuple of code points, as
``run`` reads ``decode_corrected``'s array), or None wherever ``run`` would not
build its outcome from tokens (the fast path contradicts itself), and the differ
then decodes in full. Measured with callgrind on 3,000 inputs recorded from the
fuzz loop: ``run`` about 150,000 instructions an input, the C screen 25,000, the
cheap screen 3,000. A subclass (a planted bug) has no whole views: it may
override what the C derives.

``validate(data)`` must give the same span as ``first_error(data)``; a disagreement is
an inconsistency of the fast path and becomes a crash outcome saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from utf8fuzz import __version__
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import REPLACEMENT, VIEWS, Outcome, Reason, Token, TokenKind

if TYPE_CHECKING:
    from array import array

    from utf8fuzz.fast._fast import _Info, _Mode

_CPYTHON_REASONS = {"unexpected end of data": "truncated"}
_CORRECTED_REASONS = {
    "unexpected end of data": "truncated",
    "reserved sequence (FE/FF)": "reserved",
}


#: one-byte spans starting before this have their tokens made once (_Fast._ONE_BYTE)
_ONE_BYTE_SPANS = 256


# A text view's units - a str's characters, or code points - with how to read one
# as a code point, the replacement character's unit and each byte's escape unit.
_STR_UNITS: tuple[Callable[[Any], int], Any, tuple[Any, ...]] = (
    ord, chr(REPLACEMENT), tuple(chr(0xDC00 + b) for b in range(256)))
_INT_UNITS: tuple[Callable[[Any], int], Any, tuple[Any, ...]] = (
    int, REPLACEMENT, tuple(0xDC00 + b for b in range(256)))


def _same_units(units: list[Any], view: str | tuple[int, ...]) -> bool:
    """Derived units (all of one kind: the replace view's) equal a view given as a
    str or as a tuple of code points: the same code points."""
    text_units = not units or type(units[0]) is str
    if type(view) is str:
        return "".join(units) == view if text_units else tuple(units) == tuple(map(ord, view))
    return tuple(map(ord, units) if text_units else units) == view


def _codepoints(view: str | tuple[int, ...]) -> tuple[int, ...]:
    return tuple(map(ord, view)) if isinstance(view, str) else view


def _unicode_len(b: int) -> int:
    """Corrigendum #1, Table 3.1B: the length a lead byte begins (0: none)."""
    if b < 0x80:
        return 1
    if 0xC2 <= b <= 0xDF:
        return 2
    if 0xE0 <= b <= 0xEF:
        return 3
    if 0xF0 <= b <= 0xF4:
        return 4
    return 0


def _corrected_len(b: int) -> int:
    """Corrected UTF-8, "Putting it all together": lengths by lead byte."""
    if b < 0x80:
        return 1
    for hi, n in ((0xBF, 0), (0xDF, 2), (0xEF, 3), (0xF7, 4), (0xFB, 5), (0xFD, 6)):
        if b <= hi:
            return n
    return 0  # FE, FF: reserved units, cut by the spans


class FastModule(Protocol):
    """What the adapters call of the fast path's package (:func:`fast_module`):
    :mod:`utf8fuzz.fast`, typed by ``fast/_fast.pyi``."""

    def decode(self, data: bytes, errors: str = ..., /) -> str: ...
    def validate(self, data: bytes, /) -> tuple[int, int] | None: ...
    def first_error(self, data: bytes, /) -> tuple[int, int, str] | None: ...
    def error_spans(self, data: bytes, /) -> list[tuple[int, int]]: ...
    def decode_corrected(self, data: bytes, errors: str = ..., /) -> array[int]: ...
    def decode_corrected_text(self, data: bytes, errors: str = ..., /) -> str | None: ...
    def corrected_first_error(self, data: bytes, /) -> tuple[int, int, str] | None: ...
    def corrected_error_spans(self, data: bytes, /) -> list[tuple[int, int]]: ...
    def info(self) -> _Info: ...
    def path(self) -> tuple[str, _Mode]: ...


class _Fast(Decoder):
    shows = frozenset(VIEWS)
    own = True
    # the kernels read any buffer (PyObject_GetBuffer): a view inside a larger one
    # checks that they stop at its end, which ASan cannot see within the buffer
    takes_views = True

    def __init__(self, fast: FastModule) -> None:
        self._fast = fast
        self._versions: dict[tuple[str, str], dict[str, str]] = {}
        # The whole views in C (see the module docstring); not for a subclass (a
        # planted bug), which may override what the C derives.
        if type(self) in (FastUnicode, FastCorrected):
            # here, not at module import: the package may not import (fast_module)
            from utf8fuzz.fast._fast import fast_screen

            self.whole_views = partial(fast_screen, *self._functions(), bytes(self.LEAD_LENGTHS),
                                       bytes(b in self.RESERVED_LEADS for b in range(256)))

    def _functions(self) -> tuple[Callable[..., Any], Callable[..., Any] | None,
                                  Callable[..., Any], Callable[..., Any],
                                  Callable[..., Any] | None]:
        """The fast path's first-error function, its validate (or None), its spans
        function, its text function (``f(data, errors)``, a str or None) and the
        array function that stands in where the text one says None (or None), for
        the C screen."""
        raise NotImplementedError

    def versions(self) -> dict[str, str]:
        key = self._fast.path()  # called for every outcome: info() once per path
        cached = self._versions.get(key)
        if cached is None:
            info = self._fast.info()
            feats = " ".join(k for k, v in sorted(info["cpu"].items()) if v)
            cached = self._versions[key] = {
                "utf8fuzz": __version__,
                "path": f"{info['selected']} ({info['mode']}; "
                        f"scalar under {info['short_input']} B)",
                "cpu": feats or "none detected",
            }
        return dict(cached)

    def provenance(self) -> dict[str, str]:
        # Not cached by the base class: set_path can change the code path while
        # the process lives (versions() formats each path once).
        return self.versions()

    # -- the per-profile parts --------------------------------------------------
    def _strict(self, data: bytes) -> tuple[tuple[int, int] | None, str | None]:
        raise NotImplementedError

    def _decode(self, data: bytes, errors: str) -> str | tuple[int, ...]:
        """The text in a mode, as a str, or as a tuple of code points when a str
        cannot hold them."""
        raise NotImplementedError

    def _spans(self, data: bytes) -> list[tuple[int, int]]:
        raise NotImplementedError

    lead_len: Callable[[int], int]
    LEAD_LENGTHS: tuple[int, ...]  # lead_len of every byte value

    #: lead bytes whose error is a reserved unit (a token of kind "reserved")
    RESERVED_LEADS: frozenset[int] = frozenset()
    #: by the lead byte of a span: its token's kind, and its reason unless it reaches
    #: the end of the input (made from RESERVED_LEADS by __init_subclass__)
    _SPAN_KINDS: tuple[tuple[TokenKind, Reason | None], ...] = (("error", "illegal"),) * 256

    #: by lead byte, then start: the token of a one-byte span that does not reach the
    #: end of the input (the tokens shared by lead bytes of the same kind)
    _ONE_BYTE: tuple[tuple[Token, ...], ...] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._SPAN_KINDS = tuple(("reserved", None) if b in cls.RESERVED_LEADS
                                else ("error", "illegal") for b in range(256))
        made = {kw: tuple(Token(kw[0], None, a, a + 1, kw[1]) for a in range(_ONE_BYTE_SPANS))
                for kw in set(cls._SPAN_KINDS)}
        cls._ONE_BYTE = tuple(made[kw] for kw in cls._SPAN_KINDS)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            return self._screen(data)
        except Exception:
            return None

    def _screen(self, data: bytes) -> dict[str, Any]:
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------
    def run(self, data: bytes) -> Outcome:
        strict, reason = self._strict(data)
        spans = cast("tuple[tuple[int, int], ...]", tuple(map(tuple, self._spans(data))))
        # Text views as the library gives them (units: see _decode); as tuples of
        # code points, as Outcome's views are, only for a partial outcome.
        replace = self._decode(data, "replace")
        ignore = self._decode(data, "ignore")
        escape = self._decode(data, "surrogateescape")
        prov = self.versions()
        made = self._tokens(data, spans, replace)
        if made is not None:
            toks, ignore_units, escape_units = made
            # By construction the tokens' spans and replace views are the direct
            # ones (each span is one non-char token, each character and U+FFFD of
            # the replace output one token, in order); the other views are
            # compared here, as Outcome.view derives them from tokens.
            first = next((t for t in toks if t.kind != "char"), None)
            derived = (None, None) if first is None else (
                (first.start, first.end), first.reason if first.kind == "error" else "reserved")
            if (derived == (strict, reason) and _same_units(ignore_units, ignore)
                    and _same_units(escape_units, escape)):
                return Outcome.from_tokens(toks, len(data), prov, data=data, check=False)
        return Outcome.partial(
            len(data), provenance=prov, strict=strict, reason=reason, spans=spans,
            replace=_codepoints(replace), ignore=_codepoints(ignore), escape=_codepoints(escape))

    def _tokens(
        self, data: bytes, spans: Sequence[tuple[int, int]], chars: Sequence[Any]
    ) -> tuple[list[Token], list[Any], list[Any]] | None:
        """Tokens from the spans and the replace output (in units), with the ignore
        and escape views they give (in units); None when the two cannot be read
        together."""
        n, nchars = len(data), len(chars)
        value, fffd, escaped = _STR_UNITS if type(chars) is str else _INT_UNITS
        lengths = self.LEAD_LENGTHS
        span_kinds = self._SPAN_KINDS
        one_byte = self._ONE_BYTE
        make = tuple.__new__  # Token._make without its Python-level call
        toks: list[Token] = []
        ignore: list[int] = []
        escape: list[int] = []
        pos = k = 0
        for a, b in [*spans, (n, n)]:
            while pos < a:
                size = lengths[data[pos]]
                if size == 0 or pos + size > a or k >= nchars:
                    return None
                unit = chars[k]
                toks.append(make(Token, ("char", value(unit), pos, pos + size, None)))
                ignore.append(unit)
                escape.append(unit)
                k += 1
                pos += size
            if pos != a or (a == n and b == n):
                break
            if k >= nchars or chars[k] != fffd or b <= a:
                return None
            k += 1
            lead = data[a]
            if b == a + 1 and b < n and a < _ONE_BYTE_SPANS:
                # the commonest token of a fuzz input, made once per class and place
                toks.append(one_byte[lead][a])
                escape.append(escaped[lead])
            else:
                kind, why = span_kinds[lead]
                if why is not None and b >= n:  # only an error reaching the end can be truncated
                    why = self._error_reason(data, a, b)
                toks.append(make(Token, (kind, None, a, b, why)))
                escape.extend([escaped[x] for x in data[a:b]])
            pos = b
        if pos != n or k != nchars:
            return None
        return toks, ignore, escape

    def _error_reason(self, data: bytes, a: int, b: int) -> Reason:
        """The reason of the error at [a, b) that reaches the end of ``data``: what
        the strict decoder says of the input from there on (an error token's reason
        is ``illegal`` or ``truncated``: anything else it says is ``illegal``)."""
        _, reason = self._strict(data[a:])
        return "truncated" if reason == "truncated" else "illegal"


class FastUnicode(_Fast):
    name = "fast:unicode"
    profile = "unicode"
    lead_len = staticmethod(_unicode_len)
    LEAD_LENGTHS = tuple(map(_unicode_len, range(256)))

    def _strict(self, data: bytes) -> tuple[tuple[int, int] | None, str | None]:
        first = self._fast.first_error(data)
        span = None if first is None else (first[0], first[1])
        valid = self._fast.validate(data)
        if valid != span:
            raise AssertionError(
                f"fast path inconsistent: validate() gives {valid}, first_error() {first}")
        if first is None:
            return None, None
        return span, _CPYTHON_REASONS.get(first[2], "illegal")

    def _decode(self, data: bytes, errors: str) -> str:
        return self._fast.decode(data, errors)

    def _functions(self) -> tuple[Callable[..., Any], Callable[..., Any] | None,
                                  Callable[..., Any], Callable[..., Any],
                                  Callable[..., Any] | None]:
        f = self._fast
        return f.first_error, f.validate, f.error_spans, f.decode, None

    def _screen(self, data: bytes) -> dict[str, Any]:
        return {"replace": self._fast.decode(data, "replace"),
                "strict": self._fast.validate(data)}

    def _spans(self, data: bytes) -> list[tuple[int, int]]:
        return self._fast.error_spans(data)


class FastCorrected(_Fast):
    name = "fast:corrected"
    profile = "corrected"
    lead_len = staticmethod(_corrected_len)
    LEAD_LENGTHS = tuple(map(_corrected_len, range(256)))

    def _strict(self, data: bytes) -> tuple[tuple[int, int] | None, str | None]:
        first = self._fast.corrected_first_error(data)
        if first is None:
            return None, None
        start, end, why = first
        return (start, end), _CORRECTED_REASONS.get(why, "illegal")

    def _decode(self, data: bytes, errors: str) -> str | tuple[int, ...]:
        text = self._fast.decode_corrected_text(data, errors)
        if text is None:  # a code point above U+10FFFF
            return tuple(self._fast.decode_corrected(data, errors))
        return text

    def _functions(self) -> tuple[Callable[..., Any], Callable[..., Any] | None,
                                  Callable[..., Any], Callable[..., Any],
                                  Callable[..., Any] | None]:
        f = self._fast
        return (f.corrected_first_error, None, f.corrected_error_spans,
                f.decode_corrected_text, f.decode_corrected)

    def _screen(self, data: bytes) -> dict[str, Any]:
        replace: str | tuple[int, ...] | None = self._fast.decode_corrected_text(data, "replace")
        if replace is None:  # a code point above U+10FFFF: no str can hold it
            replace = tuple(self._fast.decode_corrected(data, "replace"))
        strict, reason = self._strict(data)
        return {"replace": replace, "strict": strict, "reason": reason}

    def _spans(self, data: bytes) -> list[tuple[int, int]]:
        return self._fast.corrected_error_spans(data)

    # Corrected UTF-8: "sequences beginning with FE or FF" are reserved units.
    RESERVED_LEADS = frozenset({0xFE, 0xFF})


def fast_module() -> FastModule:
    """The extension's Python package; ImportError (with the reason) when unusable."""
    from utf8fuzz import fast

    return fast


def discover() -> list[Decoder | Unavailable]:
    try:
        fast = fast_module()
    except ImportError as e:
        reason = f"the C extension is not usable: {e} (build it with: pip install -e .)"
        return [Unavailable("fast:unicode", reason), Unavailable("fast:corrected", reason)]
    return [FastUnicode(fast), FastCorrected(fast)]
