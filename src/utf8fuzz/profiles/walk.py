"""The reference walk, compiled: the same table, walked in C.

Every fuzz input is decoded by the references (one per profile and policy) before
any decoder under test is judged, so the references' cost bounds the fuzzer's
speed. :func:`utf8fuzz.policies.decode_tokens` walks a profile's compiled DFA in
Python; on 64-byte inputs cut from the fuzz corpus it took 35-55 µs an input, and
the walk with the views the differ asks for (``replace`` and ``ignore`` text,
``strict``, ``spans``, ``reason``) 70-125 µs, against about 1 µs for CPython's
``bytes.decode`` in the same run. Five references would take the whole of a
200 µs budget (5,000 inputs a second) before any decoder under test ran. The C
walk took 0.6-1.0 µs, and 1.4-2.6 µs with those views (measured on one loaded
core; the ratio to the Python walk and views, 35-60x, is the steadier figure).

So :func:`walker` hands the *same compiled table* - ``Profile.dfa``'s ``trans``,
``accept``, ``live_after`` and ``single``, the reserved and recognized leads, each
row's offset and value function - to a small C interpreter
(``utf8fuzz.profiles._walk``) that performs ``decode_tokens`` statement for
statement. Nothing about a profile is written twice: the C knows no row, lead
byte or offset of any spec, only how to walk a table. A row whose value is not
bit concatenation is valued by calling the row's own Python ``value_fn``, except
the surrogate-pair row of CESU-8 and modified UTF-8
(:mod:`utf8fuzz.profiles._pairs`), whose three-line ``pair_value`` the C
transcribes (the tests compare the two on all 2^20 sequences of the row).
``decode_tokens`` stays the reference of record: it is the transcription a
reader checks against the specs, and the C walk is held equal to it by
``tests/profiles/test_walk.py`` (every input of up to two bytes, three bytes
over the interesting byte values, Hypothesis, and the whole corpus, for every
profile and policy, comparing every attribute below).

A walk records compact arrays only; everything else is built on first use and
kept, because a fuzz iteration asks for a few views of each reference and never
for most of them::

    w = walker(profile, policy)   # compiled once per (profile, policy)
    r = w(data)
    r.tokens                      # tuple(decode_tokens(data, profile, policy))
    r.view(name)                  # Outcome.from_tokens(...).view(name), same types
    r.text(name)                  # replace/ignore/escape as a str; None past U+10FFFF
    r.packed                      # the tokens as outcome.pack_tokens packs them
    r.features                    # coverage feature ids, see feature_key
    r.outcome(provenance)         # the Outcome the reference decoder returns
    r.cover(counters, region)     # region[counters[f]] += 1 for each feature f; the rest returned
    r.first_error                 # index of the first error/reserved token, or -1
    r.token(i)                    # tokens[i] alone (None out of range)
    r.token_index(offset)         # index of the token holding a byte offset

The last four serve the fuzz loop, which walks five references an input and
otherwise paid in Python for what it asked of them. ``cover`` is
:meth:`~utf8fuzz.loop.coverage.TableCoverage.feed_walk`'s loop over the
feature ids, dict look-ups and counter bumps made from C, straight into the 8-bit
counters libFuzzer reads; only ids not seen before come back to Python to be
given a counter. A feature id is one int object for all of a walker's walks, so
those look-ups find their keys by identity and allocate nothing. (It used to call
Atheris's ``_trace_branch`` per id: about 84 pybind11 calls an input, some 10 µs.)
``first_error``, ``token`` and ``token_index`` let the differ classify a
divergence without the ``Token`` tuple and a list of starts (``token_index`` is exactly
``max(0, bisect_right([t.start for t in tokens], offset) - 1)``, a binary search
on the walk's arrays).

:class:`PyWalk` is the same interface over ``decode_tokens`` itself: the oracle
the tests compare against, and what :func:`walker` returns when
``UTF8FUZZ_PURE_REFERENCE=1`` asks for the transcription alone.

Coverage features. :class:`utf8fuzz.loop.coverage.TableCoverage` keys coverage
by what each token is in the spec's terms (a row; an error's length, reason and
lead byte; a reserved unit's length), by neighbouring tokens, and by tokens that
straddle the :data:`BLOCKS` boundaries. A walk gives each such key, less the profile name,
as one integer (``category << 20 | fields``); :func:`feature_key` turns an id back
into the exact tuple ``TableCoverage.feed`` uses.
"""

from __future__ import annotations

import bisect
import operator
import os
from collections.abc import Callable
from typing import Any, Protocol

from utf8fuzz.outcome import TEXT_VIEWS, VIEWS, Outcome, Token, pack_tokens
from utf8fuzz.policies import POLICIES, decode_tokens
from utf8fuzz.profiles import _walk
from utf8fuzz.profiles._pairs import pair_value
from utf8fuzz.profiles.table import Profile, Row

__all__ = ["BLOCKS", "PyWalk", "Walk", "feature_key", "is_compiled", "py_features", "walker"]

MAX_UNICODE = 0x10FFFF


