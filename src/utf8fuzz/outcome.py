"""Tokens, outcomes, and the views a decoder can show.

An *outcome* is what one decoder produced for one input. The richest form is a
sequence of *tokens* that tile the input: each token is a code point (``char``),
an ``error`` (ill-formed bytes, cut by a policy), or a ``reserved`` unit (Corrected
UTF-8's FE/FF sequences), and each carries the byte span ``[start, end)`` it
consumed.

Most real decoders cannot show that much. CPython in strict mode shows only the
first error's span; ``TextDecoder`` shows only its replacement output. So an
outcome also records which *views* it can show, and every comparison is made at a
view both sides have. The views, from the most to the least detailed:

``tokens``    every token with its span (the references, recording error handlers)
``spans``     every error's ``(start, end)``
``strict``    the first error's ``(start, end)``, or None when the input is valid
``reason``    the first error's reason: ``illegal``, ``truncated`` or ``reserved``
``accept``    True when the input is well-formed, False when it is not: all a
              validator (``bytes -> bool``) says
``replace``   output code points with U+FFFD for each error
``ignore``    output code points with errors skipped
``escape``    output code points with each ill-formed byte as U+DC80+byte
              (CPython's surrogateescape)

A ``reserved`` unit has no code point either, so strict, spans, replace and
ignore treat it as they treat an error; only ``tokens`` (and ``reason``, which
says ``reserved``) tell the two apart.

An outcome built from tokens can show all of them; a partial outcome shows what
it was given. Asking a view it cannot show raises :class:`ViewUnavailable` - it
never guesses - so that "unsupported" can never count as a difference.

An outcome may also be a *failure*: ``crash`` (the decoder raised something it
should not have, or its process died), ``timeout``, or ``bad-outcome`` (what it
answered is not an outcome of the input: :func:`check`). A failure shows no view.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias, overload

TokenKind = Literal["char", "error", "reserved"]
Reason = Literal["illegal", "truncated"]
#: ``bad-outcome``: the decoder answered, but not with an outcome of this input
#: (spans outside it or out of order, code points above :data:`MAX_CODE_POINT` or negative, more
#: output than :func:`output_bound` allows, the input mutated). Its ``detail`` starts
#: with one of :data:`BAD_OUTCOME_KINDS` and ``": "``.
Status = Literal["ok", "crash", "timeout", "bad-outcome"]
FailureStatus = Literal["crash", "timeout", "bad-outcome"]

#: What a ``bad-outcome`` failure's detail starts with: the names of its kinds.
BAD_OUTCOME_KINDS: tuple[str, ...] = (
    "oversized-output", "span-outside-input", "spans-out-of-order", "code-point-out-of-range",
    "mutated-input",
)

#: At most this many code points (or tokens) of output per input byte, plus
#: :data:`OUTPUT_SLACK`. A decoder's views hold at most one code point per byte, but
#: error handlers that write text (``backslashreplace``: four per byte,
#: ``xmlcharrefreplace``: up to six) are legitimate; anything beyond the bound is a
#: ``bad-outcome`` (``oversized-output``), and nothing past it is read or kept.
OUTPUT_PER_BYTE = 8
OUTPUT_SLACK = 64


def output_bound(length: int) -> int:
    """The most code points (or tokens) any view of an outcome of a ``length``-byte
    input may hold: ``OUTPUT_PER_BYTE * length + OUTPUT_SLACK``."""
    return OUTPUT_PER_BYTE * length + OUTPUT_SLACK


#: The largest code point any view may hold: the largest value any profile decodes to,
#: Corrected UTF-8's 6-byte forms (U+8421109F, profiles/corrected.py; RFC 2279's reach
#: U+7FFFFFFF). tests/profiles checks it against every profile's ``max_codepoint``.
MAX_CODE_POINT = 0x8421109F
#: A failure's detail is cut to this many characters (it is shown and stored).
DETAIL_LIMIT = 500


def bad_outcome(length: int, kind: str, why: str,
                provenance: dict[str, str] | None = None) -> Outcome:
    """The ``bad-outcome`` failure of kind ``kind`` (one of :data:`BAD_OUTCOME_KINDS`)."""
    assert kind in BAD_OUTCOME_KINDS, kind
    return Outcome.failure(length, "bad-outcome", f"{kind}: {why}"[:DETAIL_LIMIT], provenance)


def check(out: Outcome | dict[str, Any], length: int) -> str | None:
    """Why ``out`` (an outcome, or a screen's dict of views) is not an outcome of a
    ``length``-byte input - a ``bad-outcome`` detail, see :data:`BAD_OUTCOME_KINDS` -
    or None when it is one as far as can be told cheaply: every span (and token)
    inside ``[0, length)`` and in order, every code point in 0..:data:`MAX_CODE_POINT`, no view
    longer than :func:`output_bound`, a failure's detail no longer than
    :data:`DETAIL_LIMIT`. Sizes are looked at before anything else, so an oversized
    view is never walked. What a decoder says is not trusted, so it is type-checked."""
    if isinstance(out, Outcome):
        if out.status != "ok":
            return None  # its detail is cut by checked()
        if out.length != length:
            return f"span-outside-input: an outcome of {out.length!r} bytes for {length}"
        if out.tokens_ is not None:
            return _check_tokens(out.tokens_, length)
        views: dict[str, Any] = out.views
    else:
        views = out
    bound = output_bound(length)
    for name, v in views.items():
        if type(v) in (str, tuple, list, bytes) and len(v) > bound:
            if name == "tokens" and type(v) is bytes:
                if len(v) > 32 * bound:  # four int64 a token (pack_tokens)
                    return f"oversized-output: {len(v) // 32} tokens for {length} bytes"
                continue
            return (f"oversized-output: {len(v)} items in its {name} view for {length} bytes "
                    f"(at most {bound})")
    for name, v in views.items():
        why = _check_view(name, v, length)
        if why is not None:
            return why
    return None


def _check_view(name: str, v: Any, length: int) -> str | None:
    if name in TEXT_VIEWS:
        if type(v) is str:
            return None  # a str holds code points up to U+10FFFF only
        try:
            if v and not (min(v) >= 0 and max(v) <= MAX_CODE_POINT):
                return f"code-point-out-of-range: in its {name} view"
        except TypeError:
            return f"code-point-out-of-range: its {name} view holds what is not a code point"
        return None
    if name == "spans":
        return _check_spans(v, length)
    if name == "strict":
        return None if v is None else _check_spans((v,), length)
    if name == "tokens":
        if type(v) is bytes:
            try:
                return _check_tokens(unpack_tokens(v), length)
            except ValueError:
                return "span-outside-input: packed tokens that are not tokens"
        return _check_tokens(v, length)
    return None


def _check_spans(spans: Any, length: int) -> str | None:
    prev = 0
    try:
        for s, e in spans:
            if not (type(s) is int and type(e) is int and 0 <= s < e <= length):
                return f"span-outside-input: ({s!r}, {e!r}) for {length} bytes"[:200]
            if s < prev:
                return f"spans-out-of-order: ({s}, {e}) after one ending at {prev}"
            prev = e
    except (TypeError, ValueError):
        return "span-outside-input: a span that is not two offsets"
    return None


def _check_tokens(tokens: Any, length: int) -> str | None:
    if len(tokens) > output_bound(length):
        return f"oversized-output: {len(tokens)} tokens for {length} bytes"
    try:
        why = _check_spans([(t[2], t[3]) for t in tokens], length)
        if why is not None:
            return why
        if any(t[1] is not None and not (type(t[1]) is int and 0 <= t[1] <= MAX_CODE_POINT)
               for t in tokens):
            return "code-point-out-of-range: in its tokens"
    except (TypeError, IndexError):
        return "span-outside-input: tokens that are not tokens"
    return None


def checked(out: Outcome, length: int) -> Outcome:
    """``out``, or its ``bad-outcome`` failure when :func:`check` finds one. A
    failure's detail is cut to :data:`DETAIL_LIMIT`, and a status that is none of
    :data:`Status` is a ``crash``."""
    if out.status != "ok":
        d = out.detail
        if (out.status in _FAILURES and (d is None or (type(d) is str and len(d) <= DETAIL_LIMIT))
                and out.length == length):
            return out
        status: FailureStatus = out.status if out.status in _FAILURES else "crash"
        said = d if type(d) is str else f"a failure whose detail is a {type(d).__name__}"
        return Outcome.failure(length, status, said[:DETAIL_LIMIT], out.provenance)
    why = check(out, length)
    if why is None:
        return out
    kind, _, said = why.partition(": ")
    return bad_outcome(length, kind, said, out.provenance)


_FAILURES = frozenset({"crash", "timeout", "bad-outcome"})


#: The names of the views (see the module docstring).
ViewName = Literal["tokens", "spans", "strict", "reason", "accept", "replace", "ignore",
                   "escape"]
TextViewName = Literal["replace", "ignore", "escape"]

REPLACEMENT = 0xFFFD

#: Every view name, most detailed first.
VIEWS: tuple[ViewName, ...] = (
    "tokens", "spans", "strict", "reason", "accept", "replace", "ignore", "escape")
_ALL_VIEWS: frozenset[str] = frozenset(VIEWS)
#: The views that are text (code points): a partial outcome may hold them as a ``str``.
TEXT_VIEWS: frozenset[str] = frozenset({"replace", "ignore", "escape"})

Span: TypeAlias = tuple[int, int]


class ViewUnavailable(LookupError):
    """The outcome's decoder cannot show this view (never a difference)."""


class Token(NamedTuple):
    """One unit of an outcome: what ``data[start:end]`` decoded to.

    ``value`` is the code point for ``char`` and None otherwise. ``reason`` is set
    for ``error`` only: ``truncated`` when the bytes are a prefix of a well-formed
    sequence cut off by the end of the input, ``illegal`` otherwise.

    A NamedTuple rather than a dataclass: the references build one per character
    inside the fuzz loop, and a tuple is several times cheaper to make.
    """

    kind: TokenKind
    value: int | None
    start: int
    end: int
    reason: Reason | None = None

    def as_list(self) -> list[str | int | None]:
        """The stable JSON form: ``[kind, value or null, start, end]``."""
        return [self.kind, self.value, self.start, self.end]


#: A view's value, as :meth:`Outcome.view` gives it: ``tokens`` a tuple of Tokens,
#: ``spans`` a tuple of Spans, ``strict`` a Span or None, ``reason`` a str or None,
#: ``accept`` a bool, the text views a tuple of code points. A partial outcome may also hold a text
#: view as the ``str`` of its code points (``view`` gives the tuple).
View: TypeAlias = (tuple[Token, ...] | tuple[Span, ...] | Span | tuple[int, ...] | str | bool
                  | None)


_KINDS: tuple[TokenKind, ...] = ("char", "error", "reserved")
_REASONS: tuple[Reason | None, ...] = (None, "illegal", "truncated")
_KIND_CODE = {k: i for i, k in enumerate(_KINDS)}
_REASON_CODE = {r: i for i, r in enumerate(_REASONS)}


def pack_tokens(tokens: Iterable[Token]) -> bytes:
    """Tokens in a compact form, as bytes: four native int64 per token -
    ``kind | reason << 8`` (kinds char, error, reserved as 0, 1, 2; reasons None,
    illegal, truncated as 0, 1, 2), ``start``, ``end``, and ``value`` (-1 for None).

    C code that makes tokens can write this form without a Token object each, and
    two packings of the same tokens are equal bytes. In-process only (the byte
    order is the machine's): outcomes are stored as JSON."""
    a = array("q")
    for t in tokens:
        a.extend((_KIND_CODE[t.kind] | _REASON_CODE[t.reason] << 8, t.start, t.end,
                  -1 if t.value is None else t.value))
    return a.tobytes()


def unpack_tokens(packed: bytes) -> tuple[Token, ...]:
    """The tokens :func:`pack_tokens` packed; ValueError for bytes it cannot have made."""
    a = array("q")
    if len(packed) % (4 * a.itemsize):
        raise ValueError(f"packed tokens: {len(packed)} bytes is not a whole number of tokens")
    a.frombytes(packed)
    out: list[Token] = []
    for i in range(0, len(a), 4):
        kr, start, end, value = a[i : i + 4]
        kind, reason = kr & 0xFF, kr >> 8
        if not (0 <= kind < len(_KINDS) and 0 <= reason < len(_REASONS)):
            raise ValueError(f"packed tokens: no such kind and reason {kr:#x}")
        out.append(Token(_KINDS[kind], None if value < 0 else value, start, end,
                         _REASONS[reason]))
    return tuple(out)


@dataclass(frozen=True)
class Outcome:
    """What a decoder produced for one input; see the module docstring.

    Build one with :meth:`from_tokens`, :meth:`partial` or :meth:`failure`.
    ``provenance`` records what produced it (library and Unicode versions, code
    path, CPU features); it never takes part in comparisons.
    """

    length: int
    status: Status = "ok"
    tokens_: tuple[Token, ...] | None = None
    views: dict[str, View] = field(default_factory=dict)
    detail: str | None = None
    provenance: dict[str, str] = field(default_factory=dict, compare=False)
    data: bytes | None = field(default=None, compare=False, repr=False)

    # -- construction -----------------------------------------------------------

    @classmethod
    def from_tokens(
        cls,
        tokens: Iterable[Token],
        length: int,
        provenance: dict[str, str] | None = None,
        data: bytes | None = None,
        *,
        check: bool = True,
    ) -> Outcome:
        """``data`` (the input) is optional; with it the outcome can show ``escape``.
        ``check=False`` is for producers that tile by construction (the references)."""
        toks = tuple(tokens)
        if check:
            _check_tiling(toks, length)
        return cls._make(length, "ok", toks, {}, None, dict(provenance or {}), data)

    @classmethod
    def partial(
        cls,
        length: int,
        *,
        provenance: dict[str, str] | None = None,
        **views: Any,
    ) -> Outcome:
        """An outcome that shows only the views given (e.g. ``strict=(3, 4)``).

        Pass ``strict=None`` for "valid"; omit ``strict`` for "cannot say".
        """
        unknown = set(views) - _ALL_VIEWS - {"tokens"}
        if unknown:
            raise ValueError(f"unknown view(s): {', '.join(sorted(unknown))}")
        norm: dict[str, View] = {}
        for name, v in views.items():
            # Adapters build these for every fuzz input: tuple() only when needed.
            if name in TEXT_VIEWS:
                norm[name] = (v if type(v) is tuple
                              else tuple(map(ord, v)) if type(v) is str else tuple(v))
            elif name == "spans":
                norm[name] = tuple((s, e) if type(s) is int else (int(s), int(e)) for s, e in v)
            elif name == "strict":
                norm[name] = None if v is None else (int(v[0]), int(v[1]))
            elif name == "accept":
                if type(v) is not bool:
                    raise TypeError(f"the accept view is True or False, not {v!r}")
                norm[name] = v
            else:
                norm[name] = v
        return cls._make(length, "ok", None, norm, None, dict(provenance or {}), None)

    @classmethod
    def failure(
        cls, length: int, status: FailureStatus, detail: str,
        provenance: dict[str, str] | None = None,
    ) -> Outcome:
        return cls._make(length, status, None, {}, detail, dict(provenance or {}), None)

    @classmethod
    def _make(cls, length: int, status: Status, tokens_: tuple[Token, ...] | None,
              views: dict[str, View], detail: str | None, provenance: dict[str, str],
              data: bytes | None) -> Outcome:
        """``cls(...)`` with every field given, without the frozen dataclass's
        ``__init__`` (an ``object.__setattr__`` per field): the fuzz loop makes
        outcomes by the thousand a second, and that was most of their cost. The
        fields are the dataclass's, checked by tests/outcome/test_outcome.py."""
        o = object.__new__(cls)
        o.__dict__.update(length=length, status=status, tokens_=tokens_, views=views,
                          detail=detail, provenance=provenance, data=data)
        return o

    # -- what it can show ------------------------------------------------------

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def shows(self) -> frozenset[str]:
        """The views this outcome can show."""
        if not self.ok:
            return frozenset()
        if self.tokens_ is not None:
            return _ALL_VIEWS if self.data is not None else _ALL_VIEWS - {"escape"}
        return frozenset(self.views)

    @overload
    def view(self, name: Literal["tokens"]) -> tuple[Token, ...]: ...
    @overload
    def view(self, name: Literal["spans"]) -> tuple[Span, ...]: ...
    @overload
    def view(self, name: Literal["strict"]) -> Span | None: ...
    @overload
    def view(self, name: Literal["reason"]) -> str | None: ...
    @overload
    def view(self, name: Literal["accept"]) -> bool: ...
    @overload
    def view(self, name: TextViewName) -> tuple[int, ...]: ...
    @overload
    def view(self, name: str) -> View: ...

    def view(self, name: str) -> View:
        """The named view, derived from tokens when there are tokens."""
        if name not in _ALL_VIEWS:
            raise ValueError(f"unknown view {name!r}; views are {', '.join(VIEWS)}")
        if not self.ok:
            raise ViewUnavailable(f"a {self.status} outcome shows no {name!r}")
        if self.tokens_ is None:
            if name not in self.views:
                raise ViewUnavailable(f"this decoder does not show {name!r}")
            v = self.views[name]
            # A text view may be held as the str of its code points.
            return tuple(map(ord, v)) if type(v) is str and name in TEXT_VIEWS else v
        toks = self.tokens_
        errors = [t for t in toks if t.kind != "char"]
        if name == "tokens":
            return toks
        if name == "spans":
            return tuple((t.start, t.end) for t in errors)
        if name == "strict":
            return (errors[0].start, errors[0].end) if errors else None
        if name == "accept":
            return not errors
        if name == "reason":
            if not errors:
                return None
            return errors[0].reason if errors[0].kind == "error" else "reserved"
        if name == "replace":
            return tuple(REPLACEMENT if t.value is None or t.kind != "char" else t.value
                         for t in toks)
        if name == "ignore":
            return tuple(t.value for t in toks if t.kind == "char" and t.value is not None)
        # escape: CPython's surrogateescape needs the input bytes themselves.
        if self.data is None:
            raise ViewUnavailable("'escape' needs the input bytes: use escape_view(data)")
        return self.escape_view(self.data)

    # -- the documented API ------------------------------------------------------

    @property
    def tokens(self) -> tuple[Token, ...]:
        return self.view("tokens")

    def codepoints(self, replacement: int | None = REPLACEMENT) -> list[int]:
        """Output code points: each error or reserved unit becomes ``replacement``
        (or is dropped when ``replacement`` is None)."""
        if replacement is None:
            return list(self.view("ignore"))
        if replacement == REPLACEMENT:
            return list(self.view("replace"))
        return [replacement if t.value is None or t.kind != "char" else t.value
                for t in self.tokens]

    @property
    def first_error(self) -> Span | None:
        """The first error's span in CPython's UnicodeDecodeError convention."""
        return self.view("strict")

    @property
    def error_spans(self) -> list[Span]:
        return list(self.view("spans"))

    @property
    def valid(self) -> bool:
        return self.first_error is None

    def escape_view(self, data: bytes) -> tuple[int, ...]:
        """CPython's surrogateescape output: each byte of an error becomes U+DC80+byte."""
        if self.tokens_ is None:
            return self.view("escape")
        out: list[int] = []
        for t in self.tokens_:
            if t.kind == "char" and t.value is not None:
                out.append(t.value)
            else:
                out.extend(0xDC00 + b for b in data[t.start : t.end])
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe form, stable across runs (used by corpus sidecars and --json)."""
        d: dict[str, Any] = {"status": self.status, "length": self.length}
        if not self.ok:
            d["detail"] = self.detail
        elif self.tokens_ is not None:
            d["tokens"] = [t.as_list() + ([t.reason] if t.reason else []) for t in self.tokens_]
        else:
            d["views"] = {k: _jsonable(self.view(k)) for k in sorted(self.views)}
        if self.provenance:
            d["provenance"] = dict(sorted(self.provenance.items()))
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Outcome:
        prov = d.get("provenance") or {}
        if d["status"] != "ok":
            return cls.failure(d["length"], d["status"], d.get("detail") or "", prov)
        if "tokens" in d:
            toks = [
                Token(t[0], t[1], t[2], t[3], t[4] if len(t) > 4 else None) for t in d["tokens"]
            ]
            return cls.from_tokens(toks, d["length"], prov)
        views = dict(d.get("views") or {})
        if "tokens" in views:
            raise ValueError("a partial outcome cannot carry tokens")
        return cls.partial(d["length"], provenance=prov, **views)


def _jsonable(v: object) -> object:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    return v


def _check_tiling(tokens: Sequence[Token], length: int) -> None:
    """Tokens must tile [0, length) in order; a decoder adapter that builds
    tokens from a library's report must not leave gaps or overlaps."""
    pos = 0
    for t in tokens:
        if t.start != pos or t.end <= t.start:
            raise ValueError(f"tokens do not tile the input at byte {pos}: got {t}")
        if (t.kind == "char") != (t.value is not None):
            raise ValueError(f"token {t} has a value iff it is a char")
        pos = t.end
    if pos != length:
        raise ValueError(f"tokens end at byte {pos}, input has {length}")


def format_codepoint(cp: int) -> str:
    """U+XXXX, never the character itself: fuzz inputs are hostile."""
    return f"U+{cp:04X}"


def format_codepoints(cps: Iterable[int]) -> str:
    return " ".join(format_codepoint(c) for c in cps)


def hexbytes(data: bytes) -> str:
    return data.hex(" ").upper()
