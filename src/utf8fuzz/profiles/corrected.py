"""``corrected``: Corrected UTF-8, a proposal.

"Corrected UTF-8 is almost the same as UTF-8. We make only three changes:
overlength encodings become impossible instead of just forbidden; the C1
controls and the Unicode surrogate characters are not encoded; and the artificial
upper limit on the code space is removed."

The table. Transcribed from "Putting it all together" (byte sequence range,
offset in decimal, code point range):

    00 ... 7F                          0           0000 0000 ... 0000 007F
    C0 80 ... DF BF                    160         0000 00A0 ... 0000 089F
    E0 80 80 ... EC BD 9F              2 208       0000 08A0 ... 0000 D7FF
    EC BD A0 ... EF BF BF              4 256       0000 E000 ... 0001 109F
    F0 80 80 80 ... F7 BF BF BF        69 792      0001 10A0 ... 0021 109F
    F8 80 80 80 80 ... FB BF BF BF BF  2 166 944   0021 10A0 ... 0421 109F
    FC 80 80 80 80 80 ... FD BF ... BF 69 275 808  0421 10A0 ... 8421 109F

"every possible sequence is the unique encoding of a single codepoint": every
complete sequence is well-formed, so the only errors are lone continuation bytes
and sequences cut short.

Reserved. "Corrected UTF-8 decoders MUST treat sequences beginning with FE or FF
as reserved for future use and as extending until the next recognized lead byte,
rather than as invalid." A recognized lead byte is one the table begins a row
with: 00..7F or C0..FD.

The magic number. "The eight-byte sequence EF B7 9D ED B2 AE 00 0A is defined as
the magic number signaling text using Corrected UTF-8 ... when it appears at the
beginning of a file, it should not be considered part of the text." Decoding a
*string* (``utf8fuzz.decode``) gives its four code points; reading a *document*
(:func:`check_document`) recognizes it and leaves it out of the text.

Document rules ("Other legacy control characters"): U+0000 "MUST NOT appear ...
except as part of the magic number" (an error); the last character SHOULD be
U+000A, and U+000D, U+2028, U+2029 and the other C0 controls SHOULD NOT appear
(warnings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from utf8fuzz.outcome import Outcome, Token
from utf8fuzz.profiles.table import Profile, seq_range

P = "Corrected UTF-8, 'Putting it all together' table"


def _refusal(cp: int) -> str:
    if 0x80 <= cp <= 0x9F:
        return "C1 controls are not encoded (Corrected UTF-8 skips U+0080..U+009F)"
    if 0xD800 <= cp <= 0xDFFF:
        return "surrogates are not encoded (Corrected UTF-8 skips U+D800..U+DFFF)"
    return "above U+8421109F, the highest code point of Corrected UTF-8"


PROFILE = Profile(
    name="corrected",
    title="Corrected UTF-8 (offsets, no C1 or surrogates, up to U+8421109F)",
    spec='"Corrected UTF-8" (proposal): offset table, reserved FE/FF, magic number',
    rows=[
        *seq_range("00", "7F", offset=0, clause=f"{P}, row 00 ... 7F (offset 0)"),
        *seq_range("C0 80", "DF BF", offset=160, clause=f"{P}, row C0 80 ... DF BF (offset 160)"),
        *seq_range("E0 80 80", "EC BD 9F", offset=2208,
                   clause=f"{P}, row E0 80 80 ... EC BD 9F (offset 2 208)"),
        *seq_range("EC BD A0", "EF BF BF", offset=4256,
                   clause=f"{P}, row EC BD A0 ... EF BF BF (offset 4 256)"),
        *seq_range("F0 80 80 80", "F7 BF BF BF", offset=69792,
                   clause=f"{P}, row F0 80 80 80 ... F7 BF BF BF (offset 69 792)"),
        *seq_range("F8 80 80 80 80", "FB BF BF BF BF", offset=2166944,
                   clause=f"{P}, row F8 80 80 80 80 ... FB BF BF BF BF (offset 2 166 944)"),
        *seq_range("FC 80 80 80 80 80", "FD BF BF BF BF BF", offset=69275808,
                   clause=f"{P}, row FC 80 80 80 80 80 ... FD BF BF BF BF BF (offset 69 275 808)"),
    ],
    max_codepoint=0x8421109F,
    reserved_leads=frozenset({0xFE, 0xFF}),
    recognized_leads=frozenset(range(0x00, 0x80)) | frozenset(range(0xC0, 0xFE)),
    refusal=_refusal,
)

MAGIC = bytes.fromhex("EF B7 9D ED B2 AE 00 0A")
RESERVED_CLAUSE = "Corrected UTF-8: FE/FF sequences are reserved for future use"


# -- documents ---------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One error or warning about a document, with the bytes it concerns."""

    start: int
    end: int
    message: str
    clause: str


