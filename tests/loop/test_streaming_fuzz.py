"""A streaming plug-in (``+incremental``) with a planted bug is found by ``utf8fuzz
fuzz`` run as a user runs it, saved as ``incremental-differs`` of the streaming
decoder, and its saved entry, split by the rule, reproduces; a correct streaming plug-in (the
standard library's UTF-8 incremental decoder) and ``cpython:incremental`` give none.

Each run is the real command in a subprocess (isolated worker and all), from the
checkout. The planted run's corpus holds the bug's trigger as a seed, which the
loop replays before it generates anything, so it cannot miss it (without the seed,
Hypothesis found it within 3 s in each of 3 tries, but that is not a test). Each
run is bounded by a count of inputs from a fixed seed (``--runs``, ``--seed``), so
what it meets after the seed, and what it saves, is the same under any load. The
runs are started together and waited for once.
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.fuzz_runs import start_runs
from tests.engine.planted_streaming import TRIGGER, LosesSplitFourByte
from utf8fuzz.decoders import resolve
from utf8fuzz.decoders.chunks import chunks, cuts
from utf8fuzz.engine.corpus import Entry, load
from utf8fuzz.engine.replay import check, replay_entry

ROOT = Path(__file__).resolve().parents[2]
PLANTED = "tests.engine.planted_streaming:LosesSplitFourByte"
CORRECT = "encodings.utf_8:IncrementalDecoder"
RUNS = {
    # replace mode alone: in strict mode an input whose first error comes before the
    # lost sequence agrees with the one-shot sibling, and the other inputs would name
    # both modes - one bug, two signatures (tests/decoders/test_streaming.py has strict)
    "planted": ([f"{PLANTED}+incremental+replace"], 100),
    "correct": ([f"{CORRECT}+incremental", "cpython:incremental"], 300),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return start_runs(tmp_path_factory, RUNS, {"split-4-byte": TRIGGER})


def _streamed(cls: type[codecs.IncrementalDecoder], data: bytes) -> str:
    """``data`` through ``cls`` in replace mode, fed its chunks, then the end."""
    dec = cls("replace")
    return "".join([*(dec.decode(c, False) for c in chunks(data)), dec.decode(b"", True)])


def test_a_streaming_bug_is_found_and_saved_as_incremental_differs(runs):
    rc, out, err, corpus = runs["planted"]
    assert rc == 1, err
    base = f"plugin:{PLANTED}"
    streaming = {f"{base}:replace"}
    assert streaming | {f"{n}:oneshot" for n in streaming} <= set(out["decoders"])
    entries, problems = load(corpus)
    assert not problems
    # The seed is met first. What the run generates after may show the same bug at
    # another feature (the token after the lost bytes varies): each entry is still
    # incremental-differs, of the streaming decoder alone (the one-shot sibling agrees).
    assert {e.signature.split("/")[1] for e in entries} == {"incremental-differs"}
    for e in entries:
        assert set(e.sidecar["decoders"]) == streaming
        # one finding, whatever follows the lost bytes: the sequence the chunk cut (where
        # the text cannot tell which, E0 | F0 | BF BF, the decoder is asked)
        assert e.sidecar["finding"]["rule"] == "split:4-byte-sequence", e.sidecar["finding"]
        # the chunks it was fed are recorded (decoders/chunks.py's rule)
        (rec,) = [e.sidecar["outcomes"][n] for n in streaming]
        assert rec["chunks"] == cuts(e.data)
    (entry,) = [e for e in entries if e.signature.split("/")[2] == "well-formed-4-byte"]
    data = entry.data
    # the saved input, split by the rule, still shows the bug: the planted class fed
    # those chunks differs from the real decoder (CPython's, one shot); whole, it agrees
    assert _streamed(LosesSplitFourByte, data) != data.decode("utf-8", "replace")
    assert LosesSplitFourByte("replace").decode(data, True) == data.decode("utf-8", "replace")
    # a corpus names decoders, it never loads them: not given, the plug-in is not run
    verdicts = {v.decoder: v.status for v in replay_entry(entry)}
    assert {verdicts[n] for n in streaming} == {"skip"}, verdicts
    # replayed as its owner's (the pytest plugin's --utf8fuzz-decoder): still open for
    # the streaming decoder, met by its one-shot sibling
    mine = resolve(f"{PLANTED}+incremental+replace+inprocess")
    verdicts = {v.decoder: v.status for v in replay_entry(entry, mine)}
    assert {verdicts[n] for n in streaming} == {"open"}, verdicts
    assert {verdicts[f"{n}:oneshot"] for n in streaming} == {"pass"}, verdicts


def test_a_correct_streaming_plugin_and_cpython_incremental_find_nothing(runs):
    rc, out, err, corpus = runs["correct"]
    assert rc == 0, err
    assert out["new"] == [] and not out["failures"] and out["executions"] > 1
    # four modes, each streaming and one-shot, and cpython:incremental
    assert len(out["decoders"]) == 9
    assert load(corpus) == ([], [])


def test_the_saved_streaming_entry_replays_under_the_pytest_plugin(runs, tmp_path):
    # as its owner runs it: the streaming decoder's test is an open finding (xfail),
    # its one-shot sibling's and the reference's pass; the chunks come from the bytes
    _, _, _, corpus = runs["planted"]
    (entry,) = [e for e in load(corpus)[0]
                if e.signature.split("/")[2] == "well-formed-4-byte"]
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rxX",
         str(entry.path), f"--utf8fuzz-corpus={corpus}",
         f"--utf8fuzz-decoder={PLANTED}+incremental+replace"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
             "PYTHONPATH": os.pathsep.join((str(ROOT), os.environ.get("PYTHONPATH", "")))})
    last = r.stdout.strip().splitlines()[-1]
    assert "1 xfailed" in last and "2 passed" in last and "failed" not in last.replace(
        "xfailed", ""), r.stdout + r.stderr
    assert f"plugin:{PLANTED}:replace]" in r.stdout  # the xfail names the streaming one


def test_an_entry_whose_split_rule_changed_fails_its_replay(runs):
    # Recorded chunks that are not today's split of the bytes: the decoder would be fed
    # other chunks than it was found with, so the replay says so instead of passing.
    entries, _ = load(runs["planted"][3])
    entry = entries[0]
    (name,) = entry.sidecar["decoders"]
    side = json.loads(json.dumps(entry.sidecar))
    side["outcomes"][name]["chunks"] = [len(entry.data)]  # one chunk: not the rule's
    # given, as its owner gives it (a corpus never loads a decoder)
    mine = resolve(side["outcomes"][name]["spec"])
    verdict = check(Entry(entry.path, side, entry.data), name, mine)
    assert verdict.status == "fail" and "split rule" in verdict.message