class Walk(Protocol):
    """What a walker returns for one input (the C ``_walk.Walk`` or :class:`PyWalk`)."""

    @property
    def tokens(self) -> tuple[Token, ...]: ...
    @property
    def features(self) -> tuple[int, ...]: ...
    @property
    def data(self) -> bytes: ...
    def view(self, name: str) -> Any: ...
    def text(self, name: str) -> str | None: ...
    def outcome(self, provenance: dict[str, str]) -> Outcome: ...
    @property
    def first_error(self) -> int: ...
    @property
    def packed(self) -> bytes: ...
    def token(self, i: int) -> Token | None: ...
    def token_index(self, offset: int) -> int: ...
    def cover(self, counters: dict[int, int], region: bytearray) -> list[int] | None: ...


def _make_outcome(tokens: tuple[Token, ...], length: int, provenance: dict[str, str],
                  data: bytes) -> Outcome:
    return Outcome.from_tokens(tokens, length, provenance, data=data, check=False)


_walk.configure(Token, _make_outcome)


# -- coverage feature ids ------------------------------------------------------------
# The same encoding as make_features in _walk.c: a token's coarse kind is one byte,
# ("char", n) -> n, ("error", min(n, 7), reason) -> 128 + 2 * (len - 1) + truncated,
# ("reserved", min(n, 4)) -> 144 + len; 254 stands for "start", 255 for "end".

F_CHAR, F_ERROR, F_RESERVED, F_NEXT, F_BLOCK = range(5)
F_SHIFT = 20
#: The vector widths, in bytes, whose boundaries coverage, generation and the
#: minimizer care about: where a SIMD decoder's block ends.
BLOCKS: tuple[int, ...] = (16, 32, 64)
_START, _END = 254, 255
_REASONS = ("illegal", "truncated")


