"""``cesu8``: CESU-8, the Compatibility Encoding Scheme for UTF-16: 8-Bit.

Unicode Technical Report #26, section 2: CESU-8 is UTF-8 for the BMP, and a
supplementary character is the six-byte encoding of its UTF-16 surrogate pair
(see :mod:`utf8fuzz.profiles._pairs`). Four-byte UTF-8 forms are not CESU-8. A
CESU-8 byte sequence is well-formed when the UTF-16 it encodes is; an unpaired
surrogate is ill-formed UTF-16 (Unicode section 3.9, D91), so a lone
``ED A0..BF 80..BF`` is ill-formed here too. ICU ships a ``CESU-8`` converter, and
Oracle and SAP databases store it.
"""

from utf8fuzz.profiles._pairs import pair_row
from utf8fuzz.profiles.table import Profile, row

T = "UTR #26 section 2 (BMP as in UTF-8, Corrigendum #1 Table 3.1B)"

PROFILE = Profile(
    name="cesu8",
    title="CESU-8 (supplementary characters as surrogate pairs)",
    spec="Unicode Technical Report #26, Compatibility Encoding Scheme for UTF-16: 8-Bit",
    rows=[
        row("00..7F", clause=f"{T}, U+0000..U+007F"),
        row("C2..DF", "80..BF", clause=f"{T}, U+0080..U+07FF"),
        row("E0", "A0..BF", "80..BF", clause=f"{T}, U+0800..U+0FFF"),
        row("E1..EC", "80..BF", "80..BF", clause=f"{T}, U+1000..U+CFFF"),
        row("ED", "80..9F", "80..BF", clause=f"{T}, U+D000..U+D7FF"),
        row("EE..EF", "80..BF", "80..BF", clause=f"{T}, U+E000..U+FFFF"),
        pair_row("UTR #26 section 2: a supplementary character as its UTF-16 pair"),
    ],
    max_codepoint=0x10FFFF,
)
