"""``kuhn``: RFC 2279 as Markus Kuhn's "What is UTF-8?" asks decoders to read it.

The sequences are RFC 2279's six rows (U-00000000..U-7FFFFFFF, 1 to 6 bytes),
and "Only the shortest possible multibyte sequence which can represent the code
number of the character can be used" (the overlong patterns 1100000x,
11100000 100xxxxx, 11110000 1000xxxx, 11111000 10000xxx, 11111100 100000xx are
refused). In addition: "the code positions U+D800 to U+DFFF (UTF-16 surrogates)
as well as U+FFFE and U+FFFF must not occur in normal UTF-8 or UCS-4 data. UTF-8
decoders should treat them like malformed or overlong sequences for safety
reasons." So the three-byte rows leave out ED A0..BF xx and EF BF BE..BF.
"""

from utf8fuzz.profiles.table import Profile, row

K = "Kuhn, What is UTF-8?"
OVERLONG = f"{K}: only the shortest form; overlong patterns refused"
SURR = f"{K}: U+D800..U+DFFF, U+FFFE, U+FFFF treated as malformed"


def _refusal(cp: int) -> str:
    if 0xD800 <= cp <= 0xDFFF or cp in (0xFFFE, 0xFFFF):
        return SURR
    return f"outside U-00000000..U-7FFFFFFF ({K})"


PROFILE = Profile(
    name="kuhn",
    title="RFC 2279 + Kuhn (no surrogates, no U+FFFE/FFFF)",
    spec='Markus Kuhn, "What is UTF-8?" (UTF-8 and Unicode FAQ)',
    rows=[
        row("00..7F", clause=f"{K}: U-00000000 - U-0000007F"),
        row("C2..DF", "80..BF", clause=OVERLONG),
        row("E0", "A0..BF", "80..BF", clause=OVERLONG),
        row("E1..EC", "80..BF", "80..BF", clause=f"{K}: U-00000800 - U-0000FFFF"),
        row("ED", "80..9F", "80..BF", clause=SURR),
        row("EE", "80..BF", "80..BF", clause=f"{K}: U-00000800 - U-0000FFFF"),
        row("EF", "80..BE", "80..BF", clause=f"{K}: U-00000800 - U-0000FFFF"),
        row("EF", "BF", "80..BD", clause=SURR),
        row("F0", "90..BF", "80..BF", "80..BF", clause=OVERLONG),
        row("F1..F7", "80..BF", "80..BF", "80..BF", clause=f"{K}: U-00010000 - U-001FFFFF"),
        row("F8", "88..BF", "80..BF", "80..BF", "80..BF", clause=OVERLONG),
        row("F9..FB", "80..BF", "80..BF", "80..BF", "80..BF",
            clause=f"{K}: U-00200000 - U-03FFFFFF"),
        row("FC", "84..BF", "80..BF", "80..BF", "80..BF", "80..BF", clause=OVERLONG),
        row("FD", "80..BF", "80..BF", "80..BF", "80..BF", "80..BF",
            clause=f"{K}: U-04000000 - U-7FFFFFFF"),
    ],
    max_codepoint=0x7FFFFFFF,
    refusal=_refusal,
)
