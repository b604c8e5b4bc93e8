"""``cesu8``: CESU-8, the Compatibility Encoding Scheme for UTF-16: 8-Bit.

Unicode Technical Report #26, section 2: CESU-8 is UTF-8 for the BMP, and a
supplementary character is the six-byte encoding of its UTF-16 surrogate pair
(see :mod:`utf8fuzz.profiles._pairs`). Four-byte UTF-8 forms are not CESU-8. A
CESU-8 byte sequence is well-formed when the UTF-16 it encodes is; an unpaired
surrogate is ill-formed UTF-16 (Unicode section 3.9, D91), so a lone
``ED A0..BF 80..BF`` is ill-formed here too. ICU ships a ``CESU-8`` converter, and
Oracle and SAP databases store it.
"""

from utf8fuzz.profiles import unicode
from utf8fuzz.profiles._pairs import pair_row
from utf8fuzz.profiles.table import Profile

PROFILE = Profile(
    name="cesu8",
    title="CESU-8 (supplementary characters as surrogate pairs)",
    spec="Unicode Technical Report #26, Compatibility Encoding Scheme for UTF-16: 8-Bit",
    rows=[
        # UTR #26 section 2: the BMP as in UTF-8 - Table 3.1B's rows of 1 to 3 bytes
        *(r for r in unicode.PROFILE.rows if r.length <= 3),
        pair_row("UTR #26 section 2: a supplementary character as its UTF-16 pair"),
    ],
    max_codepoint=0x10FFFF,
)
