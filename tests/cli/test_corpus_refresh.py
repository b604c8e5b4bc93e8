"""``utf8fuzz corpus refresh`` as a user runs it: what it prints, what it writes, and
bad input as one line. (The whole owner's cycle: tests/test_pytest_plugin.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.engine.planted import Planted, planted_c080
from utf8fuzz.loop.finder import Finder

ROOT = Path(__file__).resolve().parents[2]

#: The user's decoder after the fix: the entry's decoder (same name), decoding as
#: CPython does. ``--decoder tests.cli.test_corpus_refresh:FIXED_C080+inprocess``
FIXED_C080 = Planted("planted:accepts-c080", lambda b: b.decode("utf-8", "replace"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "utf8fuzz", "corpus", "refresh", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_refresh_records_the_fix_once_and_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    f = Finder([planted_c080()], tmp_path, "manual", minimize_seconds=1)
    f.consider(b"\xc0\x80")
    (x,) = f.found
    before = x.path.read_text()
    mine = ["--decoder", "tests.cli.test_corpus_refresh:FIXED_C080+inprocess"]
    r = run(str(tmp_path), *mine, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"fixed {x.path.stem}  planted:accepts-c080  {x.sidecar['signature']}",
        f"would record 1 fix in 1 entry of {tmp_path}"]
    assert x.path.read_text() == before
    r = run(str(tmp_path), *mine, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["fixed"] == [{"id": x.path.stem, "signature": x.signature,
                                             "decoders": ["planted:accepts-c080"]}]
    assert "planted:accepts-c080" in json.loads(x.path.read_text())["fixed"]
    r = run(str(tmp_path), *mine)
    assert r.stdout == f"recorded 0 fixes in 0 entries of {tmp_path}\n"


def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    r = run(str(tmp_path / "nowhere"))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    (tmp_path / "entries").mkdir()
    r = run(str(tmp_path), "--decoder", "nosuchmodule:decode")
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("utf8fuzz corpus: cannot import 'nosuchmodule' for decoder "
                        "'nosuchmodule:decode': No module named 'nosuchmodule'\n")
