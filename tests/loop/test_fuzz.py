"""Planted bugs are found by the fuzz loop within a short budget, minimized to the
expected few bytes, saved with the right signature, and replayed.

Every run is bounded by a count of inputs from a fixed seed (``runs``, ``seed``):
what it meets, and so what it saves, is the same on any machine, under any load;
its time (:data:`LIMIT`) only stops a run on a machine starved for minutes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.planted import (
    Crashes,
    CrashesOnFirstSight,
    planted_c080,
    planted_truncated4,
)
from utf8fuzz.cli import main
from utf8fuzz.engine.corpus import load
from utf8fuzz.loop.finder import Finder
from utf8fuzz.loop.run import atheris_available, fuzz
from utf8fuzz.pytest_plugin import check_entry

SEEDS = Path(__file__).resolve().parents[2] / "corpus" / "seeds"
#: Each run's time: a limit only, far past what its count takes (a run of 400
#: inputs took over 120 s under a load of 22 on two cores).
LIMIT = 600


@pytest.fixture
def corpus(tmp_path):
    shutil.copytree(SEEDS, tmp_path / "seeds")
    return tmp_path


def test_hypothesis_engine_finds_minimizes_and_saves_planted_bugs(corpus):
    r = fuzz([planted_c080(), planted_truncated4(), Crashes()], engine="hypothesis",
             runs=300, seed=1, seconds=LIMIT, corpus=corpus)
    assert r["ended"] == "runs" and (r["runs"], r["seed"]) == (300, 1)
    new = {x["signature"]: x for x in r["new"]}
    c080 = new["unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"]
    assert c080["input"] == "c080" and c080["class"] == "accepts-ill-formed"
    t4 = new["unicode/different-replacement/incomplete-4-byte-sequence/"
             "planted:swallows-after-truncated4"]
    assert len(t4["input"]) // 2 <= 4 and t4["input"].startswith("f0")
    assert new["unicode/crash/IndexError/planted:crashes-on-fe"]["input"] == "fe"
    assert r["executions"] > 0 and r["decoders"]
    # the workers' counts reach the summary: bytes compared (MB/s) and, per decoder,
    # the inputs it saw (every in-process decoder sees every input compared)
    assert r["bytes"] > 0 and r["mb_per_sec"] is not None
    assert set(r["inputs_seen"]) == set(r["decoders"])
    assert min(r["inputs_seen"].values()) >= 300
    entries, problems = load(corpus)
    assert not problems and {e.signature for e in entries} == set(new)


@pytest.mark.parametrize("engine", ["hypothesis", pytest.param(
    "atheris", marks=pytest.mark.skipif(atheris_available() is not None,
                                        reason=str(atheris_available())))])
def test_a_counted_run_is_the_same_run_on_every_try(tmp_path, engine, monkeypatch):
    # No seeds: what is found is what the engine generates. The same count from the
    # same seed is the same inputs in the same order, so the same findings, each
    # on the same minimized input, whatever the machine's load.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the target imports tests.*

    def run(name):
        decs = [] if engine == "atheris" else [planted_truncated4(), planted_c080()]
        r = fuzz(decs, engine=engine, runs=400, seed=7, seconds=LIMIT, corpus=tmp_path / name,
                 specs=["tests.engine.planted:PLANTED_TRUNCATED4+inprocess",
                        "tests.engine.planted:PLANTED_C080+inprocess"])
        assert not r["failures"], r["failures"]
        assert (r["ended"], r["runs"], r["seed"]) == ("runs", 400, 7)
        return r

    first, again = run("first"), run("again")
    assert first["new"], "nothing found: the test shows nothing"
    assert [(x["signature"], x["input"]) for x in first["new"]] == [
        (x["signature"], x["input"]) for x in again["new"]]
    assert [f["id"] for f in first["findings"]] == [f["id"] for f in again["findings"]]
    assert first["executions"] == again["executions"]


def test_with_runs_and_time_whichever_comes_first_ends_the_run(tmp_path):
    # --time stays a limit: a count no run reaches in a second is cut, and says so
    r = fuzz([planted_c080()], engine="hypothesis", runs=10**9, seed=1, seconds=1,
             corpus=tmp_path)
    assert r["ended"] == "time" and r["executions"] < 10**9 and not r["failures"]
    # without a count, a time-bounded run as before: no seed drawn, ended by the time
    r = fuzz([planted_c080()], engine="hypothesis", seconds=0.5, corpus=tmp_path)
    assert (r["runs"], r["seed"], r["ended"]) == (None, None, "time")


def test_replay_of_an_external_planted_bug(corpus, monkeypatch):
    fuzz([planted_c080()], engine="hypothesis", runs=1, seed=1, seconds=LIMIT, corpus=corpus)
    (entry,) = [e for e in load(corpus)[0] if e.data == b"\xc0\x80"]
    # planted:* is not a registered decoder: replay skips it, saying why
    with pytest.raises(pytest.skip.Exception, match="not available"):
        check_entry(entry)


def test_a_second_run_finds_nothing_new(corpus):
    first = fuzz([planted_c080()], engine="hypothesis", runs=100, seed=1, seconds=LIMIT,
                 corpus=corpus)
    assert first["new"]
    # The second run replays what the first saved, then generates other inputs (another
    # seed): whatever it meets, the one bug is the one signature it already has (an
    # accepted C0 80 is blamed on itself, never on an error beside it).
    r = fuzz([planted_c080()], engine="hypothesis", runs=300, seed=2, seconds=LIMIT,
             corpus=corpus)
    assert r["new"] == [] and r["executions"] >= len(first["new"])


def test_cli_plugin_decoder_json_and_exit_status(corpus, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    rc = main(["fuzz", "--engine", "hypothesis", "--runs", "100", "--seed", "1",
               "--time", str(LIMIT), "--jobs", "1",
               "--decoder", "tests.engine.planted:PLANTED_C080+inprocess",
               "--corpus", str(corpus), "--no-report", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert set(out) >= {"decoders", "executions", "execs_per_sec", "new"}
    assert (out["runs"], out["seed"], out["ended"]) == (100, 1, "runs")
    (x,) = [n for n in out["new"] if n["class"] == "accepts-ill-formed"]
    assert x["input"] == "c080" and x["feature"] == "non-shortest-form"
    # replayed by pytest through the plugin API: a plug-in the corpus names is not
    # run unless given (a corpus is data)
    (entry,) = [e for e in load(corpus)[0] if e.signature == x["signature"]]
    with pytest.raises(pytest.skip.Exception, match="not given here"):
        check_entry(entry)
    # given as the caller's own, it is held to the expectation: it does not meet
    # it, and it diverged when recorded, so the finding is open (an xfail)
    with pytest.raises(pytest.xfail.Exception, match="open finding"):
        check_entry(entry, ("tests.engine.planted:PLANTED_C080+inprocess",))


def test_cli_usage_errors(capsys):
    assert main(["fuzz", "--time", "0"]) == 2
    assert main(["fuzz", "--runs", "0"]) == 2
    assert main(["fuzz", "--runs", "1", "--seed", "-1"]) == 2
    assert main(["fuzz", "--decoder", "no-such-decoder", "--time", "1"]) == 2
    assert main(["fuzz", "--profile", "nope", "--time", "1"]) == 2


needs_atheris = pytest.mark.skipif(atheris_available() is not None,
                                   reason=str(atheris_available()))


def run_atheris(corpus, monkeypatch, spec, *, runs, jobs=1):
    """``utf8fuzz fuzz --engine atheris`` on one planted decoder, from the checkout
    (where the target imports ``tests.engine.planted``), ``runs`` inputs from a fixed
    seed; its run must not fail."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    r = fuzz([], engine="atheris", runs=runs, seed=1, seconds=LIMIT, corpus=corpus,
             jobs=jobs, specs=[f"tests.engine.planted:{spec}"])
    assert not r["failures"], r["failures"]
    return r


