"""The minimizer: shrink a disagreeing input to one with the same signature.

The phases, in this order:

0. *Delete aligned blocks* (inputs over :data:`LONG` bytes): remove chunks of 2^k
   bytes at offsets that are multiples of 2^k, 2^k halving from half the input
   down to 16. Every byte after a removed chunk moves by a multiple of 2^k, so
   an edge keeps its offset modulo 2^k: a bug that needs its edge at offset 255
   modulo 256 shrinks to 255 bytes of filler and the edge, one that needs a
   4 KiB page keeps it. At most :data:`BLOCK_FAILURES` removals may fail: a bug
   that needs the whole length fails them all.
1. *Simplify in place*: replace bytes with ASCII ``A`` (0x41), in chunks that
   halve down to single bytes (in long inputs, whole characters at a time),
   keeping the length. Fast decoders work in 16/32/64-byte
   blocks, so a bug may depend on where its bytes sit; replacing first keeps the
   positions while the irrelevant bytes become plain.
2. *Delete characters* (inputs over :data:`LONG` bytes), then *bytes* (Zeller and
   Hildebrandt's ddmin) down to a 1-minimal input: removing any single byte
   loses the signature. Characters first (a lead byte and its continuation
   bytes as one unit), so that a run of
   characters loses whole characters: one that needs 101 consecutive 2-byte
   characters keeps exactly 101. If the bug depends on position, deletions that
   shift it fail and the padding stays. A long input none of whose blocks, first
   byte or last byte could go depends on its length: it is only simplified.

The result is checked to still carry the signature (every accepted step is, by
construction). It is *position dependent* when prefixing one ``A`` loses the
signature - recorded in the sidecar, since the signature itself never holds offsets.
Its *alignment* is then the smallest power of two of ``A`` bytes that can be
prefixed with the signature kept (the block size the bug depends on; None when
no prefix up to 64 KiB keeps it: it depends on the length or the absolute offset),
in the minimizer's figures.

Bounded and interruptible. Counts bound the work: the candidates tried
(``max_steps``) and the bytes they hold in all (``max_bytes``: a step costs a run
of every decoder over the candidate), so the same input minimizes to the same
result on any machine under any load. ``seconds`` only stops it (the run is
ending); so does Ctrl-C (KeyboardInterrupt); whatever stops it, the best input so
far is returned with ``complete=False``, never lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

SIMPLE = 0x41  # 'A'
#: Inputs longer than this get the aligned-block phase (the short loop's longest).
LONG = 64
#: The smallest block the aligned-block phase removes (the narrowest vector width).
MIN_BLOCK = 16
#: Removals of aligned blocks that may fail before that phase gives up.
BLOCK_FAILURES = 32
#: The bytes the candidates of one minimization may hold in all: a 64-byte input's
#: search stays far below it; a 64 KiB one gets about 15 steps (each a run of
#: every decoder over 64 KiB: most of a second with all of them).
MINIMIZE_BYTES = 1_000_000


@dataclass(frozen=True)
class Minimized:
    data: bytes
    original_size: int
    steps: int
    seconds: float
    complete: bool
    position_dependent: bool
    #: The block size a position-dependent result depends on (module docstring).
    alignment: int | None = None

    def stats(self) -> dict[str, object]:
        out: dict[str, object] = {"steps": self.steps, "seconds": round(self.seconds, 3),
                                  "complete": self.complete}
        if self.alignment is not None:
            out["alignment"] = self.alignment
        return out


class _Stop(Exception):
    pass


class _Search:
    def __init__(self, keeps: Callable[[bytes], bool], deadline: float, max_steps: int,
                 max_bytes: int) -> None:
        self.keeps = keeps
        self.deadline = deadline
        self.max_steps = max_steps
        self.bytes_left = max_bytes
        self.steps = 0
        self.seen: dict[bytes, bool] = {}
        self.best = b""

    def test(self, candidate: bytes) -> bool:
        hit = self.seen.get(candidate)
        if hit is not None:
            return hit
        if (self.steps >= self.max_steps or self.bytes_left < len(candidate)
                or time.monotonic() > self.deadline):
            raise _Stop
        self.steps += 1
        self.bytes_left -= len(candidate)
        ok = bool(self.keeps(candidate))
        self.seen[candidate] = ok
        return ok


def minimize(
    data: bytes,
    keeps: Callable[[bytes], bool],
    *,
    seconds: float | None = None,
    max_steps: int = 20_000,
    max_bytes: int = MINIMIZE_BYTES,
) -> Minimized:
    """Shrink ``data`` while ``keeps(candidate)`` holds (it must hold for ``data``).

    ``keeps`` is the finder's: the divergence's explanation still holds
    (:meth:`.finder.Finder._record`), or ``lambda b: sig in differ.signatures(b)``.
    """
    t0 = time.monotonic()
    s = _Search(keeps, t0 + seconds if seconds is not None else float("inf"), max_steps,
                max_bytes)
    s.best = bytes(data)
    complete = False
    try:
        cur, by_length, long = s.best, False, len(data) > LONG
        if long:
            cur, by_length = _blocks(cur, s)
        cur = _simplify(cur, s, whole=long)
        if not by_length:
            _one_minimal(_ddmin(_ddmin_units(cur, s) if long else cur, s), s)
        complete = True
    except _Stop:
        pass
    except KeyboardInterrupt:
        pass
    best = s.best
    alignment = None
    try:
        pos_dep = not s.keeps(bytes([SIMPLE]) + best)
        if pos_dep:
            alignment = _alignment(best, s.keeps)
    except KeyboardInterrupt:
        pos_dep = False
    return Minimized(best, len(data), s.steps, time.monotonic() - t0, complete, pos_dep,
                     alignment)


def _alignment(data: bytes, keeps: Callable[[bytes], bool]) -> int | None:
    """The smallest power of two of ``A`` bytes that can be prefixed to ``data``
    with the signature kept (2 to 65,536), else None."""
    g = 2
    while g <= 65536:
        if keeps(bytes([SIMPLE]) * g + data):
            return g
        g *= 2
    return None


def _blocks(data: bytes, s: _Search) -> tuple[bytes, bool]:
    """Phase 0: remove aligned blocks (module docstring). Also whether the input
    depends on its length: nothing could be removed, not even its first or its
    last byte."""
    cur = data
    s.best = cur
    failures, removed = 0, False
    g = 1 << (len(cur) - 1).bit_length() - 1  # the largest power of two below the length
    while g >= MIN_BLOCK and failures < BLOCK_FAILURES:
        i = 0
        while i < len(cur) and failures < BLOCK_FAILURES:
            cand = cur[:i] + cur[i + g :]
            if cand and s.test(cand):
                cur = cand
                s.best = cur
                removed = True
            else:
                failures += 1
                i += g
        g //= 2
    if removed:
        return cur, False
    return cur, not s.test(cur[1:]) and not s.test(cur[:-1])


def _units(data: bytes) -> list[bytes]:
    """``data`` cut into characters: a lead byte with the continuation bytes its
    high bits announce (as far as they are there), any other byte alone."""
    out, i, n = [], 0, len(data)
    while i < n:
        b = data[i]
        want = 0 if b < 0xC0 else 1 if b < 0xE0 else 2 if b < 0xF0 else 3 if b < 0xF8 else 0
        j = i + 1
        while want and j < n and 0x80 <= data[j] <= 0xBF:
            j += 1
            want -= 1
        out.append(data[i:j])
        i = j
    return out


def _ddmin_units(data: bytes, s: _Search) -> bytes:
    """ddmin's complements over characters (:func:`_units`) instead of bytes."""
    return _ddmin_over(_units(data), s)


