"""``utf8fuzz corpus migrate``: a format-1 entry (one signature naming several
decoders) becomes one format-2 entry per decoder, each naming its finding; old
entries still read; nothing is lost; a second run changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.engine.planted import planted_block, planted_c080
from utf8fuzz.engine import corpus
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.signature import Signature
from utf8fuzz.loop.migrate import migrate
from utf8fuzz.triage.group import entry_findings, stale

DATA = b"A" * 15 + b"\xc0\x80"  # both planted decoders accept this C0 80


def format1(root: Path) -> Path:
    """A format-1 entry as format 1 wrote it: both decoders in one signature."""
    decs = [planted_c080(), planted_block()]
    res = Differ(decs).run(DATA, full=True)
    div = res.divergences[0]
    side = corpus.build_sidecar(res, div, {d.name: d for d in decs}, engine="test",
                                original_size=len(DATA))
    both = Signature(div.signature.profile, div.signature.klass, div.signature.feature,
                     tuple(sorted(d.name for d in decs)))
    side.update(format=1, signature=str(both), decoders=list(both.decoders))
    path, _ = corpus.save(root, side, DATA)
    return path


def test_an_old_entry_still_reads_and_is_explained(tmp_path: Path) -> None:
    entry = corpus.load_entry(format1(tmp_path))
    got = entry_findings(entry)
    assert [f["decoder"] for f in got] == ["planted:accepts-c080", "planted:block-boundary"]
    assert all(f["checked"] == 0 and f["pattern"] == "41{15} C0 80" for f in got)


def test_migrate_splits_by_decoder_and_names_findings(tmp_path: Path) -> None:
    old = format1(tmp_path)
    done = migrate(tmp_path)
    assert [o for o, _ in done.converted] == [old.stem] and len(done.converted[0][1]) == 2
    # the planted decoders are not loadable by name here: said, not faked
    assert all("not available here" in n for n in done.notes) and len(done.notes) == 2
    entries, problems = corpus.load(tmp_path)
    assert not problems and not old.exists()
    assert sorted(e.sidecar["decoders"][0] for e in entries) == [
        "planted:accepts-c080", "planted:block-boundary"]
    for e in entries:
        assert e.sidecar["format"] == corpus.FORMAT and e.data == DATA
        assert e.sidecar["finding"]["rule"].startswith(("accepts-ill-formed", "profile:",
                                                        "accepts:"))
    again = migrate(tmp_path)
    assert again.converted == [] and again.current == 2


def test_the_command_and_its_dry_run(tmp_path: Path) -> None:
    old = format1(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "utf8fuzz", "corpus", "migrate", *args],
                              capture_output=True, text=True, timeout=120)
    dry = run("--dry-run", str(tmp_path))
    assert dry.returncode == 0 and "would convert 1 entry" in dry.stdout and old.exists()
    r = run(str(tmp_path), "--json")
    assert r.returncode == 0 and not old.exists()
    assert json.loads(r.stdout)["converted"][0]["id"] == old.stem
    bad = run(str(tmp_path / "nothing"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_entries_explained_by_older_rules_are_explained_again(tmp_path: Path) -> None:
    # A finding's id depends on its rule: an entry explained by older rules would make
    # the next evidence of its cause a "new" finding. glibc's UTF-32LE on F4 90 80 80,
    # as the first rules left it (no rule fit: the signature's own words), and a
    # planted decoder's entry that cannot be run here (kept, with a note).
    src = corpus.load_entry(Path(__file__).resolve().parents[2] / "corpus" / "entries"
                            / "2cd2c438669fd80b.json")
    side = json.loads(json.dumps(src.sidecar))
    side["finding"] = {**side["finding"], "rule": "different-error-offset/above-10ffff",
                       "id": "d15aab1ffee28a18", "checked": 0}
    side["finding"].pop("rules")
    corpus.save(tmp_path, side, src.data)
    planted = corpus.load_entry(format1(tmp_path / "other"))
    migrate(tmp_path / "other")
    (moved,) = corpus.load(tmp_path / "other")[0][:1]
    old = {**moved.sidecar, "finding": {**moved.sidecar["finding"]}}
    old["finding"].pop("rules")
    corpus.save(tmp_path, old, planted.data)
    (stale_before,) = [e for e in corpus.load(tmp_path)[0] if e.id == src.id]
    assert stale(stale_before)

    done = migrate(tmp_path)
    assert [(i, now) for i, _, now in done.reexplained] == [(src.id, "checked-when-complete")]
    assert len(done.notes) == 1 and "not available here" in done.notes[0]
    (again,) = [e for e in corpus.load(tmp_path)[0] if e.id == src.id]
    assert not stale(again) and again.sidecar["finding"]["checked"] > 0
    assert again.data == src.data and again.sidecar["outcomes"] == src.sidecar["outcomes"]
    # the one that could not be explained again stays as it was, and says so again
    second = migrate(tmp_path)
    assert second.reexplained == [] and len(second.notes) == 1 and second.current == 1


def test_a_run_says_when_its_corpus_was_explained_by_older_rules(tmp_path: Path) -> None:
    from utf8fuzz.loop.run import fuzz

    format1(tmp_path)
    migrate(tmp_path)
    e = corpus.load(tmp_path)[0][0]
    side = {**e.sidecar, "finding": {**e.sidecar["finding"]}}
    side["finding"].pop("rules")
    corpus.replace_entry(tmp_path, e, [side])
    r = fuzz([planted_c080()], engine="hypothesis", runs=1, seed=1, seconds=120,
             corpus=tmp_path)
    (note,) = [n for n in r["notes"] if "older rules" in n]
    assert note.startswith("1 corpus entry was explained by older rules")
    assert "utf8fuzz corpus migrate" in note
