"""``mutf8``: Java's modified UTF-8 (class files, ``DataInput.readUTF``, JNI).

JVM Specification (SE 17), section 4.4.7, "The CONSTANT_Utf8_info Structure":
code points U+0001..U+007F take one byte; "The null code point ('\\u0000') and
code points in the range '\\u0080' to '\\u07FF'" take two, so U+0000 is ``C0 80``
and "No byte may have the value (byte)0"; U+0800..U+FFFF take three; and
"characters with code points above U+FFFF ... are represented by separately
encoding the two surrogate code units of their UTF-16 representation" - six
bytes (:mod:`utf8fuzz.profiles._pairs`). Four-byte forms and bytes F0..FF never
appear.

A Java string is a sequence of UTF-16 code units and may hold an unpaired
surrogate, which ``DataOutput.writeUTF`` writes as three bytes; so a lone
``ED A0..BF 80..BF`` is well-formed and means that surrogate. Where a high and a
low surrogate follow each other the six-byte row matches first (the longest
well-formed sequence) and the pair is one supplementary code point.
"""

from utf8fuzz.profiles._pairs import pair_row
from utf8fuzz.profiles.table import Profile, row

J = "JVM Specification section 4.4.7"

PROFILE = Profile(
    name="mutf8",
    title="Java modified UTF-8 (C0 80 for U+0000, surrogate pairs)",
    spec="The Java Virtual Machine Specification, section 4.4.7 (CONSTANT_Utf8_info)",
    rows=[
        row("01..7F", clause=f"{J}: U+0001..U+007F in one byte; no byte is 00"),
        row("C0", "80", clause=f"{J}: the null code point in two bytes"),
        row("C2..DF", "80..BF", clause=f"{J}: U+0080..U+07FF in two bytes"),
        row("E0", "A0..BF", "80..BF", clause=f"{J}: U+0800..U+FFFF in three bytes"),
        row("E1..EC", "80..BF", "80..BF", clause=f"{J}: U+0800..U+FFFF in three bytes"),
        row("ED", "80..BF", "80..BF",
            clause=f"{J}: U+0800..U+FFFF in three bytes, surrogate code units included"),
        row("EE..EF", "80..BF", "80..BF", clause=f"{J}: U+0800..U+FFFF in three bytes"),
        pair_row(f"{J}: a supplementary character as its two surrogate code units"),
    ],
    max_codepoint=0x10FFFF,
)
