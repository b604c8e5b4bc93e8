"""Types of the iconv adapter's C glue (``_iconv.c``); utf8fuzz.decoders.iconv documents it."""

from typing import Any

from _typeshed import ReadableBuffer

def iconv_run(cd: int, data: ReadableBuffer, kind: int, search: bool,
              /) -> tuple[int, int, int, tuple[int, ...] | None]: ...
def iconv_screen(decoder: Any, kind: int, data: ReadableBuffer, /) -> dict[str, Any] | None: ...
def iconv_convert(cd: int, data: ReadableBuffer, /) -> tuple[int, int, bytes]: ...
