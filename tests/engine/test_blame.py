"""Blame where the positions are, and one finding per cause (issue 25, items 1 and 2):
planted decoders (tests/engine/planted_blame.py) through the Finder, in process.

Each input list is fixed and small; a test counts findings (family, rule), never
what one input happened to be minimized to first."""

from __future__ import annotations

import random

import pytest

from tests.engine.planted import Planted
from tests.engine.planted_blame import cesu8_three_bugs, per_byte_loses_lead3
from utf8fuzz.decoders import resolve
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.classify import Judge
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import Finder, NewSignature

PLANTED = "tests.engine.planted_blame:"


def _inputs(parts: list[bytes], n: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [b"".join(rng.choice(parts) for _ in range(rng.randint(1, 6))) for _ in range(n)]


def _found(spec: str, inputs: list[bytes]) -> list[NewSignature]:
    finder = Finder(resolve(spec), None, "test", tally=False, full_every=1)
    for x in inputs:
        finder.consider(x)
    return finder.found


def _findings(found: list[NewSignature]) -> dict[str, list[NewSignature]]:
    out: dict[str, list[NewSignature]] = {}
    for s in found:
        out.setdefault(s.finding["id"], []).append(s)
    return out


def test_an_ignore_mode_is_blamed_where_its_siblings_show_the_bytes() -> None:
    # A codec that accepts the 2-byte overlongs C0..C1 80..BF, in all four modes. Its
    # ignore mode shows only text: FE C0 BD gives "=" there, which a guess from the
    # output blamed on FE (fe-ff); its strict, replace and escape siblings show
    # where. One bug: one finding, every mode's evidence blamed on C0/C1.
    parts = [b"A", b"\xc3\xa9", b"\xc0\xbd", b"\xc1\xbf", b"\xfe", b"\x81", b"\xe0",
             b"\xe1\x80", b"\xf0\x90", b"\xed\xa0\x80", b"\xef\xbf\xbd"]
    found = _found(PLANTED + "accepts_overlong2+codec+inprocess", _inputs(parts, 150))
    (only,) = _findings(found).values()
    assert {s.feature for s in only} == {"non-shortest-form"}
    assert {s.decoders[0].rsplit(":", 1)[1] for s in only} == {
        "strict", "replace", "ignore", "surrogateescape"}
    assert all(s.input[0] in (0xC0, 0xC1) for s in only)


def test_the_ignore_view_blames_the_bytes_that_spell_the_extra_value() -> None:
    # No sibling: the ignore mode alone. FE C0 BD: the U+003D it kept is what C0 BD
    # spells, so C0 is blamed, not the FE before it.
    (d,) = [x for x in resolve(PLANTED + "accepts_overlong2+codec+ignore+inprocess")]
    (div,) = Differ([d]).run(bytes.fromhex("FE C0 BD"), full=True).divergences
    assert (div.signature.klass, div.signature.feature, div.offset) == (
        "accepts-ill-formed", "non-shortest-form", 1)


def test_three_bugs_at_one_feature_are_three_findings() -> None:
    # A CESU-8 decoder that (1) writes "0" before the U+FFFD of a sequence the end
    # cuts short, (2) decodes C0 80 to U+0000, (3) passes a lone low surrogate. (1)
    # shows at C0 and ED A0 too, where (2) and (3) are: minimized by signature alone,
    # (2) and (3) became inputs that show only (1).
    parts = [b"A", b"\xc3\xa9", b"\xc0\x80", b"\xed\xa0\x80", b"\xed\xb0\x80",
             b"\xed\xa0\x80\xed\xb0\x80", b"\xc0", b"\xe1\x80", b"\x80", b"\xef\xbf\xbd"]
    found = _found(PLANTED + "cesu8_three_bugs@cesu8+text+inprocess", _inputs(parts, 150))
    findings = _findings(found)
    assert len(findings) == 3, {k: [(s.signature, s.input.hex()) for s in v]
                                for k, v in findings.items()}
    shows = {fid: {cesu8_three_bugs(s.input) for s in v} for fid, v in findings.items()}
    # each finding's evidence shows its own bug, and no other's
    nul = [fid for fid, texts in shows.items() if all("\x00" in t for t in texts)]
    low = [fid for fid, texts in shows.items()
           if all(any(0xDC00 <= ord(c) <= 0xDFFF for c in t) for t in texts)]
    zero = [fid for fid, texts in shows.items() if all("0\ufffd" in t for t in texts)]
    assert len(nul) == len(low) == len(zero) == 1 and len({*nul, *low, *zero}) == 3, shows
    assert findings[zero[0]][0].finding["rule"] == "inserts:before-cut-short-end:U+0030"


def test_a_lone_low_surrogate_passed_is_one_finding_whichever_surrogate_comes_first() -> None:
    # The trio above on another draw (seed 4), whose first surrogate met is a lone
    # low one: explained as modified UTF-8's table (every surrogate read), checked
    # only near ED B0 80, it left ED A0 80 41 ED B0 80 (the lone high one rejected)
    # to a fourth finding; checked where the two tables differ, it is refuted, and
    # the box of lone low surrogates names both
    parts = [b"A", b"\xc3\xa9", b"\xc0\x80", b"\xed\xa0\x80", b"\xed\xb0\x80",
             b"\xed\xa0\x80\xed\xb0\x80", b"\xc0", b"\xe1\x80", b"\x80", b"\xef\xbf\xbd"]
    finder = Finder(resolve(PLANTED + "cesu8_three_bugs@cesu8+text+inprocess"), None, "test",
                    tally=False, full_every=1)
    for x in _inputs(parts, 150, 4):
        finder.consider(x)
    findings = _findings(finder.found)
    assert sorted(v[0].finding["rule"] for v in findings.values()) == [
        "accepts:C0_80", "accepts:ED_B0..BF_80..BF", "inserts:before-cut-short-end:U+0030"
    ], {k: [s.input.hex() for s in v] for k, v in findings.items()}


def test_three_bugs_at_one_feature_are_three_findings_when_most_inputs_are_screened() -> None:
    # The trio above in a differ that decodes one input in 8 in full, as the fuzz
    # loop's does: C0 80 met under the signature of the "0" (1), on screened inputs
    # only, was never asked whether it shows another cause (2 findings); a screened
    # input under a signature asked is run again in full, a bounded count.
    parts = [b"A", b"\xc3\xa9", b"\xc0\x80", b"\xed\xa0\x80", b"\xed\xb0\x80",
             b"\xed\xa0\x80\xed\xb0\x80", b"\xc0", b"\xe1\x80", b"\x80", b"\xef\xbf\xbd"]
    finder = Finder(resolve(PLANTED + "cesu8_three_bugs@cesu8+text+inprocess"), None, "test",
                    tally=False, full_every=8)
    assert finder.differ.full_every == 8 and finder.differ._screens  # it screens
    for x in _inputs(parts, 150):
        finder.consider(x)
    findings = _findings(finder.found)
    assert len(findings) == 3, {k: [s.input.hex() for s in v] for k, v in findings.items()}
    assert "accepts:C0_80" in {v[0].finding["rule"] for v in findings.values()}


def test_an_input_a_recorded_rule_does_not_predict_is_another_cause() -> None:
    # Two bugs at incomplete-4-byte-sequence: (a) errors cut per byte, recorded first
    # (F0 90 41) and explained by policy:per-byte; (b) the 3-byte lead after a cut
    # 4-byte sequence lost (F0 E2 82 AC): met under the same signature, but the
    # recorded rule does not predict its first difference. Kept and explained.
    found = _found(PLANTED + "per_byte_loses_lead3+text+inprocess",
                   [bytes.fromhex("F0 90 41"), bytes.fromhex("41 F0 E2 82 AC 41")])
    rules = {s.finding["rule"] for s in found}
    assert len(_findings(found)) == 2 and "policy:per-byte" in rules, rules
    assert {s.feature for s in found} == {"incomplete-4-byte-sequence"}


def test_a_literal_replacement_character_beside_dropped_bytes_is_not_rejected() -> None:
    # A text decoder that drops stray continuation bytes: beside a genuine EF BF BD,
    # the alignment gives the lost U+FFFDs to the errors that lost them, not the
    # literal one to a merge of them.
    found = _found(PLANTED + "drops_lone_continuations+text+inprocess",
                   [bytes.fromhex("41 EF BF BD 80 80 80 BF"), bytes.fromhex("EF BF BD 80"),
                    bytes.fromhex("80 80 EF BF BD 80 80"),
                    bytes.fromhex("41 E0 80 E0 80 EF BF BD BF BF"),
                    bytes.fromhex("80 BF BF 41 80")])
    # (nor is the A after dropped bytes those bytes accepted: a merge costs an edit
    # for each error merged)
    assert found and {s.klass for s in found} == {"different-replacement"}
    assert {s.feature for s in found} == {"lone-continuation"}


def test_an_extra_output_beside_a_kept_replacement_is_not_acceptance() -> None:
    # C0 at the end: "0" and U+FFFD. C0 got its U+FFFD; the "0" no bytes spell is
    # a different replacement, not C0 accepted as a character.
    ref = Reference("cesu8")
    data = bytes.fromhex("C0")
    judge = Judge(data, ref.walk(data), ref)
    assert judge._replace((0x30, 0xFFFD))[0] == "different-replacement"


def test_another_cause_under_a_saved_signature_is_saved_as_its_own_entry(tmp_path) -> None:
    # The two causes at incomplete-4-byte-sequence above, fuzzed into a corpus: each
    # keeps its own evidence there (the report and the next run read the corpus), the
    # second under the signature's id and its finding's, and both load as entries.
    from utf8fuzz.engine import corpus
    from utf8fuzz.engine.signature import Signature
    from utf8fuzz.triage.group import entry_findings, finding_ids

    finder = Finder(resolve(PLANTED + "per_byte_loses_lead3+text+inprocess"), tmp_path,
                    "test", tally=False, full_every=1)
    for x in (bytes.fromhex("F0 90 41"), bytes.fromhex("41 F0 E2 82 AC 41")):
        finder.consider(x)
    run_ids = {s.finding["id"] for s in finder.found}
    entries, problems = corpus.load(tmp_path)
    assert not problems and len(run_ids) == 2
    assert finding_ids(tmp_path) == run_ids
    assert {f["rule"] for e in entries for f in entry_findings(e)} >= {"policy:per-byte"}
    assert len({e.signature for e in entries}) == 1 and len(entries) == 2
    assert corpus.signature_ids(tmp_path) == {Signature.parse(entries[0].signature).id}


def test_another_cause_under_a_signature_an_earlier_run_saved_is_found(tmp_path) -> None:
    # A nightly job: the first night meets only the per-byte cause; the second night
    # meets the lost lead under the same signature, saved by the first. It is asked
    # against the rule the corpus recorded, and saved as its own entry.
    from utf8fuzz.triage.group import finding_ids

    spec = PLANTED + "per_byte_loses_lead3+text+inprocess"
    first = Finder(resolve(spec), tmp_path, "test", tally=False, full_every=1)
    first.consider(bytes.fromhex("F0 90 41"))
    assert len(finding_ids(tmp_path)) == 1
    second = Finder(resolve(spec), tmp_path, "test", tally=False, full_every=1)
    second.consider(bytes.fromhex("41 F0 E2 82 AC 41"))
    assert len(second.found) == 1 and len(finding_ids(tmp_path)) == 2
    third = Finder(resolve(spec), tmp_path, "test", tally=False, full_every=1)
    third.consider(bytes.fromhex("F0 90 41"))
    third.consider(bytes.fromhex("41 F0 E2 82 AC 41"))
    assert third.found == []  # both causes recorded: nothing new


def test_the_corpus_signatures_asked_for_other_causes_take_turns(tmp_path, monkeypatch) -> None:
    # What a run pays for the corpus's signatures is a count (CAUSE_SIGNATURES of
    # them a run), whatever the corpus's size; the lost lead hiding under one of
    # them is still found, on the turn that asks it. Two signatures recorded by
    # the first night (per-byte cuts at truncated-3-byte-at-end and incomplete-4), one a turn.
    import shutil

    from utf8fuzz.loop import finder as finder_mod

    spec = PLANTED + "per_byte_loses_lead3+text+inprocess"
    night = tmp_path / "night1"
    first = Finder(resolve(spec), night, "test", tally=False, full_every=1)
    for x in ("E2 82", "F0 90 41"):
        first.consider(bytes.fromhex(x))
    assert len({s.signature for s in first.found}) == 2
    monkeypatch.setattr(finder_mod, "CAUSE_SIGNATURES", 1)
    lost = {}
    for turn in range(2):
        corpus = tmp_path / f"turn{turn}"
        shutil.copytree(night, corpus)
        f = Finder(resolve(spec), corpus, "test", tally=False, full_every=1, turn=turn)
        for x in ("E2 82", "F0 90 41", "41 F0 E2 82 AC 41"):
            f.consider(bytes.fromhex(x))
        adopted = [s for s in f._causes if s.id in f._recorded]
        assert len(adopted) <= 1, f._causes  # the turn's share of the corpus's signatures
        lost[turn] = [s.finding["rule"] for s in f.found]
    # one turn of the two asks incomplete-4, under which the lost lead hides
    assert [bool(v) for v in lost.values()] in ([True, False], [False, True]), lost
    assert all(r != "policy:per-byte" for v in lost.values() for r in v), lost


def test_an_entry_saved_unminimized_is_minimized_by_the_next_run(tmp_path) -> None:
    # The first night's time ran out as it met F0 90 41 in a longer input: saved as
    # met (minimizer complete: false). The next night meets the signature (its seeds
    # are the corpus's inputs) and minimizes the entry in place: same finding, a
    # shorter input, the minimizer complete, nothing new found.
    import time

    from utf8fuzz.engine import corpus
    from utf8fuzz.triage.group import finding_ids

    spec = PLANTED + "per_byte_loses_lead3+text+inprocess"
    met = b"AB" * 2 + bytes.fromhex("F0 90 41") + b"CD" * 2
    first = Finder(resolve(spec), tmp_path, "test", tally=False, full_every=1,
                   deadline=time.monotonic())
    first.consider(met)
    (before,), problems = corpus.load(tmp_path)
    assert not problems and before.data == met and corpus.unminimized(before)
    ids = finding_ids(tmp_path)
    second = Finder(resolve(spec), tmp_path, "test", tally=False, full_every=1)
    second.consider(met)
    (after,), problems = corpus.load(tmp_path)
    assert not problems and second.found == []
    assert len(after.data) < len(met) and not corpus.unminimized(after), after.data
    assert finding_ids(tmp_path) == ids and after.path == before.path
    assert after.sidecar["found"]["at"] == before.sidecar["found"]["at"]
    assert after.sidecar["found"]["original_size"] == len(met)
    third = Finder(resolve(spec), tmp_path, "test", tally=False, full_every=1)
    third.consider(met)
    assert corpus.load(tmp_path)[0][0].sidecar == after.sidecar  # nothing left to do


class _Batched(Planted):
    """A text decoder whose every input is decoded in a batch out of the process, as
    an isolated plug-in's (:meth:`.differ.Differ.send_out_of_process`)."""

    out_of_process = True


def test_another_cause_is_asked_of_an_out_of_process_batch() -> None:
    # The two causes at incomplete-4-byte-sequence above, in a decoder the loop sends
    # batches (a user's plug-in in `utf8fuzz fuzz`): a batch's result is not a full
    # run, but it holds the decoder's whole outcome, and the lost lead met under the
    # signature recorded is asked, kept and explained as in process.
    bug = _Batched("planted:batched-loses-lead3", per_byte_loses_lead3)
    finder = Finder([bug], None, "test", tally=False, counted=True)
    assert finder.differ.out_of_process == (bug,)
    for x in (bytes.fromhex("F0 90 41"), bytes.fromhex("41 F0 E2 82 AC 41")):
        finder.consider(x)
    finder.flush()
    rules = {s.finding["rule"] for s in finder.found}
    assert len(_findings(finder.found)) == 2 and "policy:per-byte" in rules, rules
    assert {s.feature for s in finder.found} == {"incomplete-4-byte-sequence"}


@pytest.mark.processes
def test_three_bugs_at_one_feature_are_three_findings_through_the_isolated_worker() -> None:
    # The CESU-8 trio above as a user's plug-in (no +inprocess): loaded in its
    # worker process and sent batches, as `utf8fuzz fuzz` runs it; C0 80 is met only
    # under a signature another cause was recorded at. Counted: the batches are every
    # BULK inputs, whatever the clock.
    from utf8fuzz.decoders.plugin import load_all

    parts = [b"A", b"\xc3\xa9", b"\xc0\x80", b"\xed\xa0\x80", b"\xed\xb0\x80",
             b"\xed\xa0\x80\xed\xb0\x80", b"\xc0", b"\xe1\x80", b"\x80", b"\xef\xbf\xbd"]
    decs = load_all(PLANTED + "cesu8_three_bugs@cesu8+text")
    try:
        finder = Finder(decs, None, "test", tally=False, counted=True)
        assert finder.differ.out_of_process == tuple(decs)
        for x in _inputs(parts, 150):
            finder.consider(x)
        finder.flush()
    finally:
        for d in decs:
            d.close()
    findings = _findings(finder.found)
    assert len(findings) == 3, {k: [s.input.hex() for s in v] for k, v in findings.items()}
    assert "accepts:C0_80" in {v[0].finding["rule"] for v in findings.values()}


def test_a_text_that_cannot_place_its_first_difference_is_no_other_cause() -> None:
    # Surrogates accepted and two U+FFFD an error, in a text-only shape. 80 ED B0 80
    # reads U+FFFD U+FFFD U+DC00, the reference four U+FFFD: the text agrees on two,
    # written by 80 in one and by 80 and ED in the other, and cannot say whether its
    # first difference is the two U+FFFD's (the signature's rule) or the surrogate's.
    # Not evidence of a third cause (explain.unplaced); ED B0 80 (placed: nothing
    # before it) still is the surrogate's.
    spec = "tests.triage.planted:text.surrogates_and_two_fffd+text+inprocess"
    finder = Finder(resolve(spec), None, "test", tally=False, full_every=1)
    for h in ("80", "ED B0 80", "80 ED B0 80", "C3 ED A0 80", "FF ED B0 80"):
        finder.consider(bytes.fromhex(h))
    findings = _findings(finder.found)
    assert len(findings) == 2, {k: [s.input.hex() for s in v] for k, v in findings.items()}
    assert {s.feature for s in finder.found} == {"lone-continuation", "surrogate"}


def test_the_summary_reports_each_cause_under_a_signature(tmp_path) -> None:
    # Two causes, one signature, two corpus entries: the run's progress (what the
    # summary and the progress line read) keeps both, not one a signature.
    from utf8fuzz.loop.run import Progress, summary

    decs = resolve(PLANTED + "per_byte_loses_lead3+text+inprocess")
    finder = Finder(decs, tmp_path, "test", tally=False, full_every=1)
    for x in (bytes.fromhex("F0 90 41"), bytes.fromhex("41 F0 E2 82 AC 41")):
        finder.consider(x)
    assert len({s.signature for s in finder.found}) == 1 and len(finder.found) == 2
    progress = Progress()
    items = [s.to_json() for s in finder.found]
    progress.add_new(items)
    progress.add_new(items)  # another worker's report of the same entries
    assert len(progress.new) == 2
    r = summary(decs, progress, tmp_path, ["test"])
    assert len(r["findings"]) == 2, r["findings"]
    assert (r["corpus_entries"], r["corpus_size"]) == (2, 1)  # entries, signatures
    # an entry of the same finding at the same signature (another input) is more
    # evidence; the finding lists that signature once
    from utf8fuzz.loop.summary import findings_of

    twin = {**items[0], "path": str(tmp_path / "another.json")}
    (f,) = findings_of([items[0], twin])
    assert f["signatures"] == [items[0]["signature"]], f
