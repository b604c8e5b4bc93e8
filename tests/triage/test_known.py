"""Known differences (``CORPUS/known.toml``, :mod:`utf8fuzz.triage.known`): matchers
a team writes, read as untrusted data; signatures they accept are saved by
``utf8fuzz fuzz`` but not counted as new, and the report shows them apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine import handmade
from utf8fuzz.cli import main
from utf8fuzz.engine.signature import Signature
from utf8fuzz.errors import UsageError
from utf8fuzz.loop.run import Progress
from utf8fuzz.report import render_all
from utf8fuzz.triage.known import MAX_KNOWN_BYTES, Known, KnownError, Rule, load

ESC = "\x1b[31m"
BIDI = "\u202e"
#: ESC and a bidi override as TOML escapes (TOML refuses a raw control character)
HOSTILE_TOML = "\\u001b[31m\\u202e"


def write(corpus: Path, text: str) -> Path:
    corpus.mkdir(parents=True, exist_ok=True)
    path = corpus / "known.toml"
    path.write_text(text, encoding="utf-8")
    return path


# -- load and match ------------------------------------------------------------------


def test_no_file_is_nothing_known(tmp_path: Path) -> None:
    k = load(tmp_path)
    assert k == Known()
    assert k.match("unicode/different-replacement/surrogate/pyicu:ignore") is None


def test_an_entry_with_only_decoder_and_reason_matches_every_class_and_feature(
        tmp_path: Path) -> None:
    write(tmp_path, '[[known]]\ndecoder = "pyicu:ignore"\nreason = "upstream"\n')
    k = load(tmp_path)
    assert k.rules == (Rule(decoder="pyicu:ignore", reason="upstream"),)
    assert k.match("unicode/different-replacement/surrogate/pyicu:ignore") == "upstream"
    assert k.match("cesu8/crash/IndexError/pyicu:ignore") == "upstream"
    assert k.match("unicode/different-replacement/surrogate/pyicu:replace") is None


def test_globs_on_decoder_class_feature_and_profile(tmp_path: Path) -> None:
    write(tmp_path, """
[[known]]
decoder = "iconv:*"
class = "accepts-ill-formed"
feature = "[56]-byte-form"
profile = "uni*"
reason = "31-bit"
""")
    k = load(tmp_path)
    assert k.match("unicode/accepts-ill-formed/5-byte-form/iconv:ucs4") == "31-bit"
    assert k.match("unicode/accepts-ill-formed/6-byte-form/iconv:ucs4") == "31-bit"
    assert k.match("unicode/accepts-ill-formed/above-10ffff/iconv:ucs4") is None  # feature
    assert k.match("unicode/different-reason/5-byte-form/iconv:ucs4") is None  # class
    assert k.match("rfc2279/accepts-ill-formed/5-byte-form/iconv:ucs4") is None  # profile
    assert k.match("unicode/accepts-ill-formed/5-byte-form/icu") is None  # decoder
    # case-sensitive on every platform
    assert k.match("unicode/accepts-ill-formed/5-byte-form/ICONV:ucs4") is None


def test_a_rule_accepts_a_cause_at_every_feature_and_nothing_else(tmp_path: Path) -> None:
    # The JDK's encoded-surrogate habit shows at many features (whatever follows the
    # surrogate); one entry on its finding's rule accepts them all, and another
    # finding of the same decoder (a crash, say) stays news.
    write(tmp_path, """
[[known]]
decoder = "java:*"
rule = "profile:surrogatepass/*+surrogate-one-error"
reason = "JDK"
""")
    k = load(tmp_path)
    habit = "profile:surrogatepass/maximal-subpart+surrogate-one-error"
    for sig in ("unicode/different-replacement/surrogate/java:string",
                "unicode/different-replacement/5-byte-form/java:string",
                "unicode/different-error-offset/surrogate/java:charsetdecoder"):
        assert k.match(sig, habit) == "JDK", sig
    assert k.match("unicode/crash/SIGSEGV/java:string", "crash:SIGSEGV") is None
    # an entry with a rule never matches a signature whose finding is not given
    assert k.match("unicode/different-replacement/surrogate/java:string") is None


def test_a_signature_is_known_only_when_each_of_its_decoders_is(tmp_path: Path) -> None:
    write(tmp_path, """
[[known]]
decoder = "iconv:ucs4"
feature = "above-10ffff"
reason = "31-bit UCS-4"

