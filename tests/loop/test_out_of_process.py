"""Out-of-process decoders in the fuzz loop (:mod:`utf8fuzz.engine.screening`):
a planted bug in one is still found, named from one full run (with every decoder)
and saved; the decoder is sent inputs in bulk, not one call each; and the last
inputs are compared when the loop flushes."""

from __future__ import annotations

from collections.abc import Sequence

from tests.engine.planted import Planted, accepts_c080
from utf8fuzz.decoders.cpython import Handler
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import BULK, Finder
from utf8fuzz.outcome import Outcome


class BatchedPlanted(Planted):
    """The C0 80 bug behind a batch interface, counting how it is called."""

    out_of_process = True

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


def test_the_loop_sends_out_of_process_decoders_inputs_in_bulk(tmp_path):
    bug = BatchedPlanted()
    f = Finder([bug, Handler("replace")], tmp_path / "corpus", "test", minimize_seconds=5)
    assert f.differ.out_of_process == (bug,)
    inputs = [b"plain %d" % i for i in range(BULK + 5)]
    for x in inputs:
        res = f.consider(x)
        assert "planted:batched-c080" not in res.outcomes  # not run per input
    f.consider(b"AB\xc0\x80CD")  # the bug: seen only when its batch is judged
    assert not f.found and bug.singles == 0
    f.flush()
    assert bug.batches == [BULK, 6]  # the first judged when the second was sent
    (found,) = f.found
    assert found.signature == "unicode/accepts-ill-formed/non-shortest-form/planted:batched-c080"
    assert found.input == b"\xc0\x80" and found.path is not None and found.path.exists()
    f.flush()  # nothing pending: no empty batch
    assert bug.batches == [BULK, 6]


def test_a_differ_that_does_not_defer_runs_out_of_process_decoders_per_input():
    bug = BatchedPlanted()
    res = Differ([bug]).run(b"\xc0\x80")
    assert [str(d.signature) for d in res.divergences] == [
        "unicode/accepts-ill-formed/non-shortest-form/planted:batched-c080"]
    assert bug.singles == 1 and not bug.batches


def test_run_out_of_process_names_only_inputs_that_diverge():
    bug = BatchedPlanted()
    d = Differ([bug, Handler("replace")], defer_out_of_process=True)
    results = d.run_out_of_process([b"ok", b"\xc0\x80", b"\xe0\x80"])
    assert [r.data for r in results] == [b"\xc0\x80"]
    assert set(results[0].outcomes) == {"planted:batched-c080", "ref:unicode:maximal-subpart"}


def test_pipelined_batches_of_a_worker_judge_each_input_by_its_own_outcome(tmp_path):
    # a plug-in in its worker, fed through queue() as the Atheris target feeds it:
    # each batch is judged when the next is sent, and every divergent input counted
    from utf8fuzz.decoders import plugin
    from utf8fuzz.engine.signature import Signature

    (dec,) = plugin.load_all("tests.engine.planted:accepts_c080+text")
    f = Finder([dec], tmp_path / "corpus", "test")
    # known already, as in a nightly run: nothing to minimize, only to count
    f.known.add(Signature.parse(f"unicode/accepts-ill-formed/non-shortest-form/{dec.name}").id)
    bugs = {17, 130, 131, 260, 305}  # in the first, second, third and last batches
    inputs = [b"x%d\xc0\x80" % i if i in bugs else b"x%d\xc0" % i for i in range(2 * BULK + 50)]
    try:
        for x in inputs:
            f.queue(x)
        f.flush()
    finally:
        dec.close()
    assert f.executions == len(inputs) and f.divergent_inputs == len(bugs) and not f.found


class Sharing(BatchedPlanted):
    """A decoder of a library whose modes share one process: it logs when its batch
    is sent and when its outcomes are read."""

    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self.name, self.log = name, log

    def send_many(self, inputs: Sequence[bytes]):
        self.log.append(f"send {self.name}")
        outs = self.decode_many(inputs)

        def outcomes() -> list[Outcome]:
            self.log.append(f"read {self.name}")
            return outs
        return outcomes


def test_a_batch_goes_to_one_decoder_of_each_library_in_turn_and_is_judged_in_order():
    # a process answers its decoders' batches one after the other: sent in turn, each
    # process decodes while the others are written to
    log: list[str] = []
    decs = [Sharing(n, log) for n in ("a:one", "a:two", "a:three", "b:one", "c:one", "c:two")]
    d = Differ(decs, defer_out_of_process=True)
    results = d.send_out_of_process([b"ok", b"\xc0\x80"])()
    # (the differ keeps its decoders in name order)
    assert log == ["send a:one", "send b:one", "send c:one", "send a:three", "send c:two",
                   "send a:two",
                   "read a:one", "read a:three", "read a:two", "read b:one", "read c:one",
                   "read c:two"]
    (res,) = results  # only the input they diverge on, with each decoder's divergence
    assert res.data == b"\xc0\x80"
    assert [div.decoders for div in res.divergences] == [
        (n,) for n in ("a:one", "a:three", "a:two", "b:one", "c:one", "c:two")]
