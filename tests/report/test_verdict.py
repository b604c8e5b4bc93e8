"""verdict: the clause that decides a byte, and who follows their profile.

Expected clauses are read off the specs: Table 3.1B's rows and narrowed second
bytes (Corrigendum #1), RFC 2279 section 2 NOTE / section 6 on C0 80, Kuhn's
shortest-form and surrogate/FFFE rules, Corrected UTF-8's table and reserved FE/FF.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.builder import cpython_decoders, write_corpus
from tests.report.conftest import entry_for
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome
from utf8fuzz.report.load import Corpus, load_corpus
from utf8fuzz.report.verdict import judge, judge_entry
from utf8fuzz.triage.clauses import clause_at


@pytest.mark.parametrize(
    ("hexin", "profile", "ref_has", "why_has"),
    [
        # Table 3.1B has no row beginning with C0 or C1.
        ("c080", "unicode", ["Table 3.1B", "C0 and C1"], ["no row", "C0"]),
        # E0 needs A0..BF: E0 80 80 is a non-shortest form of U+0000.
        ("e08080", "unicode", ["Table 3.1B", "C12"],
         ["E0 A0..BF 80..BF", "A0..BF at byte 2", "80", "U+0000", "non-shortest"]),
        # ED needs 80..9F: ED A0 80 would be U+D800.
        ("eda080", "unicode", ["ED 80..9F", "C.3"], ["80..9F at byte 2", "U+D800"]),
        # F4 needs 80..8F: F4 90 80 80 would be U+110000.
        ("f4908080", "unicode", ["F4 80..8F", "D36"], ["80..8F", "U+110000"]),
        ("f5", "unicode", ["F5..FF"], ["no row", "F5"]),
        ("80", "unicode", ["continuation"], ["no row", "80"]),
        ("e180", "unicode", ["D36 (b)"], ["E1 80", "truncated"]),
        ("41", "unicode", ["row U+0000..U+007F"], ["U+0041"]),
        ("efbfbf", "unicode", ["row U+1000..U+FFFF"], ["U+FFFF"]),
        # Cut short by a byte that is not a continuation byte: incomplete, whatever
        # the row's narrowed range (D36 (b)), not "non-shortest".
        ("e0c0", "unicode", ["D36 (b)"], ["C0 is not a continuation byte", "incomplete"]),
        ("efbf41", "kuhn", ["RFC 2279 section 2"], ["41 is not a continuation byte"]),
        # Cut short after the narrowed byte: every completion has the same fault.
        ("f49041", "unicode", ["F4 80..8F"], ["beginning F4 90", "U+110000..U+110FFF"]),
        ("f08041", "unicode", ["C12"], ["beginning F0 80", "U+0000..U+0FFF", "non-shortest"]),
        ("eda041", "unicode", ["C.3"], ["U+D800..U+D83F", "surrogates"]),
        # RFC 2279 section 2 NOTE and section 6: C0 80 is invalid.
        ("c080", "rfc2279", ["RFC 2279", "section 6"], ["C0"]),
        ("e08080", "rfc2279", ["RFC 2279", "section 6"], ["non-shortest"]),
        ("f888808080", "rfc2279", ["RFC 2279 section 2"], ["U+200000"]),
        # Kuhn: U+FFFE/FFFF and surrogates treated as malformed; overlongs refused.
        ("efbfbe", "kuhn", ["Kuhn", "U+FFFE"], ["U+FFFE"]),
        ("eda080", "kuhn", ["Kuhn", "U+D800..U+DFFF"], ["U+D800"]),
        ("c1bf", "kuhn", ["Kuhn", "overlong"], ["C1"]),
        # Corrected UTF-8: C0 80 is a character (offset 160); FE is reserved.
        ("c080", "corrected", ["Corrected UTF-8", "offset 160"], ["U+00A0"]),
        ("fe41", "corrected", ["reserved"], ["reserved", "FE"]),
        ("80", "corrected", ["Corrected UTF-8", "continuation"], ["80"]),
        # legacy (the naive decoder) takes C0 80 as U+0000.
        ("c080", "legacy", ["no shortest-form check"], ["U+0000"]),
    ],
)
def test_clause_at(hexin: str, profile: str, ref_has: list[str], why_has: list[str]) -> None:
    c = clause_at(bytes.fromhex(hexin), profile, "maximal-subpart", 0)
    for s in ref_has:
        assert s in c.ref, (s, c)
    for s in why_has:
        assert s in c.explanation, (s, c)


def test_clause_past_the_end() -> None:
    c = clause_at(b"A", "unicode", "maximal-subpart", 1)
    assert "ends at byte 1" in c.explanation


def test_verdicts_on_a_planted_non_shortest_form(corpus: Corpus) -> None:
    e = entry_for(corpus, "accepts-ill-formed/non-shortest-form/planted:accepts-c080")
    ev = judge_entry(e)
    by = {v.decoder: v for v in ev.verdicts}
    bad = by["planted:accepts-c080"]
    assert not bad.follows and bad.view == "replace" and bad.offset == e.data.index(b"\xc0")
    assert "U+0000" in bad.detail and "U+FFFD" in bad.detail
    assert bad.sentence().startswith("does not follow unicode (maximal-subpart)")
    # CPython's codec, in every mode the corpus recorded, follows Table 3.1B here.
    for name in ("cpython:replace", "cpython:strict", "cpython:ignore", "cpython:spans"):
        assert by[name].follows, by[name]
    assert by[e.reference].follows
    assert "C0 and C1" in ev.clause.ref
    assert ev.offset == e.data.index(b"\xc0")


def test_verdict_on_a_crash_quotes_it_safely(corpus: Corpus) -> None:
    e = entry_for(corpus, "unicode/crash/")
    v, _ = judge(e.records["plugin:quotes-input"], e.data)
    assert not v.follows and v.view == "crash"
    assert all(0x20 <= ord(c) < 0x7F for c in v.sentence())
    # The clause of a crash is the first ill-formed token's, not byte 0's.
    ev = judge_entry(e)
    assert "well-formed" not in ev.clause.explanation


def test_verdict_names_the_first_difference_of_a_policy(corpus: Corpus) -> None:
    e = entry_for(corpus, "incomplete-4-byte-sequence/planted:swallows")
    by = {v.decoder: v for v in judge_entry(e).verdicts}
    pb = by["plugin:per-byte"]
    # F0 90 is one maximal subpart: the per-byte decoder's second U+FFFD (for 90)
    # is where it leaves maximal-subpart.
    assert not pb.follows and pb.view == "replace"
    assert "U+FFFD" in pb.detail


class SubstitutesInIgnore(Decoder):
    """PyICU's "ignore" mode as the committed corpus recorded it: one U+FFFD per
    error where the errors are to be dropped (its ignore view is CPython's replace
    output)."""

    shows = frozenset({"ignore"})
    name = "plugin:substitutes"

    def run(self, data: bytes) -> Outcome:
        text = data.decode("utf-8", "replace")
        return Outcome.partial(len(data), ignore=[ord(c) for c in text])


def test_a_substituted_error_is_blamed_on_the_error(tmp_path: Path) -> None:
    # F6 begins no row of Table 3.1B: one error [0,1), which the ignore view drops.
    # The decoder's U+FFFD stands for that error, so the first difference is at byte
    # 0 (the comparator is the engine's: classify.Judge), not past the end of the
    # input where the reference's output ends (the report's old copy said byte 1).
    write_corpus(tmp_path, inputs=[b"\xf6"], decoders=[*cpython_decoders(),
                                                       SubstitutesInIgnore()],
                 position_dependent=())
    e = entry_for(load_corpus(tmp_path), "plugin:substitutes")
    v = {v.decoder: v for v in judge_entry(e).verdicts}["plugin:substitutes"]
    assert (v.follows, v.view, v.offset) == (False, "ignore", 0)
    assert v.klass == "different-replacement"
    assert "U+FFFD" in v.detail
    assert "at byte 0 (different replacement)" in v.sentence()
