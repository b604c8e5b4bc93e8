"""Explanations (triage/explain.py): each rule on an input derived from its spec,
with a real decoder where one has the behaviour, and findings in a run's summary."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from tests.engine.planted import (
    SURROGATE_AS_ONE_ERROR,
    Crashes,
    planted_block,
    planted_c080,
    planted_truncated4,
)
from utf8fuzz.decoders import resolve
from utf8fuzz.decoders.base import Decoder, Unavailable, family
from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.signature import SEVERITIES
from utf8fuzz.loop.finder import Finder, finding_of, runner
from utf8fuzz.loop.run import fuzz
from utf8fuzz.outcome import Outcome
from utf8fuzz.triage.explain import explain, fresh_inputs
from utf8fuzz.triage.generalize import byte_classes, pattern, render
from utf8fuzz.triage.group import finding_id

SEEDS = Path(__file__).resolve().parents[2] / "corpus" / "seeds"


def why(decoder, data: bytes):  # type: ignore[no-untyped-def]
    """The explanation of ``decoder``'s one divergence on ``data``."""
    (div,) = Differ([decoder]).run(data).divergences
    out = decoder.decode(data)
    return explain(data, out, decoder.profile, decoder.policy, div.signature.klass,
                   div.signature.feature)


def partial(data: bytes, **views):  # type: ignore[no-untyped-def]
    return Outcome.partial(len(data), **views)


def test_a_failure_is_its_own_explanation() -> None:
    x = explain(b"\xfe", Outcome.failure(1, "crash", "SIGSEGV: killed"), "unicode",
                "maximal-subpart", "crash", "SIGSEGV")
    assert (x.rule, x.severity) == ("crash:SIGSEGV", "non-conformance")


def test_another_policy_explains_a_per_byte_cut() -> None:
    # E1 80 41: maximal subparts give one error [0,2), per byte two (policies.py)
    data = bytes.fromhex("E1 80 41")
    x = explain(data, partial(data, spans=((0, 1), (1, 2))), "unicode", "maximal-subpart",
                "different-replacement", "incomplete-3-byte-sequence")
    assert (x.rule, x.severity) == ("policy:per-byte", "policy")


def test_another_profile_explains_a_naive_decoder() -> None:
    # C0 80 read as U+0000 is RFC 2279's naive decoder (legacy.py, RFC 2279 section 2);
    # the smaller move, the claimed table with 2-byte non-shortest forms added, is
    # tried first (unchecked here: the first rule that reproduces the input)
    x = why(planted_c080(), bytes.fromhex("41 C0 80"))
    assert x.rule == "accepts:non-shortest-form:2-byte" and x.severity == "non-conformance"
    # a 5-byte form: no one-feature move; the smaller move is the row of another
    # profile's table that reads it (Kuhn's F8 88..BF ...), before whole profiles
    data = bytes.fromhex("41 F8 88 80 80 80")
    x = explain(data, partial(data, replace=(0x41, 0x200000)), "unicode", "maximal-subpart",
                "accepts-ill-formed", "5-byte-form")
    assert x.rule == "accepts:F8_88..BF_80..BF_80..BF_80..BF"


def test_an_ignore_mode_that_substitutes() -> None:
    data = bytes.fromhex("41 FF 42")
    x = explain(data, partial(data, ignore=(0x41, 0xFFFD, 0x42)), "unicode",
                "maximal-subpart", "different-replacement", "fe-ff")
    assert x.rule == "ignore-substitutes"


def test_ill_formed_bytes_passed_through_as_latin1() -> None:
    # bytes of two classes (FF, 80): one box of a class (accepts:FE..FF) is not all
    data = bytes.fromhex("41 FF 80 42")
    x = explain(data, partial(data, replace=(0x41, 0xFF, 0x80, 0x42)), "unicode",
                "maximal-subpart", "accepts-ill-formed", "fe-ff")
    assert (x.rule, x.severity) == ("bytes-as-latin1", "non-conformance")


