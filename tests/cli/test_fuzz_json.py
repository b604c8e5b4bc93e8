"""``utf8fuzz fuzz --json``: exactly one JSON document on stdout on the exit paths
before any fuzzing (a usage error; the atheris engine asked for where Atheris is
missing), and without Atheris the default engines run Hypothesis alone after one
line saying so. (The summary's paths, 0, 1, 3 and 130: tests/loop/test_run_honesty.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.hostile import assert_no_raw, run


def _no_atheris(tmp: Path) -> dict[str, str]:
    """An environment in which ``import atheris`` fails, as where no wheel exists."""
    fake = tmp / "no-atheris" / "atheris"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no atheris wheel for this platform')\n")
    return {"PYTHONPATH": str(fake.parent)}


def test_a_usage_error_is_one_json_document_and_one_line(tmp_path: Path) -> None:
    p = run("fuzz", "--decoder", "cpython:strict", "--time", "0", "--json",
            "--corpus", str(tmp_path / "c"), cwd=tmp_path)
    assert p.returncode == 2
    assert json.loads(p.stdout) == {"error": "--time must be positive", "exit": 2}
    assert p.stderr == "utf8fuzz fuzz: --time must be positive\n"


def test_atheris_missing_with_engine_atheris_is_exit_2_with_json(tmp_path: Path) -> None:
    p = run("fuzz", "--engine", "atheris", "--decoder", "cpython:strict", "--time", "1",
            "--json", "--corpus", str(tmp_path / "c"), cwd=tmp_path, env=_no_atheris(tmp_path))
    assert p.returncode == 2, p.stderr
    assert_no_raw(p)
    doc = json.loads(p.stdout)
    assert doc["exit"] == 2 and doc["error"].startswith("atheris is not installed")
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("utf8fuzz fuzz: atheris is not")


def test_without_atheris_hypothesis_runs_alone_after_one_line(tmp_path: Path) -> None:
    p = run("fuzz", "--decoder", "cpython:strict", "--runs", "50", "--seed", "1", "--time",
            "120", "--jobs", "1", "--json",
            "--no-report", "--corpus", str(tmp_path / "c"), cwd=tmp_path,
            env=_no_atheris(tmp_path))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["engines"] == ["hypothesis"] and doc["failures"] == []
    (line,) = [ln for ln in p.stderr.splitlines() if "atheris" in ln]
    assert line.startswith("utf8fuzz fuzz: atheris is not installed") and line.endswith(
        ": Hypothesis runs alone")
