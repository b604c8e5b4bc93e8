"""build_report: the three files, atomically replaced, the same for the same corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from utf8fuzz.report import FILES, build_report


def read_all(d: Path) -> dict[str, bytes]:
    return {n: (d / n).read_bytes() for n in FILES}


def test_writes_three_files(corpus_dir: Path, tmp_path: Path) -> None:
    out = build_report(corpus_dir, tmp_path, date="2026-03-04")
    assert out == tmp_path / "2026-03-04"
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    s = json.loads((out / "summary.json").read_text())
    assert s["date"] == "2026-03-04" and s["corpus"]["entries"] > 0
    assert len(s["signatures"]) == s["corpus"]["entries"]
    assert s["trend"][-1]["date"] == "2026-03-04"


def test_same_corpus_same_report(corpus_dir: Path, tmp_path: Path) -> None:
    a = read_all(build_report(corpus_dir, tmp_path / "a", date="2026-03-04"))
    b = read_all(build_report(corpus_dir, tmp_path / "b", date="2026-03-04"))
    assert a == b
    # A copy of the corpus elsewhere: only its path differs.
    other = tmp_path / "copy"
    shutil.copytree(corpus_dir, other)
    c = read_all(build_report(other, tmp_path / "c", date="2026-03-04"))
    for name in FILES:
        assert c[name].replace(str(other).encode(), str(corpus_dir).encode()) == a[name]


def test_only_the_date_changes(corpus_dir: Path, tmp_path: Path) -> None:
    a = read_all(build_report(corpus_dir, tmp_path / "a", date="2026-03-04"))
    b = read_all(build_report(corpus_dir, tmp_path / "b", date="2026-03-05"))
    for name in FILES:
        assert a[name] != b[name]
        assert b[name].replace(b"2026-03-05", b"2026-03-04") == a[name]


def test_replaces_a_report_of_the_same_date(corpus_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "2026-03-04").mkdir()
    (tmp_path / "2026-03-04" / "report.html").write_text("old")
    out = build_report(corpus_dir, tmp_path, date="2026-03-04")
    assert (out / "report.html").read_text() != "old"
    build_report(corpus_dir, tmp_path, date="2026-03-04")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-03-04"]  # no temp dirs left


def test_trend_uses_earlier_reports(corpus_dir: Path, tmp_path: Path) -> None:
    build_report(corpus_dir, tmp_path, date="2026-03-01")
    run = {"decoders": ["cpython:replace"], "executions": 10, "execs_per_sec": 2.5,
           "new": [{"signature": "a/b/c/d", "decoders": ["d"], "class": "b", "feature": "c",
                    "input": "c080"}]}
    out = build_report(corpus_dir, tmp_path, run=run, date="2026-03-02")
    s = json.loads((out / "summary.json").read_text())
    assert [p["date"] for p in s["trend"]] == ["2026-03-01", "2026-03-02"]
    assert s["trend"][-1]["found"] == 1 and s["divergences_found_source"] == "run"
    assert s["run"]["executions"] == 10 and s["run"]["new"] == ["a/b/c/d"]


def test_bad_date(corpus_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        build_report(corpus_dir, tmp_path, date="../../etc")


def test_new_signatures_are_marked(corpus_dir: Path, tmp_path: Path) -> None:
    sig = json.loads(sorted((corpus_dir / "entries").glob("*.json"))[0].read_text())
    run = {"decoders": [], "executions": 1, "execs_per_sec": 1.0,
           "new": [{"signature": sig["signature"]}]}
    out = build_report(corpus_dir, tmp_path, run=run, date="2026-03-04")
    s = json.loads((out / "summary.json").read_text())
    marked = [x["signature"] for x in s["signatures"] if x["new"]]
    assert marked == [sig["signature"]]
    assert "new in this run" in (out / "report.html").read_text()


def test_decoder_versions_are_reported(corpus_dir: Path, tmp_path: Path) -> None:
    import platform

    out = build_report(corpus_dir, tmp_path, date="2026-03-04")
    s = json.loads((out / "summary.json").read_text())
    cp = s["decoders"]["cpython:replace"]
    assert cp["profile"] == "unicode" and cp["shows"] == ["replace"]
    # The CPython adapter records the interpreter's version with each outcome.
    assert any(platform.python_version() in json.dumps(v) for v in cp["versions"])
    assert platform.python_version() in (out / "report.html").read_text()
