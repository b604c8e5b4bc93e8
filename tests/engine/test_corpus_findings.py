"""The committed corpus (corpus/) grouped into findings: each finding listed by hand
with the root cause it stands for, read off the decoder's behaviour on the entry's
input and the spec clause the reference follows. Nine causes, nine findings."""

from __future__ import annotations

from pathlib import Path

from utf8fuzz.engine import corpus

CORPUS = Path(__file__).resolve().parents[2] / "corpus"

#: (family, rule) -> the root cause, in words
CAUSES: dict[tuple[str, str], str] = {
    ("iconv", "profile:rfc2279/maximal-subpart"):
        "glibc's UTF-8 decoder decodes RFC 2279's 5- and 6-byte forms and values above "
        "U+10FFFF, which its 31-bit targets (UCS-4, wchar_t, UTF-8) pass on",
    ("iconv", "checked-when-complete"):
        "glibc checks a sequence only once it has every byte its lead announces: E0 80 "
        "and ED A0 at the end are one truncated error to it (every target), and a "
        "complete sequence it rejects, as UTF-32LE rejects one above U+10FFFF (F4 90 80 "
        "80, F8 88 80 80 80), is an error over all its bytes but the last (what it calls "
        "incomplete); it rejects what Unicode rejects, it reports it otherwise",
    ("icu", "profile:unicode/maximal-subpart"):
        "ICU's CESU-8 converter cuts a 4-byte lead and what follows it as UTF-8's maximal "
        "subparts do (F0 9F one truncated error, F4 at the end truncated), though CESU-8 "
        "has no 4-byte sequences",
    ("icu", "profile:rfc2279/maximal-subpart"):
        "ICU's CESU-8 converter takes an encoded surrogate half on its own as RFC 2279 "
        "does: a lone ED A0 80 accepted, ED BD at the end one truncated error",
    ("pyicu", "ignore-substitutes"):
        "PyICU's ignore mode substitutes U+FFFD instead of dropping (upstream behaviour, "
        "in known.toml)",
    ("cpython", "profile:unicode/maximal-subpart"):
        "CPython's surrogatepass handler sees only complete encoded surrogates: ED A0 at the "
        "end is Unicode's two illegal errors, not the surrogatepass profile's one truncated",
    ("mutf8", "continuations-unchecked"):
        "amulet-mutf8's Python decoder takes the bytes after a lead byte as its "
        "continuation bytes without checking them (RFC 2279's bit layout alone), and a "
        "lead the end cuts short is an error by itself",
    ("mutf8", "continuations-unchecked+latin1"):
        "amulet-mutf8's C decoder does the same in its own loop, which also passes a byte "
        "no lead claims (80..BF, F0..FF) through as Latin-1",
    ("mutf8", "crash:RuntimeError"):
        "amulet-mutf8's Python decoder raises on a byte no lead claims (80)",
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
