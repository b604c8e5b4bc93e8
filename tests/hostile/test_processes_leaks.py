"""Every process an exec client starts ends when the harness is done with it: a
child that keeps the client's stdout open after the client exits, and a grandchild
that calls setsid (decoders/_subprocess.py, "No leaked processes"). Each client
gives its descendants a marker of its own in their argv; /proc must hold none of
them once ``utf8fuzz diff`` or a short ``utf8fuzz fuzz`` has returned."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.processes_common import (
    LEAK_MARKER,
    ROOT,
    TIMEOUT,
    alive_with,
    client,
    fuzz_runs,
)
from utf8fuzz.loop.run import atheris_available


def utf8fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "utf8fuzz", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_diff_leaves_no_descendant_of_a_client_running() -> None:
    marker = f"utf8fuzz-leak-{uuid.uuid4().hex}"
    r = utf8fuzz("diff", "--decoder", client(f"--leak={marker}"), "61 C3")
    assert r.returncode in (0, 1), r.stderr  # (the client agrees with the reference)
    assert alive_with(marker) == []


def test_diff_leaves_no_descendant_of_a_client_that_exits_running() -> None:
    # the client exits on FE; its child keeps the pipe open: no end of file comes,
    # so it is a timeout, then its group and its tagged descendants are killed
    marker = f"utf8fuzz-leak-{uuid.uuid4().hex}"
    r = utf8fuzz("diff", "--json", "--decoder",
                 client("--do=exit", f"--leak={marker}", options=TIMEOUT), "61 FE")
    assert r.returncode in (0, 1), r.stderr
    assert '"status": "timeout"' in r.stdout
    assert alive_with(marker) == []


def test_fuzz_leaves_no_descendant_of_a_client_running(tmp_path_factory: Any) -> None:
    # the client exits on an input with FE and is restarted, several times (the
    # finding is re-run, minimized); a child keeps its stdout: each is a timeout
    rc, out, err, _ = fuzz_runs(tmp_path_factory)["leak"]
    assert rc == 1, err[-2000:]
    assert [n["class"] for n in out["new"]] == ["timeout"]
    assert alive_with(LEAK_MARKER) == []


@pytest.mark.skipif(atheris_available() is not None, reason=str(atheris_available()))
def test_an_atheris_run_leaves_no_descendant_of_a_client_running(tmp_path: Path) -> None:
    # the target is a process of its own, ended by libFuzzer's exit() or killed, its
    # client running then: what that started is ended by the harness
    marker = f"utf8fuzz-leak-{uuid.uuid4().hex}"
    corpus = tmp_path / "corpus"
    (corpus / "seeds").mkdir(parents=True)
    (corpus / "seeds" / "plain").write_bytes(b"plain")
    r = utf8fuzz("fuzz", "--engine", "atheris", "--jobs", "1", "--runs", "200", "--seed", "1",
                 "--time", "60",
                 "--corpus", str(corpus), "--no-report", "--decoder",
                 client("--do=none", f"--leak={marker}", options=TIMEOUT))
    assert r.returncode == 0, r.stderr[-2000:]
    assert alive_with(marker) == []
