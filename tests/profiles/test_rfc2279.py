"""The rfc2279 profile: RFC 2279 section 2's six rows, shortest form only."""

import pytest

import utf8fuzz

# Section 2's table: (UCS-4 range, octet count). Both ends of each range encode to
# the stated length and decode back.
RANGES = [
    (0x00000000, 0x0000007F, 1),
    (0x00000080, 0x000007FF, 2),
    (0x00000800, 0x0000FFFF, 3),
    (0x00010000, 0x001FFFFF, 4),
    (0x00200000, 0x03FFFFFF, 5),
    (0x04000000, 0x7FFFFFFF, 6),
]


@pytest.mark.parametrize(("lo", "hi", "n"), RANGES)
def test_table_rows_at_both_ends(lo: int, hi: int, n: int) -> None:
    for cp in (lo, hi):
        b = utf8fuzz.encode([cp], "rfc2279")
        assert len(b) == n
        assert utf8fuzz.decode(b, "rfc2279").codepoints() == [cp]


def test_six_byte_maximum_bit_pattern() -> None:
    # 1111110x 10xxxxxx x5 with every x set is 7FFF FFFF
    assert utf8fuzz.decode(bytes.fromhex("FD BF BF BF BF BF"), "rfc2279").codepoints() == [
        0x7FFFFFFF]


@pytest.mark.parametrize(
    "hexs",
    [
        "C0 80",  # section 2 NOTE: "the invalid UTF-8 sequence C0 80"
        "C0 AE",  # section 6: 2F C0 AE 2E 2F must not be "/../"
        "E0 80 AF",
        "F0 80 80 AF",
        "F8 80 80 80 AF",
        "FC 80 80 80 80 AF",
        "FE",  # "The octet values FE and FF never appear."
        "FF",
    ],
)
def test_non_shortest_forms_and_fe_ff_are_ill_formed(hexs: str) -> None:
    assert utf8fuzz.decode(bytes.fromhex(hexs), "rfc2279").first_error is not None


def test_section_6_example() -> None:
    out = utf8fuzz.decode(bytes.fromhex("2F C0 AE 2E 2F"), "rfc2279")
    assert out.codepoints() == [0x2F, 0xFFFD, 0xFFFD, 0x2E, 0x2F]


def test_surrogate_values_decode_as_values() -> None:
    # RFC 2279 does not forbid D800..DFFF as UCS-4 values
    assert utf8fuzz.decode(bytes.fromhex("ED A0 80"), "rfc2279").codepoints() == [0xD800]
    assert utf8fuzz.encode([0xDFFF], "rfc2279") == bytes.fromhex("ED BF BF")


def test_encoder_refuses_above_31_bits() -> None:
    with pytest.raises(utf8fuzz.EncodeError, match="U\\+80000000"):
        utf8fuzz.encode([0x80000000], "rfc2279")
