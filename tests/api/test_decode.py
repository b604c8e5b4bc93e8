"""utf8fuzz.decode: inputs it takes, errors it gives, the outcome it returns."""

import pytest

import utf8fuzz

EXAMPLE = bytes.fromhex("61 F1 80 80 E1 80 C2 62 80 63 80 BF 64")


def test_unicode_example_maximal_subparts() -> None:
    # Unicode's example: a, U+FFFD x3, b, U+FFFD, c, U+FFFD x2, d
    out = utf8fuzz.decode(EXAMPLE)
    F = 0xFFFD
    assert out.codepoints() == [0x61, F, F, F, 0x62, F, 0x63, F, F, 0x64]
    assert out.error_spans == [(1, 4), (4, 6), (6, 7), (8, 9), (10, 11), (11, 12)]
    assert out.first_error == (1, 4)
    assert out.codepoints(replacement=None) == [0x61, 0x62, 0x63, 0x64]
    assert out.codepoints(replacement=0x3F)[1] == 0x3F


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_buffer_types(kind: type) -> None:
    assert utf8fuzz.decode(kind(EXAMPLE)).codepoints() == utf8fuzz.decode(EXAMPLE).codepoints()


@pytest.mark.parametrize("bad", ["text", 42, None, [0x41]])
def test_other_types_are_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="bytes, bytearray or memoryview"):
        utf8fuzz.decode(bad)  # type: ignore[arg-type]


def test_unknown_profile_and_policy_list_the_names() -> None:
    with pytest.raises(ValueError, match="unicode, rfc2279"):
        utf8fuzz.decode(b"", profile="utf-9")
    with pytest.raises(ValueError, match="maximal-subpart, per-sequence, per-byte"):
        utf8fuzz.decode(b"", policy="whatever")


def test_tokens_tile_the_input() -> None:
    out = utf8fuzz.decode(EXAMPLE)
    assert out.tokens[0].start == 0 and out.tokens[-1].end == len(EXAMPLE)
    assert all(a.end == b.start for a, b in zip(out.tokens, out.tokens[1:], strict=False))
    assert {t.kind for t in out.tokens} == {"char", "error"}


def test_names() -> None:
    assert set(utf8fuzz.PROFILES) >= {"unicode", "rfc2279", "kuhn", "legacy", "corrected"}
    assert utf8fuzz.POLICIES == ("maximal-subpart", "per-sequence", "per-byte", "per-run")
