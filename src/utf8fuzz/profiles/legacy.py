"""``legacy``: the naive RFC 2279 decoder that the specs warn about.

RFC 2279 section 2, NOTE: "a naive implementation may (wrongly) decode the
invalid UTF-8 sequence C0 80 into the character U+0000"; section 6 gives
2F C0 AE 2E 2F for "/../". Corrigendum #1 explains why: "Where software does
interpret the non-shortest forms, security issues can arise."

This profile *is* that naive decoder: every lead byte's high bits announce a
length (RFC 2279 section 2), the x bits are distributed, and nothing checks that
the form is the shortest. C0 AF is '/', C0 80 is U+0000, E0 80 AF is '/' again.
It is not a spec anyone should implement; it exists so that triage can say
"this decoder behaves like a naive decoder". Its encoder writes the shortest
form, so decode(encode(x)) == x still holds.
"""

from utf8fuzz.profiles.table import Profile, row

N = "RFC 2279 section 2 bit layout, no shortest-form check (section 6 warns)"

PROFILE = Profile(
    name="legacy",
    title="naive RFC 2279 decoder (accepts overlong forms)",
    spec="RFC 2279 section 2 NOTE and section 6; Corrigendum #1 (what not to do)",
    rows=[
        row("00..7F", clause=N),
        row("C0..DF", "80..BF", clause=N),
        row("E0..EF", "80..BF", "80..BF", clause=N),
        row("F0..F7", "80..BF", "80..BF", "80..BF", clause=N),
        row("F8..FB", "80..BF", "80..BF", "80..BF", "80..BF", clause=N),
        row("FC..FD", "80..BF", "80..BF", "80..BF", "80..BF", "80..BF", clause=N),
    ],
    max_codepoint=0x7FFFFFFF,
)
