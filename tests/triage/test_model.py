"""The explanation model (issue 25, item 3): a decoder described along the specs'
axes (its well-formed set, its cut into errors, its replace view's cut), each
finding one axis moved. In-process, on fixed inputs: the stand-ins of
tests/triage/planted/real.py for three real npm libraries, and hand-made outcomes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.triage.planted.inprocess import findings
from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import finding_of
from utf8fuzz.outcome import REPLACEMENT, Outcome
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.triage.explain import (
    BY_LEAD_ALONE,
    Point,
    Rule,
    _parts,
    accepting_table,
    candidates,
    explain,
    rule_of,
    unchecked_table,
)

R = "tests.triage.planted.real"
ROOT = Path(__file__).resolve().parents[2]


def _rules(spec: str) -> set[str]:
    return {rule for rule, _ in findings(spec).values()}


def test_a_decoder_without_utf8_is_one_point_of_the_model() -> None:
    # every byte its Latin-1 character: one table (each byte a well-formed sequence of
    # one byte), one finding, not one per feature where Latin-1 and UTF-8 differ
    assert _rules(f"{R}:latin1+text") == {"profile:latin1"}


def test_two_deviations_are_two_findings_each_named_by_its_axis() -> None:
    # surrogates accepted (two in a row one character, as a JS string holds them) and
    # errors cut per byte: each input is named by the axis that makes its first
    # difference, never one finding (profile:surrogatepass/per-byte) for the pair
    assert _rules(f"{R}:fastest+text") == {"accepts:surrogate:3-byte", "policy:per-byte"}


def test_a_feature_accepted_at_every_length_is_one_move() -> None:
    # modified UTF-8 without a shortest-form check: C1 9F, E0 80 80 and the prefix
    # E0 80 at the end are one move of the well-formed set (all its lengths), not one
    # finding a length
    assert _rules(f"{R}:mutf8@mutf8+text") == {"accepts:non-shortest-form", "policy:per-byte"}


def test_a_table_with_a_feature_added_keeps_the_profiles_own_rows() -> None:
    t = accepting_table("mutf8", "non-shortest-form", None)
    assert t is not None and t.row_of(b"\xc0\x80") is not None  # U+0000, its own row
    assert t.row_of(b"\xc1\x9f") is not None and t.row_of(b"\xe0\x80\x80") is not None
    assert t.row_of(b"\xf0\x80\x80\x80") is None  # modified UTF-8 has no 4-byte lead


def _partial(data: bytes, **views):  # type: ignore[no-untyped-def]
    return Outcome.partial(len(data), **views)


def test_errors_cut_by_the_leads_count_checked_when_complete() -> None:
    # E0 41 42: the lead announces 3 bytes, taken unchecked; the sequence, complete,
    # is rejected over all its bytes but the last (mutf-8's stream, as the exec client
    # asks it for spans)
    data = bytes.fromhex("E0 41 42")
    x = explain(data, _partial(data, strict=(0, 2), reason="illegal",
                               spans=((0, 2),)), "mutf8", "maximal-subpart",
                "different-error-offset", "incomplete-3-byte-sequence")
    assert x.rule == "checked-when-complete+continuations-unchecked"


def test_a_replace_view_cut_per_byte_under_spans_cut_as_claimed() -> None:
    # ED A0 at the end: one truncated error [0,2), as claimed, but two U+FFFD
    data = bytes.fromhex("ED A0")
    x = explain(data, _partial(data, strict=(0, 2), reason="truncated", spans=((0, 2),),
                               replace=(REPLACEMENT, REPLACEMENT)), "mutf8", "maximal-subpart",
                "different-replacement", "surrogate")
    assert x.rule == "renders-errors-as:U+FFFD-per-byte"


def test_the_rule_of_a_name_is_the_point_that_reproduces_the_input() -> None:
    # accepts:surrogate:3-byte is two points, the second reading a pair as UTF-16:
    # the one given back for the name reproduces what the decoder did
    data = bytes.fromhex("ED A0 80 ED B0 80")
    out = _partial(data, replace=(0x10000,))
    x = explain(data, out, "unicode", "maximal-subpart", "accepts-ill-formed", "surrogate")
    assert x.rule == "accepts:surrogate:3-byte"
    rule = rule_of(data, "unicode", "maximal-subpart", "accepts-ill-formed", "surrogate",
                   x.rule, out)
    assert rule is not None and rule.holds(data, out)


def test_another_causes_input_is_left_to_it_past_its_first_difference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's decoder reads C0 AF as RFC 2279's legacy decoder does, and passes a
    # stray 80 through as a character (another cause). The fresh input 80 C0 AF shows
    # that other cause first: the legacy reading is not refuted by what follows it, so
    # the cause is named (it was the signature's class alone, the legacy cause unseen)
    block = re.search(r"```python\n(# mydecoder\.py.*?)```", (ROOT / "README.md").read_text(),
                      re.S)
    assert block is not None
    (tmp_path / "mydecoder.py").write_text(block.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    (d,) = load_all("mydecoder:decode+inprocess")
    for hexed in ("C0 AF", "ED A0 80"):
        data = bytes.fromhex(hexed)
        (div,) = Differ([d]).run(data, full=True).divergences
        assert finding_of(data, div.signature, d.decode(data), d)["rule"] == \
            "profile:legacy/maximal-subpart", hexed


# -- the old per-library rules as points of the model -------------------------------


def _candidate(data: bytes, profile: str, rule: str) -> Rule:
    return next(r for r in candidates(data, profile, "maximal-subpart", "accepts-ill-formed",
                                      "surrogate") if r.explanation.rule == rule)


def _tokens(rule: Rule, data: bytes) -> list[tuple[object, ...]]:
    assert rule.predict is not None
    return [(t.kind, t.value, t.start, t.end) for t in rule.predict(data)[0].tokens]


def test_a_part_another_table_reads_is_rejected_whole_by_its_byte_classes() -> None:
    # the JDK's reading (an encoded surrogate one sequence, one error), ICU's CESU-8
    # (a 4-byte sequence one error), and values above the claim's top: one axis, the
    # part of another table's sequences read whole and rejected whole
    assert [p.name for p in _parts("unicode", "surrogatepass")] == ["surrogate"]
    assert [p.name for p in _parts("cesu8", "surrogatepass")] == ["surrogate", "4-byte"]
    assert [p.name for p in _parts("unicode", "rfc2279")] == ["surrogate", "beyond-10FFFF"]
    data = bytes.fromhex("ED A0 80 41 ED 9F BF")
    jdk = _candidate(data, "unicode", "profile:surrogatepass/maximal-subpart+surrogate-one-error")
    assert _tokens(jdk, data) == [("error", None, 0, 3), ("char", 0x41, 3, 4),
                                  ("char", 0xD7FF, 4, 7)]
    # the part is Table 3-7's ED A0..BF row, not a value: the legacy profile's
    # non-shortest F0 8D A0 80 (U+D800 by its bits) is read as it reads it
    data = bytes.fromhex("F0 8D A0 80 ED A0 80")
    legacy = _candidate(data, "unicode", "profile:legacy/maximal-subpart+surrogate-one-error")
    assert _tokens(legacy, data) == [("char", 0xD800, 0, 4), ("error", None, 4, 7)]
    # (where the claim has surrogate pairs, a high and a low half read so are one
    # character, as its pair rows have them)
    data = bytes.fromhex("F0 9F 98 80 F0 9F ED A0 80 ED B0 80 ED BF BF")
    icu = _candidate(data, "cesu8", "profile:surrogatepass/maximal-subpart+4-byte-one-error")
    assert _tokens(icu, data) == [("error", None, 0, 4), ("error", None, 4, 6),
                                  ("char", 0x10000, 6, 12), ("char", 0xDFFF, 12, 15)]
    data = bytes.fromhex("F4 90 80 80 F8 88 80 80 80 F4 8F BF BF")
    top = _candidate(data, "unicode", "profile:rfc2279/maximal-subpart+beyond-10FFFF-one-error")
    assert _tokens(top, data) == [("error", None, 0, 4), ("error", None, 4, 9),
                                  ("char", 0x10FFFF, 9, 13)]


def test_a_part_rejected_whole_is_a_policy_difference_only_where_the_set_is_the_claims(
        ) -> None:
    # surrogatepass less its surrogates is Unicode's set: the JDK cuts differently what
    # Unicode rejects. RFC 2279 less its surrogates still has 5- and 6-byte forms and
    # values above U+10FFFF: not the claimed set, so not a policy difference
    data = bytes.fromhex("ED A0 80")
    sp = _candidate(data, "unicode", "profile:surrogatepass/maximal-subpart+surrogate-one-error")
    rfc = _candidate(data, "unicode", "profile:rfc2279/maximal-subpart+surrogate-one-error")
    assert sp.explanation.severity == "policy"
    assert rfc.explanation.severity == "non-conformance"


def test_continuations_unchecked_is_a_table_cut_by_the_leads_count() -> None:
    # amulet-mutf8's loops: every sequence a lead's count takes is its bits' value, a
    # lead the end cuts short an error by itself (the bytes after it read again); the
    # C loop's table also holds every other byte as its Latin-1 character
    t = unchecked_table("mutf8", False)
    row = t.row_of(b"\xe0\x41\x41")
    assert row is not None and row.value(b"\xe0\x41\x41") == 0x41 and t.row_of(b"\x80") is None
    latin1 = unchecked_table("mutf8", True)
    row = latin1.row_of(b"\x80")
    assert row is not None and row.value(b"\x80") == 0x80
    assert latin1.row_of(b"\xf4") is not None and latin1.row_of(b"\x01") is not None
    data = bytes.fromhex("41 C2 41 E0 A0")
    assert [(t.kind, t.value, t.start, t.end) for t in Point(
        latin1, BY_LEAD_ALONE).tokens(data, BY_LEAD_ALONE)] == [
        ("char", 0x41, 0, 1), ("char", 0x81, 1, 3), ("error", None, 3, 4), ("char", 0xA0, 4, 5)]
    c = _candidate(data, "mutf8", "continuations-unchecked+latin1")
    py = _candidate(data, "mutf8", "continuations-unchecked")
    assert _tokens(c, data)[-1] == ("char", 0xA0, 4, 5)
    assert _tokens(py, data)[-1] == ("error", None, 4, 5)


def test_unchecked_halves_pair_only_where_their_bytes_are_a_pair_rows() -> None:
    # the C mutf8 (amulet-mutf8 1.0.3) pairs two 3-byte sequences it takes unchecked
    # by their bytes, as the 6-byte row's ED A0..AF xx ED B0..BF xx: ED A0 41 ED B0 41
    # is U+10401, but ED A3 41 ED F8 41 (U+D8C1 and U+DE01 by their bits) stays two
    paired = bytes.fromhex("ED A0 41 ED B0 41")
    apart = bytes.fromhex("ED A3 41 ED F8 41")
    c = _candidate(paired, "mutf8", "continuations-unchecked+latin1")
    assert _tokens(c, paired) == [("char", 0x10401, 0, 6)]
    c = _candidate(apart, "mutf8", "continuations-unchecked+latin1")
    assert _tokens(c, apart) == [("char", 0xD8C1, 0, 3), ("char", 0xDE01, 3, 6)]


def test_checked_when_complete_is_the_table_cut_by_the_leads_count() -> None:
    # a cut, not a rule of its own: the claimed table's sequences, each checked once the
    # lead has its bytes; modified UTF-8's surrogate pair is two 3-byte sequences read
    # one at a time, one character as the table's pair row has it (not an error)
    data = bytes.fromhex("ED A0 80 ED B0 80 E0 80 80")
    own = _candidate(data, "mutf8", "checked-when-complete")
    assert _tokens(own, data) == [("char", 0x10000, 0, 6), ("error", None, 6, 8),
                                  ("error", None, 8, 9)]


def test_errors_cut_as_another_table_is_an_axis_of_the_point() -> None:
    # CPython's surrogatepass handler: the surrogatepass table's characters, what it
    # rejects cut by Unicode's maximal subparts (ED A0 at the end two errors, not one)
    p = Point(REGISTRY["surrogatepass"], "maximal-subpart", errors_as=REGISTRY["unicode"])
    assert [(t.kind, t.start, t.end) for t in p.tokens(b"\xed\xa0", "maximal-subpart")] == [
        ("error", 0, 1), ("error", 1, 2)]
    assert [(t.kind, t.value) for t in p.tokens(b"\xed\xa0\x80", "maximal-subpart")] == [
        ("char", 0xD800)]
