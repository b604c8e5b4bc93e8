"""``utf8fuzz corpus check|list|prune`` as a user runs it: a subprocess. What is not a
corpus is one line and exit 2; options and DIR in any order; nothing read from the
corpus is printed raw."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine import handmade

HOSTILE = ("\x1b", "\u202e", "\x00", "\x07", "\u2028")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "utf8fuzz", "corpus", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("action", ["check", "list", "prune"])
@pytest.mark.parametrize("what", ["not a corpus", "missing"])
def test_a_directory_that_is_not_a_corpus_is_one_line_and_exit_2(
        tmp_path: Path, action: str, what: str) -> None:
    d = tmp_path / "nope"
    if what == "not a corpus":
        (d / "seeds").mkdir(parents=True)
    p = run(action, str(d))
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr
    assert str(d) in p.stderr
    if what == "not a corpus":
        assert "not a corpus" in p.stderr


@pytest.mark.parametrize("args", [["prune", "--dry-run", "{dir}"],
                                  ["prune", "{dir}", "--dry-run"],
                                  ["check", "--json", "{dir}"],
                                  ["check", "{dir}", "--json"]])
def test_options_and_dir_come_in_any_order(tmp_path: Path, args: list[str]) -> None:
    stale = handmade.save(tmp_path, "ValueError", b"\xc0\x80", decoder="cpython:replace")
    p = run(*(a.format(dir=tmp_path) for a in args))
    assert p.returncode == 0, p.stderr
    if "--json" in args:
        assert [e["id"] for e in json.loads(p.stdout)["entries"]] == [stale.stem]
    else:
        assert f"would remove {stale.stem}" in p.stdout
        assert stale.exists()


def test_list_and_check_print_nothing_raw(tmp_path: Path) -> None:
    # terminal escapes, a bidi override, NUL, BEL and a line separator: in an entry's
    # signature, engine and date; in a bad sidecar's file name; in the ``file`` a bad
    # sidecar names (quoted by its message)
    evil = "".join(HOSTILE)
    handmade.save(tmp_path, f"F{evil}", b"\xc0\x80",
                  found={"at": evil, "engine": evil, "original_size": 2, "minimized_size": 2})
    no_nul = evil.replace("\x00", "")  # a file name cannot hold one
    named = tmp_path / "entries" / f"{no_nul}.json"
    named.write_text("{}")
    quoting = handmade.save(tmp_path, "G", b"\xc0\xaf")
    side = json.loads(quoting.read_text())
    side["file"] = f"inputs/../{no_nul}"
    quoting.write_text(json.dumps(side))
    for action in ("list", "check"):
        p = run(action, str(tmp_path))
        assert p.returncode == 1, p.stderr
        for c in HOSTILE:
            assert c not in p.stdout + p.stderr, (action, c)
        # escaped, not dropped
        assert "\\x1b\\u202e\\x07\\u2028.json" in p.stdout  # the bad sidecar's name
        assert "inputs/../\\x1b\\u202e\\x07\\u2028" in p.stdout  # the file it names
        if action == "list":
            assert "F\\x1b\\u202e\\x00\\x07\\u2028/w" in p.stdout  # the signature
        assert "1 good, 2 bad entries" in p.stdout
