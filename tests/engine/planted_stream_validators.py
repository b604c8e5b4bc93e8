"""Streaming validators (``+stream-validator``): a correct one, two with one planted
bug each, and two that are not of the shape they are declared as.

:class:`Correct` is CPython's UTF-8 incremental decoder asked only whether each chunk
and the end are well-formed. :class:`LosesSplitSequence` resets it at the start of
every chunk (a reset meant for each message, run for each chunk), so the bytes a
chunk ended with, the start of a sequence, are lost: the rest of that sequence is
stray continuation bytes (``41 C2 | A9``: rejected), and a lead byte's missing
continuation bytes go unseen (``41 C2 | 41``: accepted). Fed the whole input at once
(its one-shot sibling) it is correct. :class:`ForgetsEndCheck` carries every
sequence right but its end check always says yes, so an input that ends inside a
sequence (``E2 82``) is accepted, fed whole or in chunks alike.
"""

from __future__ import annotations

import codecs

#: An input that shows the lost sequence: 41, then U+00A9 (C2 A9) split after C2.
SPLIT_TRIGGER = bytes.fromhex("41 C2 A9")
#: An input that shows the missing end check: U+20AC (E2 82 AC) cut short.
END_TRIGGER = bytes.fromhex("E2 82")


class Correct:
    """A correct streaming validator: ``validate(chunk)`` then ``final()``."""

    def __init__(self) -> None:
        self._dec = codecs.getincrementaldecoder("utf-8")("strict")

    def validate(self, chunk: bytes) -> bool:
        try:
            self._dec.decode(chunk, False)
        except UnicodeDecodeError:
            return False
        return True

    def final(self) -> bool:
        try:
            self._dec.decode(b"", True)
        except UnicodeDecodeError:
            return False
        return True


class LosesSplitSequence(Correct):
    """The planted carry bug (see the module docstring)."""

    def validate(self, chunk: bytes) -> bool:
        self._dec.reset()
        return super().validate(chunk)


class ForgetsEndCheck(Correct):
    """The planted end-check bug (see the module docstring)."""

    def final(self) -> bool:
        return True


class NoEnd:
    """Declared ``+stream-validator`` with the default names, it has no ``final``."""

    def validate(self, chunk: bytes) -> bool:
        return True

    def end(self) -> bool:
        return True


class SaysNone(Correct):
    """Its feed method says nothing: it returns None (the raising style, undeclared)."""

    def validate(self, chunk: bytes) -> None:  # type: ignore[override]
        super().validate(chunk)


class NeedsAnArgument(Correct):
    """Its class cannot be called without an argument: no object to feed."""

    def __init__(self, size: int) -> None:
        super().__init__()
