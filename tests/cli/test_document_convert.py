"""``utf8fuzz document`` and ``utf8fuzz convert``."""

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "utf8fuzz", *args], capture_output=True, text=True, timeout=60
    )


def test_document_json_and_exit_status() -> None:
    p = run("document", "EF B7 9D ED B2 AE 00 0A 68 69 0A", "--json")
    assert p.returncode == 0
    obj = json.loads(p.stdout)
    assert obj["magic"] and obj["conforming"] and obj["warnings"] == []
    p = run("document", "68 00 0A", "--json")
    assert p.returncode == 1
    assert json.loads(p.stdout)["errors"][0]["start"] == 1


def test_convert_round_trip(tmp_path: Path) -> None:
    src, mid, back = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    src.write_bytes("naïve € 😀\n".encode())
    assert run("convert", "--to", "corrected", str(src), str(mid)).returncode == 0
    assert mid.read_bytes() != src.read_bytes()
    assert run("convert", "--to", "utf8", str(mid), str(back)).returncode == 0
    assert back.read_bytes() == src.read_bytes()


def test_convert_refusal_leaves_the_output_untouched(tmp_path: Path) -> None:
    src, out = tmp_path / "a", tmp_path / "out"
    src.write_bytes("\u0085".encode())
    out.write_bytes(b"previous")
    p = run("convert", "--to", "corrected", str(src), str(out))
    assert p.returncode == 2 and "U+0085" in p.stderr and "Traceback" not in p.stderr
    assert out.read_bytes() == b"previous"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a", "out"]
