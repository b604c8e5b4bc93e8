"""Streaming (``+incremental``) plug-ins: one with a planted bug, and a correct one.

:class:`LosesSplitFourByte` is CPython's own UTF-8 incremental decoder but for one
bug: when a chunk ends after the third byte of a 4-byte sequence, it drops those
three bytes instead of holding them back, so the fourth byte, in the next chunk,
is a lone continuation byte. Fed the whole input at once (its one-shot sibling)
it is correct. Under the split rule (:mod:`utf8fuzz.decoders.chunks`) a chunk led
by F2 is three bytes long, so ``F2 90 80 80`` is split after its third byte.
"""

from __future__ import annotations

import codecs
import re

# The first three bytes of a 4-byte sequence (Unicode Table 3-7), at the end.
_THREE_OF_FOUR = re.compile(
    rb"(?:\xf0[\x90-\xbf]|[\xf1-\xf3][\x80-\xbf]|\xf4[\x80-\x8f])[\x80-\xbf]\Z")

#: An input that shows the bug: 41, then U+90000 (F2 90 80 80) split after F2 90 80.
TRIGGER = bytes.fromhex("41 F2 90 80 80 42")


class LosesSplitFourByte(codecs.BufferedIncrementalDecoder):
    """The planted bug (see the module docstring)."""

    def _buffer_decode(self, data: bytes, errors: str, final: bool) -> tuple[str, int]:
        if not final and _THREE_OF_FOUR.search(data):
            text, _ = codecs.utf_8_decode(data[:-3], errors, True)
            return text, len(data)  # the three bytes are consumed and lost
        return codecs.utf_8_decode(data, errors, final)
