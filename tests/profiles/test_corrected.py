"""The corrected profile against the Corrected UTF-8 proposal."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import utf8fuzz
from utf8fuzz.profiles import corrected

# "Putting it all together": every row at both ends, read off the proposal's table.
ROWS = [
    ("00", 0x00000000, "7F", 0x0000007F),
    ("C0 80", 0x000000A0, "DF BF", 0x0000089F),
    ("E0 80 80", 0x000008A0, "EC BD 9F", 0x0000D7FF),
    ("EC BD A0", 0x0000E000, "EF BF BF", 0x0001109F),
    ("F0 80 80 80", 0x000110A0, "F7 BF BF BF", 0x0021109F),
    ("F8 80 80 80 80", 0x002110A0, "FB BF BF BF BF", 0x0421109F),
    ("FC 80 80 80 80 80", 0x042110A0, "FD BF BF BF BF BF", 0x8421109F),
]


@pytest.mark.parametrize(("first", "cp_first", "last", "cp_last"), ROWS)
def test_each_row_at_both_ends(first: str, cp_first: int, last: str, cp_last: int) -> None:
    for hexs, cp in ((first, cp_first), (last, cp_last)):
        assert utf8fuzz.decode(bytes.fromhex(hexs), "corrected").codepoints() == [cp]
        assert utf8fuzz.encode([cp], "corrected") == bytes.fromhex(hexs)


def test_proposal_examples() -> None:
    # "C0 AF becomes the unique encoding of U+00CF"
    assert utf8fuzz.decode(bytes.fromhex("C0 AF"), "corrected").codepoints() == [0xCF]
    # "the Corrected encoding of the four-codepoint sequence U+10E7D U+ED4E U+0000 U+000A"
    assert utf8fuzz.decode(corrected.MAGIC, "corrected").codepoints() == [
        0x10E7D, 0xED4E, 0x0000, 0x000A]
    # "If interpreted as traditional UTF-8, it instead encodes U+FDDD U+DCAE U+0000 U+000A"
    assert utf8fuzz.decode(corrected.MAGIC, "rfc2279").codepoints() == [
        0xFDDD, 0xDCAE, 0x0000, 0x000A]


@pytest.mark.parametrize(
    ("cp", "words"),
    [(0x80, "C1"), (0x9F, "C1"), (0xD800, "surrogate"), (0xDFFF, "surrogate"),
     (0x842110A0, "8421109F")],
)
def test_encoder_refuses_with_the_code_point_named(cp: int, words: str) -> None:
    with pytest.raises(utf8fuzz.EncodeError) as e:
        utf8fuzz.encode([cp], "corrected")
    assert f"U+{cp:04X}" in str(e.value) and words in str(e.value)


def test_reserved_units_extend_to_the_next_recognized_lead() -> None:
    out = utf8fuzz.decode(bytes.fromhex("FE 80 BF FF 41"), "corrected")
    assert [(t.kind, t.start, t.end) for t in out.tokens] == [
        ("reserved", 0, 4), ("char", 4, 5)]
    # C0..FD are recognized leads too; here C0 then ends the input: truncated
    out = utf8fuzz.decode(bytes.fromhex("FF C0"), "corrected")
    assert [(t.kind, t.reason) for t in out.tokens] == [("reserved", None), ("error", "truncated")]
    assert out.view("reason") == "reserved"


def test_only_errors_are_lone_continuations_and_cut_sequences() -> None:
    out = utf8fuzz.decode(bytes.fromhex("80 E0 80 41 F0"), "corrected")
    assert [(t.kind, t.start, t.end, t.reason) for t in out.tokens] == [
        ("error", 0, 1, "illegal"),
        ("error", 1, 3, "illegal"),
        ("char", 3, 4, None),
        ("error", 4, 5, "truncated"),
    ]


_SEQ = st.one_of(
    st.integers(0, 0x7F).map(lambda b: bytes([b])),
    st.tuples(st.integers(0xC0, 0xFD), st.lists(st.integers(0x80, 0xBF), min_size=5, max_size=5))
    .map(lambda t: bytes([t[0], *t[1][: utf8fuzz.profiles.table.structural_length(t[0]) - 1]])),
)


@given(st.lists(_SEQ, max_size=20).map(b"".join))
def test_bijection_on_well_formed_bytes(data: bytes) -> None:
    out = utf8fuzz.decode(data, "corrected")
    assert out.first_error is None
    assert utf8fuzz.encode(out.codepoints(), "corrected") == data


def test_document_with_magic() -> None:
    doc = corrected.check_document(corrected.MAGIC + b"hi\n")
    assert doc.magic and doc.conforming and not doc.warnings
    assert [t.value for t in doc.outcome.tokens if t.kind == "char"] == [0x68, 0x69, 0x0A]
    assert doc.outcome.tokens[1].start == len(corrected.MAGIC)


def test_document_rules() -> None:
    doc = corrected.check_document(b"a\x00b\r\x01")
    assert not doc.magic
    assert [(f.start, "MUST NOT" in f.message) for f in doc.errors] == [(1, True)]
    msgs = " | ".join(w.message for w in doc.warnings)
    assert "U+000D" in msgs and "U+0001" in msgs and "last character" in msgs


def test_converters() -> None:
    # U+00E9 is C1 89 in Corrected UTF-8 (0xE9 - 160 = 0x49)
    assert corrected.from_utf8("é".encode()) == bytes.fromhex("C1 89")
    assert corrected.to_utf8(bytes.fromhex("C1 89")) == "é".encode()
    with pytest.raises(corrected.ConversionError, match="U\\+0085"):
        corrected.from_utf8("\u0085".encode())
    with pytest.raises(corrected.ConversionError, match="not well-formed UTF-8"):
        corrected.from_utf8(b"\xc0\x80")
    beyond_unicode = utf8fuzz.encode([0x110000], "corrected")  # a 4-byte Corrected form
    with pytest.raises(corrected.ConversionError, match="U\\+110000"):
        corrected.to_utf8(beyond_unicode)
    with pytest.raises(corrected.ConversionError, match="reserved"):
        corrected.to_utf8(b"\xfe")


@given(st.lists(st.one_of(st.integers(0, 0x7F), st.integers(0xA0, 0xD7FF),
                          st.integers(0xE000, 0x10FFFF)), max_size=30))
def test_converters_round_trip(cps: list[int]) -> None:
    u = utf8fuzz.encode(cps, "unicode")
    assert corrected.to_utf8(corrected.from_utf8(u)) == u


def test_the_outcome_bound_is_the_largest_value_of_any_profile() -> None:
    # outcome.MAX_CODE_POINT sits below the profiles' layer, so it is a constant:
    # it must be the largest max_codepoint, or a profile's own values are bad outcomes
    from utf8fuzz.outcome import MAX_CODE_POINT
    from utf8fuzz.profiles import REGISTRY
    assert max(p.max_codepoint for p in REGISTRY.values()) == MAX_CODE_POINT
