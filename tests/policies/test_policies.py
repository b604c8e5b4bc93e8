"""The four policies on inputs where they differ.

Every expectation here is worked out by hand from the definitions in
utf8fuzz.policies (and the traditions they name), not copied from a run:

* maximal-subpart: at each position the longest prefix of a well-formed
  sequence is one error; a byte that begins none is an error alone.
* per-sequence: the lead byte plus the continuation bytes its high bits
  announce (fewer if cut short) is one error; a lone continuation is one.
* per-byte: every ill-formed byte is one error.
* per-run: the per-byte errors, merged while adjacent (Go's strings.ToValidUTF8:
  one replacement per run of invalid bytes); a reserved unit is its own token.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import utf8fuzz
from utf8fuzz import strategies
from utf8fuzz.outcome import Token
from utf8fuzz.policies import decode_tokens
from utf8fuzz.profiles import REGISTRY

Spans = list[tuple[int, int]]

CASES: list[tuple[str, str, Spans, Spans, Spans, Spans]] = [
    # input (unicode profile), why, maximal-subpart, per-sequence, per-byte, per-run
    # (per-run: every case below is one run, since no well-formed byte interrupts it)
    ("E0 80 80", "overlong: E0 never takes 80",
     [(0, 1), (1, 2), (2, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)], [(0, 3)]),
    ("C0 AF", "C0 begins no sequence",
     [(0, 1), (1, 2)], [(0, 2)], [(0, 1), (1, 2)], [(0, 2)]),
    ("F0 90 80 41", "a real prefix cut by A",
     [(0, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)], [(0, 3)]),
    ("ED A0 80", "surrogate: ED takes only 80..9F",
     [(0, 1), (1, 2), (2, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)], [(0, 3)]),
    ("F8 88 80 80 80", "5-byte form: F8 begins nothing in Unicode",
     [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], [(0, 5)],
     [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)], [(0, 5)]),
    ("F0 80 80", "Kuhn 3.3.3: 4-byte sequence with last byte missing",
     [(0, 1), (1, 2), (2, 3)], [(0, 3)], [(0, 1), (1, 2), (2, 3)], [(0, 3)]),
    ("80 BF", "lone continuation bytes: one error each, except per-run (one run)",
     [(0, 1), (1, 2)], [(0, 1), (1, 2)], [(0, 1), (1, 2)], [(0, 2)]),
    ("C2 C2 A9", "a lead cut short by another lead",
     [(0, 1)], [(0, 1)], [(0, 1)], [(0, 1)]),
    ("E1 80", "truncated at the end",
     [(0, 2)], [(0, 2)], [(0, 1), (1, 2)], [(0, 2)]),
]


@pytest.mark.parametrize(("hexs", "why", "maxsub", "perseq", "perbyte", "perrun"), CASES)
def test_policies_cut_errors_differently(
    hexs: str, why: str, maxsub: Spans, perseq: Spans, perbyte: Spans, perrun: Spans
) -> None:
    data = bytes.fromhex(hexs)
    assert utf8fuzz.decode(data, policy="maximal-subpart").error_spans == maxsub, why
    assert utf8fuzz.decode(data, policy="per-sequence").error_spans == perseq, why
    assert utf8fuzz.decode(data, policy="per-byte").error_spans == perbyte, why
    assert utf8fuzz.decode(data, policy="per-run").error_spans == perrun, why


def test_policies_are_the_four_in_order() -> None:
    # Order matters: the C walk takes a policy as its index in POLICIES.
    assert utf8fuzz.POLICIES == ("maximal-subpart", "per-sequence", "per-byte", "per-run")


PER_RUN: list[tuple[str, str, Spans, list[str]]] = [
    # input (unicode profile), why, per-run error spans, their reasons
    ("80 41 80", "an ASCII byte ends a run: two runs",
     [(0, 1), (2, 3)], ["illegal", "illegal"]),
    ("80 E2 82 AC 80", "so does a well-formed multi-byte sequence (U+20AC)",
     [(0, 1), (4, 5)], ["illegal", "illegal"]),
    ("C0 80 C2 A9 FF FE", "C0 80 (overlong NUL), U+00A9, then FF FE: two runs",
     [(0, 2), (4, 6)], ["illegal", "illegal"]),
    ("61 F1 80 80 E1 80 C2 62 80 63 80 BF 64",
     "Unicode's table 3-8 example: F1 80 80 E1 80 C2 is one run; Go's ToValidUTF8 "
     "gives a FFFD b FFFD c FFFD d",
     [(1, 7), (8, 9), (10, 12)], ["illegal", "illegal", "illegal"]),
    ("F0 90 80", "the whole run is a proper prefix of F0 90 80 80: truncated",
     [(0, 3)], ["truncated"]),
    ("41 E1 80", "a run that starts at E1: E1 80 is a prefix cut by the end",
     [(1, 3)], ["truncated"]),
    ("80 E1 80", "per byte E1 would be truncated, but the run starts at 80: illegal",
     [(0, 3)], ["illegal"]),
    ("C0 E1 80", "likewise from C0, which begins nothing",
     [(0, 3)], ["illegal"]),
    ("E0 80", "E0 80 can never be completed: one illegal run",
     [(0, 2)], ["illegal"]),
    ("E1 80 41", "cut by A, not by the end",
     [(0, 2)], ["illegal"]),
    ("EF BF BD", "a well-formed U+FFFD in the input is a character, not an error",
     [], []),
]


@pytest.mark.parametrize(("hexs", "why", "spans", "reasons"), PER_RUN)
def test_per_run(hexs: str, why: str, spans: Spans, reasons: list[str]) -> None:
    out = utf8fuzz.decode(bytes.fromhex(hexs), policy="per-run")
    assert out.error_spans == spans, why
    assert [t.reason for t in out.tokens if t.kind == "error"] == reasons, why


def test_per_run_text_is_one_replacement_per_run() -> None:
    # What strings.ToValidUTF8(s, "\uFFFD") returns for Unicode's example.
    out = utf8fuzz.decode(bytes.fromhex("61 F1 80 80 E1 80 C2 62 80 63 80 BF 64"),
                          policy="per-run")
    assert out.codepoints() == [0x61, 0xFFFD, 0x62, 0xFFFD, 0x63, 0xFFFD, 0x64]


@pytest.mark.parametrize(("hexs", "kinds"), [
    # Corrected UTF-8: FE/FF and the bytes up to the next recognized lead are one
    # reserved unit, decided before any policy; runs stop at it on either side.
    ("80 FE C2 C2 41", [("error", 0, 1), ("reserved", 1, 2), ("error", 2, 4), ("char", 4, 5)]),
    ("C2 FE C2", [("error", 0, 1), ("reserved", 1, 2), ("error", 2, 3)]),
])
def test_per_run_stops_at_reserved_units(hexs: str, kinds: list[tuple[str, int, int]]) -> None:
    out = utf8fuzz.decode(bytes.fromhex(hexs), "corrected", "per-run")
    assert [(t.kind, t.start, t.end) for t in out.tokens] == kinds


def merged_runs(tokens: list[Token]) -> list[tuple[str, int | None, int, int]]:
    """per-byte's tokens with adjacent errors merged: per-run's definition, less
    the reasons (which are read again from each run's start)."""
    out: list[tuple[str, int | None, int, int]] = []
    for t in tokens:
        if t.kind == "error" and out and out[-1][0] == "error" and out[-1][3] == t.start:
            out[-1] = ("error", None, out[-1][2], t.end)
        else:
            out.append((t.kind, t.value, t.start, t.end))
    return out


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", list(REGISTRY))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_per_run_is_per_byte_merged_while_adjacent(name: str, data: st.DataObject) -> None:
    blob = data.draw(st.one_of(strategies.inputs(name), st.binary(max_size=40)))
    profile = REGISTRY[name]
    runs = decode_tokens(blob, profile, "per-run")
    assert [(t.kind, t.value, t.start, t.end) for t in runs] == \
        merged_runs(decode_tokens(blob, profile, "per-byte"))
    for t in runs:
        if t.kind == "error":
            want = "truncated" if profile.is_prefix(blob[t.start:]) else "illegal"
            assert t.reason == want, blob.hex(" ")


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
