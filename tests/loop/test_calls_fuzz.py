"""Checks of the call (issue 28) under ``utf8fuzz fuzz``, on each engine: the planted
validator that keeps a flag after a rejection, the decoder that reads one byte past
its view and the one right only at aligned offsets are each found and reported as
exactly one finding of its class, and their correct twins as none, in one counted
run (``--runs``, ``--seed``, ``--call-every``: the same inputs and the same checks,
so the same findings, on any machine under any load).

The run is the in-process API of ``utf8fuzz fuzz`` (Atheris's target is its own
process, loading the same specs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.engine import calls
from utf8fuzz.engine.corpus import load
from utf8fuzz.loop.run import atheris_available, fuzz

ROOT = Path(__file__).resolve().parents[2]
M = "tests.engine.planted_calls"
SPECS = [f"{M}:{s}+inprocess" for s in
         ("keeps_flag+validator", "reads_past", "aligned_only", "valid+validator", "strict")]
#: A limit only: the run ends at its count long before.
LIMIT = 600


@pytest.mark.parametrize("engine", ["hypothesis", pytest.param(
    "atheris", marks=pytest.mark.skipif(atheris_available() is not None,
                                        reason=str(atheris_available())))])
def test_each_planted_call_bug_is_one_finding(engine, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # Atheris's target imports tests.*
    monkeypatch.setenv(calls.CHECK_EVERY_ENV, "4")  # the engines' processes inherit it
    decs = [] if engine == "atheris" else [d for s in SPECS for d in load_all(s)]
    r = fuzz(decs, engine=engine, runs=600, seed=1, seconds=LIMIT, corpus=tmp_path,
             specs=SPECS)
    assert not r["failures"], r["failures"]
    assert (r["ended"], r["runs"], r["seed"]) == ("runs", 600, 1)
    got = sorted((f["family"], f["rule"].split("/")[0]) for f in r["findings"])
    assert got == sorted([(f"plugin:{M}:keeps_flag", calls.HISTORY),
                          (f"plugin:{M}:reads_past", calls.OUTSIDE),
                          (f"plugin:{M}:aligned_only", calls.ALIGNMENT)]), r["findings"]
    entries, problems = load(tmp_path)
    assert not problems and len(entries) == 3
    assert all(isinstance(e.sidecar.get("call"), dict) for e in entries)
