"""``surrogatepass``: UTF-8 that also accepts encoded surrogates, one at a time.

This is what CPython's ``utf-8`` codec with ``errors="surrogatepass"`` means to
decode (Python docs, codecs, "Error Handlers": surrogatepass "allow[s] encoding
and decoding surrogate code point (U+D800 - U+DFFF) as normal code point"). It is
the Unicode profile with Corrigendum #1 Table 3.1B's unsplit row
E1..EF 80..BF 80..BF restored for ED: ``ED A0..BF 80..BF`` is the value
U+D800..U+DFFF, each three-byte sequence on its own. A pair ``ED A0 80 ED B0 80``
is two code points, U+D800 U+DC00, never combined (that would be CESU-8).
"""

from utf8fuzz.profiles import unicode
from utf8fuzz.profiles.table import Profile, row

PROFILE = Profile(
    name="surrogatepass",
    title="UTF-8 plus lone encoded surrogates (CPython surrogatepass)",
    spec="Unicode Corrigendum #1 Table 3.1B, with encoded surrogates as Python's "
    "surrogatepass error handler allows them",
    rows=[
        *unicode.PROFILE.rows,
        row("ED", "A0..BF", "80..BF",
            clause="Python codecs, surrogatepass error handler: U+D800..U+DFFF as normal "
                   "code points"),
    ],
    max_codepoint=0x10FFFF,
)
