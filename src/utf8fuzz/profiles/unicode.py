"""``unicode``: UTF-8 as Unicode 3.1+ and RFC 3629 define it.

Transcribes Unicode Corrigendum #1, "UTF-8 Shortest Form", Table 3.1B ("Legal
UTF-8 Byte Sequences"). D36 (b): "An illegal UTF-8 code unit sequence is any
byte sequence that does not match the patterns listed in Table 3.1B". The
underlined second-byte ranges (E0 A0..BF, F0 90..BF, F4 80..8F) are what rule out
non-shortest forms and values above U+10FFFF.

Surrogates. The Corrigendum's own table still lists E1..EF 80..BF 80..BF, and
ISO/IEC 10646 "does not allow mapping of unpaired surrogates" (Corrigendum #1,
Appendix C.3 addition). Unicode 3.2 and RFC 3629 made that explicit in the table
by splitting the row into E1..EC, ED 80..9F and EE..EF; we use the split rows, so
U+D800..U+DFFF are ill-formed. Noncharacters (U+FFFE, U+FDD0, ...) are
well-formed scalar values.
"""

from utf8fuzz.profiles.table import Profile, row

T = "Corrigendum #1, Table 3.1B"


def _refusal(cp: int) -> str:
    if 0xD800 <= cp <= 0xDFFF:
        return "a surrogate code point is not a Unicode scalar value (Corrigendum #1, C.3)"
    if cp > 0x10FFFF or cp < 0:
        return "outside U+0000..U+10FFFF (Corrigendum #1, D36 (a))"
    return "no row of Table 3.1B encodes it"


PROFILE = Profile(
    name="unicode",
    title="Unicode 3.1+ / RFC 3629",
    spec="Unicode Corrigendum #1, UTF-8 Shortest Form (Table 3.1B, D36, C12)",
    rows=[
        row("00..7F", clause=f"{T}, row U+0000..U+007F"),
        row("C2..DF", "80..BF", clause=f"{T}, row U+0080..U+07FF"),
        row("E0", "A0..BF", "80..BF", clause=f"{T}, row U+0800..U+0FFF"),
        row("E1..EC", "80..BF", "80..BF", clause=f"{T}, row U+1000..U+FFFF"),
        # Surrogates excluded: ISO/IEC 10646 per Corrigendum #1 Appendix C.3.
        row("ED", "80..9F", "80..BF", clause=f"{T}, row U+1000..U+FFFF, less surrogates"),
        row("EE..EF", "80..BF", "80..BF", clause=f"{T}, row U+1000..U+FFFF"),
        row("F0", "90..BF", "80..BF", "80..BF", clause=f"{T}, row U+10000..U+3FFFF"),
        row("F1..F3", "80..BF", "80..BF", "80..BF", clause=f"{T}, row U+40000..U+FFFFF"),
        row("F4", "80..8F", "80..BF", "80..BF", clause=f"{T}, row U+100000..U+10FFFF"),
    ],
    max_codepoint=0x10FFFF,
    refusal=_refusal,
)
