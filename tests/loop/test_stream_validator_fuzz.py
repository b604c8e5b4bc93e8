"""Streaming validators (``+stream-validator``) under ``utf8fuzz fuzz``, on each engine:
a planted carry bug and a planted end-check bug are each found and reported as exactly
one finding, and a correct validator as none, in one counted run (``--runs``,
``--seed``: the same inputs, so the same findings, on any machine under any load); a
saved carry entry replays.

No seed file holds a trigger: what is found is what the engine meets (the built-in
seeds, then what it generates). The run is the in-process API of ``utf8fuzz fuzz``
(Atheris's target is its own process, loading the same specs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from utf8fuzz.decoders.chunks import cuts
from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.engine.corpus import load
from utf8fuzz.engine.replay import replay_entry
from utf8fuzz.loop.run import atheris_available, fuzz

ROOT = Path(__file__).resolve().parents[2]
M = "tests.engine.planted_stream_validators"
SPECS = [f"{M}:{c}+stream-validator+inprocess"
         for c in ("LosesSplitSequence", "ForgetsEndCheck", "Correct")]
#: A limit only: the run ends at its count long before.
LIMIT = 600


@pytest.mark.parametrize("engine", ["hypothesis", pytest.param(
    "atheris", marks=pytest.mark.skipif(atheris_available() is not None,
                                        reason=str(atheris_available())))])
def test_each_planted_stream_validator_bug_is_one_finding(engine, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # Atheris's target imports tests.*
    decs = [] if engine == "atheris" else [d for s in SPECS for d in load_all(s)]
    r = fuzz(decs, engine=engine, runs=100, seed=1, seconds=LIMIT, corpus=tmp_path,
             specs=SPECS)
    assert not r["failures"], r["failures"]
    assert (r["ended"], r["runs"], r["seed"]) == ("runs", 100, 1)
    loses, end = f"plugin:{M}:LosesSplitSequence", f"plugin:{M}:ForgetsEndCheck"
    assert sorted((f["family"], f["rule"]) for f in r["findings"]) == [
        (end, "end-unchecked"), (loses, "stream:forgets-held-bytes")]
    entries, problems = load(tmp_path)
    assert not problems and entries
    by = {e.signature: e for e in entries}
    for sig, e in by.items():
        (name,) = e.sidecar["decoders"]
        if name.startswith(loses):
            # the carry bug: the streaming decoder alone, its one-shot sibling agrees
            assert name == loses and "/incremental-differs/" in sig, sig
        else:
            # the end check: fed whole or in chunks, the same acceptance of a cut-short
            # end (also ED A0, which CPython's incremental decoder holds back as the
            # start of a sequence: the same bug at the surrogate feature)
            assert name in (end, f"{end}:oneshot") and "/accepts-ill-formed/" in sig
            assert e.sidecar["finding"]["rule"] == "end-unchecked", sig
    assert {e.sidecar["decoders"][0] for e in entries if end in e.signature} == {
        end, f"{end}:oneshot"}
    # a carry entry records the chunks it was fed, and replays as an open finding of
    # the streaming decoder, met by its one-shot sibling, when its owner gives it
    carry = next(e for e in entries if e.sidecar["decoders"] == [loses])
    assert carry.sidecar["outcomes"][loses]["chunks"] == cuts(carry.data)
    mine = load_all(SPECS[0])
    verdicts = {v.decoder: v.status for v in replay_entry(carry, mine)}
    assert (verdicts[loses], verdicts[f"{loses}:oneshot"]) == ("open", "pass"), verdicts
