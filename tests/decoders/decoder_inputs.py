"""Inputs every adapter is tried on, with what the specs say of them."""

from __future__ import annotations

# Unicode's example of U+FFFD substitution of maximal subparts (Unicode Standard,
# chapter 3, "U+FFFD Substitution of Maximal Subparts", table 3-8):
# 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d
EXAMPLE = bytes.fromhex("61 F1 80 80 E1 80 C2 62 80 63 80 BF 64")
EXAMPLE_REPLACE = (0x61, 0xFFFD, 0xFFFD, 0xFFFD, 0x62, 0xFFFD, 0x63, 0xFFFD, 0xFFFD, 0x64)
EXAMPLE_SPANS = ((1, 4), (4, 6), (6, 7), (8, 9), (10, 11), (11, 12))

# Boundary inputs (name -> hex). What each means is the reference's business;
# the adapter tests compare against ref:unicode:maximal-subpart or pin the
# library's known, documented behaviour.
BOUNDARY = {
    "overlong-2": "C0 AF",
    "overlong-3": "E0 80 AF",
    "overlong-4": "F0 80 80 AF",
    "overlong-nul": "41 C0 80 42",
    "surrogate-high": "ED A0 80",
    "surrogate-low": "ED BF BF",
    "surrogate-pair": "ED A0 BD ED B8 80",
    "above-10ffff": "F4 90 80 80",
    "f5": "F5 80 80 80",
    "five-byte": "F8 88 80 80 80",
    "six-byte": "FC 84 80 80 80 80",
    "fe": "41 FE 42",
    "ff": "FF",
    "truncated-2": "41 C3",
    "truncated-3": "41 E2 82",
    "truncated-4": "41 F0 9F 98",
    "lone-continuation": "80",
    "continuations": "41 80 BF 42",
    "bom": "EF BB BF 41",
    "max-scalar": "F4 8F BF BF",
    "noncharacter": "EF BF BF",
    "valid-mix": "41 C3 A9 E2 82 AC F0 9F 98 80",
    "empty": "",
}
