"""Incremental decoders (``+incremental``, a ``codecs.IncrementalDecoder`` called with
the error mode) with ONE planted bug each in how they carry a sequence split across
two chunks, and a correct one; fed the whole input at once, all three are correct."""

from __future__ import annotations

import codecs

from tests.triage.planted import spec


class Correct(codecs.BufferedIncrementalDecoder):
    """No bug: a sequence cut short by a chunk's end is held back for the next one."""

    def _buffer_decode(self, data: bytes, errors: str, final: bool) -> tuple[str, int]:
        return spec.decode_prefix(data, errors, final)


class LosesSplitSequence(codecs.BufferedIncrementalDecoder):
    """Loses a sequence split across two chunks: the bytes a chunk ends with, a
    sequence cut short, are consumed instead of held back, so the rest of it, in the
    next chunk, is stray continuation bytes (any length of sequence, any split)."""

    def _buffer_decode(self, data: bytes, errors: str, final: bool) -> tuple[str, int]:
        text, _ = spec.decode_prefix(data, errors, final)
        return text, len(data)


class ErrorForSplitSequence(codecs.BufferedIncrementalDecoder):
    """Decodes each chunk as if it were the last: a sequence split across two chunks is
    an error (U+FFFD in replace mode) where the chunk ends, and its rest stray
    continuation bytes."""

    def _buffer_decode(self, data: bytes, errors: str, final: bool) -> tuple[str, int]:
        return spec.decode(data, errors), len(data)
