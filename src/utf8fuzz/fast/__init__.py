"""The fast path: a C extension that decodes UTF-8 to str, and Corrected UTF-8.

utf8fuzz exists to keep fast decoders honest, and this is the project's own, fuzzed
against the references and CPython like any other decoder (``fast:unicode``,
``fast:corrected`` in ``utf8fuzz diff``).

``decode(data, errors="strict") -> str``
    A drop-in for ``bytes(data).decode("utf-8", errors)``: the same str and, on
    error, a UnicodeDecodeError with the same start, end and reason. strict,
    replace, ignore and surrogateescape run in C; any other handler (including an
    unknown one, which raises LookupError) is CPython's, called when the input has
    an error - exactly when CPython would look it up.
``validate(data) -> None | (start, end)``
    None when valid, else the first error's span.
``first_error(data) -> None | (start, end, reason)``
    What strict ``decode`` raises (start, end, reason), returned instead of raised:
    the same scan and walk, without the price of an exception.
``error_spans(data) -> list[(start, end)]``
    Every maximal-subpart error span.
``decode_corrected(data, errors="strict") -> array('I')``
    Corrected UTF-8 code points (they can exceed U+10FFFF). A reserved FE/FF unit
    has no code point: strict raises with its span, replace gives U+FFFD, ignore
    drops it (as the outcome model's views do).
``decode_corrected_text(data, errors="strict") -> str | None``
    The same decoding as a ``str`` (surrogates included), or None when a code point
    is above U+10FFFF, which a str cannot hold: for callers that compare text.
``corrected_first_error(data) -> None | (start, end, reason)``
    What strict ``decode_corrected`` raises, returned instead of raised (the same
    loop, stopped at the same place): for callers that want only the first error,
    without the price of an exception.
``corrected_error_spans(data) -> list[(start, end)]``
    Spans of every error and reserved unit of Corrected UTF-8.
``encode_corrected(codepoints) -> bytes``
    Refuses what the reference refuses, raising the reference's ``EncodeError``.

Code paths. ``scalar`` (the definition the others are tested against), ``sse2``
(SIMD ASCII runs; every x86-64: the baseline), ``ssse3`` (Keiser-Lemire lookup
validation with PSHUFB on 16-byte vectors and shuffle-table transcoding kernels
per PEP 393 kind; SSSE3 only, no POPCNT or SSE4), ``avx2`` (the same on 32-byte
vectors, plus Corrected UTF-8 blocks) and ``avx512`` (the validation on 64-byte
AVX-512BW vectors, the avx2 transcoding kernels; built, but not yet executed on
AVX-512 hardware by this project). The best path the CPU runs is chosen at
import; inputs under ``info()["short_input"]`` bytes take the scalar path.
``UTF8FUZZ_FAST_PATH=scalar|sse2|ssse3|avx2|avx512|auto`` forces a path for
every length (so tests reach every path's tail handling); forcing one this CPU
cannot run makes the import fail with ImportError naming the missing CPU
features - never a silent fallback, so a test run never believes it tested a
path it did not. ``set_path(name)`` does the same at run time (ValueError) and
returns the previous setting. ``info()`` describes the paths and the CPU;
``path() -> (selected, mode)`` is its two fields that can change, cheaply, for a
caller that records the path every result ran on.
"""

from __future__ import annotations

from utf8fuzz.fast._fast import (
    corrected_error_spans,
    corrected_first_error,
    decode,
    decode_corrected,
    decode_corrected_text,
    encode_corrected,
    error_spans,
    first_error,
    info,
    path,
    set_path,
    validate,
)

__all__ = [
    "corrected_error_spans",
    "corrected_first_error",
    "decode",
    "decode_corrected",
    "decode_corrected_text",
    "encode_corrected",
    "error_spans",
    "first_error",
    "info",
    "path",
    "set_path",
    "validate",
]
