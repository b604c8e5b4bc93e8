"""load: every readable sidecar becomes an Entry; every bad one is listed by
its path, and the others still load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.report.builder import rewrite_sidecar
from utf8fuzz.report.load import load_corpus


@pytest.fixture
def copy(corpus_dir: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "corpus"
    shutil.copytree(corpus_dir, dst)
    return dst


def test_loads_every_entry_written_by_the_engine(corpus_dir: Path) -> None:
    c = load_corpus(corpus_dir)
    sidecars = sorted((corpus_dir / "entries").glob("*.json"))
    assert c.exists and not c.corrupt
    assert len(c.entries) == len(sidecars) >= 4
    for e in c.entries:
        raw = json.loads(e.path.read_text())
        assert e.signature == raw["signature"]
        assert e.data == bytes.fromhex(raw["input"])
        assert set(e.records) == set(raw["outcomes"])
        assert e.reference in e.records
    assert [e.signature for e in c.entries] == sorted(e.signature for e in c.entries)


def test_missing_corpus_is_flagged(tmp_path: Path) -> None:
    c = load_corpus(tmp_path / "nope")
    assert not c.exists and c.entries == [] and c.corrupt == []


def test_empty_corpus(tmp_path: Path) -> None:
    c = load_corpus(tmp_path)
    assert c.exists and c.entries == [] and c.corrupt == []


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: p.write_text("{not json"), "not valid JSON"),
        (lambda p: p.write_text("[1, 2]"), "not a JSON object"),
        (lambda p: p.write_bytes(b"\xff\xfe"), "not valid JSON"),
        (lambda p: rewrite_sidecar(p, lambda d: d.pop("signature") and d), "'signature'"),
        (lambda p: rewrite_sidecar(p, lambda d: d.update(input="zz") or d), "not hex"),
        (lambda p: rewrite_sidecar(p, lambda d: d.update(sha256="0" * 64) or d), "sha256"),
        (lambda p: rewrite_sidecar(p, lambda d: d.update(profile="nope") or d), "profile"),
        (lambda p: rewrite_sidecar(
            p, lambda d: next(iter(d["outcomes"].values()))["outcome"].update(length=999) or d),
         "length"),
        (lambda p: rewrite_sidecar(
            p, lambda d: next(iter(d["outcomes"].values())).update(outcome=[]) or d),
         "not an object"),
    ],
)
def test_a_corrupt_sidecar_is_listed_by_path_and_the_rest_load(copy: Path, damage, reason) -> None:  # type: ignore[no-untyped-def]
    paths = sorted((copy / "entries").glob("*.json"))
    victim = paths[0]
    damage(victim)
    c = load_corpus(copy)
    assert [x.path for x in c.corrupt] == [victim]
    assert reason in c.corrupt[0].reason
    assert len(c.entries) == len(paths) - 1


def test_unknown_keys_are_tolerated(copy: Path) -> None:
    victim = sorted((copy / "entries").glob("*.json"))[0]
    rewrite_sidecar(victim, lambda d: d.update(format=2, future={"x": 1}) or d)
    c = load_corpus(copy)
    assert not c.corrupt
    e = next(e for e in c.entries if e.path == victim)
    assert e.extra == {"future": {"x": 1}}


def test_temporary_files_are_not_entries(copy: Path) -> None:
    (copy / "entries" / ".abc.json.123.0.tmp").write_text("{half")
    c = load_corpus(copy)
    assert not c.corrupt


def test_input_file_mismatch_is_a_warning(copy: Path) -> None:
    victim = sorted((copy / "entries").glob("*.json"))[0]
    name = json.loads(victim.read_text())["file"]
    (copy / name).write_bytes(b"something else")
    c = load_corpus(copy)
    e = next(e for e in c.entries if e.path == victim)
    assert any("differs" in w for w in e.warnings)