def _simplify(data: bytes, s: _Search, whole: bool = False) -> bytes:
    """Phase 1. ``whole``: each chunk widened to whole characters (a
    continuation byte at either end takes its sequence along), so that replacing
    it never leaves a cut sequence behind: in long text, where most chunks cut
    some character, that is what lets the filler go."""
    cur = bytearray(data)
    s.best = bytes(cur)
    n = len(cur)
    chunk = max(1, n // 2)
    while True:
        i = 0
        while i < n:
            a, b = i, min(n, i + chunk)
            if whole:
                while a > 0 and a > i - 3 and 0x80 <= cur[a] <= 0xBF:
                    a -= 1
                while b < n and b < i + chunk + 3 and 0x80 <= cur[b] <= 0xBF:
                    b += 1
            seg = cur[a:b]
            if any(x != SIMPLE for x in seg):
                cand = bytearray(cur)
                cand[a:b] = bytes([SIMPLE]) * len(seg)
                if s.test(bytes(cand)):
                    cur = cand
                    s.best = bytes(cur)
            i += chunk
        if chunk == 1:
            return bytes(cur)
        chunk //= 2


def _ddmin(data: bytes, s: _Search) -> bytes:
    return _ddmin_over([data[i:i + 1] for i in range(len(data))], s)


def _ddmin_over(units: list[bytes], s: _Search) -> bytes:
    """ddmin over ``units`` (bytes, or whole characters): remove one chunk of units at
    a time while the test passes. Only complements are tried: ddmin's subset tests
    rarely help on byte strings and cost as much."""
    s.best = b"".join(units)
    n = 2
    while len(units) >= 2:
        size = len(units)
        chunk = max(1, size // n)
        reduced = False
        for a in range(0, size, chunk):
            cand_units = units[:a] + units[a + chunk:]
            cand = b"".join(cand_units)
            if cand and s.test(cand):
                units = cand_units
                s.best = cand
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(size, n * 2)
    return b"".join(units)


def _one_minimal(data: bytes, s: _Search) -> bytes:
    """Remove single bytes until none can go (ddmin's result is 1-minimal already
    when it ends at chunk size 1; this also covers an empty-candidate corner)."""
    cur = data
    changed = True
    while changed:
        changed = False
        for i in range(len(cur)):
            cand = cur[:i] + cur[i + 1 :]
            if cand and s.test(cand):
                cur = cand
                s.best = cur
                changed = True
                break
    return cur
