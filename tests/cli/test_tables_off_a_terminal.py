"""Off a terminal (a pipe, a CI log) without ``$COLUMNS``, tables are printed as wide
as their rows: each row on one line, never folded at 80 columns mid-word."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run([sys.executable, "-m", "utf8fuzz", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_decoders_table_has_one_line_per_row(tmp_path: Path) -> None:
    listed = json.loads(_run("decoders", "--json", cwd=tmp_path).stdout)
    p = _run("decoders", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    refs = {d["profile"] for d in listed["available"] if d["name"].startswith("ref:")}
    for profile in refs:  # the references' row: every policy, on one line
        (row,) = [ln for ln in lines if f" ref:{profile}:* " in ln]
        assert "maximal-subpart, per-sequence, per-byte, per-run" in row
    for u in listed["unavailable"]:
        assert f"unavailable: {u['name']}: {u['reason']}" in lines


def test_fuzz_summary_has_one_line_per_row(tmp_path: Path) -> None:
    p = _run("fuzz", "--engine", "hypothesis", "--decoder", "cpython:strict", "--runs", "50",
             "--seed", "1", "--time", "120",
             "--jobs", "1", "--no-report", "--corpus", str(tmp_path / "c"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert any("new findings" in ln and "the others add evidence to findings already in the "
               "corpus)" in ln for ln in p.stdout.splitlines()), p.stdout
    assert any("inputs seen" in ln and " by 1 decoder " in ln for ln in p.stdout.splitlines())
    assert "(0 entries, 0 signatures)" in p.stdout


def test_fuzz_summary_counts_one_in_the_singular(tmp_path: Path) -> None:
    """One finding from one entry: the counts read "1 entry, 1 signature" (they read
    "1 entries")."""
    root = Path(__file__).resolve().parents[2]
    p = _run("fuzz", "--engine", "hypothesis", "--runs", "100", "--seed", "1", "--time", "120",
             "--decoder", "tests.engine.planted:PLANTED_C080+inprocess", "--jobs", "1",
             "--no-report", "--corpus", str(tmp_path / "c"), cwd=root)
    assert p.returncode == 1, p.stderr  # a new finding
    assert "(from 1 new signature;" in p.stdout, p.stdout
    assert "(1 entry, 1 signature)" in p.stdout, p.stdout


def test_diff_verdict_lines_are_whole() -> None:
    """Each divergence of ``diff``'s verdict is one line, however long (it was folded
    at 80 columns mid-phrase)."""
    root = Path(__file__).resolve().parents[2]
    p = _run("diff", "41", "--decoder",
             "tests.decoders.plugin_fixtures:raises_its_own_type_error+codec+strict+inprocess",
             cwd=root)
    assert p.returncode == 0, p.stderr
    verdict = [ln for ln in p.stdout.splitlines() if "/crash/TypeError/" in ln]
    assert len(verdict) == 1, p.stdout
    assert verdict[0].endswith("crash: TypeError: can only concatenate str (not \"int\") to str")
