"""findings: the report's signatures grouped by (decoder family, explanation),
and the report leading with them (issue 16, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import utf8fuzz
from tests.engine.planted import accepts_c080
from tests.report.builder import (
    HOSTILE_NAME,
    PerByte,
    QuotesInputInCrash,
    cpython_decoders,
    write_corpus,
)
from utf8fuzz import safe
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.signature import SEVERITIES
from utf8fuzz.outcome import Outcome
from utf8fuzz.report import render_all
from utf8fuzz.report.analyze import Report, analyze
from utf8fuzz.report.findings import Finding, headline, modes, title_of
from utf8fuzz.report.load import load_corpus
from utf8fuzz.triage.explain import candidates
from utf8fuzz.triage.group import finding_id

# Two inputs where the per-byte policy cuts differently from maximal subparts, at two
# different features (a truncated 3-byte and a truncated 4-byte sequence): two
# signatures, one cause.
TRUNC3 = b"\xe1\x80"
TRUNC4 = b"\xf0\x90\x41"


class CrashesOnFF(Decoder):
    """One decoder with two bugs: it raises on a byte FF, and otherwise cuts errors
    per byte where it claims maximal subparts."""

    shows = frozenset({"replace"})

    def __init__(self, name: str = "plugin:two-bugs") -> None:
        self.name = name

    def run(self, data: bytes) -> Outcome:
        if b"\xff" in data:
            raise ValueError("FF")
        return Outcome.partial(
            len(data), replace=utf8fuzz.decode(data, "unicode", "per-byte").codepoints())


def _report(root: Path, inputs: list[bytes], decoders: list[Decoder]) -> Report:
    write_corpus(root, inputs=inputs, decoders=decoders, position_dependent=())
    return analyze(load_corpus(root), "2026-03-04")


def _by_family(fs: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in fs:
        out.setdefault(f.family, []).append(f)
    return out


def test_two_signatures_of_one_cause_are_one_finding(tmp_path: Path) -> None:
    rep = _report(tmp_path, [TRUNC3, TRUNC4], [*cpython_decoders(), PerByte()])
    mine = [s for s in rep.sections if "plugin:per-byte" in s.entry.decoders]
    assert len({s.entry.signature for s in mine}) == 2  # two signatures ...
    fs = _by_family(rep.findings)["plugin:per-byte"]
    assert len(fs) == 1  # ... one finding
    f = fs[0]
    assert f.rule == "policy:per-byte" and f.severity == "policy"
    assert f.id == finding_id("plugin:per-byte", "policy:per-byte")
    assert sorted(f.signatures) == sorted(s.entry.sig_id for s in mine)
    assert f.decoders == ["plugin:per-byte"]
    assert not f.known


def test_two_families_are_two_findings(tmp_path: Path) -> None:
    rep = _report(tmp_path, [TRUNC3], [*cpython_decoders(), PerByte("plugin:go"),
                                       PerByte("plugin:rust")])
    # one signature names both decoders: still one finding per family
    fams = _by_family(rep.findings)
    assert len(fams["plugin:go"]) == 1 and len(fams["plugin:rust"]) == 1
    assert fams["plugin:go"][0].id != fams["plugin:rust"][0].id
    assert fams["plugin:go"][0].rule == fams["plugin:rust"][0].rule == "policy:per-byte"


def test_a_crash_and_a_wrong_value_in_one_decoder_are_two_sorted_by_severity(
        tmp_path: Path) -> None:
    rep = _report(tmp_path, [TRUNC3, b"A\xff"], [*cpython_decoders(), CrashesOnFF()])
    fs = _by_family(rep.findings)["plugin:two-bugs"]
    assert [f.severity for f in fs] == ["non-conformance", "policy"]
    assert fs[0].rule.startswith("crash:") and fs[1].rule == "policy:per-byte"
    ranks = [SEVERITIES.index(f.severity) for f in rep.findings]
    assert ranks == sorted(ranks)
    # deterministic: the same sections give the same list
    again = analyze(load_corpus(tmp_path), "2026-03-04")
    assert [f.id for f in again.findings] == [f.id for f in rep.findings]


def test_headline_counts() -> None:
    f = Finding("a" * 16, "x", "r", "t", "policy", ["x:1"])
    assert headline([]) == "0 findings in 0 decoder families, from 0 signatures"
    assert headline([f]) == "1 finding (1 policy) in 1 decoder family, from 0 signatures"


def test_summary_json_has_findings(tmp_path: Path) -> None:
    write_corpus(tmp_path / "corpus", inputs=[TRUNC3, b"A\xff"],
                 decoders=[*cpython_decoders(), CrashesOnFF()], position_dependent=())
    s = json.loads(render_all(tmp_path / "corpus", None, None, "2026-03-04")["summary.json"])
    mine = [f for f in s["findings"] if f["family"] == "plugin:two-bugs"]
    assert len(mine) == 2
    assert {k for f in s["findings"] for k in f} == {
        "id", "title", "family", "decoders", "rule", "explanation", "severity", "pattern",
        "checked", "spec", "signatures", "known", "reasons"}
    assert s["findings_count"] == len(s["findings"])  # none is known here
    ids = {x["id"] for x in s["signatures"]}
    assert all(set(f["signatures"]) <= ids for f in s["findings"])
    assert mine[0]["decoders"] == ["plugin:two-bugs"] and mine[0]["known"] is False


def test_known_findings_are_apart(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_corpus(root, inputs=[TRUNC3], decoders=[*cpython_decoders(), PerByte()],
                 position_dependent=())
    (root / "known.toml").write_text(
        '[[known]]\ndecoder = "plugin:per-byte"\nreason = "it is Go <b>"\n')
    files = render_all(root, None, None, "2026-03-04")
    s = json.loads(files["summary.json"])
    (f,) = [f for f in s["findings"] if f["family"] == "plugin:per-byte"]
    assert f["known"] is True and f["reasons"] == ["it is Go <b>"]
    assert s["findings_count"] == len(s["findings"]) - 1
    page = files["report.html"]
    assert page.index('id="known-findings"') < page.index(f'id="finding-{f["id"]}"')
    assert "it is Go &lt;b&gt;" in page and "it is Go <b>" not in page


def test_html_findings_escape_a_hostile_decoder_name(tmp_path: Path) -> None:
    rep_files = render_all(*_hostile(tmp_path))
    page = rep_files["report.html"]
    start = page.index('<h2 id="findings">')
    listed = page[start:page.index("<h2", start + 1)]
    assert "plugin:\\u202eevil\\x1b[2J&lt;b&gt;&amp;" in listed
    assert "<b>&" not in listed and "\x1b" not in listed and "\u202e" not in listed
    md = rep_files["report.md"]
    head = md[md.index("## Findings"):md.index("## Overview")]
    assert "\x1b" not in head and "\u202e" not in head
    # the evidence summary is Markdown text: no tag survives; the decoders are code spans
    assert "in plugin:\\\\u202eevil\\\\x1b\\[2J&lt;b\\>&amp;\n" in head
    assert "`plugin:\\u202eevil\\x1b[2J<b>&`" in head


def _hostile(tmp_path: Path) -> tuple[Path, None, None, str]:
    from tests.engine.planted import Planted, accepts_c080

    write_corpus(tmp_path / "corpus", inputs=[b"A\xc0\x80B", b"\xff"],
                 decoders=[*cpython_decoders(), QuotesInputInCrash(),
                           Planted(HOSTILE_NAME, accepts_c080)], position_dependent=())
    return tmp_path / "corpus", None, None, "2026-03-04"


def test_findings_come_before_the_signature_list(tmp_path: Path) -> None:
    files = render_all(*_hostile(tmp_path))
    page = files["report.html"]
    f = page.index('<h2 id="findings">')
    assert f < page.index("<h2>Overview</h2>") < page.index("<h2>Signatures</h2>")
    assert page.index("<h1>") < f
    for sig in json.loads(files["summary.json"])["findings"][0]["signatures"]:
        assert f'<a href="#sig-{sig}">' in page and f'id="sig-{sig}"' in page
    md = files["report.md"]
    assert md.index("## Findings") < md.index("## Overview") < md.index("## Signatures")


def test_an_entry_shows_its_finding_and_a_streaming_decoders_chunks(tmp_path: Path) -> None:
    # A streaming plug-in that loses a 4-byte sequence split after its third byte,
    # found by the finder and saved as the fuzz loop saves it: its section names the
    # finding and its pattern, and shows the chunks the decoder was fed. The split is
    # decoders/chunks.py's rule: a chunk led by F2 is 1 + (0xF2 & 3) = 3 bytes.
    from tests.engine.planted_streaming import TRIGGER
    from utf8fuzz.decoders import resolve
    from utf8fuzz.loop.finder import Finder

    decs = resolve("tests.engine.planted_streaming:LosesSplitFourByte+incremental+replace"
                   "+inprocess")
    finder = Finder(decs, tmp_path / "corpus", "test", minimize_seconds=2, tally=False)
    finder.consider(TRIGGER)
    (found,) = finder.found
    assert found.input == bytes.fromhex("F2 90 80 80")
    files = render_all(tmp_path / "corpus", None, None, "2026-03-04")
    md, page = files["report.md"], files["report.html"]
    assert "was fed in chunks: `F2 90 80 \\| 80`" in md  # Markdown escapes |
    assert "was fed in chunks: <code>F2 90 80 | 80</code>" in page
    assert f"finding `{found.finding['id'][:8]}`" in md
    assert found.finding["rule"] == "split:4-byte-sequence"


# -- what a person reads first (issue 25, item 6) ---------------------------------------


@pytest.mark.parametrize(("rule", "pattern", "claim", "want"), [
    # the titles the issue asks for, a maintainer's words
    ("policy:per-byte", "E1 80", ("unicode", "maximal-subpart"),
     "cuts errors per byte where it claims maximal-subpart"),
    ("profile:legacy/maximal-subpart", "C0 [80-BF]", ("unicode", "maximal-subpart"),
     "decodes as the legacy profile (accepts overlong forms)"),
    ("accepts-ill-formed/non-shortest-form", "C0 [80-BF]", ("unicode", "maximal-subpart"),
     "accepts non-shortest forms: C0 [80-BF]"),
    # the committed corpus: mutf8:py raises RuntimeError on a lone 80 (e33ceea1ca2f2d5a)
    ("crash:RuntimeError", "80", ("mutf8", "maximal-subpart"), "crashes (RuntimeError) on 80"),
    # ... and ICU's CESU-8 converter takes encoded surrogates one by one, and a 4-byte
    # sequence (CESU-8 has none) as one error (icu:cesu8, 7602a00065721b55)
    ("profile:surrogatepass/maximal-subpart+4-byte-one-error", "F4",
     ("cesu8", "maximal-subpart"),
     "decodes as the surrogatepass profile (accepts encoded surrogates); a 4-byte sequence "
     "is one error"),
    ("swallows-next-byte:incomplete-4-byte-sequence", "F0 90 41",
     ("unicode", "maximal-subpart"), "loses the byte after incomplete 4-byte sequences"),
    ("accepts:non-shortest-form:2-byte", "C0 [80-BF]", ("unicode", "maximal-subpart"),
     "accepts 2-byte non-shortest forms, as the value their bits spell"),
    ("rejects:noncharacter:3-byte", "EF BF BE", ("unicode", "maximal-subpart"),
     "rejects well-formed 3-byte noncharacters, each as one error"),
    ("renders-errors-as:U+003F", "80", ("unicode", "maximal-subpart"),
     "writes U+003F for each error in its replace text"),
    ("stream:drops-held-bytes", "C3 A9", ("unicode", "maximal-subpart"),
     "fed in chunks, loses the bytes it should hold for the next chunk"),
    ("swallows-next-byte", "80 41", ("unicode", "maximal-subpart"),
     "loses the byte after each error"),
    ("split:4-byte-sequence", "F2 90 80 80", ("unicode", "maximal-subpart"),
     "fed in chunks, differs where a chunk boundary splits a 4 byte sequence"),
    # points of the decoder model (triage/explain.py: Point)
    ("accepts:non-shortest-form", "C1 [80-BF]", ("mutf8", "maximal-subpart"),
     "accepts non-shortest forms of every length, as the value their bits spell"),
    ("profile:latin1", "C3 A9", ("unicode", "maximal-subpart"),
     "decodes every byte as the character of its value (Latin-1): no UTF-8"),
    ("renders-errors-as:U+FFFD-per-byte", "ED A0", ("mutf8", "maximal-subpart"),
     "writes one U+FFFD for each ill-formed byte in its replace text, where its errors are "
     "cut as it claims"),
    ("checked-when-complete+continuations-unchecked", "E0 41 42", ("mutf8", "maximal-subpart"),
     "takes the bytes a lead announces unchecked and checks the sequence once complete"),
    # moves narrower than a spec feature
    ("rejects:00", "00", ("unicode", "maximal-subpart"), "rejects the well-formed sequences 00"),
    ("rejects:noncharacter", "EF BF BE", ("unicode", "maximal-subpart"),
     "rejects well-formed noncharacters of every length, each as one error"),
    ("accepts:80..BF", "80", ("unicode", "maximal-subpart"),
     "accepts the sequences 80..BF, which unicode rejects"),
    ("accepts:above-10ffff:4-byte:as-U+FFFD", "F4 90 80 80", ("unicode", "maximal-subpart"),
     "takes 4-byte values above U+10FFFF as one U+FFFD each, reporting no error"),
    ("end-unchecked:1-byte", "E2", ("unicode", "maximal-subpart"),
     "drops a sequence the end cuts short after 1 byte, without an error"),
    ("profile:unicode|kuhn/checked-when-complete", "F8 88 80 80 80", ("unicode", "maximal-subpart"),
     "accepts what unicode and the kuhn profile accept (5- and 6-byte forms up to U+7FFFFFFF), "
     "checking a sequence only once complete"),
])
def test_a_finding_is_titled_by_its_rule(rule: str, pattern: str, claim: tuple[str, str],
                                         want: str) -> None:
    assert title_of(rule, pattern, *claim) == want


@pytest.mark.parametrize("data", [b"\xe1\x80", b"\xed\xa0\x80", b"\xf0\x90\x41", b"A\xc0\x80B",
                                  b"\xef\xbf\xbd\xf5"])
def test_every_rule_has_a_title_of_its_own(data: bytes) -> None:
    # Every rule the explanation can give (the class/feature fallback aside) is named
    # in words, never shown as its key: a rule added without a title fails here.
    for klass in ("accepts-ill-formed", "incremental-differs"):
        for r in candidates(data, "unicode", "maximal-subpart", klass, "surrogate"):
            rule = r.explanation.rule
            got = title_of(rule, "PATTERN", "unicode", "maximal-subpart")
            if rule == f"{klass}/surrogate":
                assert got.endswith(": PATTERN") and "encoded surrogates" in got
            else:
                assert rule not in got and "PATTERN" not in got, (rule, got)


class C080Mode(Decoder):
    """One codec in three error modes (a plug-in's ``...:strict`` etc.): its strict and
    replace modes take C0 80 for U+0000 (modified UTF-8's habit), its ignore mode
    drops the two bytes as CPython's does."""

    def __init__(self, mode: str) -> None:
        self.name = f"plugin:tests:c080:{mode}"
        self.mode = mode
        self.shows = frozenset({mode})

    def run(self, data: bytes) -> Outcome:
        if self.mode == "ignore":
            return Outcome.partial(len(data), ignore=[ord(c) for c in
                                                      data.decode("utf-8", "ignore")])
        text = accepts_c080(data)
        if self.mode == "replace":
            return Outcome.partial(len(data), replace=[ord(c) for c in text])
        bad = text.find("\ufffd")
        return Outcome.partial(len(data), strict=None if bad < 0 else (bad, bad + 1))


def test_a_finding_is_led_by_its_title_and_smallest_example(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_corpus(root, inputs=[TRUNC4, TRUNC3], decoders=[*cpython_decoders(), PerByte()],
                 position_dependent=())
    files = render_all(root, None, None, "2026-03-04")
    (f,) = [f for f in json.loads(files["summary.json"])["findings"]
            if f["family"] == "plugin:per-byte"]
    assert f["title"] == "cuts errors per byte where it claims maximal-subpart"
    page = files["report.html"]
    assert page.count(f'id="finding-{f["id"]}"') == 1
    block = page[page.index(f'id="finding-{f["id"]}"'):]
    block = block[:block.index("</details>")]
    lead, folded = block.split("<details>")
    assert lead.index("<h3>1. cuts errors per byte where it claims maximal-subpart</h3>") \
        < lead.index("smallest example: <code>E1 80</code> (2 bytes")
    # E1 80: a 3-byte sequence cut short, one maximal subpart (Table 3.1B; D36 (b)): one
    # U+FFFD; cut per byte, two
    assert "the spec (unicode, maximal-subpart), replace view: U+FFFD</li>" in lead
    assert "decoder <code>plugin:per-byte</code>: U+FFFD U+FFFD</li>" in lead
    assert "checked on" in lead and "severity policy" in lead
    # the evidence and the clauses only when unfolded
    assert folded.startswith("<summary>evidence: 2 signatures, in plugin:per-byte</summary>")
    for sig in f["signatures"]:
        assert f'href="#sig-{sig}"' in folded
    assert "D36 (b)" in folded and "D36 (b)" not in lead
    md = files["report.md"]
    head = md[md.index("## Findings"):md.index("## Overview")]
    assert "### 1. cuts errors per byte where it claims maximal-subpart\n\n" \
        "- smallest example: `E1 80` (2 bytes" in head
    assert f"- {safe.md('evidence: 2 signatures, in plugin:per-byte')}\n" in head


def test_the_modes_a_finding_shows_in(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_corpus(root, inputs=[b"A\xc0\x80B"],
                 decoders=[*cpython_decoders(), *map(C080Mode, ("strict", "replace",
                                                                "ignore"))],
                 position_dependent=())
    rep = analyze(load_corpus(root), "2026-03-04")
    (f,) = [f for f in rep.findings if f.family == "plugin:tests:c080"]
    assert f.decoders == ["plugin:tests:c080:replace", "plugin:tests:c080:strict"]
    assert modes(f) == ("in the strict and replace modes; the ignore mode agrees with the "
                        "spec")