@needs_atheris
def test_atheris_engine_finds_the_planted_bug(corpus, monkeypatch):
    r = run_atheris(corpus, monkeypatch, "PLANTED_C080+inprocess", runs=500)
    assert r["executions"] > 500 and r["ended"] == "runs"
    sigs = {x["signature"]: x for x in r["new"]}
    assert any(x["input"] == "c080" for x in sigs.values()), sigs


@needs_atheris
def test_atheris_on_two_cores_finds_the_planted_bug(corpus, monkeypatch):
    # --jobs 2 is libFuzzer's -fork=2: its workers are started by running the
    # target's argv[0] again (a bug once: "fuzz/differential.py: Permission denied",
    # and nothing run at all). The isolated plug-in is compared in batches.
    r = run_atheris(corpus, monkeypatch, "PLANTED_C080", runs=500, jobs=2)
    assert r["executions"] > 100
    assert any(x["input"] == "c080" for x in r["new"]), r["new"]


@needs_atheris
def test_the_atheris_target_compares_the_last_batch_at_exit(tmp_path):
    # An isolated plug-in is compared in batches of 128 inputs or each second.
    # libFuzzer ends the process with exit(), which runs no Python exit handler:
    # -runs=0 runs the one seed (C0 80) and exits at once, inside the first
    # batch, so the planted bug is found only if the target's C exit handler
    # compares the last batch.
    root = Path(__file__).resolve().parents[2]
    seeds = tmp_path / "in"
    seeds.mkdir()
    (seeds / "c080").write_bytes(b"\xc0\x80")
    log = tmp_path / "found.jsonl"
    env = {**os.environ, "UTF8FUZZ_DECODERS": json.dumps(["tests.engine.planted:PLANTED_C080"]),
           "UTF8FUZZ_CORPUS": str(tmp_path / "corpus"), "UTF8FUZZ_FOUND_LOG": str(log),
           "UTF8FUZZ_MINIMIZE_SECONDS": "1", "PYTHONPATH": str(root),
           "UTF8FUZZ_KEEP_GOING": "1"}  # as utf8fuzz fuzz runs it: no crash at a finding
    p = subprocess.run([sys.executable, str(root / "fuzz" / "differential.py"), "-runs=0",
                        str(seeds)], cwd=root, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    found = [x for x in records if "signature" in x]
    assert [x["input"] for x in found] == ["c080"], p.stderr[-2000:]
    # and its counts at exit, for the summary's divergent inputs
    assert [x["stats"]["divergent_inputs"] for x in records if "stats" in x] == [1]
    assert found[0]["decoders"] == ["planted:accepts-c080"]


@pytest.mark.parametrize("full_every", [1, 1000])
def test_a_divergence_a_full_run_does_not_show_again_is_reported_not_saved(tmp_path,
                                                                           full_every):
    # full_every=1: every input runs in full, and the minimizer's re-run loses it;
    # 1000: the input is screened, and the full run before naming loses it.
    f = Finder([CrashesOnFirstSight()], tmp_path, "hypothesis", minimize_seconds=1,
               full_every=full_every)
    f.consider(b"")  # the first input of a screening differ is a full one
    for data in (b"A\xfeB", b"\xfe\xfe"):
        f.consider(data)
    sig = "unicode/crash/IndexError/planted:crashes-on-first-sight"
    assert [(u.signature, u.input, u.reproduced) for u in f.unreproduced] == [
        (sig, b"A\xfeB", False)]  # once per signature and run
    assert f.found == [] and load(tmp_path) == ([], [])


def test_the_fuzz_summary_lists_unreproduced_divergences(corpus):
    r = fuzz([CrashesOnFirstSight()], engine="hypothesis", runs=300, seed=1, seconds=LIMIT,
             corpus=corpus)
    assert r["new"] == []
    (u,) = r["unreproduced"]
    assert u["signature"] == "unicode/crash/IndexError/planted:crashes-on-first-sight"
    assert "fe" in u["input"]


@needs_atheris
def test_the_atheris_engine_reports_unreproduced_divergences(corpus, monkeypatch):
    r = run_atheris(corpus, monkeypatch, "CRASHES_ON_FIRST_SIGHT+inprocess", runs=500)
    assert r["new"] == []
    assert [u["signature"] for u in r["unreproduced"]] == [
        "unicode/crash/IndexError/planted:crashes-on-first-sight"]


def test_a_lone_target_does_not_reread_its_corpus(monkeypatch):
    from utf8fuzz.loop.atheris_target import SHARED_CORPUS_ENV, single_process_flags

    monkeypatch.delenv(SHARED_CORPUS_ENV, raising=False)
    assert single_process_flags(["t.py", "-max_len=64", "dir"]) == [
        "t.py", "-max_len=64", "dir", "-reload=0"]
    assert single_process_flags(["t.py", "-reload=3"]) == ["t.py", "-reload=3"]  # asked for
    assert SHARED_CORPUS_ENV not in os.environ
    # workers share the directory: the parent marks it for them, and keeps the default
    assert single_process_flags(["t.py", "-jobs=2", "dir"]) == ["t.py", "-jobs=2", "dir"]
    assert os.environ[SHARED_CORPUS_ENV] == "1"
    assert single_process_flags(["t.py", "dir"]) == ["t.py", "dir"]  # a worker