def test_reason_rules() -> None:
    # FF at the end: no byte could complete it in any profile (illegal); E1 80 could
    # be completed (truncated). (E0 80 called truncated is explained sooner: a table
    # with the 3-byte non-shortest forms, whose prefix it is, calls it that.)
    ff = bytes.fromhex("FF")
    x = explain(ff, partial(ff, strict=(0, 1), reason="truncated"), "unicode",
                "maximal-subpart", "different-reason", "fe-ff")
    assert (x.rule, x.severity) == ("truncated-for-illegal", "reporting")
    e0 = bytes.fromhex("E0 80")
    x = explain(e0, partial(e0, strict=(0, 1), reason="truncated"), "unicode",
                "maximal-subpart", "different-reason", "non-shortest-form")
    assert x.rule == "accepts:non-shortest-form:3-byte"
    e1 = bytes.fromhex("E1 80")
    x = explain(e1, partial(e1, strict=(0, 2), reason="illegal"), "unicode",
                "maximal-subpart", "different-reason", "truncated-3-byte-at-end")
    assert x.rule == "illegal-for-truncated"


def test_spans_of_the_lead_byte_only() -> None:
    data = bytes.fromhex("41 E1 80 41 E1 80 41")  # two maximal subparts [1,3) and [4,6)
    x = explain(data, partial(data, spans=((1, 2), (4, 5))), "unicode", "maximal-subpart",
                "different-replacement", "incomplete-3-byte-sequence")
    # per-byte would also cut 80 alone: the lead-only rule is the one that fits
    assert x.rule == "spans-lead-byte-only"


def test_otherwise_the_signatures_own_words() -> None:
    data = bytes.fromhex("41")
    x = explain(data, partial(data, replace=(0x42,)), "unicode", "maximal-subpart",
                "different-code-point", "ascii")
    assert (x.rule, x.severity) == ("different-code-point/ascii", "non-conformance")


def test_families_and_ids() -> None:
    assert {family(n) for n in ("iconv:ucs4", "iconv:utf8", "iconv:wchar_t")} == {"iconv"}
    assert family("icu:bundled") == family("icu") == "icu"
    assert family("plugin:m.x:f:replace@unicode/per-byte") == "plugin:m.x:f"
    assert family("exec:client:validate") == family("exec:client:strict@unicode")
    assert finding_id("iconv", "policy:per-byte") == finding_id("iconv", "policy:per-byte")
    assert finding_id("iconv", "a") != finding_id("icu", "a")
    assert list(SEVERITIES) == ["non-conformance", "reporting", "policy"]


def test_a_run_reports_its_signatures_as_findings(tmp_path: Path) -> None:
    # pyicu:ignore substitutes at every kind of error: many signatures, one finding
    pytest.importorskip("icu", reason="PyICU is not installed")
    shutil.copytree(SEEDS, tmp_path / "seeds")  # the seeds reach many features
    r = fuzz([*resolve("pyicu:ignore"), planted_c080()], engine="hypothesis", runs=100,
             seed=1, seconds=120, corpus=tmp_path)
    by_rule = {f["rule"]: f for f in r["findings"]}
    sub = by_rule["ignore-substitutes"]
    assert sub["family"] == "pyicu" and len(sub["signatures"]) >= 3
    assert sub["decoders"] == ["pyicu:ignore"] and sub["known"] is False
    # checked on fresh inputs: the naive legacy decoder (an explanation of C0 80 alone)
    # also decodes C1 80, which the planted decoder rejects; modified UTF-8 has no
    # 4-byte sequences, which it decodes: the rule is modified UTF-8's one row C0 80
    c080 = by_rule["accepts:C0_80"]
    assert c080["decoders"] == ["planted:accepts-c080"] and c080["pattern"] == "C0 80"
    signatures = [s for f in r["findings"] for s in f["signatures"]]
    assert sorted(set(signatures)) == sorted(x["signature"] for x in r["new"])
    json.dumps(r)  # the summary stays one JSON document


