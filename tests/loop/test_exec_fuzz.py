"""`utf8fuzz fuzz` on an exec client in C, end to end through the real CLI: a
planted bug is found and saved as exactly one signature; the correct client gives
no findings.

The client is the C example (examples/exec/c/utf8_client.c), compiled here with
the system cc. The planted bug removes one line of it: the bound that keeps
encoded surrogates (ED A0..BF) out. It is tied to one feature (surrogate), and
its validate mode (the one decoder fuzzed) can only say "well-formed" where the
reference rejects, so every divergence it has is the same signature. corpus/seeds
hold inputs it accepts wrongly, and the loop replays the seeds first: it cannot
miss it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from utf8fuzz.decoders import resolve
from utf8fuzz.decoders.reference import reference

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "exec" / "c" / "utf8_client.c"
SEEDS = ROOT / "corpus" / "seeds"
CC = shutil.which("cc")
SURROGATE_BOUND = "else if (b == 0xED) hi = 0x9F; /* no surrogates */"
pytestmark = pytest.mark.skipif(CC is None, reason="cc is not on PATH")


def build(tmp_path: Path, name: str, *, planted: bool) -> Path:
    source = CLIENT.read_text()
    assert source.count(SURROGATE_BOUND) == 1
    if planted:
        source = source.replace(SURROGATE_BOUND, "/* planted: surrogates accepted */")
    src, exe = tmp_path / f"{name}.c", tmp_path / name
    src.write_text(source)
    subprocess.run([CC or "cc", "-std=c11", "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def fuzz(spec: str, corpus: Path) -> tuple[int, dict[str, object], str]:
    shutil.copytree(SEEDS, corpus / "seeds")
    r = subprocess.run([sys.executable, "-m", "utf8fuzz", "fuzz", "--decoder", spec,
                        "--runs", "300", "--seed", "1", "--time", "120", "--jobs", "1",
                        "--corpus", str(corpus), "--no-report",
                        "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return r.returncode, json.loads(r.stdout) if r.stdout.strip() else {}, r.stderr


def test_a_planted_bug_in_a_c_client_is_found_and_saved_once(tmp_path: Path) -> None:
    exe = build(tmp_path, "planted", planted=True)
    spec = "exec:" + shlex.quote(str(exe)) + "+validate"
    # the seeds alone meet the bug: the loop replays them before it mutates anything
    (dec,) = resolve(spec)
    try:
        ref = reference("unicode")
        seeds = [p.read_bytes() for p in sorted(SEEDS.iterdir())]
        assert any(o.view("accept") and ref.decode(s).view("strict") is not None
                   for s, o in zip(seeds, dec.decode_many(seeds), strict=True))
    finally:
        dec.close()
    rc, out, err = fuzz(spec, tmp_path / "corpus")
    assert rc == 1, err[-2000:]
    sig = "unicode/accepts-ill-formed/surrogate/exec:c-maximal-subpart:validate"
    assert [n["signature"] for n in out["new"]] == [sig], out["new"]  # type: ignore[union-attr]
    (entry,) = (tmp_path / "corpus" / "entries").glob("*.json")
    saved = json.loads(entry.read_text())
    assert saved["signature"] == sig
    assert saved["outcomes"]["exec:c-maximal-subpart:validate"]["spec"] == spec


def test_the_correct_c_client_gives_no_findings(tmp_path: Path) -> None:
    exe = build(tmp_path, "correct", planted=False)
    rc, out, err = fuzz("exec:" + shlex.quote(str(exe)), tmp_path / "corpus")
    assert rc == 0, err[-2000:]
    assert out["decoders"] == [f"exec:c-maximal-subpart:{m}"
                               for m in ("replace", "strict", "validate")]
    assert out["new"] == [] and out["divergent_inputs"] == 0 and out["crashes"] == 0
    assert int(out["executions"]) > 0  # type: ignore[call-overload]