[[known]]
decoder = "iconv:wchar_t"
reason = "wchar_t is UCS-4 too"
""")
    k = load(tmp_path)
    both = "unicode/accepts-ill-formed/above-10ffff/iconv:ucs4+iconv:wchar_t"
    assert k.match(both) == "31-bit UCS-4; wchar_t is UCS-4 too"
    # a third decoder no entry accepts: its divergence is news, so the whole counts
    assert k.match("unicode/accepts-ill-formed/above-10ffff/iconv:ucs4+iconv:utf8"
                   "+iconv:wchar_t") is None
    # the ucs4 entry does not cover this feature, so ucs4 is not accepted here
    assert k.match("unicode/accepts-ill-formed/surrogate/iconv:ucs4+iconv:wchar_t") is None
    # one reason, once, when one entry covers every decoder
    write(tmp_path, '[[known]]\ndecoder = "iconv:*"\nreason = "glibc"\n')
    assert load(tmp_path).match(both) == "glibc"


def test_match_takes_a_signature_or_its_text_and_never_knows_non_signatures(
        tmp_path: Path) -> None:
    write(tmp_path, '[[known]]\ndecoder = "*"\nreason = "all"\n')
    k = load(tmp_path)
    sig = Signature("unicode", "crash", "IndexError", ("w",))
    assert k.match(sig) == k.match(str(sig)) == "all"
    assert k.match("not a signature") is None
    assert k.match("unicode/no-such-class/x/w") is None


BAD_FILES: list[tuple[str, str, str]] = [
    ("not-toml", "[[known]\ndecoder = 'x'", "is not TOML"),
    ("not-utf8", "", "is not UTF-8"),  # bytes written below
    ("decoder-not-string", '[[known]]\ndecoder = 3\nreason = "r"\n',
     "'decoder' must be a string, not int"),
    ("reason-not-string", '[[known]]\ndecoder = "x"\nreason = ["r"]\n',
     "'reason' must be a string, not list"),
    ("class-not-string", '[[known]]\ndecoder = "x"\nreason = "r"\nclass = true\n',
     "'class' must be a string, not bool"),
    ("missing-reason", '[[known]]\ndecoder = "x"\n', "[[known]] number 1: missing 'reason'"),
    ("missing-decoder", '[[known]]\nreason = "r"\n', "[[known]] number 1: missing 'decoder'"),
    ("empty-reason", '[[known]]\ndecoder = "x"\nreason = " "\n', "'reason' is empty"),
    ("unknown-entry-key", '[[known]]\ndecoder = "x"\nreason = "r"\nsignature = "s"\n',
     "unknown key 'signature'"),
    ("unknown-table", '[known2]\ndecoder = "x"\n', "unknown key 'known2'"),
    ("known-not-array", 'known = "x"\n', "'known' must be an array of tables"),
    ("entry-not-table", 'known = ["x"]\n', "[[known]] number 1 is not a table"),
    ("second-entry-bad", '[[known]]\ndecoder = "x"\nreason = "r"\n[[known]]\ndecoder = "y"\n',
     "[[known]] number 2: missing 'reason'"),
]


def make_bad(corpus: Path, kind: str, text: str) -> Path:
    """``corpus/known.toml`` of the kind named (the table above, or a file-level kind)."""
    corpus.mkdir(parents=True, exist_ok=True)
    path = corpus / "known.toml"
    if kind == "not-utf8":
        path.write_bytes(b'[[known]]\ndecoder = "\xff"\nreason = "r"\n')
    elif kind == "too-large":
        # valid TOML, so only the size can refuse it
        path.write_text("#" * MAX_KNOWN_BYTES + "\n", encoding="utf-8")
    elif kind == "symlink":
        target = corpus.parent / "elsewhere.toml"
        target.write_text('[[known]]\ndecoder = "*"\nreason = "r"\n', encoding="utf-8")
        path.symlink_to(target)
    elif kind == "directory":
        path.mkdir()
    elif kind == "hostile-key":
        path.write_text(f'[[known]]\ndecoder = "x"\nreason = "r"\n"{HOSTILE_TOML}" = "v"\n',
                        encoding="utf-8")
    else:
        path.write_text(text, encoding="utf-8")
    return path


ALL_BAD = [(k, t, m) for k, t, m in BAD_FILES] + [
    ("too-large", "", f"larger than {MAX_KNOWN_BYTES} bytes"),
    ("symlink", "", "is a symlink"),
    ("directory", "", "is not a regular file"),
    ("hostile-key", "", "unknown key"),
]


@pytest.mark.parametrize(("kind", "text", "message"), ALL_BAD, ids=[k for k, _, _ in ALL_BAD])
def test_a_bad_file_is_one_printable_line_naming_it(kind: str, text: str, message: str,
                                                    tmp_path: Path) -> None:
    path = make_bad(tmp_path / "corpus", kind, text)
    with pytest.raises(KnownError) as info:
        load(tmp_path / "corpus")
    msg = str(info.value)
    assert isinstance(info.value, UsageError)  # exit 2 from every command
    assert msg.startswith(f"{path}: "), msg
    assert message in msg, msg
    assert msg.isascii() and msg.isprintable(), msg  # one line, nothing raw


@pytest.mark.parametrize("command", ["corpus-check", "report", "fuzz"])
@pytest.mark.parametrize("kind", ["not-toml", "missing-reason", "symlink", "hostile-key"])
def test_commands_refuse_a_bad_file_with_exit_2_and_one_line(
        command: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "entries").mkdir(parents=True)
    make_bad(corpus, kind, dict((k, t) for k, t, _ in BAD_FILES).get(kind, ""))
    args = {
        "corpus-check": ["corpus", "check", str(corpus)],
        "report": ["report", "--corpus", str(corpus), "--out", str(tmp_path / "reports")],
        # refused before any decoder is chosen or any input fuzzed
        "fuzz": ["fuzz", "--decoder", "cpython:strict", "--engine", "hypothesis", "--time",
                 "600", "--jobs", "1", "--corpus", str(corpus), "--no-report"],
    }[command]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "known.toml: " in err, err
    assert "Traceback" not in err and ESC not in err and BIDI not in err
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").iterdir())


def test_corpus_check_accepts_a_good_file_and_this_repositorys_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "entries").mkdir(parents=True)
    write(corpus, '[[known]]\ndecoder = "x"\nreason = "r"\n')
    assert main(["corpus", "check", str(corpus)]) == 0
    repo = Path(__file__).resolve().parents[2] / "corpus"
    k = load(repo)  # the committed file loads, and every entry gives its reason
    assert k.rules and all("docs/decoders.md" in r.reason for r in k.rules)


# -- the fuzz command's progress line -------------------------------------------------


def test_the_progress_line_counts_known_apart(tmp_path: Path) -> None:
    from utf8fuzz.commands.fuzz import _progress_line

    write(tmp_path, '[[known]]\ndecoder = "w"\nreason = "r"\n')
    p = Progress()
    p.add_new([{"signature": "unicode/crash/IndexError/w"},
               {"signature": "unicode/crash/IndexError/v"}])
    line = _progress_line(p, load(tmp_path))
    assert "new findings 1 (signatures 1)  known 1" in line, line
    assert "new findings 2 (signatures 2)" in _progress_line(p) and "known" not in _progress_line(p)
    # another cause's entry under a signature already listed: a finding, not a signature
    p.add_new([{"signature": "unicode/crash/IndexError/v", "path": "entries/other.json",
                "finding": {"id": "f-other"}}])
    assert "new findings 3 (signatures 2)" in _progress_line(p), _progress_line(p)


# -- the report ------------------------------------------------------------------------


def test_the_report_shows_known_signatures_apart_with_their_reason(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    handmade.save(corpus, "IndexError", b"\xc0\x80", decoder="accepted")
    handmade.save(corpus, "KeyError", b"\xed\xa0\x80", decoder="other")
    write(corpus, f'[[known]]\ndecoder = "accept*"\nreason = "upstream {HOSTILE_TOML}"\n')
    known_sig, other_sig = "unicode/crash/IndexError/accepted", "unicode/crash/KeyError/other"
    files = render_all(corpus, None, None, "2026-01-01")

    md = files["report.md"]
    signatures, known = md.split("## Signatures")[1], md.split("## Known differences")[1]
    overview = md.split("## Overview")[1].split("## Signatures")[0]
    assert known_sig not in overview and other_sig in overview
    assert known_sig not in signatures.split("## Known differences")[0]
    assert known_sig in known.split("## Replacement-policy")[0]
    assert "upstream \\\\x1b\\[31m\\\\u202e" in known, known  # safe.md: escaped twice
    assert ESC not in md and BIDI not in md

    html = files["report.html"]
    assert '<h2 id="known">Known differences</h2>' in html
    head, tail = html.split('<h2 id="known">')
    assert known_sig not in head and known_sig in tail and "upstream \\x1b[31m\\u202e" in tail
    assert ESC not in html and BIDI not in html

    s = json.loads(files["summary.json"])
    assert [x["signature"] for x in s["signatures"]] == [other_sig]
    assert s["by_class"] == {"crash": 1} and s["corpus"]["entries"] == 2
    assert [(x["signature"], x["reason"]) for x in s["known"]] == [
        (known_sig, "upstream \\x1b[31m\\u202e")]


def test_without_a_file_the_report_has_no_known_section(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    handmade.save(corpus, "IndexError", b"\xc0\x80", decoder="accepted")
    files = render_all(corpus, None, None, "2026-01-01")
    assert "Known differences" not in files["report.md"]
    assert "Known differences" not in files["report.html"]
    assert json.loads(files["summary.json"])["known"] == []


# -- utf8fuzz fuzz, end to end ---------------------------------------------------------

SPEC = "tests.engine.minimal_adapter:PassesSurrogates+inprocess"
SIGNATURE = "unicode/accepts-ill-formed/surrogate/minimal:passes-surrogates"
REASON = "passes lone surrogates through: accepted for this test"


@pytest.mark.parametrize("listed", [True, False], ids=["listed", "not-listed"])
def test_fuzz_counts_only_signatures_that_are_not_known(
        listed: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # tests.* importable
    corpus = tmp_path / "corpus"
    # A seed that reaches the bug, so that a loaded machine cannot miss it.
    (corpus / "seeds").mkdir(parents=True)
    (corpus / "seeds" / "surrogate").write_bytes(bytes.fromhex("41 42 ED A0 80 43"))
    # Not listed: an entry for the same decoder in another class does not cover it.
    write(corpus, f"""
