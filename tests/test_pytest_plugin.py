"""The pytest plugin as users run it: ``python -m pytest --utf8fuzz-corpus=DIR
--utf8fuzz-decoder=SPEC`` in a subprocess, in a directory of the user's own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.engine.planted import planted_c080
from utf8fuzz import decoders
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.corpus import load
from utf8fuzz.engine.signature import signature_id
from utf8fuzz.loop.finder import Finder
from utf8fuzz.outcome import Outcome

ROOT = Path(__file__).resolve().parents[1]


def run(cwd: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        # ROOT: the planted decoders (tests.engine.planted) import from the user's side
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {}),
             "PYTHONPATH": os.pathsep.join((str(ROOT), os.environ.get("PYTHONPATH", "")))})


def pytest_(cwd: Path, *args: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return run(cwd, "-m", "pytest", "-p", "no:cacheprovider", *args, env=env)


def counts(r: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """The final summary line (``1 failed, 2 passed in 0.7s``) as a dict."""
    last = r.stdout.strip().splitlines()[-1]
    return {k: int(n) for n, k in re.findall(
        r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)", last)}


def ids(r: subprocess.CompletedProcess[str]) -> list[str]:
    """The node ids ``--co -q`` lists."""
    return [ln for ln in r.stdout.splitlines() if "::" in ln]


# -- the owner's cycle -----------------------------------------------------------------

OWN_DECODER = '''\
"""A user's own decoder with a planted bug: every error is reported at offset 0."""
import os


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        if os.environ.get("OWNBUG_FIXED") == "1":
            raise
        raise UnicodeDecodeError("utf-8", data, 0, 1, "planted") from e
