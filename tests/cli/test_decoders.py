"""``utf8fuzz decoders``: what is available here, with versions, and why not."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "utf8fuzz", "decoders", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_json_lists_decoders_with_versions() -> None:
    p = run("--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    by_name = {d["name"]: d for d in obj["available"]}
    assert by_name["cpython:strict"]["versions"]["python"] == ".".join(
        map(str, sys.version_info[:3]))
    assert by_name["ref:unicode:maximal-subpart"]["own"] is True
    assert by_name["cpython:strict"]["own"] is False
    if os.environ.get("CI"):  # CI installs every peer: nothing may be missing there
        assert obj["unavailable"] == []


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed here")
def test_a_missing_peer_is_one_line_saying_why(tmp_path: Path) -> None:
    # A real absence: PATH without node's directory (the interpreter is given by path).
    node_dir = str(Path(shutil.which("node")).resolve().parent)  # type: ignore[arg-type]
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if d and Path(d).resolve() != Path(node_dir))
    p = run(env={**os.environ, "PATH": path})
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("unavailable: node")]
    assert lines and all("node" in ln.split(":", 2)[2] for ln in lines)
    assert "cpython:strict" in p.stdout
