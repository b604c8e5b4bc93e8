"""Rounds in the fuzz loop (:meth:`Finder.queue`, :meth:`Differ.run_many`): inputs
compared together, decoder-major, give what each input alone gives, and the round
being compared is kept in flight (a crash's culprit is among its inputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.planted import Planted, accepts_c080, planted_c080
from utf8fuzz.decoders.cpython import Handler, Strict
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import ROUND, ROUND_ENV, Finder, InFlight, round_default


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

    screen_is_whole = True
    shows = frozenset({"strict"})

    def __init__(self, inflight: Path) -> None:
        super().__init__("planted:watching", accepts_c080)
        self.inflight, self.held = inflight, []

    def screen(self, data: bytes) -> dict[str, object] | None:
        self.held.append(self.inflight.read_text())
        return {"strict": self.decode(data).view("strict")}


def test_queue_compares_in_rounds_and_keeps_the_round_in_flight(tmp_path):
    path = tmp_path / "inflight-1.hex"
    bug = Watching(path)
    f = Finder([bug], tmp_path / "corpus", "test", minimize_seconds=2, round_size=4,
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


def test_a_round_never_released_is_replaced_whole(tmp_path):
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


def test_a_round_of_one_compares_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv(ROUND_ENV, "1")
    f = Finder([planted_c080()], tmp_path / "corpus", "test", minimize_seconds=2)
    assert f.round_size == 1
    f.queue(b"\xc0\x80")
    assert f.executions == 1 and len(f.found) == 1
    monkeypatch.setenv(ROUND_ENV, "none")
    with pytest.raises(ValueError, match="positive integer"):
        round_default()
    monkeypatch.delenv(ROUND_ENV)
    assert round_default() == ROUND
