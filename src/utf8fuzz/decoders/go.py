"""Go's UTF-8 decoding, four calls of the standard library, as real peers.

==================  ========================================  =======  ==========  ========
name                call                                      mode     policy      shows
==================  ========================================  =======  ==========  ========
``go:decoderune``   a ``utf8.DecodeRune`` loop                replace  per-byte    replace,
                                                                                   spans,
                                                                                   strict,
                                                                                   reason
``go:runes``        ``[]rune(string(b))``                     replace  per-byte    replace
``go:tovalidutf8``  ``strings.ToValidUTF8(s, "\\uFFFD")``     replace  per-run     replace
``go:valid``        ``utf8.Valid(b)``                         validate (any)       accept
==================  ========================================  =======  ==========  ========

All claim the ``unicode`` profile: the package documents that "an encoding is
invalid if it is incorrect UTF-8, encodes a rune that is out of range, or is not
the shortest possible UTF-8 encoding for the value" (pkg.go.dev/unicode/utf8),
and the runtime's decoder refuses surrogates as utf8's does.

The policies are what each call's documentation says it does with invalid bytes:

* ``utf8.DecodeRune``: "if the encoding is invalid, it returns (RuneError, 1)".
  One byte per error is ``per-byte``; the client records one error per
  (RuneError, 1), so a literal U+FFFD in the input (EF BF BD, width 3) is a
  character. Its reason is Go's own: ``utf8.FullRune`` is false exactly when the
  bytes left are a proper prefix of a valid encoding ("an invalid encoding is
  considered a full Rune since it will convert as a width-1 error rune"), which
  is truncated. That this is not maximal subparts is Go's documented behaviour,
  not a bug.
* ``[]rune(string(b))``: the Go spec's conversions yield "the individual Unicode
  code points of the string", decoded as its range clause decodes them: on "an
  invalid UTF-8 sequence, the second value will be 0xFFFD, the Unicode
  replacement character, and the next iteration will advance a single byte in
  the string" (``per-byte``; the spec, "For statements with range clause").
  Text only: the call returns no error positions.
* ``strings.ToValidUTF8``: "returns a copy of the string s with each run of
  invalid UTF-8 byte sequences replaced by the replacement string"
  (pkg.go.dev/strings#ToValidUTF8): one U+FFFD per maximal run of the bytes
  ``DecodeRune`` rejects, which is the ``per-run`` policy
  (:mod:`utf8fuzz.policies`). Text only.
* ``utf8.Valid``: "reports whether p consists entirely of valid UTF-8-encoded
  runes". A validator says yes or no, so every policy agrees on it.

The client is ``peers/go/main.go``, built by ``make setup`` (:mod:`.peers.build`);
each decoder is its own process, started on first use.
"""

from __future__ import annotations

from utf8fuzz.decoders import peers
from utf8fuzz.decoders.base import Decoder, Unavailable

#: variant -> (call, mode, policy, reasons, text only)
VARIANTS: dict[str, peers.Variant] = {
    "decoderune": ("utf8.DecodeRune loop", "replace", "per-byte", True, False),
    "runes": ("[]rune(string(b))", "replace", "per-byte", False, True),
    "tovalidutf8": ('strings.ToValidUTF8(s, "\\uFFFD")', "replace", "per-run", False, True),
    "valid": ("utf8.Valid(b)", "validate", "maximal-subpart", False, False),
}


def discover() -> list[Decoder | Unavailable]:
    return peers.discover("go", VARIANTS)