def _coarse_key(c: int) -> tuple[object, ...]:
    if c == _START:
        return ("start",)
    if c == _END:
        return ("end",)
    if c < 128:
        return ("char", c)
    if c < 144:
        return ("error", (c - 128) // 2 + 1, _REASONS[(c - 128) % 2])
    return ("reserved", c - 144)


def feature_key(fid: int) -> tuple[object, ...]:
    """The ``TableCoverage.feed`` key of a feature id, less the profile name."""
    cat, f = fid >> F_SHIFT, fid & ((1 << F_SHIFT) - 1)
    if cat == F_CHAR:
        return ("char", f)
    if cat == F_ERROR:
        return ("error", f >> 10, _REASONS[(f >> 8) & 1], f & 0xFF)
    if cat == F_RESERVED:
        return ("reserved", f)
    if cat == F_NEXT:
        return ("next", *_coarse_key(f >> 8), *_coarse_key(f & 0xFF))
    if cat == F_BLOCK:
        return ("block", BLOCKS[f >> 8], *_coarse_key(f & 0xFF))
    raise ValueError(f"not a feature id: {fid}")


def _coarse(t: Token) -> int:
    n = t.end - t.start
    if t.kind == "char":
        return n
    if t.kind == "error":
        return 128 + 2 * (min(n, 7) - 1) + (t.reason == "truncated")
    return 144 + min(n, 4)


# id(profile) -> (profile, {sequence: row index}): Profile.row_of scans every row.
_ROWS: dict[int, tuple[Profile, dict[bytes, int]]] = {}


def _row_index(profile: Profile, seq: bytes) -> int:
    hit = _ROWS.get(id(profile))
    if hit is None or hit[0] is not profile:
        hit = _ROWS[id(profile)] = (profile, {})
    rows = hit[1]
    r = rows.get(seq)
    if r is None:
        if len(rows) > 1 << 16:  # a long pure-Python fuzz run meets many sequences
            rows.clear()
        row = profile.row_of(seq)
        r = rows[seq] = profile.rows.index(row) if row is not None else -1
    return r


def py_features(profile: Profile, data: bytes, tokens: tuple[Token, ...]) -> tuple[int, ...]:
    """The feature ids of a walk, computed from its tokens in Python (``row_of``
    names a character's row)."""
    ids: set[int] = set()
    prev = _START
    for t in tokens:
        n = t.end - t.start
        c = _coarse(t)
        if t.kind == "char":
            ids.add(F_CHAR << F_SHIFT | _row_index(profile, data[t.start : t.end]))
        elif t.kind == "error":
            ids.add(F_ERROR << F_SHIFT | min(n, 7) << 10
                    | (t.reason == "truncated") << 8 | data[t.start])
        else:
            ids.add(F_RESERVED << F_SHIFT | min(n, 4))
        ids.add(F_NEXT << F_SHIFT | prev << 8 | c)
        prev = c
        if n > 1 or t.kind != "char":
            for bi, b in enumerate(BLOCKS):
                if t.start // b != (t.end - 1) // b:
                    ids.add(F_BLOCK << F_SHIFT | bi << 8 | c)
    ids.add(F_NEXT << F_SHIFT | prev << 8 | _END)
    return tuple(sorted(ids))


# -- the Python walk -----------------------------------------------------------------


class PyWalk:
    """One input's walk by ``decode_tokens`` itself; the C walk's interface."""

    __slots__ = ("_cache", "_outcome", "_profile", "_starts", "data", "first_error", "tokens")

    def __init__(self, data: bytes, profile: Profile, policy: str) -> None:
        self.data = data
        self._profile = profile
        self.tokens: tuple[Token, ...] = tuple(decode_tokens(data, profile, policy))
        self._outcome = Outcome.from_tokens(self.tokens, len(data), data=data, check=False)
        self._cache: dict[str, Any] = {}
        self._starts: list[int] | None = None
        self.first_error: int = next(
            (k for k, t in enumerate(self.tokens) if t.kind != "char"), -1)

    def token(self, i: int) -> Token | None:
        return self.tokens[i] if 0 <= i < len(self.tokens) else None

    def token_index(self, offset: int) -> int:
        if self._starts is None:
            self._starts = [t.start for t in self.tokens]
        return max(0, bisect.bisect_right(self._starts, operator.index(offset)) - 1)

    def cover(self, counters: dict[int, int], region: bytearray) -> list[int] | None:
        if not isinstance(counters, dict):
            raise TypeError("cover: counters must be a dict")
        cells = memoryview(region).cast("B")
        if cells.readonly:
            raise BufferError("Object is not writable.")  # as the C's buffer request
        missing = []
        for f in self.features:
            c = counters.get(f)
            if c is None:
                missing.append(f)
            elif not 0 <= c < len(cells):
                raise IndexError(f"cover: counter {c} is outside the region ({len(cells)})")
            elif cells[c] != 255:
                cells[c] += 1
        return missing or None

    @property
    def packed(self) -> bytes:
        c = self._cache
        if "packed" not in c:
            c["packed"] = pack_tokens(self.tokens)
        packed: bytes = c["packed"]
        return packed

    def view(self, name: str) -> Any:
        if name not in VIEWS:
            raise ValueError(f"unknown view {name!r}; views are {', '.join(VIEWS)}")
        c = self._cache
        if name not in c:
            c[name] = self._outcome.view(name)
        return c[name]

    def text(self, name: str) -> str | None:
        if name not in TEXT_VIEWS:
            raise ValueError(f"text({name!r}): only replace, ignore and escape are text")
        key = "text:" + name
        c = self._cache
        if key not in c:
            cps = self.view(name)
            c[key] = None if any(v > MAX_UNICODE for v in cps) else "".join(map(chr, cps))
        text: str | None = c[key]
        return text

    @property
    def features(self) -> tuple[int, ...]:
        c = self._cache
        if "features" not in c:
            c["features"] = py_features(self._profile, self.data, self.tokens)
        features: tuple[int, ...] = c["features"]
        return features

    def outcome(self, provenance: dict[str, str]) -> Outcome:
        return Outcome.from_tokens(self.tokens, len(self.data), provenance, data=self.data,
                                   check=False)


def _py_walker(profile: Profile, policy: str) -> Callable[[bytes], PyWalk]:
    def walk(data: bytes) -> PyWalk:
        return PyWalk(data, profile, policy)

    return walk


def _row_value(row: Row) -> object:
    """How the C values a row: None (bits and offset, as ``Row.value``), the pair
    row's value in C (held equal to ``pair_value`` on every sequence of the row by
    the tests), or the row's own function, called from C."""
    if row.value_fn is None:
        return None
    if row.value_fn is pair_value:
        return "utf16-pair"
    return row.value_fn


def _c_walker(profile: Profile, policy: str) -> Callable[[bytes], Walk]:
    d = profile.dfa
    return _walk.Walker(
        trans=d.trans, accept=d.accept, live_after=d.live_after, single=d.single,
        start=d.start, reserved_leads=profile.reserved_leads,
        recognized_leads=profile.recognized_leads, max_length=profile.max_length,
        rows=[(r.length, r.offset, _row_value(r)) for r in profile.rows],
        policy=POLICIES.index(policy),
    )


# (id(profile), policy, pure) -> (profile, walker); the profile is kept so its id
# cannot be reused by another while the entry lives.
_CACHE: dict[tuple[int, str, bool], tuple[Profile, Callable[[bytes], Walk]]] = {}


def pure_requested() -> bool:
    return os.environ.get("UTF8FUZZ_PURE_REFERENCE") == "1"


def walker(profile: Profile, policy: str = "maximal-subpart") -> Callable[[bytes], Walk]:
    """The walk of ``profile`` under ``policy``: C unless the table is one the C cannot
    walk or ``UTF8FUZZ_PURE_REFERENCE=1``. Compiled once per (profile, policy)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; policies are {', '.join(POLICIES)}")
    pure = pure_requested()
    key = (id(profile), policy, pure)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is profile:
        return hit[1]
    w: Callable[[bytes], Walk] | None = None
    if not pure:
        try:
            w = _c_walker(profile, policy)
        except ValueError:  # a table the C cannot walk (a row of 8+ bytes, no value_fn)
            w = None
    if w is None:
        w = _py_walker(profile, policy)
    _CACHE[key] = (profile, w)
    return w


def is_compiled(w: Callable[[bytes], Walk]) -> bool:
    """Is ``w`` the C walker (not the Python fallback)?"""
    return isinstance(w, _walk.Walker)