'''


def test_owner_cycle_found_open_fixed_refreshed_regressed(tmp_path: Path) -> None:
    (tmp_path / "ownbug.py").write_text(OWN_DECODER)
    found = run(tmp_path, "-m", "utf8fuzz", "fuzz", "--decoder", "ownbug:decode",
                "--engine", "hypothesis", "--runs", "100", "--seed", "1", "--time", "120",
                "--no-report", "--jobs", "1",
                "--corpus", "corpus")
    assert found.returncode == 1, found.stderr  # 1: new divergences saved
    entries, problems = load(tmp_path / "corpus")
    assert entries and not problems
    n = len(entries)  # each entry checks the reference and the plug-in
    opts = ("--utf8fuzz-corpus=corpus", "--utf8fuzz-decoder=ownbug:decode", "-rxX")

    # found: every finding is an xfail naming its signature, and CI is green
    r = pytest_(tmp_path, *opts)
    assert r.returncode == 0, r.stdout
    assert counts(r) == {"passed": n, "xfailed": n}
    for e in entries:
        assert f"open finding {e.signature}: plugin:ownbug:decode diverges" in r.stdout

    # fixed: the items pass, the summary says how to record it, prune keeps them all
    fixed = {"OWNBUG_FIXED": "1"}
    r = pytest_(tmp_path, *opts, env=fixed)
    assert r.returncode == 0, r.stdout
    assert counts(r) == {"passed": 2 * n}
    assert "utf8fuzz corpus refresh corpus --decoder ownbug:decode" in r.stdout
    r = run(tmp_path, "-m", "utf8fuzz", "corpus", "prune", "corpus", env=fixed)
    assert r.returncode == 0 and "removed 0 stale entries" in r.stdout, r.stdout + r.stderr
    r = run(tmp_path, "-m", "utf8fuzz", "corpus", "refresh", "corpus",
            "--decoder", "ownbug:decode", env=fixed)
    assert r.returncode == 0, r.stderr
    assert f"recorded {n} fix{'' if n == 1 else 'es'} in {n} entr" in r.stdout
    entries = load(tmp_path / "corpus")[0]
    assert len(entries) == n
    assert all("plugin:ownbug:decode" in e.sidecar["fixed"] for e in entries)
    r = pytest_(tmp_path, *opts, env=fixed)
    assert r.returncode == 0 and "refresh" not in r.stdout, r.stdout  # nothing left

    # the bug back: each fixed finding fails, saying so
    r = pytest_(tmp_path, *opts)
    assert r.returncode == 1, r.stdout
    assert counts(r) == {"passed": n, "failed": n}
    assert r.stdout.count("regressed: plugin:ownbug:decode was recorded fixed") == n


# -- test ids -----------------------------------------------------------------------------


def c080_corpus(tmp_path: Path) -> Path:
    """An entry found on planted:accepts-c080, with cpython:replace recorded too."""
    corpus = tmp_path / "corpus"
    f = Finder([planted_c080(), *decoders.resolve("cpython:replace")], corpus, "manual",
               minimize_seconds=2)
    f.consider(b"A\xc0\x80")
    assert len(f.found) == 1
    return corpus


def test_ids_name_the_decoder_checked_are_counted_and_each_reruns_alone(tmp_path: Path
                                                                      ) -> None:
    corpus = c080_corpus(tmp_path)
    (sidecar,) = (corpus / "entries").glob("*.json")
    opts = ("--utf8fuzz-corpus=corpus",
            "--utf8fuzz-decoder=tests.engine.planted:accepts_c080+inprocess")
    r = pytest_(tmp_path, *opts, "--co", "-q")
    prefix = (f"corpus/entries/{sidecar.name}::utf8fuzz[unicode/accepts-ill-formed/"
              "non-shortest-form/")
    # the entry was found on planted:accepts-c080; the last item checks the user's
    assert ids(r) == [prefix + name + "]" for name in (
        "ref:unicode:maximal-subpart", "cpython:replace", "planted:accepts-c080",
        "plugin:tests.engine.planted:accepts_c080")]
    assert "4 tests collected" in r.stdout, r.stdout
    (tmp_path / "tests").mkdir()  # the user's own tests elsewhere: the corpus still runs
    assert ids(pytest_(tmp_path, "tests", *opts, "--co", "-q")) == ids(r)
    r = pytest_(tmp_path, *opts)
    # planted:accepts-c080 is no decoder name here (skipped); the user's decoder has
    # the bug and was never recorded on this entry: a new finding, a failure
    assert counts(r) == {"passed": 2, "skipped": 1, "failed": 1}, r.stdout
    for nodeid in ids(pytest_(tmp_path, *opts, "--co", "-q")):
        r = pytest_(tmp_path, nodeid, *opts, "-v")
        assert sum(counts(r).values()) == 1 and nodeid in r.stdout, r.stdout


class Hostile(Decoder):
    """A decoder whose name would drive a terminal: ESC, a title sequence, a
    right-to-left override, a newline, and pytest's own separators."""

    name = "evil:\x1b]0;owned\x07\u202e::x]\n[y"
    shows = frozenset({"replace"})

    def run(self, data: bytes) -> Outcome:
        raise ValueError("boom")


def test_ids_of_hostile_names_are_printable_ascii_and_rerun(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    Finder([Hostile(), *decoders.resolve("cpython:replace")], corpus, "manual",
           minimize_seconds=1).consider(b"A")
    (path,) = (corpus / "entries").glob("*.json")
    # and a hostile feature: a sidecar is data, whoever wrote it
    side = json.loads(path.read_text())
    side["feature"] = "x\x1b[2J\x00\u2028y"
    side["signature"] = "/".join(("unicode", "crash", side["feature"], *side["decoders"]))
    path.unlink()
    (corpus / "entries" / f"{signature_id(side['signature'])}.json").write_text(
        json.dumps(side))
    assert len(load(corpus)[0]) == 1
    r = pytest_(tmp_path, "--utf8fuzz-corpus=corpus", "--co", "-q")
    found = ids(r)
    assert len(found) == 3, r.stdout + r.stderr
    for line in r.stdout.splitlines():
        assert all(" " <= c <= "~" for c in line), repr(line)
    assert found[2].endswith(r"::utf8fuzz[unicode/crash/x\x1b[2J\x00\u2028y/"
                             r"evil:\x1b]0;owned\x07\u202e::x]\x0a[y]")
    r = pytest_(tmp_path, found[2], "--utf8fuzz-corpus=corpus", "-v")
    assert sum(counts(r).values()) == 1 and found[2] in r.stdout, r.stdout


def test_a_corrupt_entry_is_one_failing_item_named_by_its_path(tmp_path: Path) -> None:
    corpus = c080_corpus(tmp_path)
    (corpus / "entries" / "0000000000000000.json").write_text("[]")
    (tmp_path / "elsewhere.json").write_text("{}")  # never read: it is not in the corpus
    (corpus / "entries" / "1111111111111111.json").symlink_to(tmp_path / "elsewhere.json")
    r = pytest_(tmp_path, "--utf8fuzz-corpus=corpus", "-rf")
    assert "corpus/entries/0000000000000000.json::utf8fuzz[corrupt]" in r.stdout
    assert "not a JSON object" in r.stdout
    assert "corpus/entries/1111111111111111.json::utf8fuzz[corrupt]" in r.stdout
    assert "a symlink that leads out of entries/" in r.stdout
    assert counts(r) == {"failed": 2, "passed": 2, "skipped": 1}, r.stdout


def test_bad_options_are_one_line_and_no_traceback(tmp_path: Path) -> None:
    c080_corpus(tmp_path)
    r = pytest_(tmp_path, "--utf8fuzz-corpus=corpus", "--utf8fuzz-decoder=nosuchmodule:f")
    assert r.returncode == 4 and "Traceback" not in r.stdout + r.stderr
    assert r.stderr.strip() == ("ERROR: --utf8fuzz-decoder nosuchmodule:f: cannot import "
                                "'nosuchmodule' for decoder 'nosuchmodule:f': No module "
                                "named 'nosuchmodule'")
    r = pytest_(tmp_path, "--utf8fuzz-corpus=nowhere")
    assert r.returncode == 4
    assert r.stderr.strip() == "ERROR: --utf8fuzz-corpus nowhere: no entries/ directory there"