def test_a_rule_is_believed_only_after_fresh_inputs() -> None:
    d = planted_c080()
    data = bytes.fromhex("C0 80")
    # on C0 80 alone a table with the 2-byte non-shortest forms does what the planted
    # decoder does ...
    assert why(d, data).rule == "accepts:non-shortest-form:2-byte"
    # ... but not on C1 80 (legacy: U+0040 by RFC 2279's bit layout; the planted
    # decoder: CPython's error), a fresh input: refuted
    one = Differ([d])

    def run(f: bytes):  # type: ignore[no-untyped-def]
        res = one.run(f, full=True)
        return res.outcomes[d.name], frozenset((s.klass, s.feature)
                                               for s in res.signature_set())
    x = explain(data, d.decode(data), "unicode", "maximal-subpart", "accepts-ill-formed",
                "non-shortest-form", run=run)
    # ... and modified UTF-8 (C0 80 is U+0000, as here) is refuted by U+1F600 before
    # it (F0 9F 98 80: modified UTF-8 has no 4-byte sequences; the planted decoder is
    # CPython's): what holds is the claimed table with modified UTF-8's row C0 80 alone
    assert x.rule == "accepts:C0_80" and x.checked > 10
    fresh = {f.hex(" ").upper() for f in fresh_inputs(data, "unicode")}
    assert {"C1 80", "F0 9F 98 80 C0 80"} <= fresh


def test_another_deviation_where_the_rule_does_not_move_is_left_to_it() -> None:
    # The planted decoder accepts C0..C1 80..BF and, in strict mode, ends each error
    # one byte late. Fresh inputs of C0 AF such as C0 AF C2 41 show the late end at
    # C2 while their signature is still the overlong's (the decoder's first error is
    # after the reference's, at C0 AF): judged where the rule and the decoder first
    # differ (C2, where the rule predicts the reference's error, another class and
    # feature), they are the other bug's, not the rule's refutation.
    (d,) = [d for d in load_all("tests.triage.planted.multi:overlong2_and_strict_end"
                                "+codec+inprocess") if d.name.endswith(":strict")]
    data = bytes.fromhex("C0 AF")
    (div,) = Differ([d]).run(data, full=True).divergences
    assert (div.signature.klass, div.signature.feature) == ("accepts-ill-formed",
                                                            "non-shortest-form")
    x = explain(data, d.decode(data), d.profile, d.policy, div.signature.klass,
                div.signature.feature, run=runner(d))
    assert x.rule == "accepts:non-shortest-form:2-byte" and x.checked > 10


@pytest.mark.parametrize("hexed", ["80 C0 AF", "E2 C0 AF", "F5 C0 AF"])
def test_a_late_end_is_one_span_rule_where_a_fresh_input_accepts_its_bytes(
        hexed: str) -> None:
    # The same decoder, the other way round: each error ends a byte late (80 C0 AF:
    # 80's error reported as 80 C0). The fresh input C0 AF (the first byte deleted)
    # is accepted, where the late end's rule has an error at C0 that starts where the
    # reference's does: it moved that error's end alone (a span convention), and
    # whether the error begins at all is the table's axis, the overlong's. Left to
    # it, the late end is one rule at every feature, not one per feature.
    (d,) = [d for d in load_all("tests.triage.planted.multi:overlong2_and_strict_end"
                                "+codec+inprocess") if d.name.endswith(":strict")]
    data = bytes.fromhex(hexed)
    (div,) = Differ([d]).run(data, full=True).divergences
    assert div.signature.klass == "different-error-offset"
    x = explain(data, d.decode(data), d.profile, d.policy, div.signature.klass,
                div.signature.feature, run=runner(d))
    assert x.rule == "swallows-next-byte" and x.checked > 10


