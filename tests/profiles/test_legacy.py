"""The legacy profile: the naive decoder RFC 2279 section 6 warns about."""

import utf8fuzz


def test_non_shortest_forms_decode() -> None:
    # RFC 2279 NOTE: "a naive implementation may (wrongly) decode ... C0 80 into U+0000"
    assert utf8fuzz.decode(bytes.fromhex("C0 80"), "legacy").codepoints() == [0]
    # section 6: 2F C0 AE 2E 2F read as "/../"
    assert utf8fuzz.decode(bytes.fromhex("2F C0 AE 2E 2F"), "legacy").codepoints() == [
        0x2F, 0x2E, 0x2E, 0x2F]
    assert utf8fuzz.decode(bytes.fromhex("E0 80 AF"), "legacy").codepoints() == [0x2F]
    assert utf8fuzz.decode(bytes.fromhex("FC 80 80 80 80 AF"), "legacy").codepoints() == [0x2F]


def test_still_refuses_structural_errors() -> None:
    for hexs in ("80", "FE", "FF", "C0", "E0 80"):
        assert utf8fuzz.decode(bytes.fromhex(hexs), "legacy").first_error is not None


def test_encoder_writes_the_shortest_form() -> None:
    assert utf8fuzz.encode([0x2F, 0], "legacy") == b"/\x00"
