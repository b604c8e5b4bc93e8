"""The one split rule of every streaming decoder: where the input is cut into chunks.

The split points are part of the input. The chunk that starts at ``pos`` is
``1 + (data[pos] & 3)`` bytes long (the last one ends at the end of the input), as
cryptofuzz's modifier bytes do it, so:

* the cuts are a pure function of the bytes: a corpus entry's chunks are its input
  split by this rule, and replaying the entry feeds the same chunks (nothing else
  to record);
* the fuzzers mutate and shrink the cuts along with the input (Atheris flips the
  low bits, Hypothesis shrinks the bytes, and the chunks with them);
* lead bytes of multi-byte sequences (C2, E1, F0, F2, ...) give chunks of 1-4
  bytes that end inside their own sequence, which is where a streaming decoder
  loses, duplicates or mis-decodes a sequence split across two chunks.

Every streaming decoder uses this rule: ``cpython:incremental`` (whose C loops in
``_cpython.c`` write the same rule out), the ``+incremental`` plug-in shape, the
``exec:`` protocol's stream mode, and Node's ``TextDecoder`` with ``{stream: true}``.
Each feeds every chunk with ``final`` false, then signals the end of the input
(``final`` true; what each adapter sends for it is its own documented contract).
"""

from __future__ import annotations


def cuts(data: bytes) -> list[int]:
    """The end offset of each chunk of ``data``: strictly increasing, the last one
    ``len(data)``; ``[]`` for empty input (no chunk)."""
    out, pos, n = [], 0, len(data)
    while pos < n:
        pos += 1 + (data[pos] & 3)
        out.append(pos)
    if pos > n:  # only the last chunk can run past the end
        out[-1] = n
    return out


def chunks(data: bytes) -> list[bytes]:
    """``data`` cut at :func:`cuts`: the chunks a streaming decoder is fed, in order;
    their concatenation is ``data``."""
    prev, out = 0, []
    for c in cuts(data):
        out.append(data[prev:c])
        prev = c
    return out


def describe(data: bytes) -> str:
    """The chunks in hex, ``|`` between them (``F0 | 9F 98 80``): how a person is
    shown the split (hex only, never decoded text)."""
    return " | ".join(c.hex(" ").upper() for c in chunks(data)) or "(empty)"
