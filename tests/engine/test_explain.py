"""Explanations (engine/explain.py): each rule on an input derived from its spec,
with a real decoder where one has the behaviour, and findings in a run's summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.engine.planted import planted_c080
from utf8fuzz.decoders import resolve
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.explain import SEVERITIES, explain, family, finding_id
from utf8fuzz.engine.run import fuzz
from utf8fuzz.outcome import Outcome

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
    # C0 80 read as U+0000 is RFC 2279's naive decoder (legacy.py, RFC 2279 section 2)
    x = why(planted_c080(), bytes.fromhex("41 C0 80"))
    assert x.rule == "profile:legacy/maximal-subpart" and x.severity == "non-conformance"


def test_an_ignore_mode_that_substitutes() -> None:
    data = bytes.fromhex("41 FF 42")
    x = explain(data, partial(data, ignore=(0x41, 0xFFFD, 0x42)), "unicode",
                "maximal-subpart", "different-replacement", "fe-ff")
    assert x.rule == "ignore-substitutes"


def test_ill_formed_bytes_passed_through_as_latin1() -> None:
    data = bytes.fromhex("41 FF 42")
    x = explain(data, partial(data, replace=(0x41, 0xFF, 0x42)), "unicode",
                "maximal-subpart", "accepts-ill-formed", "fe-ff")
    assert (x.rule, x.severity) == ("bytes-as-latin1", "non-conformance")


def test_reason_rules() -> None:
    # FF at the end: no byte could complete it in any profile (illegal); E1 80 could
    # be completed (truncated). (E0 80 called truncated is explained sooner: the
    # naive legacy profile calls it that.)
    ff = bytes.fromhex("FF")
    x = explain(ff, partial(ff, strict=(0, 1), reason="truncated"), "unicode",
                "maximal-subpart", "different-reason", "fe-ff")
    assert (x.rule, x.severity) == ("truncated-for-illegal", "reporting")
    e0 = bytes.fromhex("E0 80")
    x = explain(e0, partial(e0, strict=(0, 1), reason="truncated"), "unicode",
                "maximal-subpart", "different-reason", "non-shortest-form")
    assert x.rule == "profile:legacy/per-byte"
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
    r = fuzz([*resolve("pyicu:ignore"), planted_c080()], engine="hypothesis", seconds=1,
             corpus=tmp_path, minimize_seconds=1)
    by_rule = {f["rule"]: f for f in r["findings"]}
    sub = by_rule["ignore-substitutes"]
    assert sub["family"] == "pyicu" and len(sub["signatures"]) >= 3
    assert sub["decoders"] == ["pyicu:ignore"] and sub["known"] is False
    assert by_rule["profile:legacy/maximal-subpart"]["decoders"] == ["planted:accepts-c080"]
    signatures = [s for f in r["findings"] for s in f["signatures"]]
    assert sorted(set(signatures)) == sorted(x["signature"] for x in r["new"])
    json.dumps(r)  # the summary stays one JSON document
