"""Paths a sidecar names are confined to the corpus: ``file`` must be a file in the
corpus's own ``inputs/``, symlinks resolved. Anything else is a bad entry, and prune
never deletes outside the corpus (docs/corpus.md, "Untrusted sidecars")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine import handmade
from utf8fuzz.engine import corpus, replay
from utf8fuzz.report.load import load_corpus


def stale_entry(root: Path) -> Path:
    """An entry prune removes: CPython's codec (external, available everywhere) under
    a crash signature it does not give on the input."""
    x = handmade.save(root, "ValueError", b"\xc0\x80", decoder="cpython:replace")
    assert [e.path for e in replay.prune(root, dry_run=True)] == [x]
    return x


def aim(root: Path, sidecar: Path, victim: Path, how: str) -> str:
    """Point ``sidecar``'s ``file`` at ``victim`` (outside ``root``) in one way."""
    side = json.loads(sidecar.read_text())
    if how == "dotdot":
        side["file"] = "../victim/important.txt"
    elif how == "dotdot-inside-inputs":
        side["file"] = "inputs/../../victim/important.txt"
    elif how == "absolute":
        side["file"] = str(victim)
    elif how == "symlink":
        (root / "inputs" / "evil.bin").symlink_to(victim)
        side["file"] = "inputs/evil.bin"
    elif how == "symlinked-inputs":
        (root / "inputs").rename(root / "inputs.real")
        (root / "inputs").symlink_to(victim.parent)
        victim.with_name(Path(side["file"]).name).write_bytes(victim.read_bytes())
    sidecar.write_text(json.dumps(side))
    return str(side["file"])


HOW = ["dotdot", "dotdot-inside-inputs", "absolute", "symlink", "symlinked-inputs"]


@pytest.mark.parametrize("how", HOW)
def test_a_file_outside_the_corpus_is_a_bad_entry_and_prune_leaves_it_alone(
        tmp_path: Path, how: str) -> None:
    root = tmp_path / "corpus"
    x = stale_entry(root)
    victim = tmp_path / "victim" / "important.txt"
    victim.parent.mkdir()
    victim.write_bytes(b"\xc0\x80")  # the entry's input: read through, it would match
    aim(root, x, victim, how)

    entries, problems, _ = corpus.check(root)
    assert entries == [] and [p.path for p in problems] == [x]
    assert "'file'" in problems[0].message
    assert [c.path for c in load_corpus(root).corrupt] == [x]

    assert replay.prune(root) == []
    assert victim.read_bytes() == b"\xc0\x80"
    assert x.exists()  # a bad entry is reported, never pruned
    assert sorted(p.name for p in victim.parent.iterdir()) == sorted(
        {"important.txt", *(p.name for p in victim.parent.iterdir())})


def test_a_file_in_another_corpus_directory_is_refused(tmp_path: Path) -> None:
    # prune would otherwise delete a seed, or another entry's sidecar
    root = tmp_path / "corpus"
    x = stale_entry(root)
    (root / "seeds").mkdir()
    seed = root / "seeds" / "c080"
    seed.write_bytes(b"\xc0\x80")
    side = json.loads(x.read_text())
    side["file"] = "seeds/c080"
    x.write_text(json.dumps(side))
    _, problems, _ = corpus.check(root)
    assert [p.path for p in problems] == [x] and "inputs/<name>" in problems[0].message
    replay.prune(root)
    assert seed.read_bytes() == b"\xc0\x80"


def test_a_sidecar_that_is_a_symlink_out_of_the_corpus_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    x = stale_entry(root)
    outside = tmp_path / "elsewhere.json"
    x.rename(outside)
    x.symlink_to(outside)
    entries, problems, _ = corpus.check(root)
    assert entries == [] and [p.path for p in problems] == [x]
    assert "leads out" in problems[0].message
    assert [c.path for c in load_corpus(root).corrupt] == [x]


def test_prune_keeps_an_input_a_bad_sidecar_still_names(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    x = stale_entry(root)
    name = json.loads(x.read_text())["file"]
    other = root / "entries" / "0123456789abcdef.json"  # bad: its name is not its signature
    other.write_text(json.dumps({"format": 1, "file": name}))
    assert [e.path for e in replay.prune(root)] == [x]
    assert (root / name).exists()


def test_an_entry_rewritten_after_it_was_judged_is_not_pruned(tmp_path: Path,
                                                              monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "corpus"
    x = stale_entry(root)
    real = replay.reproduces

    def reproduces_then_rewrite(entry, extra=()):  # type: ignore[no-untyped-def]
        verdict = real(entry, extra)
        side = json.loads(x.read_text())  # what a concurrent writer could do meanwhile
        side["found"]["note"] = "rewritten"
        x.write_text(json.dumps(side))
        return verdict

    monkeypatch.setattr(replay, "reproduces", reproduces_then_rewrite)
    assert replay.prune(root) == [] and x.exists()

