"""The declarative form every profile is written in, and its compilation.

A profile is a *table of well-formed sequences*, written the way the specs write
them. Corrigendum #1's Table 3.1B is the model: each row gives, for each byte
position, the range of byte values allowed there, and the row's code points
follow from the bits the bytes carry. So a :class:`Row` is

* one ``(lo, hi)`` byte range per position (the row's length is their number),
* an ``offset`` added to the value the bits carry (0 everywhere but Corrected
  UTF-8, whose whole point is offsets), and
* the ``clause`` of the spec it transcribes, shown by triage reports.

Tables written as lexicographic ranges of whole sequences (Corrected UTF-8:
"E0 80 80 ... EC BD 9F") are turned into rows by :func:`seq_range`, so that
module can read like its spec's table too.

A few profiles (CESU-8, Java's modified UTF-8) map a row's bytes to a value by
something other than bit concatenation; such a row carries its own ``value`` and
``encode`` functions.

Rows must not overlap: no byte sequence may match two rows, or "what does this
sequence mean" would have two answers. :class:`Profile` checks this when built.

Compilation. Policies (``utf8fuzz.policies``) need to ask, at every position,
"how far is this a prefix of some well-formed sequence, and where does the
longest well-formed sequence end?". A :class:`Profile` answers with a DFA whose
states are sets of (row, position) items, built by subset construction: every
policy walks the same table, so policies stay generic over profiles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

ByteRange = tuple[int, int]

CONT: ByteRange = (0x80, 0xBF)  # a continuation byte, 10xxxxxx


class EncodeError(ValueError):
    """A code point has no sequence in the profile; the message names it."""

    def __init__(self, profile: str, codepoint: int, index: int, why: str = "") -> None:
        self.profile, self.codepoint, self.index = profile, codepoint, index
        where = f" (at index {index})" if index >= 0 else ""
        super().__init__(
            f"U+{codepoint:04X}{where} cannot be encoded in the {profile} profile"
            + (f": {why}" if why else "")
        )


def parse_range(text: str) -> ByteRange:
    """``"A0..BF"`` -> (0xA0, 0xBF); ``"E0"`` -> (0xE0, 0xE0)."""
    lo, _, hi = text.partition("..")
    return int(lo, 16), int(hi or lo, 16)


def lead_payload_bits(length: int) -> int:
    """Bits of the value carried by the lead byte of an n-byte sequence
    (RFC 2279 section 2: n high-order 1 bits, a 0 bit, then payload)."""
    return 7 if length == 1 else 7 - length


def bits_value(seq: bytes | Sequence[int]) -> int:
    """RFC 2279 section 2, decoding: distribute the x bits of the sequence."""
    n = len(seq)
    if n == 1:
        return seq[0]
    v = seq[0] & ((1 << lead_payload_bits(n)) - 1)
    for b in seq[1:]:
        v = (v << 6) | (b & 0x3F)
    return v


def bits_encode(value: int, length: int) -> bytes | None:
    """RFC 2279 section 2, encoding: fill the x bits of an n-byte form, or None
    if the value does not fit."""
    if value < 0:
        return None
    if length == 1:
        return bytes([value]) if value < 0x80 else None
    total = lead_payload_bits(length) + 6 * (length - 1)
    if value >= 1 << total:
        return None
    out = bytearray(length)
    for i in range(length - 1, 0, -1):
        out[i] = 0x80 | (value & 0x3F)
        value >>= 6
    out[0] = ((0xFF << (8 - length)) & 0xFF) | value
    return bytes(out)


@dataclass(frozen=True)
class Row:
    """One row of a table of well-formed sequences (see module docstring)."""

    ranges: tuple[ByteRange, ...]
    offset: int = 0
    clause: str = ""
    value_fn: Callable[[bytes], int] | None = field(default=None, compare=False)
    encode_fn: Callable[[int], bytes | None] | None = field(default=None, compare=False)

    @property
    def length(self) -> int:
        return len(self.ranges)

    def matches(self, seq: bytes | Sequence[int]) -> bool:
        return len(seq) == self.length and all(
            lo <= b <= hi for b, (lo, hi) in zip(seq, self.ranges, strict=True)
        )

    def value(self, seq: bytes) -> int:
        if self.value_fn is not None:
            return self.value_fn(seq)
        return bits_value(seq) + self.offset

    def encode(self, cp: int) -> bytes | None:
        if self.encode_fn is not None:
            out = self.encode_fn(cp)
        else:
            out = bits_encode(cp - self.offset, self.length)
        return out if out is not None and self.matches(out) else None

    @property
    def first(self) -> bytes:
        return bytes(lo for lo, _ in self.ranges)

    @property
    def last(self) -> bytes:
        return bytes(hi for _, hi in self.ranges)

    def describe(self) -> str:
        return " ".join(
            f"{lo:02X}" if lo == hi else f"{lo:02X}..{hi:02X}" for lo, hi in self.ranges
        )


def row(*columns: str, offset: int = 0, clause: str = "") -> Row:
    """A row as the specs print it: ``row("E0", "A0..BF", "80..BF")``."""
    return Row(tuple(parse_range(c) for c in columns), offset=offset, clause=clause)


def seq_range(first: str, last: str, *, offset: int = 0, clause: str = "") -> list[Row]:
    """Rows covering every sequence from ``first`` to ``last`` in byte order,
    where every byte after the lead is a continuation byte (80..BF).

    Corrected UTF-8 prints its table this way ("E0 80 80 ... EC BD 9F"); the
    usual splitting of a lexicographic interval turns it into product rows.
    """
    lo = [int(b, 16) for b in first.split()]
    hi = [int(b, 16) for b in last.split()]
    if len(lo) != len(hi):
        raise ValueError("a sequence range has one length")
    if not all(CONT[0] <= b <= CONT[1] for b in lo[1:] + hi[1:]):
        raise ValueError("bytes after the lead must be continuation bytes")
    doms = [(0x00, 0xFF)] + [CONT] * (len(lo) - 1)

    def split(a: list[int], b: list[int], d: list[ByteRange]) -> list[tuple[ByteRange, ...]]:
        if len(a) == 1:
            return [((a[0], b[0]),)]
        rest_min = [x for x, _ in d[1:]]
        rest_max = [y for _, y in d[1:]]
        if a[0] == b[0]:
            return [((a[0], a[0]), *r) for r in split(a[1:], b[1:], d[1:])]
        out: list[tuple[ByteRange, ...]] = []
        mid_lo, mid_hi = a[0], b[0]
        if a[1:] != rest_min:
            out += [((a[0], a[0]), *r) for r in split(a[1:], rest_max, d[1:])]
            mid_lo += 1
        tail: list[tuple[ByteRange, ...]] = []
        if b[1:] != rest_max:
            tail = [((b[0], b[0]), *r) for r in split(rest_min, b[1:], d[1:])]
            mid_hi -= 1
        if mid_lo <= mid_hi:
            out.append(((mid_lo, mid_hi), *d[1:]))
        return out + tail

    return [Row(r, offset=offset, clause=clause) for r in split(lo, hi, doms)]


DEAD = -1


@dataclass
class Profile:
    """A named table of well-formed sequences, plus what its spec says of the rest.

    ``reserved_leads`` and ``recognized_leads`` serve Corrected UTF-8: a sequence
    beginning with a reserved lead is one ``reserved`` unit that extends until the
    next recognized lead byte. ``refusal`` says, in the spec's words, why a code
    point has no sequence (see :meth:`encode_refusal`).
    """

    name: str
    title: str
    spec: str
    rows: Sequence[Row]
    max_codepoint: int
    reserved_leads: frozenset[int] = frozenset()
    recognized_leads: frozenset[int] = frozenset()
    notes: str = ""
    refusal: Callable[[int], str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.rows = tuple(sorted(self.rows, key=lambda r: r.length))
        for i, a in enumerate(self.rows):
            for b in self.rows[i + 1 :]:
                if a.length == b.length and all(
                    max(x[0], y[0]) <= min(x[1], y[1])
                    for x, y in zip(a.ranges, b.ranges, strict=True)
                ):
                    raise ValueError(
                        f"profile {self.name}: rows {a.describe()} and {b.describe()} overlap"
                    )

    # -- the compiled table ------------------------------------------------------

    @cached_property
    def max_length(self) -> int:
        return max(r.length for r in self.rows)

    @cached_property
    def dfa(self) -> _Dfa:
        return _Dfa.build(self.rows)

    def row_of(self, seq: bytes) -> Row | None:
        """The row a complete sequence belongs to, or None if it is ill-formed."""
        for r in self.rows:
            if r.matches(seq):
                return r
        return None

    def is_prefix(self, seq: bytes | Sequence[int]) -> bool:
        """Is ``seq`` a proper, non-empty prefix of some well-formed sequence?"""
        d = self.dfa
        s = d.start
        for b in seq:
            s = d.trans[s][b]
            if s == DEAD:
                return False
        return bool(seq) and d.live_after[s]

    # -- encoding ----------------------------------------------------------------

    def encode_one(self, cp: int, index: int = -1) -> bytes:
        for r in self.rows:  # shortest rows first: the shortest form wins
            out = r.encode(cp)
            if out is not None:
                return out
        raise EncodeError(self.name, cp, index, self.encode_refusal(cp))

    def encode_refusal(self, cp: int) -> str:
        """Why ``cp`` has no sequence: the profile's ``refusal``, with its clause,
        when it has one."""
        if self.refusal is not None:
            return self.refusal(cp)
        if cp < 0 or cp > self.max_codepoint:
            return f"outside U+0000..U+{self.max_codepoint:04X}"
        return "no row of the table encodes it"

    def encode(self, codepoints: Iterable[int]) -> bytes:
        return b"".join(self.encode_one(cp, i) for i, cp in enumerate(codepoints))


@dataclass
class _Dfa:
    """Subset-construction DFA over (row index, position) items.

    ``trans[s][b]`` is the next state or DEAD; ``accept[s]`` is the index of the
    row completed in state s, or -1; ``live_after[s]`` says whether some longer
    well-formed sequence can still follow.
    """

    start: int
    trans: list[list[int]]
    accept: list[int]
    live_after: list[bool]
    single: list[int]  # byte -> its value when it alone is a whole sequence, else -1

    @classmethod
    def build(cls, rows: Sequence[Row]) -> _Dfa:
        start_items = frozenset((i, 0) for i in range(len(rows)))
        index: dict[frozenset[tuple[int, int]], int] = {start_items: 0}
        order = [start_items]
        trans: list[list[int]] = []
        accept: list[int] = []
        live: list[bool] = []
        k = 0
        while k < len(order):
            items = order[k]
            done = [i for i, p in items if p == rows[i].length]
            accept.append(done[0] if done else -1)
            pending = [(i, p) for i, p in items if p < rows[i].length]
            live.append(bool(pending))
            row_t = [DEAD] * 256
            for b in range(256):
                nxt = frozenset(
                    (i, p + 1)
                    for i, p in pending
                    if rows[i].ranges[p][0] <= b <= rows[i].ranges[p][1]
                )
                if nxt:
                    if nxt not in index:
                        index[nxt] = len(order)
                        order.append(nxt)
                    row_t[b] = index[nxt]
            trans.append(row_t)
            k += 1
        single = [-1] * 256
        for b in range(256):
            s = trans[0][b]
            if s != DEAD and accept[s] >= 0 and not live[s]:
                single[b] = rows[accept[s]].value(bytes([b]))
        return cls(start=0, trans=trans, accept=accept, live_after=live, single=single)


def structural_length(lead: int) -> int:
    """How many bytes a lead byte announces by its high bits (RFC 2279 section 2:
    "the initial octet has the n higher-order bits set to 1, followed by a bit
    set to 0"). A continuation byte, FE and FF announce no sequence: 1."""
    ones = 8 - (~lead & 0xFF).bit_length()  # count of leading 1 bits
    return ones if 2 <= ones <= 6 else 1
