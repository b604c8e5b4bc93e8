"""The three policies on inputs where they differ.

Every expectation here is worked out by hand from the definitions in
utf8fuzz.policies (and the traditions they name), not copied from a run:

* maximal-subpart: at each position the longest prefix of a well-formed
  sequence is one error; a byte that begins none is an error alone.
* per-sequence: the lead byte plus the continuation bytes its high bits
  announce (fewer if cut short) is one error; a lone continuation is one.
* per-byte: every ill-formed byte is one error.
"""

import pytest

import utf8fuzz

Spans = list[tuple[int, int]]

CASES: list[tuple[str, str, Spans, Spans, Spans]] = [
    # input (unicode profile), why, maximal-subpart, per-sequence, per-byte
    ("E0 80 80", "overlong: E0 never takes 80",
     [(0, 1), (1, 2), (2, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)]),
    ("C0 AF", "C0 begins no sequence",
     [(0, 1), (1, 2)], [(0, 2)], [(0, 1), (1, 2)]),
    ("F0 90 80 41", "a real prefix cut by A",
     [(0, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)]),
    ("ED A0 80", "surrogate: ED takes only 80..9F",
     [(0, 1), (1, 2), (2, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)]),
    ("F8 88 80 80 80", "5-byte form: F8 begins nothing in Unicode",
     [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], [(0, 5)],
     [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]),
    ("F0 80 80", "Kuhn 3.3.3: 4-byte sequence with last byte missing",
     [(0, 1), (1, 2), (2, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)]),
    ("80 BF", "lone continuation bytes are one error each under every policy",
     [(0, 1), (1, 2)], [(0, 1), (1, 2)], [(0, 1), (1, 2)]),
    ("C2 C2 A9", "a lead cut short by another lead",
     [(0, 1)], [(0, 1)], [(0, 1)]),
    ("E1 80", "truncated at the end",
     [(0, 2)], [(0, 2)], [(0, 1), (1, 2)]),
]


@pytest.mark.parametrize(("hexs", "why", "maxsub", "perseq", "perbyte"), CASES)
def test_policies_cut_errors_differently(
    hexs: str, why: str, maxsub: Spans, perseq: Spans, perbyte: Spans
) -> None:
    data = bytes.fromhex(hexs)
    assert utf8fuzz.decode(data, policy="maximal-subpart").error_spans == maxsub, why
    assert utf8fuzz.decode(data, policy="per-sequence").error_spans == perseq, why
    assert utf8fuzz.decode(data, policy="per-byte").error_spans == perbyte, why


def test_well_formed_input_is_the_same_under_every_policy() -> None:
    data = "aé€😀".encode()
    outs = {p: utf8fuzz.decode(data, policy=p).tokens for p in utf8fuzz.POLICIES}
    assert len(set(outs.values())) == 1


def test_policies_are_generic_over_profiles() -> None:
    # In rfc2279, F8 88 80 80 80 is U-00200000; the one ill-formed case is the
    # overlong F8 80 80 80 AF: F8 needs 88..BF after it.
    data = bytes.fromhex("F8 80 80 80 AF")
    assert utf8fuzz.decode(data, "rfc2279", "per-sequence").error_spans == [(0, 5)]
    assert len(utf8fuzz.decode(data, "rfc2279", "maximal-subpart").error_spans) == 5
    assert utf8fuzz.decode(data, "legacy").codepoints() == [0x2F]


@pytest.mark.parametrize(
    ("hexs", "reasons"),
    [
        ("E1 80", ["truncated"]),  # could be completed: cut by the end
        ("E0 80", ["illegal", "illegal"]),  # E0 80 can never be completed
        ("ED A0", ["illegal", "illegal"]),  # nor can a surrogate prefix
        ("F4 8F BF", ["truncated"]),
        ("E1 80 41", ["illegal"]),  # cut by A, not by the end
    ],
)
def test_reasons(hexs: str, reasons: list[str]) -> None:
    out = utf8fuzz.decode(bytes.fromhex(hexs))
    assert [t.reason for t in out.tokens if t.kind == "error"] == reasons


def test_per_byte_reason_looks_at_what_follows() -> None:
    # E1 80 at the end, per byte: E1 starts a prefix cut by the end (truncated);
    # 80 alone can start nothing (illegal).
    out = utf8fuzz.decode(bytes.fromhex("E1 80"), policy="per-byte")
    assert [t.reason for t in out.tokens] == ["truncated", "illegal"]
