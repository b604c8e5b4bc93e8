"""The Hypothesis engine draws its inputs in batches (loop/hypothesis_worker.py):
a counted run counts inputs, the same seed draws the same inputs, no batch is drawn
twice, and the planted bugs are found within as few inputs as before.

In process, bounded by counts from fixed seeds: the same on any machine."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from tests.engine.planted import Crashes, planted_block, planted_c080, planted_truncated4
from utf8fuzz import strategies as u8
from utf8fuzz.loop import hypothesis_worker as hw
from utf8fuzz.loop.finder import Finder


def _run(tmp_path: Path, name: str, decoders: list[Any], runs: int, seed: int,
         monkeypatch: pytest.MonkeyPatch) -> tuple[Finder, list[bytes]]:
    """A counted worker run, no seeds replayed, and every input it compared."""
    seen: list[bytes] = []

    class Recording(Finder):
        def queue(self, data: bytes) -> tuple[Any, ...]:
            seen.append(data)
            return super().queue(data)

    monkeypatch.setattr(hw, "Finder", Recording)
    monkeypatch.setenv("UTF8FUZZ_LONG_SHARE", "0")  # the short batches alone
    f = hw.hypothesis_worker(decoders, tmp_path / name, time.monotonic() + 600,
                             lambda *a: None, 5.0, runs=runs, seed=seed)
    return f, seen


@settings(max_examples=5, deadline=None)
@given(u8.batches(["unicode", "corrected"], 32))
def test_a_batch_is_that_many_inputs(batch: list[bytes]) -> None:
    assert len(batch) == 32 and all(isinstance(x, bytes) for x in batch)


def test_a_counted_run_counts_inputs_not_examples(tmp_path, monkeypatch):
    # 70 is no multiple of a batch: the last batch's rest is dropped, never compared
    f, seen = _run(tmp_path, "c", [planted_c080()], 70, 1, monkeypatch)
    assert f.examples == f.executions == len(seen) == 70


def test_the_same_seed_draws_the_same_inputs_and_no_batch_twice(tmp_path, monkeypatch):
    n = hw.BATCH * hw.EXAMPLES[0] * 2 + 5  # three calls of the test
    _, first = _run(tmp_path, "a", [planted_c080()], n, 3, monkeypatch)
    _, again = _run(tmp_path, "b", [planted_c080()], n, 3, monkeypatch)
    _, other = _run(tmp_path, "c", [planted_c080()], n, 4, monkeypatch)
    assert first == again and first != other and len(first) == n
    # Hypothesis starts every call with its simplest example: salted by the call,
    # it is another batch each time
    batches = [tuple(first[i:i + hw.BATCH]) for i in range(0, n - 5, hw.BATCH)]
    assert len(set(batches)) == len(batches)


def test_the_planted_bugs_are_found_within_as_few_inputs_as_before(tmp_path, monkeypatch):
    # From seed 2, one example an input (before the batches) needed 1,075 inputs for
    # the block-boundary bug (21, 40 and 353 for the others); the batches find all
    # four within 600 (docs/performance.md, "The Hypothesis engine, batched").
    f, _ = _run(tmp_path, "p", [planted_c080(), planted_truncated4(), planted_block(),
                                Crashes()], 600, 2, monkeypatch)
    assert {x.signature.rsplit("/", 1)[1] for x in f.found} >= {
        "planted:accepts-c080", "planted:swallows-after-truncated4",
        "planted:block-boundary", "planted:crashes-on-fe"}
