"""Types of the ICU adapter's C glue (``_icu.c``); utf8fuzz.decoders.icu documents it."""

from typing import Any

from _typeshed import ReadableBuffer

from utf8fuzz.outcome import Token

# The pointers are ints (addresses from ctypes), read with PyLong_AsVoidPtr.
def icu_decode(to_unicode: object, reset: object, set_to_u_callback: object, converter: object,
               data: ReadableBuffer, cesu8: bool, /) -> tuple[Token, ...] | int | str: ...
def icu_screen(to_unicode: object, reset: object, set_to_u_callback: object, converter: object,
               data: ReadableBuffer, cesu8: bool, /) -> dict[str, Any] | None: ...
def tile(data: ReadableBuffer, codepoints: Any, events: Any, cesu8: bool,
         /) -> tuple[Token, ...] | str: ...
