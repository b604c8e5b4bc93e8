"""Generalizing a minimized input into a byte-class pattern, after DDSET (Gopinath
et al., "Abstracting Failure-Inducing Inputs", ISSTA 2020): which positions may
take which ranges of bytes while the finding's explanation still holds.

The ranges are the profile's *byte classes*: the coarsest partition of 00..FF that
no row of its table (:mod:`utf8fuzz.profiles.table`) and no structural length
(RFC 2279 section 2: 0xxxxxxx, 10xxxxxx, 110xxxxx, ...) cuts. For the unicode
profile these are the columns of Corrigendum #1's Table 3.1B: 00-7F, 80-8F,
90-9F, A0-BF, C0-C1, C2-DF, E0, E1-EC, ED, EE-EF, F0, F1-F3, F4, F5-F7, F8-FB,
FC-FD, FE-FF.

Rules of the search (:func:`pattern`):

* positions are generalized one at a time, left to right, each against the
  *original* bytes elsewhere (not against earlier generalizations: a pattern is a
  product of per-position ranges, and checking each alone keeps the search linear);
* a class is taken at a position when every probe of it (its lowest, middle and
  highest byte) keeps the explanation; the original byte's own class is tried
  first, then the others; a position where no whole class holds stays its byte;
* the search is deterministic (no randomness), bounded by :data:`MAX_POSITIONS`
  (the positions around a long input's first difference) and the bytes its probes
  may hold in all (:data:`PROBE_BYTES`: each probe runs the decoder on a whole
  input), never seconds, so the same input gets the same pattern on
  any machine; a position left untried stays its byte, so a bound can only make a
  pattern narrower, never wrong for the probes made.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from itertools import pairwise

from utf8fuzz.profiles import REGISTRY

#: Positions generalized; beyond them the pattern keeps the input's bytes.
MAX_POSITIONS = 24
#: The bytes one pattern's probes (calls of ``holds``, each a run of the decoder on
#: a whole input) may hold in all: every class at every position of a 64-byte input
#: is 24 * 17 * 3 * 64 = 78,336 bytes, so this cuts only long inputs (a 65 KB one
#: gets about 15 probes, where each took most of a second with every decoder).
PROBE_BYTES = 1_000_000
#: RFC 2279's structural boundaries: where the number of leading 1 bits changes.
_STRUCTURE = (0x80, 0xC0, 0xE0, 0xF0, 0xF8, 0xFC, 0xFE)

ByteClass = tuple[int, int]


@cache
def byte_classes(profile: str) -> tuple[ByteClass, ...]:
    """The profile's byte classes (see the module docstring), lowest first."""
    prof = REGISTRY[profile]
    cuts = {0, 0x100, *_STRUCTURE}
    for row in prof.rows:
        for lo, hi in row.ranges:
            cuts.update((lo, hi + 1))
    for b in prof.reserved_leads:
        cuts.update((b, b + 1))
    edges = sorted(cuts)
    return tuple((a, b - 1) for a, b in pairwise(edges))


def _probes(c: ByteClass) -> list[int]:
    lo, hi = c
    return sorted({lo, (lo + hi) // 2, hi})


def pattern(data: bytes, holds: Callable[[bytes], bool], profile: str,
            probe_bytes: int = PROBE_BYTES, positions: range | None = None
            ) -> list[list[ByteClass]]:
    """For each position of ``data``, the byte ranges it may take while ``holds``
    (the explanation still reproduces the decoder's outcome) stays true; a
    position that generalizes to nothing, or is not among ``positions`` (default:
    the first :data:`MAX_POSITIONS`), is its own byte, ``[(b, b)]``."""
    classes = byte_classes(profile)
    left = probe_bytes
    tried = positions if positions is not None else range(MAX_POSITIONS)
    out: list[list[ByteClass]] = []
    for i, b in enumerate(data):
        own = next(c for c in classes if c[0] <= b <= c[1])
        taken: list[ByteClass] = []
        if i in tried:
            for c in (own, *[c for c in classes if c != own]):
                left -= 3 * len(data)
                if left < 0:
                    break
                if all(p == b or holds(data[:i] + bytes([p]) + data[i + 1:])
                       for p in _probes(c)):
                    taken.append(c)
                elif c == own:
                    break  # not even its own class: the byte itself matters
        out.append(_merge(taken) if taken else [(b, b)])
    return out


def _merge(ranges: list[ByteClass]) -> list[ByteClass]:
    merged: list[ByteClass] = []
    for lo, hi in sorted(ranges):
        if merged and lo == merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


def render(pat: list[list[ByteClass]]) -> str:
    """A pattern as text, in the notation of a regular expression over bytes:
    ``ED [A0-BF] [80-BF]``; a position that may be any byte is ``..``; a run of one
    element is written once with its count (``41{255} C3 [80-BF]``), so a long
    input's filler takes a few characters."""
    parts: list[str] = []
    for ranges in pat:
        if ranges == [(0, 0xFF)]:
            parts.append("..")
        elif len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            parts.append(f"{ranges[0][0]:02X}")
        else:
            parts.append("[" + " ".join(f"{lo:02X}" if lo == hi else f"{lo:02X}-{hi:02X}"
                                        for lo, hi in ranges) + "]")
    runs: list[str] = []
    i = 0
    while i < len(parts):
        j = i
        while j < len(parts) and parts[j] == parts[i]:
            j += 1
        runs.append(parts[i] if j - i < 4 else f"{parts[i]}{{{j - i}}}")
        runs += [parts[i]] * (j - i - 1) if j - i < 4 else []
        i = j
    return " ".join(runs)


__all__ = ["MAX_POSITIONS", "byte_classes", "pattern", "render"]
