"""A planted bug in each declared plug-in shape is found by ``utf8fuzz fuzz`` and
saved under exactly one signature; correct plug-ins of the same shapes give none.

Each run is the real command in a subprocess, isolated workers and all, from the
checkout (where ``tests.engine.planted_shapes`` imports). Its corpus holds the
bugs' triggers as seeds, which the run replays before it generates anything, so
it cannot miss them; each bug is tied to one spec feature of one decoder, so what
it generates after cannot name it a second time. Each run is bounded by a count
from a fixed seed (``--runs``, ``--seed``): the same on any machine. The runs are
started together and waited for once: the suite stays as fast as the slowest of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.fuzz_runs import start_runs
from tests.engine.planted_shapes import TRIGGERS
from utf8fuzz.engine.corpus import load

P = "tests.engine.planted_shapes"

#: name -> (the --decoder specs, --runs count).
RUNS = {
    "codec-and-validator": ([f"{P}:replace_splits_truncated3+codec",
                             f"{P}:validator_accepts_surrogates+validator"], 50),
    "text": ([f"{P}:text_decodes_surrogates+text"], 50),
    "correct": ([f"{P}:cpython_replace+text", f"{P}:cpython_valid+validator",
                 "encodings.utf_8:decode+codec"], 200),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return start_runs(tmp_path_factory, RUNS, TRIGGERS)


def _saved(corpus: Path) -> dict[str, str]:
    entries, problems = load(corpus)
    assert not problems
    return {e.signature: e.data.hex() for e in entries}


def test_a_codec_bug_in_replace_mode_alone_is_found_and_saved_once(runs):
    rc, out, err, corpus = runs["codec-and-validator"]
    assert rc == 1, err
    base = f"plugin:{P}:replace_splits_truncated3"
    assert {f"{base}:{m}" for m in ("strict", "replace", "ignore", "surrogateescape")} \
        <= set(out["decoders"])
    saved = _saved(corpus)
    codec = [s for s in saved if base in s]
    assert codec == [f"unicode/different-replacement/truncated-3-byte-at-end/{base}:replace"]
    # minimized to the bug's two bytes: a 3-byte lead and one continuation byte
    lead, cont = bytes.fromhex(saved[codec[0]])
    assert 0xE1 <= lead <= 0xEF and lead != 0xED and 0x80 <= cont <= 0xBF


def test_a_validator_bug_is_found_and_saved_once(runs):
    _, out, _, corpus = runs["codec-and-validator"]
    name = f"plugin:{P}:validator_accepts_surrogates"
    saved = _saved(corpus)
    assert [s for s in saved if name in s] == [f"unicode/accepts-ill-formed/surrogate/{name}"]
    assert len(saved) == 2  # and nothing else: the codec's one signature, this one
    assert {x["signature"] for x in out["new"]} == set(saved)


def test_a_replacement_function_bug_is_found_and_saved_once(runs):
    rc, _, err, corpus = runs["text"]
    assert rc == 1, err
    name = f"plugin:{P}:text_decodes_surrogates"
    saved = _saved(corpus)
    assert list(saved) == [f"unicode/accepts-ill-formed/surrogate/{name}"]
    assert saved[next(iter(saved))][:4] in {f"ed{b:02x}" for b in range(0xA0, 0xC0)}


def test_cpython_replace_a_correct_validator_and_codec_find_nothing(runs):
    rc, out, err, corpus = runs["correct"]
    assert rc == 0, err
    assert out["new"] == [] and not out["failures"] and out["executions"] > len(TRIGGERS)
    assert len(out["decoders"]) == 6  # the text, the validator, the codec's four modes
    assert _saved(corpus) == {}