@pytest.mark.parametrize("hexed", ["F0 90 41", "F1 80 80 E2 82 AC", "41 F4 8F 80 C3 A9"])
def test_a_lost_byte_after_a_truncated_sequence(hexed: str) -> None:
    # The planted decoder loses the byte after a maximal subpart of a 4-byte sequence
    # (Table 3.1B): whatever that byte begins, one rule, checked on fresh inputs.
    d, data = planted_truncated4(), bytes.fromhex(hexed)
    (div,) = Differ([d]).run(data, full=True).divergences
    f = finding_of(data, div.signature, d.decode(data), d)
    assert f["rule"] == "swallows-next-byte:incomplete-4-byte-sequence" and f["checked"] > 10


def test_byte_classes_are_table_3_1b_columns() -> None:
    # Corrigendum #1, Table 3.1B's second-byte ranges and RFC 2279's lead lengths
    want = ("00-7F 80-8F 90-9F A0-BF C0-C1 C2-DF E0 E1-EC ED EE-EF F0 F1-F3 F4 F5-F7 F8-FB "
            "FC-FD FE-FF")
    got = " ".join(f"{a:02X}" if a == b else f"{a:02X}-{b:02X}"
                   for a, b in byte_classes("unicode"))
    assert got == want


def test_a_pattern_generalizes_an_encoded_surrogate() -> None:
    # Java's habit (one error for ED A0..BF 80..BF): every encoded surrogate, by
    # Table 3.1B ED's second byte A0..BF and any continuation byte after it
    d, data = SURROGATE_AS_ONE_ERROR, bytes.fromhex("ED A0 80")
    (div,) = Differ([d]).run(data, full=True).divergences
    f = finding_of(data, div.signature, d.decode(data), d)
    assert f["pattern"] == "ED [A0-BF] [80-BF]"
    assert render(pattern(b"\x41", lambda b: True, "unicode")) == ".."


def _finding_ids(decoders, inputs):  # type: ignore[no-untyped-def]
    finder = Finder(decoders, None, "test", minimize_seconds=2, tally=False)
    for x in inputs:
        finder.consider(x)
    return {(s.decoders[0], s.finding["id"]) for s in finder.found}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_planted_bug_is_one_finding_whatever_surrounds_it(seed: int) -> None:
    # Each planted bug, in random well-formed text, alone or beside other decoders
    # (a correct one, another planted one): one finding per bug, the same every time.
    rng = random.Random(seed)
    text = ["A", "é", "€", "😀", "ab", "\ufffd"]
    triggers = {"planted:accepts-c080": "C0 80", "planted:swallows-after-truncated4": "F0 90 41",
                "planted:surrogate-as-one-error": "ED A0 80", "planted:crashes-on-fe": "FE"}
    others = [[], [*resolve("cpython:strict")], [planted_block()]]
    seen: dict[str, set[str]] = {}
    for trig in triggers.values():
        inputs = ["".join(rng.choice(text) for _ in range(rng.randint(0, 6))).encode()
                  + bytes.fromhex(trig)
                  + "".join(rng.choice(text) for _ in range(rng.randint(1, 6))).encode()
                  for _ in range(4)]
        for extra in others:
            got = _finding_ids([planted_c080(), planted_truncated4(), SURROGATE_AS_ONE_ERROR,
                                Crashes(), *extra], inputs)
            for name, fid in got:
                seen.setdefault(name, set()).add(fid)
    for name in triggers:
        assert len(seen.get(name, ())) == 1, (name, seen.get(name))
    assert seen == {n: {finding_id(family(n), _RULES[n])} for n in seen}


_RULES = {"planted:accepts-c080": "accepts:C0_80",
          "planted:swallows-after-truncated4": "swallows-next-byte:incomplete-4-byte-sequence",
          "planted:surrogate-as-one-error": "different-error-offset/surrogate",
          "planted:crashes-on-fe": "crash:IndexError",
          "planted:block-boundary": "accepts-ill-formed/non-shortest-form"}


SWALLOWS = "tests.engine.planted:swallows_after_truncated4+text+inprocess"


