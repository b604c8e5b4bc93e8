"""utf8fuzz as a decoder author installs it: the wheel (built from the sdist, so the
sdist builds the C extensions), ``twine check`` clean, installed with its
dependencies into a fresh virtual environment outside the checkout; then, in a
temporary project holding the README's naive decoder: ``init``, ``fuzz`` with each
engine (a finding, exit 1: the seeds ``init`` wrote show the planted bug on the
first inputs), the generated pytest replay (xfail), the fix, ``corpus refresh``
(the replay passes), ``report``, and the generated ClusterFuzzLite target (it stops
at the bug as a crash). Marked ``installed_package``: it builds and installs, so a
quick tier skips it (``-m 'not installed_package'``)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

pytestmark = [
    pytest.mark.installed_package,
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("build", "twine")),
                       reason="build and twine are not installed (pip install -e '.[test]')"),
]

#: the README's naive decoder: it takes a lone continuation byte (80) as U+0080
NAIVE = re.search(r"```python\n(# mydecoder\.py.*?)```", README, re.S)
LONE = "unicode/accepts-ill-formed/lone-continuation/plugin:mydecoder:decode"
FIXED = "def decode(data: bytes) -> str:\n    return data.decode('utf-8')\n"


def _run(argv: list[str | Path], cwd: Path, env: dict[str, str],
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _ok(p: subprocess.CompletedProcess[str], status: int = 0) -> subprocess.CompletedProcess[str]:
    assert p.returncode == status, f"{p.args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def test_a_decoder_author_from_the_wheel(tmp_path: Path) -> None:
    assert NAIVE is not None, "the README's mydecoder.py example"
    # the user's environment: nothing of the checkout or of this venv
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith(
               ("UTF8FUZZ_", "PYTEST_"))}
    dist, venv, project = tmp_path / "dist", tmp_path / "venv", tmp_path / "project"
    project.mkdir()

    _ok(_run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT],
             tmp_path, env, timeout=600))
    built = sorted(dist.iterdir(), key=lambda p: p.suffix)  # the sdist, the wheel
    assert [p.suffix for p in built] == [".gz", ".whl"]
    assert "PASSED" in _ok(_run([sys.executable, "-m", "twine", "check", *built],
                                tmp_path, env)).stdout

    # without pip of its own (ensurepip takes 10 s): this pip installs into it
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env))
    py, bin_ = venv / "bin" / "python", venv / "bin"
    _ok(_run([sys.executable, "-m", "pip", "--python", py, "install", "-q", built[1], "pytest"],
             tmp_path, env, timeout=600))
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    where = _ok(_run([py, "-c", "import utf8fuzz, atheris; print(utf8fuzz.__file__)"],
                     project, env)).stdout
    assert where.startswith(str(venv)), where  # the wheel's, not the checkout's

    def utf8fuzz(*args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
        return _ok(_run([bin_ / "utf8fuzz", *args], project, env), status)

    (project / "mydecoder.py").write_text(NAIVE.group(1))
    utf8fuzz("init", "--decoder", "mydecoder:decode")
    assert (project / "fuzz-corpus" / "known.toml").is_file()
    assert (project / ".github" / "workflows" / "utf8fuzz-nightly.yml").is_file()

    # each engine on its own corpus, both from the seeds init wrote
    shutil.copytree(project / "fuzz-corpus", project / "h-corpus")
    for engine, corpus in (("atheris", "fuzz-corpus"), ("hypothesis", "h-corpus")):
        out = utf8fuzz("fuzz", "--engine", engine, "--decoder", "mydecoder:decode",
                       "--corpus", corpus, "--runs", "300", "--seed", "1", "--time", "120",
                       "--jobs", "1", "--no-report",
                       "--json", status=1).stdout
        summary = json.loads(out)
        assert summary["engines"] == [engine] and summary["executions"] > 0
        assert summary["new_findings"] and summary["failures"] == []
        # the lone continuation byte taken as U+0080: among the seeds (ill-80)
        assert LONE in {x["signature"] for x in summary["new"]}, summary["new"]

    replay = [py, "-m", "pytest", "-c", "utf8fuzz-pytest.ini", "-p", "no:cacheprovider"]
    p = _ok(_run(replay, project, env))
    assert " xfailed" in p.stdout and " failed" not in p.stdout, p.stdout

    # the generated ClusterFuzzLite target runs the packaged target on this decoder
    # and, as OSS-Fuzz runs it, stops at the first divergence as a crash
    crashes = tmp_path / "crashes"
    crashes.mkdir()
    p = _run([py, ".clusterfuzzlite/utf8fuzz_fuzzer.py", "-runs=0", "-max_len=64",
              f"-artifact_prefix={crashes}/", "fuzz-corpus/seeds"], project,
             {**env, "UTF8FUZZ_CORPUS": str(tmp_path / "cflite-corpus")})
    assert p.returncode != 0 and [c.name[:6] for c in crashes.iterdir()] == ["crash-"], p.stderr

    (project / "mydecoder.py").write_text(FIXED)
    refresh = json.loads(utf8fuzz("corpus", "refresh", "fuzz-corpus", "--decoder",
                                  "mydecoder:decode", "--json").stdout)
    assert refresh, refresh
    p = _ok(_run(replay, project, env))
    assert " passed" in p.stdout and "xfailed" not in p.stdout and " failed" not in p.stdout

    utf8fuzz("report", "--corpus", "fuzz-corpus", "--out", "reports", "--date", "2026-01-02")
    day = project / "reports" / "2026-01-02"
    assert {p.name for p in day.iterdir()} >= {"report.html", "report.md", "summary.json"}
    assert "mydecoder" in (day / "report.md").read_text()
