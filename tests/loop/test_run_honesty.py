"""``utf8fuzz fuzz`` as a nightly job meets it: exit codes that cannot lie, a decoder
that kills its process becomes a finding, ``--time`` is a limit, ``--json`` is one
document, a log shows the run alive, nothing is left outside the corpus.

Each run is the real command in a subprocess, from an empty directory, on a corpus
whose seed holds ``FE``: the byte the killers of :mod:`tests.engine.killers` act on,
so every run meets it in its first round.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.loop.run import GRACE, atheris_available

ROOT = Path(__file__).resolve().parents[2]
needs_atheris = pytest.mark.skipif(atheris_available() is not None,
                                   reason=str(atheris_available()))


def fuzz(tmp: Path, killer: str, *args: str, timeout: float = 2, seconds: float = 120,
         runs: int | None = 50) -> tuple[int, dict[str, Any], str, float]:
    """Run ``utf8fuzz fuzz --json`` on one killer, ``runs`` inputs from a fixed seed
    (``seconds`` a limit only; None: until ``seconds``); (status, summary, stderr,
    seconds)."""
    corpus, cwd, tmpdir = tmp / "corpus", tmp / "cwd", tmp / "tmpdir"
    for d in (corpus / "seeds", cwd, tmpdir):
        d.mkdir(parents=True, exist_ok=True)
    (corpus / "seeds" / "fe").write_bytes(b"A\xfeB")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir),
           "UTF8FUZZ_DECODER_TIMEOUT": str(timeout)}
    started = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "utf8fuzz", "fuzz", "--time", str(seconds), "--jobs", "1",
         *(["--runs", str(runs), "--seed", "1"] if runs is not None else []),
         "--decoder", f"tests.engine.killers:{killer}+inprocess", "--corpus", str(corpus),
         "--no-report", "--json", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=seconds + 120)
    return p.returncode, json.loads(p.stdout), p.stderr, time.monotonic() - started


def crash_finding(summary: dict[str, Any], feature: str) -> dict[str, Any]:
    (x,) = [n for n in summary["new"] if n["feature"] == feature]
    assert b"\xfe" in bytes.fromhex(x["input"])
    return x


@pytest.mark.parametrize(("killer", "feature", "ends_process"), [
    ("segfaults_on_fe", "SIGSEGV", True),
    ("aborts_on_fe", "SIGABRT", True),
    # what a decoder raises is its outcome (decoders/base.py): the process goes on
    ("exits_on_fe", "SystemExit", False),
    ("interrupts_on_fe", "KeyboardInterrupt", False),
])
def test_a_decoder_that_ends_its_process_is_a_crash_finding_and_exit_1(
        tmp_path: Path, killer: str, feature: str, ends_process: bool) -> None:
    rc, out, err, _ = fuzz(tmp_path, killer, "--engine", "hypothesis")
    assert rc == 1, err
    assert not out["failures"], out["failures"]
    x = crash_finding(out, feature)
    assert x["class"] == "crash" and (out["processes_ended"] >= 1) == ends_process
    # the count of crashes agrees with the findings beside it, whether or not the
    # process ended (a SystemError crash finding beside "crashes: 0" misled)
    assert out["crashes"] == sum(f["rule"].startswith("crash:") for f in out["findings"]) >= 1
    # the input the summary shows is the one the corpus holds
    entries, problems = corpus_mod.load(tmp_path / "corpus")
    assert not problems
    (entry,) = [e for e in entries if e.signature == x["signature"]]
    assert entry.sidecar["input"] == x["input"]


@needs_atheris
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_atheris_engine_recovers_too_and_counts_its_divergent_inputs(
        tmp_path: Path, jobs: str) -> None:
    # --jobs 2 is libFuzzer's -fork, told to ignore crashes: one dead child does
    # not end the campaign
    rc, out, err, _ = fuzz(tmp_path, "segfaults_on_fe", "--engine", "atheris", "--jobs", jobs)
    assert rc == 1, err
    assert not out["failures"], out["failures"]
    crash_finding(out, "SIGSEGV")
    assert out["divergent_inputs"] >= 1 and out["executions"] >= 1


@pytest.mark.parametrize("engine", [
    "hypothesis", pytest.param("atheris", marks=needs_atheris)])
def test_time_is_a_limit_with_a_hanging_decoder(tmp_path: Path, engine: str) -> None:
    seconds, timeout = 8.0, 1.0
    rc, out, err, took = fuzz(tmp_path, "hangs_on_fe", "--engine", engine,
                              timeout=timeout, seconds=seconds, runs=None)
    assert rc == 1, err
    crash_finding(out, "timeout")
    # the bound of the module docstring, plus start-up: generous, since the machine
    # is shared; without the limit such a run took several times its --time
    assert took < seconds + timeout + GRACE + 20


def test_no_stray_files_outside_the_corpus(tmp_path: Path) -> None:
    engines = "both" if atheris_available() is None else "hypothesis"
    shared = ROOT / "fuzz" / "work"  # the source tree's: never the run's
    before = set(shared.rglob("*")) if shared.exists() else set()
    rc, out, err, _ = fuzz(tmp_path, "segfaults_on_fe", "--engine", engines, "--jobs", "2")
    assert rc == 1, err
    assert list((tmp_path / "cwd").iterdir()) == []  # no crash-*, inflight-*, .hypothesis
    assert list((tmp_path / "tmpdir").iterdir()) == []  # no /tmp/utf8fuzz-target-*
    work = Path(out["work"])
    assert work == tmp_path / "corpus" / "work" and not (work / "tmp").exists()
    assert (set(shared.rglob("*")) if shared.exists() else set()) == before


def test_interrupted_json_is_one_document_and_exit_130(tmp_path: Path) -> None:
    corpus, cwd = tmp_path / "corpus", tmp_path / "cwd"
    cwd.mkdir()
    p = subprocess.Popen(
        [sys.executable, "-m", "utf8fuzz", "fuzz", "--engine", "hypothesis", "--time", "60",
         "--jobs", "1", "--decoder", "tests.engine.planted:PLANTED_C080+inprocess",
         "--corpus", str(corpus), "--no-report", "--json"],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        # as a terminal's Ctrl-C reaches it: a job started in the background of a
        # shell without job control (a CI script's `cmd &`) inherits SIGINT ignored,
        # and a program started so rightly stays uninterruptible
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # fuzzing has begun once the work directory exists; then a little more
        deadline = time.monotonic() + 60
        while not (corpus / "work").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(3)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    out = json.loads(stdout)  # exactly one document: nothing before or after it
    assert out["interrupted"] is True and not out["failures"]


def test_a_report_path_that_is_a_file_is_a_usage_error_before_fuzzing(
        tmp_path: Path) -> None:
    (tmp_path / "report").write_text("not a directory")
    started = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "utf8fuzz", "fuzz", "--engine", "hypothesis", "--time", "600",
         "--corpus", str(tmp_path / "corpus"), "--report", str(tmp_path / "report")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert "--report" in p.stderr and "is not a directory" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 300  # it did not fuzz its 600 s first


def test_a_log_that_is_not_a_terminal_shows_the_run_alive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    from utf8fuzz.cli import main
    from utf8fuzz.commands import fuzz as fuzz_command

    monkeypatch.setattr(fuzz_command, "PROGRESS_EVERY", 0.5)
    rc = main(["fuzz", "--engine", "hypothesis", "--time", "3", "--jobs", "1",
               "--decoder", "cpython:strict", "--corpus", str(tmp_path / "corpus"),
               "--no-report"])
    assert rc in (0, 1)
    lines = [x for x in capsys.readouterr().err.splitlines()
             if x.startswith("utf8fuzz fuzz: fuzzing")]
    assert len(lines) >= 2 and "execs" in lines[-1]