def test_the_nightly_count_is_findings_not_signatures(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Night 1 finds the planted bug (exit 1); night 2 meets it again through a new
    # signature (another spec feature after the lost byte): saved as more evidence,
    # but no new finding, so exit 0.
    from utf8fuzz.cli import main

    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # tests.* importable
    corpus = tmp_path / "corpus"
    (corpus / "seeds").mkdir(parents=True)
    (corpus / "seeds" / "a").write_bytes(bytes.fromhex("F0 90 41"))

    def night() -> tuple[int, dict]:  # type: ignore[type-arg]
        code = main(["fuzz", "--decoder", SWALLOWS, "--engine", "hypothesis", "--runs",
                     "100", "--seed", "1", "--time", "120", "--jobs", "1", "--corpus",
                     str(corpus), "--no-report", "--json"])
        return code, json.loads(capsys.readouterr().out)

    code, first = night()
    rule = "swallows-next-byte:incomplete-4-byte-sequence"
    assert code == 1 and [f["rule"] for f in first["findings"]] == [rule], first["findings"]
    assert first["new_findings"] == [first["findings"][0]["id"]]
    # night 1 may have met the second night's signature too: keep only the seed's entry
    # (the corpus's evidence of the finding), so that night 2's is new whatever night
    # 1 generated
    for entry in (corpus / "entries").glob("*.json"):
        if "/incomplete-4-byte-sequence/" not in json.loads(entry.read_text())["signature"]:
            entry.unlink()
    (corpus / "seeds" / "b").write_bytes(bytes.fromhex("F0 90 80 C0 80"))
    code, second = night()
    assert "unicode/different-replacement/non-shortest-form/plugin:" in " ".join(
        x["signature"] for x in second["new"])
    assert code == 0 and second["new_findings"] == []
    assert [(f["rule"], f["new"]) for f in second["findings"]] == [(rule, False)]


class MergesRuns(Decoder):
    """Go's strings.ToValidUTF8 (one U+FFFD per run of ill-formed bytes: the per-run
    policy's definition), claiming maximal subparts as a user might."""

    name = "planted:merges-runs"
    shows = frozenset({"replace"})
    _per_run = Reference("unicode", "per-run")

    def run(self, data: bytes) -> Outcome:
        return Outcome.partial(len(data), replace=self._per_run.run(data).view("replace"))


def test_merged_runs_are_never_called_rejects_well_formed() -> None:
    # A literal U+FFFD (EF BF BD) next to a run of bad bytes: the merged run is one
    # U+FFFD and the literal one another; nothing well-formed was rejected.
    rng = random.Random(7)
    parts = [b"\xef\xbf\xbd", b"\x80", b"\xc0", b"\xe0\x80", b"\xf0\x90", b"A", b"\xc3\xa9"]
    d = MergesRuns()
    finder = Finder([d], None, "test", minimize_seconds=2, tally=False)
    for _ in range(400):
        finder.consider(b"".join(rng.choice(parts) for _ in range(rng.randint(1, 8))))
    assert finder.found
    assert all(s.klass != "rejects-well-formed" for s in finder.found)
    assert {s.finding["rule"] for s in finder.found} == {"policy:per-run"}


# E0 F0 BF BF: chunks E0 | F0 | BF BF; the decoder carries E0 across its boundary right
# and loses F0 BF BF at the end: a 4-byte split, not the 3-byte one E0 announces (met by
# a fresh-clone CI run: the boundary first cut was named, not the one the text lost)
@pytest.mark.parametrize("hexed", ["F2 90 80 80", "F2 90 80 FF", "F2 90 80", "E0 F0 BF BF"])
def test_a_streaming_split_is_one_finding_whatever_ends_the_sequence(
        hexed: str, tmp_path: Path) -> None:
    # The planted streaming decoder drops the three bytes of a 4-byte sequence that end
    # a chunk (a chunk led by F2 is 3 bytes, decoders/chunks.py). What comes next is a
    # byte that completes it, one that makes it an error, or the end of the input (the
    # decoder learns of the end only from its last, empty, final call): one finding.
    decs = resolve("tests.engine.planted_streaming:LosesSplitFourByte+incremental+replace"
                   "+inprocess")
    finder = Finder(decs, tmp_path / "corpus", "test", minimize_seconds=2, tally=False)
    finder.consider(bytes.fromhex(hexed))
    (found,) = finder.found
    assert found.finding["rule"] == "split:4-byte-sequence", found.finding


def _real(name: str) -> Decoder:
    (d,) = resolve(name)
    if isinstance(d, Unavailable):
        pytest.skip(f"{name} is not available here: {d.reason}")
    return d


def _finding(d: Decoder, hexed: str) -> str:
    data = bytes.fromhex(hexed)
    (div,) = Differ([d]).run(data, full=True).divergences
    return str(finding_of(data, div.signature, d.decode(data), d)["rule"])


def test_glibc_checks_a_sequence_when_complete() -> None:
    # glibc calls E0 80 and ED A0 at the end incomplete (truncated) where Unicode's
    # table rejects their second byte: it checks a sequence only once it has all the
    # bytes the lead announces. E0 80 alone would fit the naive legacy profile too:
    # the sequence completed (E0 80 80, rejected over its first two bytes) does not.
    # Its UTF-32LE target rejects a value above U+10FFFF the same way: F4 90 80 80, a
    # 5- and a 6-byte form, each an error over all its bytes but the last.
    d = _real("iconv:utf32le")
    for hexed in ("E0 80", "ED A0", "F4 90 80 80", "F8 88 80 80 80", "FC 84 80 80 80 80"):
        assert _finding(d, hexed) == "checked-when-complete", hexed


def test_glibc_31_bit_targets_read_unicode_and_kuhns_ucs() -> None:
    # The UCS-4 and UTF-8 targets keep what glibc's decoder reads: Unicode's table and
    # Kuhn's 31-bit sequences besides (5- and 6-byte forms, values above U+10FFFF; no
    # surrogates), checked when complete: one rule for all of it, the end of the input
    # included. U+FFFF, which Kuhn's table rejects and glibc accepts, before a 5- or
    # 6-byte form is the same rule (a fuzz run met EF BF BF FD AE A1 87 95 80: it was a
    # finding of its own, accepts:6-byte-form:6-byte).
    for name in ("iconv:ucs4", "iconv:utf8"):
        d = _real(name)
        for hexed in ("F4 90", "F8 88 80 80 80", "E0 80", "ED A0", "EF BF BF F8 88 80 80 80",
                      "EF BF BF FD AE A1 87 95 80"):
            assert _finding(d, hexed) == "profile:unicode|kuhn/checked-when-complete", \
                (name, hexed)


def test_one_rule_for_icu_cesu8_and_one_for_java() -> None:
    # ICU's CESU-8 converter reads sequences as UTF-8 with encoded surrogates
    # (surrogatepass) and rejects a complete 4-byte sequence whole: the lone surrogate
    # half it accepts and the 4-byte prefix it cuts as UTF-8 does are one rule; a high
    # and a low surrogate so read are one character, as CESU-8's pair rows have them,
    # so a lone low half (ED BF BF) is that rule too. The JDK reads an encoded
    # surrogate as one sequence and rejects it whole, whether it is complete, cut by
    # the end, or followed by other errors.
    icu = _real("icu:cesu8")
    for hexed in ("ED A0 80", "ED BF BF", "ED BD", "F0 9F", "F4"):
        assert _finding(icu, hexed) == "profile:surrogatepass/maximal-subpart+4-byte-one-error"
    for name, inputs in (("java:string", ("ED A0", "ED B0 E3 E3", "ED BF F8 81")),
                         ("java:charsetdecoder", ("ED A0", "ED A0 80 41"))):
        d = _real(name)
        for hexed in inputs:
            assert _finding(d, hexed) == \
                "profile:surrogatepass/maximal-subpart+surrogate-one-error", (name, hexed)


def test_cpython_surrogatepass_cuts_what_it_rejects_as_unicode() -> None:
    # Its error handler takes only complete encoded surrogates; the bytes it rejects
    # are cut by the UTF-8 decoder underneath, by Unicode's maximal subparts.
    d = _real("cpython:surrogatepass")
    for hexed in ("ED A0", "ED A0 41"):
        assert _finding(d, hexed) == "errors-as:unicode", hexed


def test_one_rule_per_mutf8_loop() -> None:
    # amulet-mutf8's C loop takes continuation bytes unchecked and passes a byte no
    # lead claims through as Latin-1: one rule on every input, whichever half it shows
    # (C2 41 shows only the first, 80 and F4 only the second). Its Python loop takes
    # them unchecked too but raises on a stray byte: the rule without Latin-1.
    c, py = _real("mutf8"), _real("mutf8:py")
    for hexed in ("C2 41", "80", "F4", "ED A0", "EF BF EF 80"):
        assert _finding(c, hexed) == "continuations-unchecked+latin1", hexed
    for hexed in ("C2 41", "ED A0", "EF BF FF"):
        assert _finding(py, hexed) == "continuations-unchecked", hexed


def test_mutf8s_c_loop_rejects_a_00_byte_it_meets_as_a_lead() -> None:
    # The C loop's Latin-1 is its upper half: a 00 byte, which modified UTF-8 has no
    # row for, is an error where no lead took it as a continuation byte (C2 00 is
    # U+0080), after a stray byte or a sequence as after nothing. The same rule and
    # finding as the rest of the loop (fuzz runs met these as 6 findings by class).
    c = _real("mutf8")
    for hexed in ("80 00", "F7 00", "FE 00", "F8 00", "FC 00", "D0 41 00", "41 C2 00 00"):
        assert _finding(c, hexed) == "continuations-unchecked+latin1", hexed


def test_the_summary_counts_the_finding_the_corpus_kept(tmp_path: Path) -> None:
    # Two workers meet one signature: the first reports it with its own minimized
    # input and finding, the second saves a shorter input, whose explanation the
    # corpus keeps. The summary's findings (the nightly count, the exit status) are
    # those of what the corpus holds, not of the first report.
    from utf8fuzz.loop.run import Progress, summary

    d = planted_truncated4()
    finder = Finder([d], tmp_path, "test", minimize_seconds=2, tally=False)
    finder.consider(bytes.fromhex("41 F0 90 41"))
    (kept,) = finder.found
    first = {**kept.to_json(), "input": "41f09041",
             "finding": {**kept.finding, "id": "0" * 16, "rule": "an-older-explanation"}}
    progress = Progress()
    progress.add_new([first])
    r = summary([d], progress, tmp_path, ["test"])
    assert [f["rule"] for f in r["findings"]] == [kept.finding["rule"]]
    assert r["new_findings"] == [kept.finding["id"]]
    assert r["new"][0]["input"] == kept.input.hex()


def test_past_the_budget_rules_that_need_checking_are_passed_over(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A long input makes every prediction walk all of it: past EXPLAIN_BYTES of
    # predictions the rules not yet checked are passed over, and what is left is the rule that
    # predicts nothing (the worker goes back to fuzzing; the entry is still saved).
    import utf8fuzz.triage.explain as explain_mod

    d = planted_truncated4()
    data = bytes.fromhex("F0 90 41")
    (div,) = Differ([d]).run(data, full=True).divergences
    checked = finding_of(data, div.signature, d.decode(data), d)
    assert checked["rule"] == "swallows-next-byte:incomplete-4-byte-sequence"
    monkeypatch.setattr(explain_mod, "EXPLAIN_BYTES", 2)
    over = finding_of(data, div.signature, d.decode(data), d)
    assert (over["rule"], over["checked"]) == (str(div.signature.klass) + "/"
                                               + div.signature.feature, 0)


def test_the_windowed_walk_is_the_reference_decoding() -> None:
    # Rules that resume decoding after each error walk the input a window at a time
    # (explain._walk): the tokens are the reference's own, for every profile and
    # policy, runs of errors longer than a window included.
    from utf8fuzz.policies import POLICIES
    from utf8fuzz.profiles import REGISTRY
    from utf8fuzz.triage.explain import _ref, _walk

    rng = random.Random(7)
    alphabet = bytes.fromhex("41 80 BF C2 E1 ED A0 F0 F4 90 F8 FC FE C0")
    inputs = [bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 900)))
              for _ in range(12)] + [b"\x80" * 1500, b"A" * 700 + b"\xf0\x90" * 300]
    for profile in REGISTRY:
        for policy in POLICIES:
            ref = _ref(profile, policy)
            for d in inputs:
                for i in (0, 1, len(d) // 2):
                    want = [(t.kind, t.value, t.start + i, t.end + i, t.reason)
                            for t in ref.decode(d[i:]).tokens]
                    got = [(t.kind, t.value, t.start, t.end, t.reason)
                           for t in _walk(ref, d, i)]
                    assert got == want, (profile, policy, i, d[:40].hex())


def test_an_input_with_thousands_of_errors_is_explained() -> None:
    # An input the minimizer had no time to shrink: each of its 2,000 truncated
    # sequences loses the byte after it. The rules that rewrite each error walk it
    # once (they recursed once per error, and the explanation died).
    d = planted_truncated4()
    data = bytes.fromhex("F0 90 41") * 2000
    res = Differ([d]).run(data, full=True)
    div = res.divergences[0]
    f = finding_of(data, div.signature, res.outcomes[d.name], d, at=div.offset)
    assert f["rule"] == "swallows-next-byte:incomplete-4-byte-sequence", f


def test_a_profile_move_is_checked_where_the_two_tables_differ() -> None:
    # cesu8_three_bugs passes a LONE LOW surrogate (ED B0..BF xx) and rejects a lone
    # high one. Modified UTF-8 reads both, which the fresh inputs of ED B0 80 never
    # show (B0 is replaced within its class B0..BF); the sequences where CESU-8's and
    # modified UTF-8's tables differ (ED A0 80 among them) refute that move, and the
    # feature's (every surrogate), so the narrower box names the bug
    (d,) = resolve("tests.engine.planted_blame:cesu8_three_bugs@cesu8+text+inprocess")
    data = bytes.fromhex("ED B0 80")
    (div,) = Differ([d]).run(data, full=True).divergences
    s = div.signature
    assert explain(data, d.decode(data), s.profile, d.policy, s.klass, s.feature,
                   run=runner(d), at=div.offset).rule == "accepts:ED_B0..BF_80..BF"
    from utf8fuzz.profiles import REGISTRY
    from utf8fuzz.triage.explain import _differences

    assert _differences(REGISTRY["cesu8"], REGISTRY["mutf8"]) == tuple(
        bytes.fromhex(h) for h in ("00", "C0 80", "ED B0 80", "ED A0 80"))


def test_a_row_cut_to_byte_classes_is_not_tried_before_a_feature_it_is_part_of() -> None:
    # accepts_overlong3 accepts E0 80..9F xx, the non-shortest 3-byte forms; E0 80 80's
    # fresh inputs keep its second byte within its class 80..8F, so a row cut to the
    # classes (E0 80..8F 80..BF) holds there too: the feature's move, the wider, first
    (d, *_) = resolve("tests.triage.planted.single:accepts_overlong3+codec+inprocess")
    data = bytes.fromhex("E0 80 80")
    div = Differ([d]).run(data, full=True).divergences[0]
    s = div.signature
    assert explain(data, d.decode(data), s.profile, d.policy, s.klass, s.feature,
                   run=runner(d), at=div.offset).rule == "accepts:non-shortest-form:3-byte"
