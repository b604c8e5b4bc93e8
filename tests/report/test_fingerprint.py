"""fingerprint: which policy explains each decoder's U+FFFD.

The policies' definitions (utf8fuzz.policies) decide F0 90 41: maximal-subpart
and per-sequence give one U+FFFD for F0 90, per-byte gives two; C0 41 is one
error under all three."""

from __future__ import annotations

from pathlib import Path

from tests.report.builder import QuotesInputInCrash, cpython_decoders, write_corpus
from utf8fuzz.report.fingerprint import fingerprints
from utf8fuzz.report.load import Corpus, load_corpus


def by_name(corpus: Corpus):  # type: ignore[no-untyped-def]
    return {fp.decoder: fp for fp in fingerprints(corpus.entries)}


def test_cpython_replace_is_maximal_subpart(corpus: Corpus) -> None:
    fp = by_name(corpus)["cpython:replace"]
    assert fp.discriminating > 0
    assert fp.explained["maximal-subpart"] == fp.inputs
    assert "maximal-subpart" in fp.policies and "per-byte" not in fp.policies
    assert fp.unexplained == []


def test_a_per_byte_decoder_is_recognized(corpus: Corpus) -> None:
    fp = by_name(corpus)["plugin:per-byte"]
    assert fp.policies == ("per-byte",)
    assert fp.summary() == "per-byte"


def test_inputs_no_policy_explains_are_listed(corpus: Corpus) -> None:
    fp = by_name(corpus)["planted:swallows-after-truncated4"]
    # It swallows the 41 after F0 90: no policy drops an ASCII byte.
    assert b"\xf0\x90\x41" in [d for _, d in fp.unexplained]
    assert fp.summary() == "no single policy explains every input"


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
    assert fp.policies == ("maximal-subpart", "per-sequence", "per-byte")
    assert fp.summary().startswith("undetermined")
