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
  token that straddles it), because fast decoders work in blocks.

Counters are Atheris's own: a pool is reserved with ``_reserve_counter`` and
handed to libFuzzer with ``UpdateCounterArrays`` (a counter libFuzzer was not
given is never seen), then handed out the first time a key is seen;
``_trace_branch`` bumps one - the calls Atheris's bytecode instrumentation makes.
Keys beyond the pool share its last counter.

The references' walks (:mod:`utf8fuzz.profiles.walk`) compute these keys in C as
integer feature ids; :meth:`TableCoverage.feed_walk` bumps the same counters from
them, one bump per key an input reaches (libFuzzer only needs "reached").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from utf8fuzz.outcome import Token
from utf8fuzz.profiles.table import Profile
from utf8fuzz.profiles.walk import Walk, feature_key

BLOCKS = (16, 32, 64)


class TableCoverage:
    """Feeds the tokens of reference outcomes to libFuzzer as coverage.

    ``reserve`` and ``hit`` are Atheris's ``_reserve_counter`` and
    ``_trace_branch``; tests pass plain functions to see which keys are hit.
    """

    POOL = 1 << 14  # far more keys than the tables have shapes (about 4,000 seen)

    def __init__(self, reserve: Callable[[], int], hit: Callable[[int], None],
                 register: Callable[[], None] = lambda: None, pool: int = POOL) -> None:
        self._pool = [reserve() for _ in range(pool)]
        register()
        self._next = 0
        self._hit = hit
        self._ids: dict[tuple[object, ...], int] = {}
        self._rows: dict[tuple[str, int, bytes], int] = {}
        self._features: dict[str, dict[int, int]] = {}  # profile -> feature id -> counter

    def _counter(self, key: tuple[object, ...]) -> int:
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = self._pool[min(self._next, len(self._pool) - 1)]
            self._next += 1
        return i

    def _bump(self, key: tuple[object, ...]) -> None:
        self._hit(self._counter(key))

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
        prev = ("start",)
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

    def feed_walk(self, profile_name: str, walk: Walk) -> None:
        """What :meth:`feed` does with a reference's tokens, from its walk's feature
        ids: the same counters, each key bumped once.

        ``walk.cover`` bumps the counters of the ids already known (in C for the
        C walk: this is five references' worth of look-ups an input) and hands
        back the others, which get their counters here, in id order as before.
        Only the order of the bumps differs from one loop over the ids (known
        keys first), and libFuzzer reads counters, not the order they were bumped."""
        counters = self._features.get(profile_name)
        if counters is None:
            counters = self._features[profile_name] = {}
        missing = walk.cover(counters, self._hit)
        if missing:
            hit = self._hit
            for f in missing:
                c = counters[f] = self._counter((profile_name, *feature_key(f)))
                hit(c)

    @property
    def keys(self) -> list[tuple[object, ...]]:
        return list(self._ids)
