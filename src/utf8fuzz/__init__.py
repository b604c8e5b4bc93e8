"""utf8fuzz: differential fuzzing of UTF-8 decoders against the specs.

The public API is small::

    import utf8fuzz
    out = utf8fuzz.decode(b"\\x61\\xF1\\x80\\x80\\xE1\\x80", profile="unicode")
    out.tokens            # Token(kind, value, start, end, reason) tiling the input
    out.codepoints()      # [0x61, 0xFFFD, 0xFFFD]
    out.first_error       # (1, 4), CPython's UnicodeDecodeError (start, end)
    out.error_spans       # [(1, 4), (4, 6)]
    utf8fuzz.encode([0xE9], profile="corrected")

``PROFILES`` and ``POLICIES`` name what exists. Everything else (decoder
adapters, the differential engine, reports) lives in subpackages.
"""

from __future__ import annotations

from collections.abc import Iterable

from utf8fuzz.outcome import Outcome, Token, ViewUnavailable
from utf8fuzz.policies import POLICIES, decode_tokens
from utf8fuzz.profiles import PROFILES, EncodeError, get_profile

__version__ = "0.1.0"

_BUFFER_TYPES = (bytes, bytearray, memoryview)


def _as_bytes(data: object) -> bytes:
    if not isinstance(data, _BUFFER_TYPES):
        raise TypeError(
            f"data must be bytes, bytearray or memoryview, not {type(data).__name__}"
        )
    return bytes(data)


def decode(data: bytes | bytearray | memoryview, profile: str = "unicode",
           policy: str = "maximal-subpart") -> Outcome:
    """Decode ``data`` with the reference decoder of ``profile``, cutting
    ill-formed bytes into errors by ``policy``."""
    raw = _as_bytes(data)
    prof = get_profile(profile)
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; policies are {', '.join(POLICIES)}")
    toks = decode_tokens(raw, prof, policy)
    return Outcome.from_tokens(
        toks, len(raw), provenance={"decoder": f"ref:{prof.name}:{policy}"}, data=raw,
        check=False,
    )


def encode(codepoints: str | Iterable[int], profile: str = "unicode") -> bytes:
    """Encode code points in ``profile``'s (shortest) form; :class:`EncodeError`
    (a ValueError) names the first code point the profile cannot encode."""
    prof = get_profile(profile)
    if isinstance(codepoints, str):
        codepoints = [ord(c) for c in codepoints]
    try:
        cps = [int(c) for c in codepoints]
    except TypeError:
        raise TypeError(
            f"codepoints must be an iterable of ints or a str, not {type(codepoints).__name__}"
        ) from None
    return prof.encode(cps)


__all__ = [
    "POLICIES",
    "PROFILES",
    "EncodeError",
    "Outcome",
    "Token",
    "ViewUnavailable",
    "decode",
    "encode",
]
