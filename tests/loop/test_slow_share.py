"""The slow decoders' share of the loop (:class:`utf8fuzz.engine.screening.SlowShare`):
which inputs an out-of-process decoder, or an in-process one declared slow, is
given, that each decoder's count of inputs seen is what it was sent, that a
divergence it shows on a sampled input is saved against that input, and that the
run's summary says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine.planted import Planted, accepts_c080
from tests.loop.test_narrow import Peer
from utf8fuzz.decoders.cpython import Handler
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.screening import SlowShare, is_slow
from utf8fuzz.loop.finder import Finder, InFlight
from utf8fuzz.loop.run import atheris_available
from utf8fuzz.outcome import Outcome


def test_the_rule_gives_the_first_the_novel_the_new_divergences_and_a_sample():
    s = SlowShare(every=4, first=2)
    got = [s.wants(False) for _ in range(10)]
    # the first two, then one in four by count (inputs 4 and 8)
    assert got == [True, True, False, False, True, False, False, False, True, False]
    assert (s.asked, s.given) == (10, 4)
    s = SlowShare(every=1000, first=0)
    assert s.wants(False)  # input 0: the sample's
    assert s.wants(True)  # novel coverage
    assert s.wants(False, ["a", "b"])  # a set of divergences not met before
    assert not s.wants(False, ["b", "a"])  # the same set again
    assert not s.wants(False)
    assert s.wants(False, ["a"])  # another set
    assert (s.asked, s.given) == (6, 4)


def test_every_input_when_every_is_one():
    s = SlowShare(every=1, first=0)
    assert all(s.wants(False, ["x"]) for _ in range(50))


def test_counts_seen_are_what_each_decoder_was_sent(tmp_path: Path):
    peer = Peer()
    f = Finder([peer, Handler("replace")], tmp_path / "corpus", "test", tally=False,
               round_size=8, counted=True)
    f.slow = SlowShare(every=5, first=3)
    inputs = [b"plain %d" % i for i in range(300)]
    for x in inputs:
        f.queue(x)
    f.flush()
    seen = f.inputs_seen()
    assert seen["cpython:replace"] == f.executions == 300
    assert seen[peer.name] == len(peer.got) == f.slow.given
    # the first three, then inputs 5, 10, ... of the 300: none twice, in order
    assert peer.got == [x for i, x in enumerate(inputs) if i < 3 or i % 5 == 0]
    assert f.bytes == sum(map(len, inputs))


@pytest.mark.parametrize(("make", "name", "extra"), [
    (lambda: Peer(), "peer-c080", {}),  # out of process
    (lambda: SlowPlanted(), "slow-c080", {"call_every": 0}),  # in process, declared slow
], ids=["peer", "slow"])
def test_a_divergence_on_the_share_is_saved_against_that_input(
        tmp_path: Path, make: Any, name: str, extra: dict[str, Any]) -> None:
    dec = make()
    f = Finder([dec, Handler("replace")], tmp_path / "corpus", "test", tally=False,
               round_size=8, counted=True, minimize_seconds=5, **extra)
    f.slow = SlowShare(every=10, first=0)
    # the bug at input 7 (not sampled, nothing another decoder differs on: the slow
    # decoder never sees it) and at input 20 (sampled), with different lengths
    inputs = [b"x%03d" % i for i in range(40)]
    inputs[7] = b"lost\xc0\x80"
    inputs[20] = b"sampled!!\xc0\x80"
    for x in inputs:
        f.queue(x)
    f.flush()
    assert inputs[7] not in dec.got and inputs[20] in dec.got
    (found,) = f.found
    assert found.signature == f"unicode/accepts-ill-formed/non-shortest-form/planted:{name}"
    assert found.original_size == len(inputs[20]) and found.input == b"\xc0\x80"
    assert f.divergent_inputs == 1


def test_novel_inputs_go_to_the_peer(tmp_path: Path):
    peer = Peer()
    f = Finder([peer, Handler("replace")], tmp_path / "corpus", "test", tally=False,
               round_size=4, counted=True)
    f.slow = SlowShare(every=1000, first=0)
    novel = {b"new 3", b"new 9"}
    f.cover = lambda walks: walks[0].data in novel
    inputs = [b"new %d" % i for i in range(12)]
    for x in inputs:
        f.queue(x)
    f.flush()
    assert peer.got == [b"new 0", b"new 3", b"new 9"]  # input 0: the sample's


def test_the_summary_says_how_many_inputs_each_decoder_saw_and_the_bytes(tmp_path: Path):
    # the target's stats lines, as the harness reads them: one per process, the last
    # of each counts; a name no decoder of the run has is not shown, a line that
    # does not parse adds nothing
    import json

    from utf8fuzz.loop.libfuzzer import _FoundLog
    from utf8fuzz.loop.state import Progress
    from utf8fuzz.loop.summary import summary

    peer, rep = Peer(), Handler("replace")
    log = _FoundLog(tmp_path / "found.jsonl")
    lines = [{"stats": {"pid": 1, "executions": 10, "bytes": 500, "divergent_inputs": 2,
                        "inputs_seen": {rep.name: 10, peer.name: 3}}},
             {"stats": {"pid": 1, "executions": 20, "bytes": 1000, "divergent_inputs": 4,
                        "inputs_seen": {rep.name: 20, peer.name: 5, "\x1b[31mnot-run": 7}}},
             {"stats": {"pid": 2, "executions": 30, "bytes": 2_000_000, "divergent_inputs": 0,
                        "inputs_seen": {rep.name: 30, peer.name: "many"}}}]
    log.path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    progress = Progress()
    log.read(progress)
    r = summary([peer, rep], progress, None, ["atheris"])
    assert r["inputs_seen"] == {peer.name: 5, rep.name: 20}
    assert r["bytes"] == 2_001_000 and r["mb_per_sec"] > 0
    assert r["divergent_inputs"] == 4


def test_no_bytes_are_claimed_where_no_engine_counted_them():
    from utf8fuzz.loop.state import Progress
    from utf8fuzz.loop.summary import summary

    r = summary([Handler("replace")], Progress(), None, ["hypothesis"])
    assert r["bytes"] is None and r["mb_per_sec"] is None and r["inputs_seen"] == {}


@pytest.mark.parametrize("engine", ["hypothesis", pytest.param(
    "atheris", marks=pytest.mark.skipif(atheris_available() is not None,
                                        reason=str(atheris_available())))])
def test_a_decoder_the_user_names_gets_every_input(engine: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]):
    # a plug-in in its worker is out of process; named with --decoder, it is the
    # decoder under test, not one of every available decoder: no share (past the
    # share's first 1,024 inputs it would see one in 16 and the novel ones)
    import json

    from utf8fuzz.cli import main

    main(["fuzz", "--decoder", "utf8fuzz.bench:pure_python_utf8", "--engine", engine,
          "--jobs", "1", "--runs", "3000", "--seed", "1", "--time", "600",
          "--corpus", str(tmp_path / "corpus"), "--no-report", "--json"])
    r = json.loads(capsys.readouterr().out)
    assert r["ended"] == "runs" and r["executions"] > 3000
    assert r["inputs_seen"] == {"plugin:utf8fuzz.bench:pure_python_utf8": r["executions"]}


class SlowPlanted(Planted):
    """The C0 80 bug in process, declared slow (screening's ``slow``): it keeps
    every input it decodes, and whether the in-flight file held it then (the
    tests turn the call's checks off: they decode inputs of their own)."""

    slow = True

    def __init__(self, inflight: Path | None = None) -> None:
        super().__init__("planted:slow-c080", accepts_c080)
        self.got: list[bytes] = []
        self.inflight = inflight
        self.held: list[bool] = []

    def run(self, data: bytes) -> Outcome:
        self.got.append(bytes(data))
        if self.inflight is not None:
            self.held.append(bytes(data).hex() in self.inflight.read_text().split())
        return super().run(data)


def test_an_in_process_decoder_declared_slow_gets_the_share_and_its_count(tmp_path: Path):
    slow = SlowPlanted()
    f = Finder([slow, Handler("replace")], tmp_path / "corpus", "test", tally=False,
               round_size=8, counted=True, call_every=0)
    assert f.differ.deferred == (slow,)
    f.slow = SlowShare(every=5, first=3)
    inputs = [b"plain %d" % i for i in range(300)]
    for x in inputs:
        f.queue(x)
    f.flush()
    seen = f.inputs_seen()
    assert seen["cpython:replace"] == f.executions == 300
    assert seen[slow.name] == len(slow.got) == f.slow.given
    assert slow.got == [x for i, x in enumerate(inputs) if i < 3 or i % 5 == 0]


def test_a_slow_in_process_decoder_decodes_its_batch_with_the_batch_in_flight(tmp_path: Path):
    # it decodes in the loop's process: one that kills it must leave the inputs it
    # was decoding as the evidence, as a round's are (finder.InFlight)
    path = tmp_path / "inflight.hex"
    slow = SlowPlanted(path)
    f = Finder([slow, Handler("replace")], None, "test", tally=False, round_size=4,
               counted=True, inflight=InFlight(path), call_every=0)
    assert f.differ.deferred == (slow,)
    for i in range(200):
        f.queue(b"input %d" % i)
    f.flush()
    assert len(slow.held) > 100 and all(slow.held)
    assert path.read_text() == ""  # released after each batch


def test_a_decoder_the_user_names_is_compared_per_input_though_slow(tmp_path: Path):
    slow = SlowPlanted()
    f = Finder([slow, Handler("replace")], None, "test", tally=False, round_size=4,
               counted=True, slow_every=1, call_every=0)
    assert f.differ.deferred == ()
    for i in range(50):
        f.queue(b"input %d" % i)
    f.flush()
    assert f.inputs_seen()[slow.name] == f.executions == 50


def test_pyicu_is_slow_and_deferred_only_with_its_siblings():
    # PyICU's replace and ignore modes take their anchors from its strict mode
    # (differ's siblings): the three are deferred together, or none is
    icu = pytest.importorskip("icu")
    from utf8fuzz.decoders.pyicu import PyIcu

    decs = [PyIcu(icu, None), PyIcu(icu, "replace"), PyIcu(icu, "ignore"), Handler("replace")]
    assert all(is_slow(d) for d in decs[:3]) and not is_slow(decs[3])
    d = Differ(decs, full_every=8, defer_out_of_process=True, defer_slow=True)
    assert [x.name for x in d.deferred] == ["pyicu", "pyicu:ignore", "pyicu:replace"]
    assert Differ(decs, full_every=8, defer_out_of_process=True).deferred == ()
    decs[0].slow = False  # type: ignore[attr-defined]
    d = Differ(decs, full_every=8, defer_out_of_process=True, defer_slow=True)
    assert d.deferred == ()


def test_the_share_names_pyicus_divergences_as_a_full_run_does():
    # judged in bulk from their whole screens (compared with the walks the loop
    # already has), PyICU's decoders diverge exactly as in a full run, input by input
    import random

    icu = pytest.importorskip("icu")
    from utf8fuzz.decoders.pyicu import PyIcu

    decs = [PyIcu(icu, None), PyIcu(icu, "replace"), PyIcu(icu, "ignore"), Handler("replace")]
    d = Differ(decs, full_every=8, defer_out_of_process=True, defer_slow=True)
    rng = random.Random(1)
    inputs = [b"", b"plain", b"\xc0\x80", b"a\xf0\x90\x80", b"\xed\xa0\x80z", b"\xef\xbf\xbe",
              *(bytes(rng.choice(b"a\x80\xbf\xc2\xe0\xed\xf0\xf4\xff") for _ in range(12))
                for _ in range(200))]
    walks = [d.run(x).walks for x in inputs]
    bulk = {r.data: r for r in d.send_out_of_process(inputs, walks)()}
    assert d.decoded == {x.name: len(inputs) for x in d.deferred}
    assert len(bulk) > 50  # PyICU's ignore mode substitutes: most of them diverge
    for x in inputs:
        full = {s for s in d.run(x, full=True).signatures if ":pyicu" in s or "/pyicu" in s}
        assert (bulk[x].signatures if x in bulk else frozenset()) == full, x
    r = next(iter(bulk.values()))
    ignore = r.outcome_of("pyicu:ignore")
    assert ignore is not None and ignore.view("ignore") == decs[2].decode(r.data).view("ignore")
    # without the loop's walks, walked again: the same
    again = d.run_out_of_process(inputs)
    assert [(r.data, r.signatures) for r in again] == [
        (r.data, r.signatures) for r in bulk.values()]


def test_a_kept_input_keeps_only_the_walks_that_judge_the_slow_decoders(tmp_path: Path):
    # the walks the batch is judged with ride along with short inputs; a long one
    # is walked again then (two batches of 64 KiB inputs would hold every walk)
    from utf8fuzz.loop.finder import KEEP_WALKS_BYTES

    slow = SlowPlanted()
    f = Finder([slow, Handler("replace"), Planted("planted:mutf8", accepts_c080, "mutf8")],
               None, "test", tally=False, round_size=1, counted=True, call_every=0)
    assert f.differ.deferred_keys == (("unicode", "maximal-subpart"),)
    f.consider(b"short")
    f.consider(b"x" * (KEEP_WALKS_BYTES + 1))
    assert [list(w) for w in f._pending_walks] == [[("unicode", "maximal-subpart")], []]
    f.flush()
    assert len(slow.got) == 2 and not f._pending_walks


def test_the_pure_python_mutf8_is_slow_and_the_c_one_is_not():
    from utf8fuzz.decoders import mutf8

    found = {d.name: d for d in mutf8.discover() if isinstance(d, mutf8.Mutf8)}
    if "mutf8:py" not in found:
        pytest.skip("the mutf8 package is not installed")
    assert is_slow(found["mutf8:py"])
    assert "mutf8" not in found or not is_slow(found["mutf8"])
    d = Differ(found.values(), full_every=8, defer_out_of_process=True, defer_slow=True)
    assert [x.name for x in d.deferred] == ["mutf8:py"]


class SlowScreened(SlowPlanted):
    """A slow decoder with a whole screen that raises on ``boom`` (as its run does)."""

    screen_is_whole = True

    def screen(self, data: bytes) -> dict[str, str]:
        if b"boom" in data:
            raise ValueError("planted screen failure")
        return {"replace": accepts_c080(data)}

    def run(self, data: bytes) -> Outcome:
        out = super().run(data)
        if b"boom" in data:
            raise ValueError("planted crash")
        return out


def test_a_slow_screen_that_raises_is_decoded_in_full_with_the_batch_in_flight(tmp_path: Path):
    path = tmp_path / "inflight.hex"
    slow = SlowScreened(path)
    f = Finder([slow, Handler("replace")], tmp_path / "corpus", "test", tally=False,
               round_size=4, counted=True, inflight=InFlight(path), call_every=0,
               minimize_seconds=5)
    assert f.differ.deferred == (slow,)
    for i in range(20):
        f.queue(b"input %d" % i if i != 7 else b"boom 7")
    f.flush()
    # its run is called only for the input its screen raised on (and the full
    # runs that name and minimize the crash), the first while the batch is in flight
    assert slow.got[0] == b"boom 7" and slow.held[0]
    (found,) = f.found
    assert found.klass == "crash" and found.decoders == (slow.name,)
