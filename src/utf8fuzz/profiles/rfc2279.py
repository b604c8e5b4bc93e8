"""``rfc2279``: the original UTF-8 of RFC 2279 (1998).

RFC 2279 section 2: "characters are encoded using sequences of 1 to 6 octets",
for UCS-4 values 0000 0000..7FFF FFFF:

    0000 0000-0000 007F   0xxxxxxx
    0000 0080-0000 07FF   110xxxxx 10xxxxxx
    0000 0800-0000 FFFF   1110xxxx 10xxxxxx 10xxxxxx
    0001 0000-001F FFFF   11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
    0020 0000-03FF FFFF   111110xx 10xxxxxx 10xxxxxx 10xxxxxx 10xxxxxx
    0400 0000-7FFF FFFF   1111110x 10xxxxxx ... 10xxxxxx

"the rows of the table are mutually exclusive, i.e. there is only one valid way
to encode a given UCS-4 character", and the NOTE after the decoding steps and
section 6 call C0 80 "invalid". So only the shortest form is well-formed: each
row's second byte is narrowed so that the value reaches the row's lower bound,
exactly as Table 3.1B later did for Unicode (C0, C1 never lead; E0 needs A0..BF;
F0 needs 90..BF; F8 needs 88..BF; FC needs 84..BF).

RFC 2279 does not forbid the values D800..DFFF (section 2 only says UTF-16
pairs "need special treatment" when *encoding from UCS-2*), so ED A0 80 decodes
to the value U+D800 here. Kuhn's profile is the one that refuses them.
"""

from utf8fuzz.profiles.table import Profile, row

S2 = "RFC 2279 section 2"

PROFILE = Profile(
    name="rfc2279",
    title="RFC 2279 (1-6 bytes, shortest form)",
    spec="RFC 2279, UTF-8, a transformation format of ISO 10646 (sections 2 and 6)",
    rows=[
        row("00..7F", clause=f"{S2}, 0000 0000-0000 007F"),
        row("C2..DF", "80..BF", clause=f"{S2}, 0000 0080-0000 07FF"),
        row("E0", "A0..BF", "80..BF", clause=f"{S2}, 0000 0800-0000 FFFF"),
        row("E1..EF", "80..BF", "80..BF", clause=f"{S2}, 0000 0800-0000 FFFF"),
        row("F0", "90..BF", "80..BF", "80..BF", clause=f"{S2}, 0001 0000-001F FFFF"),
        row("F1..F7", "80..BF", "80..BF", "80..BF", clause=f"{S2}, 0001 0000-001F FFFF"),
        row("F8", "88..BF", "80..BF", "80..BF", "80..BF", clause=f"{S2}, 0020 0000-03FF FFFF"),
        row("F9..FB", "80..BF", "80..BF", "80..BF", "80..BF",
            clause=f"{S2}, 0020 0000-03FF FFFF"),
        row("FC", "84..BF", "80..BF", "80..BF", "80..BF", "80..BF",
            clause=f"{S2}, 0400 0000-7FFF FFFF"),
        row("FD", "80..BF", "80..BF", "80..BF", "80..BF", "80..BF",
            clause=f"{S2}, 0400 0000-7FFF FFFF"),
    ],
    max_codepoint=0x7FFFFFFF,
)