[[known]]
decoder = "minimal:*"
class = "{'accepts-ill-formed' if listed else 'different-replacement'}"
reason = "{REASON}"
""")
    reports = tmp_path / "reports"
    code = main(["fuzz", "--decoder", SPEC, "--engine", "hypothesis", "--runs", "100",
                 "--seed", "1", "--time", "120", "--jobs", "1", "--corpus", str(corpus),
                 "--report", str(reports), "--json"])
    out = json.loads(capsys.readouterr().out)
    # saved either way: a known difference is still evidence and a regression test
    (entry,) = (corpus / "entries").glob("*.json")
    assert json.loads(entry.read_text())["signature"] == SIGNATURE
    (day,) = reports.iterdir()
    summary = json.loads((day / "summary.json").read_text())
    md = (day / "report.md").read_text()
    if listed:
        assert code == 0, out
        assert out["new"] == []
        assert [(k["signature"], k["reason"], k["input"]) for k in out["known"]] == [
            (SIGNATURE, REASON, "eda080")]
        assert [k["signature"] for k in summary["known"]] == [SIGNATURE]
        assert summary["signatures"] == [] and summary["divergences_found"] == 0
        assert summary["run"]["known"] == [SIGNATURE]
        assert SIGNATURE in md.split("## Known differences")[1] and REASON in md
    else:
        assert code == 1, out
        assert [n["signature"] for n in out["new"]] == [SIGNATURE] and out["known"] == []
        assert summary["known"] == [] and "## Known differences" not in md
        assert [x["signature"] for x in summary["signatures"]] == [SIGNATURE]


def test_fuzz_text_summary_lists_known_ones_apart_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("COLUMNS", "400")  # rich folds long cells otherwise
    corpus = tmp_path / "corpus"
    (corpus / "seeds").mkdir(parents=True)
    (corpus / "seeds" / "surrogate").write_bytes(bytes.fromhex("ED A0 80"))
    write(corpus, f'[[known]]\ndecoder = "minimal:*"\nreason = "ok {HOSTILE_TOML}"\n')
    code = main(["fuzz", "--decoder", SPEC, "--engine", "hypothesis", "--runs", "100",
                 "--seed", "1", "--time", "120", "--jobs", "1", "--corpus", str(corpus),
                 "--no-report"])
    out = capsys.readouterr().out
    assert code == 0, out
    # one row per finding, with its rule and pattern, not one per signature
    (row,) = [line for line in out.splitlines() if "ok \\x1b[31m\\u202e" in line]
    assert "known differences" in out and "accepts:surrogate:3-byte" in row
    assert "ED [A0-BF] [80-BF]" in row
    assert "1 finding from 1 signature (saved" in out
    assert ESC not in out and BIDI not in out
