"""Batches in the fuzz loop: out-of-process decoders compared in batches, and
inputs screened in batches (decoder-major, Finder.queue).

A planted bug in a batched decoder must still be found, named from one full run
(with every decoder) and saved; the decoder must be asked per batch, not per input;
and the last partial batch is compared when the loop flushes. A screening batch
gives what running each input alone gives, and keeps its inputs in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.engine.planted import Planted, accepts_c080, planted_c080
from utf8fuzz.decoders.cpython import Handler, Strict
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.finder import (
    BATCH,
    SCREEN_BATCH,
    SCREEN_BATCH_ENV,
    Finder,
    InFlight,
    screen_batch_default,
)
from utf8fuzz.outcome import Outcome


class BatchedPlanted(Planted):
    """The C0 80 bug behind a batch interface, counting how it is called."""

    batched = True

    def __init__(self) -> None:
        super().__init__("planted:batched-c080", accepts_c080)
        self.batches: list[int] = []
        self.singles = 0

    def decode(self, data: bytes) -> Outcome:
        self.singles += 1
        return super().decode(data)

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        self.batches.append(len(inputs))
        return [Planted.decode(self, d) for d in inputs]


def test_the_loop_compares_batched_decoders_per_batch(tmp_path):
    bug = BatchedPlanted()
    f = Finder([bug, Handler("replace")], tmp_path / "corpus", "test", minimize_seconds=5)
    assert f.differ.batched == (bug,)
    inputs = [b"plain %d" % i for i in range(BATCH + 5)]
    for x in inputs:
        res = f.consider(x)
        assert "planted:batched-c080" not in res.outcomes  # not run per input
    assert bug.batches == [BATCH] and bug.singles == 0
    f.consider(b"AB\xc0\x80CD")  # the bug: seen only when the batch is compared
    assert not f.found
    f.flush()
    assert bug.batches == [BATCH, 6]
    (found,) = f.found
    assert found.signature == "unicode/accepts-ill-formed/non-shortest-form/planted:batched-c080"
    assert found.input == b"\xc0\x80" and found.path is not None and found.path.exists()
    f.flush()  # nothing pending: no empty batch
    assert bug.batches == [BATCH, 6]


def test_a_differ_without_batching_runs_batched_decoders_per_input():
    bug = BatchedPlanted()
    res = Differ([bug]).run(b"\xc0\x80")
    assert [str(d.signature) for d in res.divergences] == [
        "unicode/accepts-ill-formed/non-shortest-form/planted:batched-c080"]
    assert bug.singles == 1 and not bug.batches


def test_run_batch_names_only_inputs_that_diverge():
    bug = BatchedPlanted()
    d = Differ([bug, Handler("replace")], batch=True)
    results = d.run_batch([b"ok", b"\xc0\x80", b"\xe0\x80"])
    assert [r.data for r in results] == [b"\xc0\x80"]
    assert set(results[0].outcomes) == {"planted:batched-c080", "ref:unicode:maximal-subpart"}


# -- screening batches: Finder.queue and Differ.run_many ---------------------------


def test_run_many_is_run_on_each_input_in_order():
    inputs = [b"A", b"\xc0\x80", b"\xe2\x82", b"ok \xe2\x82\xac", b"\xed\xa0\x80", b""] * 3
    decs = [planted_c080(), Handler("replace"), Handler("ignore"), Strict()]
    one, many = Differ(decs, full_every=4), Differ(decs, full_every=4)
    want = [one.run(x) for x in inputs]
    got = many.run_many(inputs)
    assert [r.data for r in got] == inputs
    assert [r.full for r in got] == [r.full for r in want] == [i % 4 == 0 for i in range(18)]
    assert [r.signatures for r in got] == [r.signatures for r in want]
    assert any(r.signatures for r in got)
    assert many.screened == one.screened
    # walks given by the caller are used as they are
    walks = [many.walk(x) for x in inputs]
    again = many.run_many(inputs, walks)
    assert all(a.walks[k] is w[i] for a, w in zip(again, walks, strict=True)
               for i, k in enumerate(many.walk_keys))


class Watching(Planted):
    """The C0 80 bug, noting what the in-flight file holds whenever it screens."""

    screen_complete = True
    shows = frozenset({"strict"})

    def __init__(self, inflight: Path) -> None:
        super().__init__("planted:watching", accepts_c080)
        self.inflight, self.held = inflight, []

    def screen(self, data: bytes) -> dict[str, object] | None:
        self.held.append(self.inflight.read_text())
        return {"strict": self.decode(data).view("strict")}


def test_queue_compares_in_batches_and_keeps_the_batch_in_flight(tmp_path):
    path = tmp_path / "inflight-1.hex"
    bug = Watching(path)
    f = Finder([bug], tmp_path / "corpus", "test", minimize_seconds=2, screen_batch=4,
               inflight=InFlight(path))
    inputs = [b"one", b"AB\xc0\x80", b"three", b"\xff"]
    for x in inputs[:3]:
        walks = f.queue(x)
        assert [type(w) for w in walks] == [type(w) for w in f.differ.walk(x)]
    assert not bug.held and f.executions == 0  # nothing compared yet
    f.queue(inputs[3])  # the fourth fills the batch
    listed = "".join(x.hex() + "\n" for x in inputs)
    assert bug.held[:4] == [listed] * 4  # every input of the batch, while it runs
    assert path.read_text() == ""  # and none once it is done
    assert f.executions == 4 and f.divergent_inputs == 1
    (found,) = f.found
    assert found.input == b"\xc0\x80"
    f.queue(b"last")
    f.flush()  # what is queued is compared at the end
    assert f.executions == 5
    f.inflight.close()
    assert not path.exists()


def test_a_batch_never_released_is_replaced_whole(tmp_path):
    # a batch that raised mid-way is never released: the next one must not keep
    # the tail of its longer list
    path = tmp_path / "inflight-2.hex"
    inflight = InFlight(path)
    inflight.hold([b"a long first input", b"and a second"])
    inflight.hold([b"x"])
    assert path.read_text() == "78\n"
    inflight.release()
    assert path.read_text() == ""
    inflight.hold([b"y"])
    assert path.read_text() == "79\n"
    inflight.close()


def test_a_batch_of_one_compares_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv(SCREEN_BATCH_ENV, "1")
    f = Finder([planted_c080()], tmp_path / "corpus", "test", minimize_seconds=2)
    assert f.screen_batch == 1
    f.queue(b"\xc0\x80")
    assert f.executions == 1 and len(f.found) == 1
    monkeypatch.setenv(SCREEN_BATCH_ENV, "none")
    with pytest.raises(ValueError, match="positive integer"):
        screen_batch_default()
    monkeypatch.delenv(SCREEN_BATCH_ENV)
    assert screen_batch_default() == SCREEN_BATCH
