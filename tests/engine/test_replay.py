import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.planted import Planted, accepts_c080, planted_c080
from utf8fuzz import decoders
from utf8fuzz.engine import replay
from utf8fuzz.engine.corpus import load
from utf8fuzz.engine.finder import Finder

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def entry_path(tmp_path):
    cp = decoders.resolve("cpython:replace")
    f = Finder([planted_c080(), *cp], tmp_path, "manual", minimize_seconds=2)
    f.consider(b"A\xc0\x80")
    (x,) = f.found
    assert "cpython:replace" in x.sidecar["outcomes"]
    return x.path


def entry(path):
    (e,) = [e for e in load(path.parent.parent)[0] if e.path == path]
    return e


def edit(path, fn):
    side = json.loads(path.read_text())
    fn(side)
    path.write_text(json.dumps(side))


def verdict(path, name):
    return {v.decoder: v for v in replay.replay_entry(entry(path))}[name]


def test_external_decoder_with_recorded_behaviour_passes(entry_path):
    v = verdict(entry_path, "cpython:replace")
    assert v.status == "pass" and not v.notes
    assert verdict(entry_path, "planted:accepts-c080").status == "skip"


def test_new_version_same_behaviour_passes_with_a_note(entry_path):
    edit(entry_path, lambda s: s["outcomes"]["cpython:replace"]["versions"].update(
        python="2.7.0"))
    v = verdict(entry_path, "cpython:replace")
    assert v.status == "pass" and "version changed" in v.notes[0] and "2.7.0" in v.notes[0]


def test_changed_behaviour_fails_plainly(entry_path):
    def tamper(s):
        s["outcomes"]["cpython:replace"]["outcome"]["views"]["replace"] = [0x41, 0]
    edit(entry_path, tamper)
    v = verdict(entry_path, "cpython:replace")
    assert v.status == "fail"
    assert "behaviour of cpython:replace changed" in v.message
    assert "now agrees with the reference" in v.message


def test_own_decoder_must_agree_with_the_reference(entry_path, monkeypatch):
    buggy = Planted("planted:accepts-c080", accepts_c080)
    buggy.own = True
    monkeypatch.setattr(replay, "_resolve", lambda name: buggy if name.startswith(
        "planted") else decoders.resolve(name)[0])
    v = verdict(entry_path, "planted:accepts-c080")
    assert v.status == "fail" and "disagrees with the reference" in v.message
    fixed = Planted("planted:accepts-c080", lambda b: b.decode("utf-8", "replace"))
    fixed.own = True
    monkeypatch.setattr(replay, "_resolve", lambda name: fixed if name.startswith(
        "planted") else decoders.resolve(name)[0])
    assert verdict(entry_path, "planted:accepts-c080").status == "pass"


def test_changed_reference_expectation_fails(entry_path):
    edit(entry_path, lambda s: s["expectation"]["substitute"]["output"].append("U+0041"))
    assert verdict(entry_path, "ref:unicode:maximal-subpart").status == "fail"


def test_pytest_plugin_replays_a_corpus_and_names_a_corrupt_entry(entry_path, tmp_path):
    corpus = entry_path.parent.parent
    (corpus / "entries" / "0000000000000000.json").write_text("[]")
    empty = tmp_path / "t"
    empty.mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(empty),
         f"--utf8fuzz-corpus={corpus}",
         "--utf8fuzz-decoder=tests.engine.planted:PLANTED_C080+inprocess"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "0000000000000000.json" in out and "not a JSON object" in out
    assert "does not meet the expectation" in out  # the user's decoder has the bug
    assert "2 failed" in out, out
