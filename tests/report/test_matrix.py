"""matrix: per pair of decoders, the corpus inputs they disagree on."""

from __future__ import annotations

from utf8fuzz.outcome import Outcome
from utf8fuzz.report.load import Corpus
from utf8fuzz.report.matrix import agreement_matrix, differ


def test_symmetric_and_counts_distinct_inputs(corpus: Corpus) -> None:
    m = agreement_matrix(corpus.entries)
    inputs = {e.data for e in corpus.entries}
    for a in m.decoders:
        for b in m.decoders:
            assert m.cell(a, b) == m.cell(b, a)
            d, c = m.cell(a, b)
            assert 0 <= d <= c <= len(inputs)


def test_pairs(corpus: Corpus) -> None:
    m = agreement_matrix(corpus.entries)
    # CPython's replace and its recording handler agree with the reference everywhere.
    d, c = m.cell("cpython:replace", "ref:unicode:maximal-subpart")
    assert d == 0 and c > 0
    # The planted C0 80 bug disagrees with the reference on its input only.
    with_c080 = {e.data for e in corpus.entries if b"\xc0\x80" in e.data
                 and "planted:accepts-c080" in e.records}
    d, _ = m.cell("planted:accepts-c080", "ref:unicode:maximal-subpart")
    assert d == len(with_c080) >= 1
    # replace and ignore share no view: not comparable.
    assert m.cell("cpython:replace", "cpython:ignore") == (0, 0)


def test_differ_rules() -> None:
    ok = Outcome.partial(2, replace=[0xFFFD, 0xFFFD])
    other = Outcome.partial(2, replace=[0xFFFD])
    crash = Outcome.failure(2, "crash", "x")
    assert differ(ok, ok) is False
    assert differ(ok, other) is True
    assert differ(ok, crash) is True
    assert differ(crash, Outcome.failure(2, "crash", "another message")) is False
    assert differ(crash, Outcome.failure(2, "timeout", "x")) is True
    assert differ(ok, Outcome.partial(2, ignore=[])) is None
