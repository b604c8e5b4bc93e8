"""A target run directly (by hand, by OSS-Fuzz, by ClusterFuzzLite) ends at its first
new finding as a crash whose libFuzzer artifact is the minimized input, and names the
finding on stderr; ``utf8fuzz fuzz`` keeps going (utf8fuzz.loop.atheris_target)."""

import hashlib
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from utf8fuzz.loop.atheris_target import (
    NewDivergence,
    StopAtFinding,
    raise_named,
)
from utf8fuzz.loop.finder import NewSignature
from utf8fuzz.loop.run import atheris_available, fuzz

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "fuzz" / "differential.py"
C080 = "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"
#: libFuzzer's name for a crash on C0 80, the planted bug's minimized input
ARTIFACT = f"crash-{hashlib.sha1(bytes([0xC0, 0x80])).hexdigest()}"

needs_atheris = pytest.mark.skipif(atheris_available() is not None,
                                   reason=str(atheris_available()))


def run_target(tmp_path, spec, *args, corpus=None, **env):
    """``fuzz/differential.py ARGS`` in ``tmp_path`` on one planted decoder, as
    ClusterFuzzLite runs a target: no ``utf8fuzz fuzz`` parent, artifacts under
    ``tmp_path/art/``. The timeout only stops a hung run."""
    (tmp_path / "art").mkdir(exist_ok=True)
    env = {**os.environ, "UTF8FUZZ_DECODERS": json.dumps([f"tests.engine.planted:{spec}"]),
           "UTF8FUZZ_CORPUS": str(corpus or tmp_path / "corpus"),
           "UTF8FUZZ_MINIMIZE_SECONDS": "2", "PYTHONPATH": str(ROOT), **env}
    env.pop("UTF8FUZZ_KEEP_GOING", None)
    return subprocess.run([sys.executable, str(TARGET), f"-artifact_prefix={tmp_path}/art/",
                           *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def seeds(tmp_path):
    """One seed that shows the planted bug only after padding: its minimized input
    (C0 80) is an input libFuzzer never ran before the finding."""
    d = tmp_path / "seeds"
    d.mkdir(parents=True)
    (d / "padded").write_bytes(b"abc\xc0\x80xyz")
    return d


def crash_files(tmp_path):
    return sorted((tmp_path / "art").glob("crash-*"))


@needs_atheris
@pytest.mark.parametrize("spec", ["PLANTED_C080+inprocess", "PLANTED_C080"])
def test_a_new_finding_ends_the_run_as_a_crash_on_its_minimized_input(tmp_path, spec):
    # in-process: found in a round; isolated: in a bulk of the out-of-process decoder
    p = run_target(tmp_path, spec, "-max_total_time=60", str(seeds(tmp_path)))
    assert p.returncode == 77, p.stderr[-3000:]  # libFuzzer's crash status
    assert [f.name for f in crash_files(tmp_path)] == [ARTIFACT], p.stderr[-3000:]
    assert crash_files(tmp_path)[0].read_bytes() == b"\xc0\x80"
    line = f"utf8fuzz: new divergence {C080}: minimized input C0 80 (from 8 bytes), saved as "
    assert line in p.stderr
    assert f"Test unit written to {tmp_path}/art/{ARTIFACT}" in p.stderr
    # saved before the crash (with any other finding compared with it)
    sides = {json.loads(e.read_text())["signature"]: json.loads(e.read_text())
             for e in (tmp_path / "corpus" / "entries").glob("*.json")}
    assert sides[C080]["input"] == "c080"
    # the traceback (Atheris prints it on stdout) ends in a frame named after the
    # finding (family and rule): what ClusterFuzz names and deduplicates the crash by
    f = sides[C080]["finding"]
    assert f", in {f['family']}/{f['rule']}\n" in p.stdout, p.stdout[-3000:]


@needs_atheris
def test_the_crash_reproduces_from_its_artifact_until_the_corpus_knows_it(tmp_path):
    # ClusterFuzzLite runs the target on the artifact alone to see that it reproduces
    p = run_target(tmp_path, "PLANTED_C080+inprocess", "-max_total_time=60",
                   str(seeds(tmp_path)))
    (crash,) = crash_files(tmp_path)
    again = run_target(tmp_path, "PLANTED_C080+inprocess", str(crash),
                       corpus=tmp_path / "fresh")
    assert again.returncode != 0, again.stderr[-3000:]
    assert f"new divergence {C080}" in again.stderr
    # with the corpus of the first run (which saved it), the finding is known
    known = run_target(tmp_path, "PLANTED_C080+inprocess", str(crash))
    assert known.returncode == 0, (p.stderr[-1000:], known.stderr[-3000:])


@needs_atheris
def test_a_finding_made_as_the_run_ends_is_written_by_the_target(tmp_path):
    # -runs=0: libFuzzer runs the seed and exits; the round is compared at exit,
    # too late for libFuzzer to run the minimized input: the target writes it
    p = run_target(tmp_path, "PLANTED_C080+inprocess", "-runs=0", "-error_exitcode=3",
                   str(seeds(tmp_path)))
    assert p.returncode == 3, p.stderr[-3000:]
    assert [f.read_bytes() for f in crash_files(tmp_path)] == [b"\xc0\x80"]
    assert (f"{C080}: minimized input C0 80 (from 8 bytes), saved as " in p.stderr
            and p.stderr.rstrip().endswith(
                f"Test unit written to {tmp_path}/art/{ARTIFACT}")), p.stderr[-3000:]


@needs_atheris
def test_inputs_libfuzzer_runs_past_the_deadline_are_not_compared(tmp_path):
    # the harness's deadline has passed (a slow start, seeds run past it): the seed
    # that shows the bug is not compared, so nothing is found, minimized or written
    p = run_target(tmp_path, "PLANTED_C080+inprocess", "-runs=20", "-error_exitcode=3",
                   str(seeds(tmp_path)), UTF8FUZZ_DEADLINE=repr(time.time() - 1))
    assert p.returncode == 0, p.stderr[-3000:]
    assert not crash_files(tmp_path)
    assert not (tmp_path / "corpus" / "entries").exists()


@needs_atheris
def test_a_target_started_past_the_deadline_builds_no_decoder(tmp_path):
    # a -fork job (or the merge of one's inputs) libFuzzer starts as the time runs
    # out: the decoders' start (seconds with every decoder and its peers) would all
    # be past --time, for inputs never compared. A decoder that cannot load shows
    # whether any was built: the target runs its seeds and ends, exit 0.
    p = run_target(tmp_path, "no_such_decoder+inprocess", "-print_final_stats=1",
                   str(seeds(tmp_path)), UTF8FUZZ_DEADLINE=repr(time.time() - 1))
    assert p.returncode == 0 and "UnknownDecoder" not in p.stderr, p.stderr[-3000:]
    assert "stat::number_of_executed_units: 2" in p.stderr, p.stderr[-3000:]
    assert not crash_files(tmp_path) and not (tmp_path / "corpus").exists()


@needs_atheris
def test_utf8fuzz_fuzz_keeps_going_after_a_finding(tmp_path, monkeypatch):
    # its target subprocess saves each finding and goes on: no crash, no artifact
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    corpus = tmp_path / "corpus"
    seeds(corpus)
    # bounded by a count: the time is a limit, and what the target meets past it
    # (a slow start on a busy machine) is not compared
    r = fuzz([], engine="atheris", seconds=120, runs=1, seed=1, corpus=corpus,
             specs=["tests.engine.planted:PLANTED_C080+inprocess"], minimize_seconds=2)
    assert "atheris_error" not in r, r.get("atheris_error")
    assert any(x["input"] == "c080" for x in r["new"]), r["new"]
    assert not list(tmp_path.rglob("crash-*"))


def finding(signature, data=b"\xc0\x80", fid=""):
    return NewSignature(signature, ("planted:accepts-c080",), "accepts-ill-formed",
                        "non-shortest-form", data, 8, Path("corpus/entries/x.json"), False,
                        finding={"id": fid} if fid else {})


def test_evidence_of_a_finding_the_corpus_had_does_not_stop_the_run():
    stop = StopAtFinding(["t.py"], before=frozenset({"f1"}))
    stop.found(finding("unicode/accepts-ill-formed/non-shortest-form/a", fid="f1"), b"\xc0\x80")
    assert stop.pending is None  # saved as evidence; libFuzzer goes on
    with pytest.raises(NewDivergence):
        stop.found(finding("unicode/accepts-ill-formed/non-shortest-form/b", fid="f2"),
                   b"\xc0\x80")


def test_the_crash_line_and_frame_name_are_printable_ascii(capsys):
    # a plug-in's decoder name is part of the signature: it may hold anything
    stop = StopAtFinding(["t.py"])
    stop.note(finding("unicode/crash/Error/evil:\x1b[2J\u202e\n"))
    with pytest.raises(NewDivergence) as e:
        stop.check(b"\xc0\x80")
    err = capsys.readouterr().err
    assert err.endswith("\n") and err[:-1].isascii() and err[:-1].isprintable()
    assert "evil:\\x1b[2J\\u202e\\x0a" in err
    frame = traceback.extract_tb(e.value.__traceback__)[-1]
    assert frame.name == "unicode/crash/Error/evil:\\x1b[2J\\u202e\\x0a"


def test_raise_named_raises_from_a_frame_of_that_name():
    with pytest.raises(NewDivergence, match="the message") as e:
        raise_named("profile/class/feature/decoder", "the message")
    assert traceback.extract_tb(e.value.__traceback__)[-1].name == (
        "profile/class/feature/decoder")


def test_the_kept_input_is_libfuzzers_next_input_and_the_only_one_compared():
    stop = StopAtFinding(["t.py", "-max_len=64", "corpus-dir"])
    mutate = stop.mutator(lambda data, max_size, seed: b"mutated")
    assert mutate(b"x", 64, 1) == b"mutated"
    stop.found(finding(C080), b"abc\xc0\x80xyz")  # kept: not the input libFuzzer ran
    assert stop.pending == b"\xc0\x80"
    assert mutate(b"x", 64, 1) == b"\xc0\x80"
    assert mutate(b"x", 1, 1) == b"mutated"  # too long for this call: later
    stop.check(b"other input")  # not it: no crash
    with pytest.raises(NewDivergence):
        stop.check(b"\xc0\x80")


def test_inputs_run_one_by_one_crash_at_once(tmp_path):
    # libFuzzer runs files given by name one by one (reproducing), directories as corpora
    crash = tmp_path / "crash-1"
    crash.write_bytes(b"abc\xc0\x80")
    assert StopAtFinding(["t.py", "-runs=3", str(crash)]).one_by_one
    assert not StopAtFinding(["t.py", str(crash), str(tmp_path)]).one_by_one
    assert not StopAtFinding(["t.py", "-runs=3"]).one_by_one
    stop = StopAtFinding(["t.py", str(crash)])
    with pytest.raises(NewDivergence):
        stop.found(finding(C080), crash.read_bytes())

