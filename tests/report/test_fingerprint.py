"""fingerprint: which policy explains each decoder's U+FFFD.

The policies' definitions (utf8fuzz.policies) decide F0 90 41: maximal-subpart
and per-sequence give one U+FFFD for F0 90, per-byte gives two; C0 41 is one
error under all three."""

from __future__ import annotations

import json
from pathlib import Path

from tests.report.builder import QuotesInputInCrash, cpython_decoders, write_corpus
from utf8fuzz.policies import POLICIES
from utf8fuzz.report import render_all
from utf8fuzz.report.fingerprint import fingerprints, policy_fingerprints
from utf8fuzz.report.load import Corpus, load_corpus
from utf8fuzz.triage import policy_tally as pt


def by_name(corpus: Corpus):  # type: ignore[no-untyped-def]
    return {fp.decoder: fp for fp in fingerprints(corpus.entries)}


def test_cpython_replace_is_maximal_subpart(corpus: Corpus) -> None:
    fp = by_name(corpus)["cpython:replace"]
    assert fp.discriminating > 0
    assert fp.explained["maximal-subpart"] == fp.discriminating
    assert "maximal-subpart" in fp.policies and "per-byte" not in fp.policies
    assert fp.unexplained == []


def test_a_per_byte_decoder_is_recognized(corpus: Corpus) -> None:
    fp = by_name(corpus)["plugin:per-byte"]
    assert fp.policies == ("per-byte",)
    n = fp.discriminating
    assert n > 0 and fp.summary() == f"per-byte {n}/{n}"


def test_inputs_no_policy_explains_are_listed(corpus: Corpus) -> None:
    fp = by_name(corpus)["planted:swallows-after-truncated4"]
    # It swallows the 41 after F0 90: no policy drops an ASCII byte.
    assert b"\xf0\x90\x41" in [d for _, d in fp.unexplained]
    assert "maximal-subpart" not in fp.policies
    # its text departs from maximal-subpart's at the 41, and no policy drops it
    assert fp.summary() == "maximal-subpart except at ascii (there: no policy, 1 input)"


def test_references_and_views_without_replacement_are_left_out(corpus: Corpus) -> None:
    names = by_name(corpus)
    assert not any(n.startswith("ref:") for n in names)
    assert "cpython:strict" not in names  # shows strict/reason only
    assert "cpython:surrogateescape" not in names
    assert "plugin:quotes-input" not in names  # crashes everywhere in this corpus


def test_undetermined_without_discriminating_inputs(tmp_path: Path) -> None:
    # C0 41: C0 begins no sequence and 41 cannot continue one, so every policy cuts
    # one error. The entry exists because the crashing plug-in diverges on it.
    write_corpus(tmp_path, inputs=[b"\xc0\x41"],
                 decoders=[*cpython_decoders(), QuotesInputInCrash()], position_dependent=())
    fp = by_name(load_corpus(tmp_path))["cpython:replace"]
    assert fp.inputs == 1 and fp.discriminating == 0
    assert fp.policies == POLICIES
    assert fp.summary().startswith("undetermined")


# -- the fuzz runs' tally (corpus/fingerprints.json) ----------------------------------


def _tally(name: str = "java", feature: str = "surrogate") -> pt.Tally:
    """A decoder that cuts maximal subparts but at ``feature``, where it cuts by
    sequence: 40 of 812 discriminating inputs (figures made up, as a run counts)."""
    t = pt.Tally()
    d = t.get((name, "unicode", "maximal-subpart", "spans"))
    others = [p for p in POLICIES if p != "maximal-subpart"]
    d.inputs, d.discriminating = 5000, 812
    d.explained.update({"maximal-subpart": 772, **dict.fromkeys(others, 0)})
    d.fails = {"maximal-subpart": {feature: {"inputs": 40, "there": {
        "maximal-subpart": 0, **dict.fromkeys(others, 0), "per-sequence": 40}}},
        **{p: {"a": {"inputs": 1, "there": {}}, "b": {"inputs": 1, "there": {}},
               "c": {"inputs": 1, "there": {}}, "d": {"inputs": 1, "there": {}}}
           for p in others}}
    return t


def test_the_tally_is_the_source_where_it_has_counts(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    pt.save(tmp_path, _tally("cpython:replace"))
    fps = policy_fingerprints(load_corpus(tmp_path))
    got = {fp.decoder: fp for fp in fps.items}
    assert fps.note is None
    assert got["cpython:replace"].source == "tally"
    assert got["cpython:replace"].summary() == \
        "maximal-subpart except at surrogate (there: per-sequence 40/40)"
    assert got["plugin:per-byte"].source == "corpus"  # not in the tally: the entries


def test_an_unusable_tally_is_named_and_the_entries_used(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    (tmp_path / pt.TALLY_NAME).write_bytes(b'{"format": "utf8fuzz-policy-tally", "version"')
    fps = policy_fingerprints(load_corpus(tmp_path))
    assert fps.note is not None and "not JSON" in fps.note and "\n" not in fps.note
    assert {fp.source for fp in fps.items} == {"corpus"}
    files = render_all(tmp_path, None, None, "2026-01-01")
    assert "fingerprints.json not used" in files["report.md"]
    assert "fingerprints.json not used" in files["report.html"]
    assert "fingerprints.json not used" in json.loads(files["summary.json"])["fingerprints_note"]


def test_hostile_names_in_the_tally_are_escaped(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    name, feature = "<script>alert(7)</script>\x1b[2J\u202e", "<u>\x1b[2J\u202e"
    pt.save(tmp_path, _tally(name, feature))
    files = render_all(tmp_path, None, None, "2026-01-01")
    for text in files.values():
        assert "\x1b" not in text and "\u202e" not in text
    html = files["report.html"]
    assert "<script>alert" not in html and "<u>" not in html
    assert "&lt;script&gt;alert(7)" in html and "&lt;u&gt;" in html
    assert "`<script>alert(7)</script>\\x1b[2J\\u202e`" in files["report.md"]  # a code span
    assert "&lt;u\\>" in files["report.md"]
    summary = json.loads(files["summary.json"])["fingerprints"]
    assert "<script>alert(7)</script>\\x1b[2J\\u202e" in summary
