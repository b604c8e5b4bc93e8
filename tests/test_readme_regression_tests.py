"""README, "Regression tests in your CI": its examples run as written.

The code blocks are read from README.md itself: the naive ``mydecoder.py`` of "Plug in
your own decoder", the section's ``test_mydecoder.py``, and its two console blocks
(with the bug; after the fix), run with the venv's own ``pytest`` and ``utf8fuzz``.
The one change is the fuzz budget: ``--time 60`` becomes a single-process Hypothesis
run of 100 inputs from a fixed seed (``--runs``, ``--seed``: the same run under any
load; its time a limit only) without a report.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
README = (ROOT / "README.md").read_text()
SECTION = README.split("## Regression tests in your CI\n", 1)[1].split("\n## ", 1)[0]

FIXED_DECODER = 'def decode(data: bytes) -> str:\n    return data.decode("utf-8")\n'


def python_block(text: str, first_line: str) -> str:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                if b.startswith(first_line)]
    return block


def console_blocks(text: str) -> list[list[str]]:
    return [[ln.removeprefix("$ ") for ln in b.splitlines() if ln.startswith("$ ")]
            for b in re.findall(r"```console\n(.*?)```", text, re.S)]


def run(cwd: Path, command: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    if argv[:2] == ["utf8fuzz", "fuzz"]:
        i = argv.index("--time")
        argv[i:i + 2] = ["--time", "120", "--runs", "100", "--seed", "1", "--engine",
                         "hypothesis", "--jobs", "1", "--no-report"]
    assert argv[0] in ("pytest", "utf8fuzz"), command
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=cwd, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def outcome(r: subprocess.CompletedProcess[str]) -> str:
    """The final summary line, without its rule (``1 failed, 1 passed in 0.7s``)."""
    return r.stdout.strip().splitlines()[-1].strip("= ")


def test_the_hypothesis_example_runs_as_the_readme_says(tmp_path: Path) -> None:
    (tmp_path / "mydecoder.py").write_text(python_block(README, "# mydecoder.py"))
    (tmp_path / "test_mydecoder.py").write_text(python_block(SECTION, "# test_mydecoder.py"))
    r = run(tmp_path, "pytest -p no:cacheprovider test_mydecoder.py")
    assert r.returncode == 1, r.stdout
    assert re.match(r"1 failed, 1 passed", outcome(r)), r.stdout
    assert "FAILED test_mydecoder.py::test_rejects_exactly_the_ill_formed_input" in r.stdout
    assert "Failing explicit example" in r.stdout and "data=b'\\xc0\\xaf'" in r.stdout
    (tmp_path / "mydecoder.py").write_text(FIXED_DECODER)  # and a right decoder passes
    r = run(tmp_path, "pytest -p no:cacheprovider test_mydecoder.py")
    assert r.returncode == 0 and re.match(r"2 passed", outcome(r)), r.stdout


def test_the_owner_cycle_runs_as_the_readme_says(tmp_path: Path) -> None:
    found, after_fix = console_blocks(SECTION)
    assert found == ["utf8fuzz fuzz --decoder mydecoder:decode --corpus fuzz-corpus --time 60",
                     "pytest --utf8fuzz-corpus=fuzz-corpus --utf8fuzz-decoder=mydecoder:decode"]
    assert after_fix == [found[1],
                         "utf8fuzz corpus refresh fuzz-corpus --decoder mydecoder:decode"]
    naive = python_block(README, "# mydecoder.py")
    (tmp_path / "mydecoder.py").write_text(naive)
    r = run(tmp_path, found[0])
    assert r.returncode == 1, r.stderr  # found something
    r = run(tmp_path, found[1] + " -p no:cacheprovider")
    assert r.returncode == 0, r.stdout  # green: each finding an xfail
    open_findings = int(re.search(r"(\d+) xfailed", outcome(r))[1])  # type: ignore[index]
    assert open_findings >= 1 and "failed" not in outcome(r).replace("xfailed", "")

    (tmp_path / "mydecoder.py").write_text(FIXED_DECODER)
    r = run(tmp_path, after_fix[0] + " -p no:cacheprovider")
    assert r.returncode == 0 and "xfailed" not in outcome(r), r.stdout
    assert "utf8fuzz corpus refresh fuzz-corpus --decoder mydecoder:decode" in r.stdout
    r = run(tmp_path, after_fix[1])
    assert r.returncode == 0 and f"recorded {open_findings} fix" in r.stdout, r.stdout

    (tmp_path / "mydecoder.py").write_text(naive)  # the bug back: CI fails, "regressed"
    r = run(tmp_path, found[1] + " -p no:cacheprovider")
    assert r.returncode == 1, r.stdout
    assert f"{open_findings} failed" in outcome(r)
    # once in each failure's section (the short summary after them repeats it where
    # pytest does not cut its lines, as under CI=true)
    sections = r.stdout.partition("short test summary info")[0]
    assert sections.count("regressed: plugin:mydecoder:decode") == open_findings, r.stdout