@dataclass
class Document:
    """A Corrected UTF-8 document: whether it began with the magic number, the
    decoded text (token spans are offsets in the whole document), and findings."""

    magic: bool
    outcome: Outcome
    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    @property
    def conforming(self) -> bool:
        return not self.errors


_SHOULD_NOT = {0x0D: "U+000D", 0x2028: "U+2028", 0x2029: "U+2029"}
_RULES = "Corrected UTF-8, 'Other legacy control characters'"


def check_document(data: bytes) -> Document:
    """Read ``data`` as a Corrected UTF-8 document and check its MUST/SHOULD rules."""
    from utf8fuzz.policies import decode_tokens

    magic = data.startswith(MAGIC)
    skip = len(MAGIC) if magic else 0
    tokens = [
        Token(t.kind, t.value, t.start + skip, t.end + skip, t.reason)
        for t in decode_tokens(data[skip:], PROFILE, "maximal-subpart")
    ]
    prefix = [Token("reserved", None, 0, skip)] if magic else []
    # The magic number is not text; it is kept as a leading non-char span so that
    # the outcome still tiles the document.
    outcome = Outcome.from_tokens(prefix + tokens, len(data), data=data)
    doc = Document(magic=magic, outcome=outcome)
    for t in tokens:
        if t.kind == "error":
            doc.errors.append(Finding(t.start, t.end, f"ill-formed ({t.reason})", P))
        elif t.kind == "reserved":
            doc.warnings.append(Finding(t.start, t.end, "reserved FE/FF sequence", RESERVED_CLAUSE))
        elif t.value == 0:
            doc.errors.append(
                Finding(t.start, t.end, "U+0000 MUST NOT appear outside the magic number", _RULES)
            )
        elif t.value in _SHOULD_NOT:
            doc.warnings.append(
                Finding(t.start, t.end, f"{_SHOULD_NOT[t.value]} SHOULD NOT appear", _RULES)
            )
        elif t.value is not None and t.value < 0x20 and t.value != 0x0A:
            doc.warnings.append(
                Finding(t.start, t.end, f"C0 control U+{t.value:04X} SHOULD NOT appear", _RULES)
            )
    chars = [t for t in tokens if t.kind == "char"]
    if not chars or chars[-1].value != 0x0A:
        end = len(data)
        doc.warnings.append(
            Finding(max(skip, end - 1), end, "the last character SHOULD be U+000A", _RULES)
        )
    return doc


# -- conversion between standard UTF-8 and Corrected UTF-8 -----------------------------


class ConversionError(ValueError):
    """Input that has no counterpart in the target encoding; says where and why."""


def from_utf8(data: bytes) -> bytes:
    """Standard UTF-8 (the ``unicode`` profile) to Corrected UTF-8."""
    from utf8fuzz.policies import decode_tokens
    from utf8fuzz.profiles.table import EncodeError
    from utf8fuzz.profiles.unicode import PROFILE as UNICODE

    out = bytearray()
    for t in decode_tokens(data, UNICODE, "maximal-subpart"):
        if t.kind != "char" or t.value is None:
            raise ConversionError(
                f"bytes {t.start}..{t.end} ({data[t.start:t.end].hex(' ').upper()}) are not "
                f"well-formed UTF-8 ({t.reason})"
            )
        try:
            out += PROFILE.encode_one(t.value)
        except EncodeError as e:
            raise ConversionError(f"at byte {t.start}: {e}") from None
    return bytes(out)


def to_utf8(data: bytes) -> bytes:
    """Corrected UTF-8 to standard UTF-8 (the ``unicode`` profile)."""
    from utf8fuzz.policies import decode_tokens
    from utf8fuzz.profiles.table import EncodeError
    from utf8fuzz.profiles.unicode import PROFILE as UNICODE

    out = bytearray()
    for t in decode_tokens(data, PROFILE, "maximal-subpart"):
        if t.kind == "reserved":
            raise ConversionError(
                f"bytes {t.start}..{t.end} are a reserved FE/FF sequence, which UTF-8 cannot carry"
            )
        if t.kind == "error" or t.value is None:
            raise ConversionError(
                f"bytes {t.start}..{t.end} ({data[t.start:t.end].hex(' ').upper()}) are not "
                f"well-formed Corrected UTF-8 ({t.reason})"
            )
        try:
            out += UNICODE.encode_one(t.value)
        except EncodeError as e:
            raise ConversionError(f"at byte {t.start}: {e}") from None
    return bytes(out)
