"""policy_tally: the fuzz loop's counts of which policy each decoder follows,
feature by feature, and their file in the corpus.

Expected cuts come from the policies' definitions (utf8fuzz.policies): ED A0 80
(an encoded surrogate, ill-formed in Unicode's UTF-8) is three errors by maximal
subparts (ED admits only 80..9F next) and by bytes, one by sequence (ED announces
three bytes); F0 90 41 is one error (F0 90) by maximal subparts and by sequence,
two by bytes. Assertions name policies, never all of them: another policy may
join utf8fuzz.policies.POLICIES."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from tests.engine.planted import SURROGATE_AS_ONE_ERROR, planted_c080
from utf8fuzz.cli import main
from utf8fuzz.decoders.cpython import Handler
from utf8fuzz.loop.finder import Finder
from utf8fuzz.loop.run import atheris_available
from utf8fuzz.policies import POLICIES
from utf8fuzz.report import render_all
from utf8fuzz.report.fingerprint import policy_fingerprints
from utf8fuzz.report.load import load_corpus
from utf8fuzz.triage import policy_tally as pt

MS, PS, PB = "maximal-subpart", "per-sequence", "per-byte"
FFFD = 0xFFFD


def _places(v: pt.Verdict | None, policy: str) -> list[tuple[str, frozenset[str]]]:
    assert v is not None
    return [pl for p, places in v.fails if p == policy for pl in places]


def test_a_surrogate_cut_whole_fails_maximal_subpart_there_only() -> None:
    # Java's cut: one error for ED A0 80, then E0 80 by maximal subparts (two)
    data = b"\xed\xa0\x80a\xe0\x80"
    v = pt.judge_outcome(data, "unicode", "spans", [(0, 3), (4, 5), (5, 6)])
    assert v is not None and not v.outside and not v.unexplained
    assert v.feature == "surrogate"  # where the policies' cuts first differ
    assert MS not in v.matched and PS not in v.matched  # neither reproduces it whole
    ((feature, there),) = _places(v, MS)
    assert feature == "surrogate" and PS in there  # there, per-sequence cuts alike
    ((feature, there),) = _places(v, PS)
    assert feature == "non-shortest-form" and MS in there


def test_the_place_a_policy_fails_is_where_its_cut_differs() -> None:
    # ED A0 80 then F0 80 (an overlong prefix: two errors by maximal subparts, one
    # by sequence). The decoder cuts the surrogate whole and F0 80 by maximal
    # subparts: maximal-subpart fails at the surrogate only, per-sequence at F0 80.
    data = b"\xed\xa0\x80\xf0\x80"
    v = pt.judge_outcome(data, "unicode", "spans", [(0, 3), (3, 4), (4, 5)])
    assert [g for g, _ in _places(v, MS)] == ["surrogate"]
    assert [g for g, _ in _places(v, PS)] == ["non-shortest-form"]
    assert PS in _places(v, MS)[0][1] and MS in _places(v, PS)[0][1]


def test_replacement_output_alone_is_judged_whole() -> None:
    data = b"\xf0\x90\x41"
    v = pt.judge_outcome(data, "unicode", "replace", [FFFD, 0x41])
    assert v is not None and {MS, PS} <= v.matched and PB not in v.matched
    assert v.feature == "incomplete-4-byte-sequence" and not v.unexplained
    v = pt.judge_outcome(data, "unicode", "replace", [FFFD, FFFD, 0x41])
    assert v is not None and PB in v.matched and MS not in v.matched
    # the 41 swallowed: no policy drops an ASCII byte
    v = pt.judge_outcome(data, "unicode", "replace", [FFFD])
    assert v is not None and not v.matched and v.unexplained


def test_a_view_unlike_every_policy_where_they_agree_is_outside() -> None:
    # C0 41: every policy cuts C0 alone; a decoder that swallows the 41
    v = pt.judge_outcome(b"\xc0\x41", "unicode", "spans", [(0, 2)])
    assert v is pt.OUTSIDE_ONLY
    v = pt.judge_outcome(b"\xed\xa0\x80a\xc0\x41", "unicode", "spans", [(0, 3), (4, 6)])
    assert v is not None and v.outside and v.unexplained and v.discriminating


def test_inputs_the_policies_agree_on_have_no_verdict() -> None:
    for data in (b"", b"abc", b"\xc0\x41", b"\xe2\x82\xac"):
        ref = [FFFD, 0x41] if data == b"\xc0\x41" else [ord(c) for c in data.decode()]
        assert pt.judge_outcome(data, "unicode", "replace", ref) is None


def _counted(*verdicts: tuple[bytes, list[tuple[int, int]]]) -> pt.Tally:
    t = pt.Tally()
    d = t.get(("dec", "unicode", MS, "spans"))
    for data, spans in verdicts:
        d.add(pt.judge_outcome(data, "unicode", "spans", spans))
    return t


def test_counts_per_feature_and_per_failing_policy() -> None:
    t = _counted((b"\xed\xa0\x80", [(0, 3)]), (b"\xed\xbf\xbf!", [(0, 3)]),
                 (b"\xf0\x90\x41", [(0, 2)]), (b"abc", []))
    d = t.decoders["dec", "unicode", MS, "spans"]
    assert (d.inputs, d.discriminating, d.outside) == (4, 3, 0)
    assert d.explained[MS] == 1 and d.explained[PS] == 3
    assert d.features["surrogate"]["inputs"] == 2
    assert d.features["surrogate"]["explained"][PS] == 2
    assert d.features["surrogate"]["explained"][MS] == 0
    assert list(d.fails[MS]) == ["surrogate"]
    assert d.fails[MS]["surrogate"]["inputs"] == 2
    assert d.fails[MS]["surrogate"]["there"][PS] == 2


def test_merging_adds_counts(tmp_path: Path) -> None:
    one = _counted((b"\xed\xa0\x80", [(0, 3)]), (b"\xf0\x90\x41", [(0, 2)]))
    assert pt.save(tmp_path, one)
    again = _counted((b"\xed\xa0\x80", [(0, 3)]), (b"\xf0\x90\x41", [(0, 2)]))
    assert pt.save(tmp_path, again)
    got = pt.load(tmp_path)
    assert got is not None
    d = got.decoders["dec", "unicode", MS, "spans"]
    assert (d.inputs, d.discriminating) == (4, 4)
    assert d.features["surrogate"]["inputs"] == 2
    assert d.fails[MS]["surrogate"]["inputs"] == 2
    assert d.unexplained == []
    # what is saved is what was merged, and reads back the same
    doc = json.loads(pt.tally_path(tmp_path).read_text())
    assert doc["format"] == pt.FORMAT and len(doc["sections"]) == 1
    assert pt.parse(doc)[0].decoders == got.decoders
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_section_for_other_policies_is_kept(tmp_path: Path) -> None:
    other = pt.Tally(("maximal-subpart", "made-up"))
    other.get(("dec", "unicode", MS, "spans")).inputs = 7
    pt.tally_path(tmp_path).write_text(json.dumps(pt.document([other])))
    assert pt.save(tmp_path, _counted((b"\xed\xa0\x80", [(0, 3)])))
    sections = pt.read(pt.tally_path(tmp_path))
    assert [s.policies for s in sections] == [other.policies, POLICIES]
    assert sections[0].decoders["dec", "unicode", MS, "spans"].inputs == 7


@pytest.mark.parametrize("content", [
    b"not json {", b"\xff\xfe", b"[]", b'{"format": "something-else"}',
    json.dumps({"format": pt.FORMAT, "version": 1, "sections": [
        {"policies": [MS], "decoders": [{"decoder": "x"}]}]}).encode(),
    json.dumps({"format": pt.FORMAT, "version": 1, "sections": [
        {"policies": [MS], "decoders": [{
            "decoder": "x", "profile": "unicode", "claimed_policy": MS, "view": "spans",
            "inputs": -1, "discriminating": 0, "outside": 0, "explained": {},
            "features": {}, "fails": {}, "unexplained": []}]}]}).encode(),
    b"[" * 100_000,
])
def test_a_bad_file_is_one_line_and_moved_aside(tmp_path: Path, content: bytes) -> None:
    path = pt.tally_path(tmp_path)
    path.write_bytes(content)
    with pytest.raises(pt.TallyError) as e:
        pt.load(tmp_path)
    assert "\n" not in str(e.value)
    said = io.StringIO()
    assert pt.save(tmp_path, _counted((b"\xed\xa0\x80", [(0, 3)])), warn=said)
    (line,) = said.getvalue().splitlines()
    assert "unusable" in line and "fingerprints.json.unreadable-1" in line
    assert (tmp_path / "fingerprints.json.unreadable-1").read_bytes() == content  # kept
    got = pt.load(tmp_path)
    assert got is not None and got.decoders["dec", "unicode", MS, "spans"].inputs == 1


def test_a_file_from_a_newer_version_is_left_alone(tmp_path: Path) -> None:
    path = pt.tally_path(tmp_path)
    content = json.dumps({"format": pt.FORMAT, "version": pt.VERSION + 1, "sections": []})
    path.write_text(content)
    said = io.StringIO()
    assert not pt.save(tmp_path, _counted((b"\xed\xa0\x80", [(0, 3)])), warn=said)
    assert len(said.getvalue().splitlines()) == 1 and "newer utf8fuzz" in said.getvalue()
    assert path.read_text() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "fingerprints.json"]


def test_a_directory_or_symlink_in_its_place_is_not_read(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(pt.document([pt.Tally()])))
    pt.tally_path(tmp_path).symlink_to(target)
    with pytest.raises(pt.TallyError, match="symbolic link"):
        pt.load(tmp_path)
    assert pt.save(tmp_path, _counted((b"\xed\xa0\x80", [(0, 3)])), warn=io.StringIO())
    assert target.exists() and not pt.tally_path(tmp_path).is_symlink()


def test_the_finder_counts_inputs_compared_in_full(tmp_path: Path) -> None:
    replace = Handler("replace")
    f = Finder([SURROGATE_AS_ONE_ERROR, replace, planted_c080()], tmp_path, "test",
               full_every=1, minimize_seconds=0.2)
    for data in (b"\xed\xa0\x80", b"\xed\xa0\x80\x80", b"\xf0\x90\x41", b"a\xe0\x80\x80", b"ok"):
        f.consider(data)
    f.save_tally()
    got = pt.load(tmp_path)
    assert got is not None
    java = got.decoders[SURROGATE_AS_ONE_ERROR.name, "unicode", MS, "spans"]
    assert (java.inputs, java.discriminating) == (5, 4)
    assert set(java.fails[MS]) == {"surrogate"}
    assert java.fails[MS]["surrogate"]["there"][PS] == 2
    cp = got.decoders[replace.name, "unicode", MS, "replace"]
    assert cp.explained[MS] == cp.discriminating == 4 and not cp.fails.get(MS)


def test_screened_inputs_are_not_counted(tmp_path: Path) -> None:
    f = Finder([SURROGATE_AS_ONE_ERROR, Handler("replace")], None, "test",
               full_every=4)
    for _ in range(8):
        f.consider(b"\xed\xa0\x80")
    assert f.tally is not None
    counted = f.tally.take().decoders
    assert {t.inputs for t in counted.values()} == {2}
    assert not f.tally.take()  # taken: counted once


def test_a_long_input_is_not_counted() -> None:
    # Judging a decoder's spans costs its places times its spans: a long input full
    # of errors (64 KiB of encoded surrogates, a CESU-8 text) took minutes for one
    # input and held a worker past the run's hard stop. The short ones are counted.
    from utf8fuzz.loop.finder import TALLY_MAX_BYTES

    f = Finder([SURROGATE_AS_ONE_ERROR], None, "test", full_every=1)
    long = b"\xed\xa0\x80" * (TALLY_MAX_BYTES // 3 + 1)
    for data in (long, b"\xed\xa0\x80"):
        f.consider(data)
    assert f.tally is not None and f.tally_skipped == 1
    assert {t.inputs for t in f.tally.take().decoders.values()} == {1}


# Seeds every run compares first (in full, at --full-every 1). Besides the
# surrogates, they make each other policy fail at two features or more: per-sequence
# at E0 80 80 and F4 90 80 80 (one error each, the decoder's three and four), per-byte
# at F0 90 41 and E1 80 41 (two errors, the decoder's one), and a policy that cuts
# whole runs (one error) at E0 80 80 and F4 90 80 80 too. So whatever else a run
# generates, maximal-subpart is the policy failing at the fewest features: one.
SEEDS = {
    "surrogate": b"\xed\xa0\x80", "surrogate-then-more": b"\xed\xbf\xbf\x80A",
    "overlong": b"a\xe0\x80\x80", "above": b"\xf4\x90\x80\x80",
    "truncated4": b"\xf0\x90\x41", "truncated3": b"\xe1\x80\x41",
}
ROOT = Path(__file__).resolve().parents[2]
# maximal subparts everywhere but at the surrogate, which per-sequence cuts whole
JAVA = re.compile(r"^maximal-subpart except at surrogate \(there: per-sequence (\d+)/\1\)$")


@pytest.mark.parametrize("engine,spec", [
    ("hypothesis", "SURROGATE_AS_ONE_ERROR"),  # a plug-in in its worker: judged in bulk
    pytest.param("atheris", "SURROGATE_AS_ONE_ERROR+inprocess", marks=pytest.mark.skipif(
        atheris_available() is not None, reason=str(atheris_available()))),
])
def test_a_fuzz_run_describes_a_decoder_that_departs_at_one_feature(
        engine: str, spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # tests.* importable, by the workers and targets too
    corpus = tmp_path / "corpus"
    (corpus / "seeds").mkdir(parents=True)
    for name, data in SEEDS.items():
        (corpus / "seeds" / name).write_bytes(data)
    main(["fuzz", "--decoder", f"tests.engine.planted:{spec}", "--engine", engine,
          "--runs", "300", "--seed", "1", "--time", "120", "--jobs", "1", "--corpus",
          str(corpus), "--full-every", "1", "--no-report", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert not out["failures"], out["failures"]
    fps = policy_fingerprints(load_corpus(corpus))
    assert fps.note is None
    (fp,) = [x for x in fps.items if x.decoder == SURROGATE_AS_ONE_ERROR.name]
    assert fp.source == "tally" and fp.inputs >= len(SEEDS)
    assert JAVA.match(fp.summary()), fp.summary()
    # and the report shows it: Markdown, HTML, summary.json
    files = render_all(corpus, None, None, "2026-01-01")
    assert fp.summary() in files["report.md"] and fp.summary() in files["report.html"]
    summary = json.loads(files["summary.json"])["fingerprints"][fp.decoder]
    assert summary["source"] == "tally" and JAVA.match(summary["summary"])
    assert list(summary["fails"][MS]) == ["surrogate"]
