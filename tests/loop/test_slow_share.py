"""The slow decoders' share of the loop (:class:`utf8fuzz.engine.screening.SlowShare`):
which inputs an out-of-process decoder is given, that each decoder's count of
inputs seen is what it was sent, that a divergence it shows on a sampled input is
saved against that input, and that the run's summary says so."""

from __future__ import annotations

from pathlib import Path

from tests.loop.test_narrow import Peer
from utf8fuzz.decoders.cpython import Handler
from utf8fuzz.engine.screening import SlowShare
from utf8fuzz.loop.finder import Finder


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


def test_a_peer_divergence_on_a_sampled_input_is_saved_against_that_input(tmp_path: Path):
    peer = Peer()
    f = Finder([peer, Handler("replace")], tmp_path / "corpus", "test", tally=False,
               round_size=8, counted=True, minimize_seconds=5)
    f.slow = SlowShare(every=10, first=0)
    # the bug at input 7 (not sampled, nothing another decoder differs on: its
    # peer never sees it) and at input 20 (sampled), with different lengths
    inputs = [b"x%03d" % i for i in range(40)]
    inputs[7] = b"lost\xc0\x80"
    inputs[20] = b"sampled!!\xc0\x80"
    for x in inputs:
        f.queue(x)
    f.flush()
    assert inputs[7] not in peer.got and inputs[20] in peer.got
    (found,) = f.found
    assert found.signature == "unicode/accepts-ill-formed/non-shortest-form/planted:peer-c080"
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
