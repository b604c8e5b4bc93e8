"""The minimizer: shrink a disagreeing input to one with the same signature.

Two phases, in this order:

1. *Simplify in place*: replace bytes with ASCII ``A`` (0x41), in chunks that halve
   down to single bytes, keeping the length. Fast decoders work in 16/32/64-byte
   blocks, so a bug may depend on where its bytes sit; replacing first keeps the
   positions while the irrelevant bytes become plain.
2. *Delete* (Zeller and Hildebrandt's ddmin) down to a 1-minimal input: removing any
   single byte loses the signature. If the bug depends on position, deletions that
   shift it fail and the padding stays.

The result is checked to still carry the signature (every accepted step is, by
construction). It is *position dependent* when prefixing one ``A`` loses the
signature - recorded in the sidecar, since the signature itself never holds offsets.

Bounded and interruptible. A deadline (seconds) and a step budget bound the work;
Ctrl-C (KeyboardInterrupt) stops it; either way the best input so far is returned
with ``complete=False``, never lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

SIMPLE = 0x41  # 'A'


@dataclass(frozen=True)
class Minimized:
    data: bytes
    original_size: int
    steps: int
    seconds: float
    complete: bool
    position_dependent: bool

    def stats(self) -> dict[str, object]:
        return {"steps": self.steps, "seconds": round(self.seconds, 3), "complete": self.complete}


class _Stop(Exception):
    pass


class _Search:
    def __init__(self, keeps: Callable[[bytes], bool], deadline: float, max_steps: int) -> None:
        self.keeps = keeps
        self.deadline = deadline
        self.max_steps = max_steps
        self.steps = 0
        self.seen: dict[bytes, bool] = {}
        self.best = b""

    def test(self, candidate: bytes) -> bool:
        hit = self.seen.get(candidate)
        if hit is not None:
            return hit
        if self.steps >= self.max_steps or time.monotonic() > self.deadline:
            raise _Stop
        self.steps += 1
        ok = bool(self.keeps(candidate))
        self.seen[candidate] = ok
        return ok


def minimize(
    data: bytes,
    keeps: Callable[[bytes], bool],
    *,
    seconds: float = 10.0,
    max_steps: int = 20_000,
) -> Minimized:
    """Shrink ``data`` while ``keeps(candidate)`` holds (it must hold for ``data``).

    ``keeps`` is typically ``lambda b: sig in differ.signatures(b)``.
    """
    t0 = time.monotonic()
    s = _Search(keeps, t0 + seconds, max_steps)
    s.best = bytes(data)
    complete = False
    try:
        _one_minimal(_ddmin(_simplify(s.best, s), s), s)
        complete = True
    except _Stop:
        pass
    except KeyboardInterrupt:
        pass
    best = s.best
    try:
        pos_dep = not s.keeps(bytes([SIMPLE]) + best)
    except KeyboardInterrupt:
        pos_dep = False
    return Minimized(best, len(data), s.steps, time.monotonic() - t0, complete, pos_dep)


def _simplify(data: bytes, s: _Search) -> bytes:
    cur = bytearray(data)
    s.best = bytes(cur)
    n = len(cur)
    chunk = max(1, n // 2)
    while True:
        i = 0
        while i < n:
            seg = cur[i : i + chunk]
            if any(b != SIMPLE for b in seg):
                cand = bytearray(cur)
                cand[i : i + chunk] = bytes([SIMPLE]) * len(seg)
                if s.test(bytes(cand)):
                    cur = cand
                    s.best = bytes(cur)
            i += chunk
        if chunk == 1:
            return bytes(cur)
        chunk //= 2


def _ddmin(data: bytes, s: _Search) -> bytes:
    cur = data
    s.best = cur
    n = 2
    while len(cur) >= 2:
        size = len(cur)
        chunk = max(1, size // n)
        parts = [(i, min(size, i + chunk)) for i in range(0, size, chunk)]
        reduced = False
        # Try each complement (remove one chunk); ddmin's subset tests rarely help
        # on byte strings and cost as much.
        for a, b in parts:
            cand = cur[:a] + cur[b:]
            if cand and s.test(cand):
                cur = cand
                s.best = cur
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(size, n * 2)
    return cur


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
