"""Planted bugs in the call, not the bytes (issue 28; :mod:`utf8fuzz.engine.calls`),
each with a correct twin. Plug-in functions, loaded as users name them:

* ``keeps_flag`` (``+validator``): a validator whose "rejected" flag is module
  state, not reset: the call after a rejection answers valid (a WebSocket
  library's native validator did this). On fresh bytes it is right.
* ``reads_past`` (plain ``bytes -> str``): a C-style loop that checks the byte
  after a sequence cut short by the end before it checks the length: it reads one
  byte past its input. In ``bytes`` that byte is CPython's terminating NUL (no
  continuation byte: right); in a view of a larger buffer it is the buffer's next
  byte, and a continuation byte there completes the sequence.
* ``aligned_only`` (plain): an ASCII fast path by 8-byte words that takes the bytes
  before the first 8-byte boundary as ASCII unchecked: right whenever the input
  starts on a boundary, as every ``bytes`` object's data does.
* ``whole_buffer`` (``+text``, replace mode): decodes the whole buffer its view is
  a slice of, as a JavaScript decoder that reads its argument's ``.buffer`` does
  (fastestsmallesttextencoderdecoder 1.0.22). One cause, a read outside the
  input, whatever guard byte shows it.
"""

from __future__ import annotations

import codecs
import ctypes

_rejected = [False]


def _utf8(data: bytes) -> str:
    return codecs.utf_8_decode(data, "strict", True)[0]


def keeps_flag(data: bytes) -> bool:
    if _rejected[0]:
        _rejected[0] = False  # the flag of the last call, never reset on entry
        return True
    try:
        _utf8(data)
    except UnicodeDecodeError:
        _rejected[0] = True
        return False
    return True


def valid(data: bytes) -> bool:
    try:
        _utf8(data)
    except UnicodeDecodeError:
        return False
    return True


def _address(data: bytes | bytearray | memoryview) -> int:
    """Where ``data``'s bytes are in memory (as C code sees its pointer)."""
    if isinstance(data, bytes):
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    return ctypes.addressof((ctypes.c_char * len(data)).from_buffer(data))


def _next_byte(data: bytes | memoryview) -> int:
    """``data[len(data)]`` as C reads it: a view's next byte in the buffer it is a
    slice of; a bytes object's terminating NUL."""
    if isinstance(data, memoryview) and isinstance(data.obj, bytearray) and len(data):
        at = _address(data) - _address(data.obj) + len(data)
        return data.obj[at] if at < len(data.obj) else 0
    return 0


def reads_past(data: bytes) -> str:
    b = bytes(data)
    try:
        return _utf8(b)
    except UnicodeDecodeError as e:
        if e.end == len(b) and e.reason == "unexpected end of data":
            try:
                return _utf8(b + bytes([_next_byte(data)]))
            except UnicodeDecodeError:
                pass
        raise


def aligned_only(data: bytes) -> str:
    n = len(data)
    head = min(n, -_address(data) % 8) if n else 0
    try:
        text = _utf8(bytes(data[head:]))
    except UnicodeDecodeError as e:
        raise UnicodeDecodeError("utf-8", bytes(data), e.start + head, e.end + head,
                                 e.reason) from None
    return "".join(map(chr, data[:head])) + text


def whole_buffer(data: bytes) -> str:
    whole = data.obj if isinstance(data, memoryview) else data
    return codecs.utf_8_decode(bytes(whole), "replace", True)[0]


def strict(data: bytes) -> str:
    """The correct twin of ``reads_past`` and ``aligned_only``; takes views too."""
    return _utf8(data)


def bytes_only(data: bytes) -> str:
    """A correct ``bytes -> str`` that takes only bytes (a view has no ``decode``)."""
    return data.decode("utf-8")
