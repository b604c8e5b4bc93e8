"""Coverage of the spec tables, given to libFuzzer explicitly.

libFuzzer keeps an input when it reaches coverage no earlier input reached, so
what counts as coverage decides what the fuzzer explores. Instrumenting the
reference decoders' bytecode (``atheris.instrument_imports``) reports branches
of one generic DFA walk: it barely tells one row of Table 3.1B from another, and
it cost half of every execution (146 against 281 exec/s on the differential
target, measured). So the references run uninstrumented, and this module turns
what they decoded into coverage, in the vocabulary of the specs:

* one counter per (profile, what a token is): for a character the row of the
  profile's table it matched, for an error its length, reason and lead byte,
  for a reserved unit its length (capped);
* one counter per (profile, coarse kind of a token, coarse kind of the next):
  neighbours such as "a truncated 3-byte sequence, then a 4-byte character",
  where decoders that resynchronize badly go wrong;
* one counter per (profile, 16/32/64-byte block boundary, coarse kind of the
  token that straddles it), because fast decoders work in blocks;
* in inputs over 64 bytes only (:func:`long_keys`), where the larger boundaries
  of :data:`LARGE_BLOCKS` (128 bytes to 64 KiB: unrolled loops, pages, buffers)
  fall relative to the tokens: which token holds each boundary's first byte and
  how far into it the boundary is (0: a token starts there; more: it straddles),
  which error or reserved unit starts within 3 bytes of one, and where the input
  ends when its length is within 3 bytes of one. The short loop never reaches
  them, so its cost is one length test per walk.

Counters are 8-bit counters in one region of memory, :func:`libfuzzer_counters`,
handed to libFuzzer the way a compiler's SanitizerCoverage instrumentation hands
over its own (``__sanitizer_cov_8bit_counters_init``, with the PC table libFuzzer
pairs with each region): libFuzzer reads them after each input and clears them
before the next. A counter is handed out the first time a key is seen; keys beyond
the region share its last counter.

The references' walks (:mod:`utf8fuzz.profiles.walk`) compute these keys in C as
integer feature ids; :meth:`TableCoverage.feed_walk` bumps the same counters from
them in C, one bump per key an input reaches (libFuzzer only needs "reached").
Why not Atheris's ``_reserve_counter``/``_trace_branch``, the calls its bytecode
instrumentation makes: a ``_trace_branch`` is a pybind11 call, and some 84 a
input cost more than the rest of the coverage together.
"""

from __future__ import annotations

import bisect
import ctypes
import os
import sys
from collections.abc import Sequence

from utf8fuzz.engine.long import LONG_BLOCKS, SHORT_MAX
from utf8fuzz.outcome import Token
from utf8fuzz.profiles.table import Profile
from utf8fuzz.profiles.walk import BLOCKS, Walk, feature_key

#: The boundaries past the walk's own :data:`~utf8fuzz.profiles.walk.BLOCKS` that
#: long inputs put their edge at (:data:`utf8fuzz.engine.long.LONG_BLOCKS`).
LARGE_BLOCKS: tuple[int, ...] = tuple(b for b in LONG_BLOCKS if b > BLOCKS[-1])
#: How near (bytes, either side) an error's start or the input's end must be to a
#: large boundary to count as at it: the generator's edges sit within 3 of one.
NEAR = 3


def _coarse(kind: str, n: int, reason: str | None) -> tuple[object, ...]:
    """A token's coarse kind, as :meth:`TableCoverage.feed` keys neighbours."""
    if kind == "char":
        return ("char", n)
    if kind == "error":
        return ("error", min(n, 7), reason)
    return ("reserved", min(n, 4))


#: A boundary's lowest set bit (the largest power of two it is a multiple of) ->
#: the largest of LARGE_BLOCKS not above it, so that a 4 KiB page boundary is one
#: feature, not also four smaller ones.
_ALIGNED = {1 << k: max(b for b in LARGE_BLOCKS if b <= 1 << k)
            for k in range(LARGE_BLOCKS[0].bit_length() - 1, 48)}


