"""The minimizer's full runs (:meth:`utf8fuzz.engine.differ.Differ.deciders`): only
the decoders that decide the divergence being minimized run on each candidate, and
they name that decoder's divergences as the whole differ does. A peer elsewhere (a
round trip per call) is not run once per candidate."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.engine.planted import Planted, accepts_c080
from utf8fuzz.decoders import cpython
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import Finder
from utf8fuzz.outcome import Outcome


class Peer(Planted):
    """The C0 80 bug out of process, as the loop sees a peer: it keeps every input
    each batch held, and counts its calls one input at a time."""

    out_of_process = True

    def __init__(self) -> None:
        super().__init__("planted:peer-c080", accepts_c080)
        self.got: list[bytes] = []
        self.singles = 0

    def decode(self, data: bytes) -> Outcome:
        self.singles += 1
        return super().decode(data)

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        self.got += inputs
        return [Planted.decode(self, d) for d in inputs]


def test_the_minimizer_leaves_out_decoders_that_do_not_decide_the_divergence(tmp_path: Path):
    # A bug in an in-process decoder is minimized through full runs; the peer, which
    # neither is it nor shows its positions, is not run on each candidate.
    from tests.engine.planted import swallows_after_truncated4

    peer = Peer()
    bug = Planted("planted:truncated4", swallows_after_truncated4)
    f = Finder([peer, bug], tmp_path / "corpus", "test", tally=False, minimize_seconds=5,
               full_every=1)
    f.consider(b"abc def ghi \xf0\x90\x41 jkl mno")
    (found,) = f.found
    assert found.decoders == ("planted:truncated4",)
    assert len(found.input) < 8
    # the full runs that name and save it (a handful), never one per candidate
    assert peer.singles <= 4, peer.singles


def test_deciders_name_a_decoders_divergences_as_the_whole_differ_does():
    # CPython's adapters: position-less modes with siblings that show positions,
    # a streaming one with one-shot siblings
    whole = Differ([d for d in cpython.discover() if isinstance(d, Decoder)])
    assert whole.siblings and whole._incr
    inputs = [b"", b"A\xc0\x80", b"\xed\xa0\x80x", b"\xf0\x90\x41", b"\xe1\x80\xe2",
              bytes(range(0x7e, 0x100))]
    for d in whole.decoders:
        narrow = Differ(whole.deciders([d.name]))
        assert len(narrow.decoders) < len(whole.decoders)
        for x in inputs:
            mine = {s for s in whole.run(x, full=True).signatures if s.endswith("/" + d.name)}
            theirs = {s for s in narrow.run(x, full=True).signatures
                      if s.endswith("/" + d.name)}
            assert mine == theirs, (d.name, x)
