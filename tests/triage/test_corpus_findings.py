"""The committed corpus (corpus/) grouped into findings: each finding listed by hand
with the root cause it stands for, read off the decoder's behaviour on the entry's
input and the spec clause the reference follows. Ten causes, ten findings."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from utf8fuzz.engine import corpus
from utf8fuzz.triage.group import entry_findings

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def committed(root: Path) -> tuple[list[corpus.Entry], list[corpus.Problem]]:
    """The entries of ``root`` (a corpus) that git tracks, as :func:`.corpus.load`
    gives them: what a clone holds, not what a `make fuzz` on this machine (its
    library versions) added since. Outside a git checkout (an unpacked sdist),
    every entry."""
    top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True, check=False)
    if top.returncode != 0:
        return corpus.load(root)
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", "entries"],
                            capture_output=True, text=True, check=True).stdout
    tracked = {(root / p).resolve() for p in listed.split("\0") if p}
    entries, problems = corpus.load(root)
    return ([e for e in entries if e.path.resolve() in tracked],
            [p for p in problems if p.path.resolve() in tracked])

#: (family, rule) -> the root cause, in words
CAUSES: dict[tuple[str, str], str] = {
    ("iconv", "profile:unicode|kuhn/checked-when-complete"):
        "glibc's UTF-8 decoder reads Unicode's sequences and the 31-bit ones of RFC 2279 "
        "as Kuhn's FAQ does (5- and 6-byte forms, values above U+10FFFF; no surrogates, "
        "no overlong forms; U+FFFE and U+FFFF, which Kuhn rejects, it takes), which its "
        "31-bit targets (UCS-4, wchar_t, UTF-8) pass on; and it "
        "checks a sequence only once it has every byte the lead announces (E0 80 at "
        "the end is one truncated error to it)",
    ("iconv", "checked-when-complete"):
        "the same decoder seen through the UTF-32LE target, which rejects what Unicode "
        "rejects (above U+10FFFF included) but only once a sequence is complete: E0 80 "
        "and ED A0 at the end are one truncated error, F4 90 80 80 and the 5- and 6-byte "
        "forms an error over all their bytes but the last (what it calls incomplete): "
        "a reporting difference, where the targets above accept",
    ("icu", "profile:surrogatepass/maximal-subpart+4-byte-one-error"):
        "ICU's CESU-8 converter reads sequences as UTF-8 with encoded surrogates does: a "
        "lone surrogate half (ED A0 80) is accepted, a 4-byte prefix (F0 9F, F4) is cut "
        "as UTF-8's maximal subparts, and a complete 4-byte sequence, which CESU-8 has "
        "none of, is one error",
    ("java", "profile:surrogatepass/maximal-subpart+surrogate-one-error"):
        "the JDK (String and CharsetDecoder) reads an encoded surrogate (ED A0..BF xx) as "
        "one sequence and rejects it whole, complete or cut short: one U+FFFD or one "
        "malformed unit where maximal subparts give one per byte (in known.toml)",
    ("pyicu", "ignore-substitutes"):
        "PyICU's ignore mode substitutes U+FFFD instead of dropping (upstream behaviour, "
        "in known.toml)",
    ("cpython", "errors-as:unicode"):
        "CPython's surrogatepass handler takes only complete encoded surrogates; what it "
        "rejects is cut by the UTF-8 decoder underneath, by Unicode's maximal subparts "
        "(ED A0 at the end: two errors, where the surrogatepass profile has one)",
    ("mutf8", "continuations-unchecked"):
        "amulet-mutf8's Python decoder takes the bytes after a lead byte as its "
        "continuation bytes without checking them (RFC 2279's bit layout alone), and a "
        "lead the end cuts short is an error by itself",
    ("mutf8", "continuations-unchecked+latin1"):
        "amulet-mutf8's C decoder does the same in its own loop, which also passes a byte "
        "no lead claims (80..BF, F0..FF) through as Latin-1",
    ("mutf8", "crash:RuntimeError"):
        "amulet-mutf8's Python decoder raises on a byte no lead claims (80)",
    ("mutf8", "accepts-ill-formed/incomplete-4-byte-sequence"):
        "amulet-mutf8's C decoder hands an input with no ED, C0 or 00 byte to CPython's "
        "UTF-8 decoder, which takes UTF-8's 4-byte forms, which modified UTF-8 has none "
        "of (F0 91 82 9F is U+1109F; followed by C0 80 the same bytes are four Latin-1 "
        "characters, from its own loop): a path chosen by the whole input, which no "
        "point of the model names, so the finding is named by class and feature",
}


def test_the_committed_corpus_groups_into_its_root_causes() -> None:
    entries, problems = committed(CORPUS)
    assert not problems
    found = {(f["family"], f["rule"]) for e in entries for f in entry_findings(e)}
    assert found == set(CAUSES)


def test_the_committed_corpus_is_the_current_format_and_names_its_findings() -> None:
    entries, _ = committed(CORPUS)
    for e in entries:
        assert e.sidecar["format"] == corpus.FORMAT and len(e.sidecar["decoders"]) == 1
        assert e.sidecar["finding"]["pattern"], e.id



def test_an_entry_a_run_here_added_is_not_the_committed_corpus(tmp_path) -> None:
    # README's `make fuzz` then `make test`, on a machine whose library versions show
    # a finding the committed corpus lacks: the run saves it into corpus/ (untracked),
    # and the tests of the committed corpus still read what a clone holds.
    if shutil.which("git") is None:
        pytest.skip("no git here")
    root = tmp_path / "corpus"
    shutil.copytree(CORPUS / "entries", root / "entries")
    shutil.copytree(CORPUS / "inputs", root / "inputs")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "corpus"], check=True)
    every = sorted(e.path.name for e in corpus.load(root)[0])
    ran = every[0]  # as if this machine's run had saved it
    subprocess.run(["git", "-C", str(tmp_path), "rm", "-q", "--cached", f"corpus/entries/{ran}"],
                   check=True)
    (root / "entries" / "0000000000000000.json").write_text("{}")  # and a bad one
    entries, problems = committed(root)
    assert sorted(e.path.name for e in entries) == every[1:] and problems == []
