"""``utf8fuzz report`` run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "utf8fuzz", "report", *args],
                          capture_output=True, text=True, timeout=120)


def test_missing_corpus_is_one_line_and_exit_2(tmp_path: Path) -> None:
    r = run("--corpus", str(tmp_path / "none"), "--out", str(tmp_path / "r"))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "no corpus directory" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "r").exists()


def test_bad_date(tmp_path: Path) -> None:
    r = run("--corpus", str(tmp_path), "--out", str(tmp_path / "r"), "--date", "yesterday")
    assert r.returncode == 2 and "YYYY-MM-DD" in r.stderr


def test_empty_corpus(tmp_path: Path) -> None:
    r = run("--corpus", str(tmp_path), "--out", str(tmp_path / "r"), "--date", "2026-04-01")
    assert r.returncode == 0, r.stderr
    assert "report for 0 corpus entries" in r.stdout
    md = (tmp_path / "r" / "2026-04-01" / "report.md").read_text()
    assert "The corpus has no entries" in md


def test_corrupt_entry_is_listed(corpus_dir: Path, tmp_path: Path) -> None:
    import shutil

    c = tmp_path / "corpus"
    shutil.copytree(corpus_dir, c)
    victim = sorted((c / "entries").glob("*.json"))[0]
    victim.write_text("{truncated")
    r = run("--corpus", str(c), "--out", str(tmp_path / "r"), "--date", "2026-04-01")
    assert r.returncode == 0, r.stderr
    assert "1 unreadable" in r.stdout
    s = json.loads((tmp_path / "r" / "2026-04-01" / "summary.json").read_text())
    assert [u["path"] for u in s["corpus"]["unreadable"]] == [str(victim)]
    assert s["corpus"]["entries"] == len(list((corpus_dir / "entries").glob("*.json"))) - 1
    assert str(victim) in (tmp_path / "r" / "2026-04-01" / "report.html").read_text()
