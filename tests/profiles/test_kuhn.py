"""The kuhn profile: RFC 2279 plus "What is UTF-8?"'s safety rules."""

import pytest

import utf8fuzz


@pytest.mark.parametrize(
    "hexs",
    [
        # Kuhn: "U+000A ... must not be accepted in any of the following five overlong forms"
        "C0 8A",
        "E0 80 8A",
        "F0 80 80 8A",
        "F8 80 80 80 8A",
        "FC 80 80 80 80 8A",
        # U+D800..U+DFFF, U+FFFE and U+FFFF: "treat them like malformed sequences"
        "ED A0 80",
        "ED BF BF",
        "EF BF BE",
        "EF BF BF",
    ],
)
def test_refused(hexs: str) -> None:
    assert utf8fuzz.decode(bytes.fromhex(hexs), "kuhn").first_error is not None


@pytest.mark.parametrize(
    ("hexs", "cp"),
    [
        ("C2 A9", 0x00A9),  # Kuhn's example: the copyright sign
        ("E2 89 A0", 0x2260),  # Kuhn's example: not equal to
        ("ED 9F BF", 0xD7FF),
        ("EE 80 80", 0xE000),
        ("EF BF BD", 0xFFFD),
        ("F0 90 80 80", 0x10000),
        ("F8 88 80 80 80", 0x200000),  # U-00200000, five bytes
        ("FD BF BF BF BF BF", 0x7FFFFFFF),
    ],
)
def test_accepted(hexs: str, cp: int) -> None:
    assert utf8fuzz.decode(bytes.fromhex(hexs), "kuhn").codepoints() == [cp]


@pytest.mark.parametrize("cp", [0xD800, 0xDFFF, 0xFFFE, 0xFFFF])
def test_encoder_refuses(cp: int) -> None:
    with pytest.raises(utf8fuzz.EncodeError, match=f"U\\+{cp:04X}"):
        utf8fuzz.encode([cp], "kuhn")
