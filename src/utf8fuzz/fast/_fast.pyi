"""Types of the fast path's C extension (``_fast.c``); utf8fuzz.fast documents it.

Names with a leading underscore exist in this stub only (mypy.stubtest checks the
rest against the built module)."""

from array import array
from collections.abc import Callable, Iterable
from typing import Literal, TypedDict

from _typeshed import ReadableBuffer

_Mode = Literal["auto", "forced"]

class _Info(TypedDict):
    selected: str
    mode: _Mode
    built: list[str]
    available: list[str]
    cpu: dict[str, bool]
    short_input: int

def decode(data: ReadableBuffer, errors: str = ...) -> str: ...
def validate(data: ReadableBuffer, /) -> tuple[int, int] | None: ...
def first_error(data: ReadableBuffer, /) -> tuple[int, int, str] | None: ...
def error_spans(data: ReadableBuffer, /) -> list[tuple[int, int]]: ...
def decode_corrected(data: ReadableBuffer, errors: str = ...) -> array[int]: ...
def decode_corrected_text(data: ReadableBuffer, errors: str = ...) -> str | None: ...
def corrected_first_error(data: ReadableBuffer, /) -> tuple[int, int, str] | None: ...
def corrected_error_spans(data: ReadableBuffer, /) -> list[tuple[int, int]]: ...
def encode_corrected(codepoints: str | ReadableBuffer | Iterable[int], /) -> bytes: ...
def info() -> _Info: ...
def path() -> tuple[str, _Mode]: ...
def set_path(name: str, /) -> str: ...
def fast_screen(
    strict: Callable[[bytes], object],
    validate: Callable[[bytes], object] | None,
    error_spans: Callable[[bytes], object],
    text: Callable[[bytes, str], str | None],
    array: Callable[[bytes, str], object] | None,
    lengths: bytes,
    reserved: bytes,
    data: bytes,
    /,
) -> dict[str, object] | None: ...
