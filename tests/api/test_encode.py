"""utf8fuzz.encode."""

import pytest

import utf8fuzz


def test_encode_accepts_ints_and_str() -> None:
    assert utf8fuzz.encode([0x41, 0xE9]) == "Aé".encode()
    assert utf8fuzz.encode("Aé") == "Aé".encode()


def test_error_names_the_code_point_and_index() -> None:
    with pytest.raises(utf8fuzz.EncodeError, match=r"U\+D800 \(at index 1\)") as e:
        utf8fuzz.encode([0x41, 0xD800])
    assert isinstance(e.value, ValueError)
    assert e.value.codepoint == 0xD800 and e.value.index == 1


def test_bad_types() -> None:
    with pytest.raises(TypeError):
        utf8fuzz.encode(42)
    with pytest.raises(ValueError, match="unknown profile"):
        utf8fuzz.encode([0x41], profile="nope")