class _Tokens:
    """A token sequence with the walk's look-ups that :func:`long_keys` uses
    (``token``, ``token_index``, the ``spans`` view), so that
    :meth:`TableCoverage.feed` and ``feed_walk`` share it."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self._tokens = tokens
        self._starts = [t.start for t in tokens]

    def view(self, name: str) -> tuple[tuple[int, int], ...]:
        if name != "spans":
            raise ValueError(f"_Tokens has only the spans view, not {name!r}")
        return tuple((t.start, t.end) for t in self._tokens if t.kind != "char")

    def token(self, i: int) -> Token | None:
        return self._tokens[i] if 0 <= i < len(self._tokens) else None

    def token_index(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self._starts, offset) - 1)


def long_keys(n: int, walk: Walk | _Tokens) -> set[tuple[object, ...]]:
    """The large-boundary keys (less the profile name) of an input of ``n`` bytes,
    none when ``n`` is at most :data:`~utf8fuzz.engine.long.SHORT_MAX`. For each
    multiple ``p`` of 128 bytes, named by the largest of :data:`LARGE_BLOCKS` ``B``
    it is a multiple of:

    * ``("lblock", B, d, *coarse)`` for ``p < n``: the token holding byte ``p``
      starts ``d`` bytes before it (0: at the boundary; capped at 7);
    * ``("lnear", B, d, *coarse)`` for ``p <= n``: an error or reserved unit starts
      at ``p + d``, ``-3 <= d <= 3``;
    * ``("lend", B, n - p, *coarse)``: the input ends within 3 bytes of ``p``, and
      its last token is of that kind.

    ``walk`` is a reference's walk; only ``token``, ``token_index`` and the
    ``spans`` view (every error and reserved unit, made in C) are used: a few
    look-ups per boundary, not a pass over the tokens or the errors in Python."""
    if n <= SHORT_MAX:
        return set()
    step = LARGE_BLOCKS[0]
    token, token_index = walk.token, walk.token_index
    # Raw facts first (a boundary's lowest set bit, an offset, the token's fields):
    # the same few repeat at every boundary, and become keys once, at the end.
    at: set[tuple[int, int, str, int, str | None]] = set()
    for p in range(step, n, step):
        t = token(token_index(p))
        if t is not None:
            at.add((p & -p, p - t.start, t.kind, t.end - t.start, t.reason))
    near: set[tuple[int, int, str, int, str | None]] = set()
    spans = walk.view("spans")  # sorted; in another profile's text, thousands
    if spans:
        for p in range(max(step, (spans[0][0] - NEAR) // step * step), n + 1, step):
            i = bisect.bisect_left(spans, (p - NEAR,))
            while i < len(spans) and spans[i][0] <= p + NEAR:
                start = spans[i][0]
                t = token(token_index(start))
                if t is not None:
                    near.add((p & -p, start - p, t.kind, t.end - t.start, t.reason))
                i += 1
    keys = {("lblock", _ALIGNED[low], min(d, 7), *_coarse(k, m, r))
            for low, d, k, m, r in at}
    keys.update(("lnear", _ALIGNED[low], d, *_coarse(k, m, r)) for low, d, k, m, r in near)
    p = (n + NEAR) // step * step
    if p >= step and abs(n - p) <= NEAR:
        last = token(token_index(n - 1))
        if last is not None:
            keys.add(("lend", _ALIGNED[p & -p], n - p,
                      *_coarse(last.kind, last.end - last.start, last.reason)))
    return keys


class TableCoverage:
    """Feeds the tokens of reference outcomes to libFuzzer as coverage.

    ``counters`` is the region of 8-bit counters: :func:`libfuzzer_counters` in a
    fuzz target; tests pass a plain ``bytearray`` and read which keys were hit.
    """

    POOL = 1 << 14  # far more keys than the tables have shapes (about 4,000 seen)

    def __init__(self, counters: bytearray) -> None:
        if not len(counters):
            raise ValueError("TableCoverage needs at least one counter")
        self.counters = counters
        self._next = 0
        self._ids: dict[tuple[object, ...], int] = {}
        self._rows: dict[tuple[str, int, bytes], int] = {}
        self._features: dict[str, dict[int, int]] = {}  # profile -> feature id -> counter

    def _counter(self, key: tuple[object, ...]) -> int:
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = min(self._next, len(self.counters) - 1)
            self._next += 1
        return i

    def _bump(self, key: tuple[object, ...]) -> None:
        self._bump_counter(self._counter(key))

    def _bump_counter(self, i: int) -> None:
        if self.counters[i] != 255:  # saturating, as walk.cover bumps
            self.counters[i] += 1

    def _row(self, profile: Profile, seq: bytes) -> int:
        # The row is fixed by the first two bytes in every table here (the only
        # narrowed ranges are second bytes, or, in Kuhn's table, EF BF's third
        # byte: keyed by three bytes when the sequence is three long).
        head = seq[:3] if len(seq) == 3 else seq[:2]
        key = (profile.name, len(seq), head)
        r = self._rows.get(key)
        if r is None:
            row = profile.row_of(seq)
            r = self._rows[key] = profile.rows.index(row) if row is not None else -1
        return r

    def feed(self, profile: Profile, data: bytes, tokens: Sequence[Token]) -> None:
        name = profile.name
        prev: tuple[object, ...] = ("start",)
        for t in tokens:
            lead = data[t.start]
            n = t.end - t.start
            if t.kind == "char":
                what: tuple[object, ...] = ("char", self._row(profile, data[t.start : t.end]))
                coarse: tuple[object, ...] = ("char", n)
            elif t.kind == "error":
                what = ("error", min(n, 7), t.reason, lead)
                coarse = ("error", min(n, 7), t.reason)
            else:
                what = coarse = ("reserved", min(n, 4))
            self._bump((name, *what))
            self._bump((name, "next", *prev, *coarse))
            prev = coarse
            if n > 1 or t.kind != "char":
                for b in BLOCKS:
                    if t.start // b != (t.end - 1) // b:
                        self._bump((name, "block", b, *coarse))
        self._bump((name, "next", *prev, "end"))
        if len(data) > SHORT_MAX:
            for k in sorted(long_keys(len(data), _Tokens(tokens))):
                self._bump((name, *k))

    def feed_walk(self, profile_name: str, walk: Walk) -> bool:
        """What :meth:`feed` does with a reference's tokens, from its walk's feature
        ids: the same counters, each key bumped once. True when a key was met for
        the first time (a feature no earlier input of the process reached).

        ``walk.cover`` bumps the counters of the ids already known (in C for the
        C walk: this is five references' worth of look-ups an input) and hands
        back the others, which get their counters here, in id order as before.

        An input over 64 bytes also bumps its :func:`long_keys`, each once, in a
        fixed order (after the walk's ids): those are computed here, in Python,
        from a few of the walk's tokens per 128 bytes."""
        counters = self._features.get(profile_name)
        if counters is None:
            counters = self._features[profile_name] = {}
        missing = walk.cover(counters, self.counters)
        if missing:
            for f in missing:
                c = counters[f] = self._counter((profile_name, *feature_key(f)))
                self._bump_counter(c)
        new = bool(missing)
        if len(walk.data) > 64:  # SHORT_MAX, as a constant: this test is on every walk
            before = self._next
            for k in sorted(long_keys(len(walk.data), walk)):
                self._bump((profile_name, *k))
            new = new or self._next != before
        return new

    @property
    def keys(self) -> list[tuple[object, ...]]:
        return list(self._ids)


#: The regions and PC tables handed to libFuzzer: it keeps their addresses for the
#: life of the process, so they must never be freed or moved.
_HANDED_OVER: list[object] = []


def libfuzzer_counters(size: int = TableCoverage.POOL) -> bytearray:
    """``size`` 8-bit counters that libFuzzer reads as coverage after every input,
    in the running process (an Atheris target, once ``atheris.Setup`` has run).

    libFuzzer takes a region of counters with ``__sanitizer_cov_8bit_counters_init``
    and, for each one, a PC table entry (a PC and flags) with
    ``__sanitizer_cov_pcs_init``; it pairs the n-th region with the n-th table, so
    both are given together. The PCs are this table's own addresses: unique, never
    called, flags 0 (no function entries, so libFuzzer names no new functions).
    The counters are a ``bytearray`` kept alive and pinned (an exported buffer
    cannot be resized) for the life of the process.

    libFuzzer is found among the process's global symbols (a target linked with
    it), else in the copy Atheris loads for itself (a Python extension, whose
    symbols are local, so ctypes opens it by path without loading it again).
    Raises OSError when there is no libFuzzer in the process."""
    lib = _libfuzzer()
    region = bytearray(size)
    cells = ctypes.c_uint8 * size
    counters = cells.from_buffer(region)  # pins the bytearray while it lives
    table = (ctypes.c_size_t * (2 * size))()
    base = ctypes.addressof(table)
    for i in range(size):
        table[2 * i] = base + 16 * i
    begin = ctypes.addressof(counters)
    lib.__sanitizer_cov_8bit_counters_init(ctypes.c_void_p(begin), ctypes.c_void_p(begin + size))
    lib.__sanitizer_cov_pcs_init(ctypes.c_void_p(base),
                                 ctypes.c_void_p(base + ctypes.sizeof(table)))
    _HANDED_OVER.extend((region, counters, table))
    return region


def _libfuzzer() -> ctypes.CDLL:
    wanted = ("__sanitizer_cov_8bit_counters_init", "__sanitizer_cov_pcs_init")
    candidates: list[str | None] = [None]
    for name in ("atheris.core_with_libfuzzer", "atheris.core_without_libfuzzer"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            candidates.append(mod.__file__)
    for path in candidates:
        try:
            lib = (ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY) if path
                   else ctypes.CDLL(None))
        except OSError:
            continue
        if all(hasattr(lib, w) for w in wanted):
            for w in wanted:
                getattr(lib, w).restype = None
            return lib
    raise OSError("no libFuzzer in this process (run under atheris.Setup)")
