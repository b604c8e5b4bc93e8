"""The committed corpus (corpus/) grouped into findings: each finding listed by hand
with the root cause it stands for, read off the decoder's behaviour on the entry's
input and the spec clause the reference follows.

Where one cause is still more than one finding (the explanation rules have no rule
that reproduces it whole), the test says so: those lines are the engine's known
limits, not causes of their own."""

from __future__ import annotations

from pathlib import Path

from utf8fuzz.engine import corpus

CORPUS = Path(__file__).resolve().parents[2] / "corpus"

#: (family, rule) -> the root cause, in words
CAUSES: dict[tuple[str, str], str] = {
    ("iconv", "profile:rfc2279/maximal-subpart"):
        "glibc decodes RFC 2279's 5- and 6-byte forms and values above U+10FFFF "
        "(every target: UTF-8, UCS-4, wchar_t, UTF-32LE)",
    ("iconv", "profile:legacy/maximal-subpart"):
        "glibc calls a non-shortest prefix at the end (E0 80) one truncated error, as a "
        "decoder without Table 3.1B's second-byte ranges would (the naive legacy profile)",
    ("iconv", "different-error-offset/5-byte-form"):
        "glibc's UTF-32LE target reports a 5-byte form as a 4-byte error "
        "(one cause with the next two: UTF-32LE cannot hold what it decoded)",
    ("iconv", "different-error-offset/6-byte-form"): "the same cause, 6-byte forms",
    ("iconv", "different-error-offset/above-10ffff"): "the same cause, F4 90.. and F5..F7",
    ("icu", "profile:mutf8/maximal-subpart"):
        "ICU's CESU-8 converter reads a UTF-8 prefix at the end as truncated: an encoded "
        "surrogate half (ED BD) one truncated error, a lone surrogate at the end accepted "
        "(one cause with the next two; no one rule reproduces it yet)",
    ("icu", "different-replacement/incomplete-4-byte-sequence"):
        "the same cause: F0 9F at the end, a 4-byte prefix CESU-8 has no sequence for, is one "
        "truncated error where the cesu8 profile has two illegal ones",
    ("icu", "different-reason/incomplete-4-byte-sequence"):
        "the same cause: a lone F4 at the end is called truncated, not illegal",
    ("pyicu", "ignore-substitutes"):
        "PyICU's ignore mode substitutes U+FFFD instead of dropping (upstream behaviour, "
        "in known.toml)",
    ("cpython", "profile:unicode/maximal-subpart"):
        "CPython's surrogatepass handler sees only complete encoded surrogates: ED A0 at the "
        "end is Unicode's two illegal errors, not the surrogatepass profile's one truncated",
    ("mutf8", "continuations-unchecked"):
        "amulet-mutf8 (C and Python) takes the bytes after a lead byte as its continuation "
        "bytes without checking them (RFC 2279's bit layout alone)",
    ("mutf8", "continuations-unchecked+latin1"):
        "amulet-mutf8 (C) does the same, and passes any other byte it cannot decode through "
        "as Latin-1: one cause with the next three, which no one rule reproduces on every "
        "fresh input yet",
    ("mutf8", "bytes-as-latin1"): "the same cause, seen where no lead byte takes bytes",
    ("mutf8", "accepts-ill-formed/incomplete-3-byte-sequence"):
        "the same cause, a 3-byte lead before a byte it passes through",
    ("mutf8", "accepts-ill-formed/noncharacter"): "the same cause, EF BF before a lead",
    ("mutf8", "crash:RuntimeError"): "amulet-mutf8 (Python) raises on a lone continuation byte",
    ("mutf8", "different-error-offset/surrogate"):
        "amulet-mutf8 reports an encoded surrogate's error at another offset",
    ("mutf8", "different-error-offset/truncated-3-byte-at-end"):
        "amulet-mutf8 reports a truncated 3-byte sequence at the end at another offset",
}


def test_the_committed_corpus_groups_into_its_root_causes() -> None:
    entries, problems = corpus.load(CORPUS)
    assert not problems
    found = {(f["family"], f["rule"]) for e in entries for f in corpus.entry_findings(e)}
    assert found == set(CAUSES)


def test_the_committed_corpus_is_the_current_format_and_names_its_findings() -> None:
    entries, _ = corpus.load(CORPUS)
    for e in entries:
        assert e.sidecar["format"] == corpus.FORMAT and len(e.sidecar["decoders"]) == 1
        assert e.sidecar["finding"]["pattern"], e.id
