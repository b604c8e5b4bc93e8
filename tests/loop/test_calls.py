"""The checks of the call (issue 28, :mod:`utf8fuzz.engine.calls`): history and
placement. In-process and counted: a fixed list of inputs through the finder, as
the fuzz loop hands them over; every planted decoder (``planted_calls.py``) found
as exactly one finding, its correct twin and the built-in decoders never."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from utf8fuzz import decoders as registry
from utf8fuzz.decoders import plugin
from utf8fuzz.decoders.base import Decoder, placed
from utf8fuzz.engine import calls, corpus, replay
from utf8fuzz.loop.finder import Finder

PLANTED = "tests.engine.planted_calls:"
#: Pieces inputs are made of: characters of each length, sequences the end cuts
#: short, bytes no sequence starts with, an overlong form, a surrogate.
PIECES = (b"a", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xc3", b"\xe2\x82",
          b"\xf0\x9f\x98", b"\x80", b"\xbf", b"\xc0\xaf", b"\xed\xa0\x80",
          b"\xf4\x90\x80\x80", b"\xff")


def inputs(n: int, seed: int = 1) -> Iterator[bytes]:
    rng = random.Random(seed)
    for _ in range(n):
        yield b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5)))


def run(decoders: list[Decoder], n: int = 2000, every: int = 8,
        corpus_dir: Path | None = None, *, rounds: bool = False) -> Finder:
    """A counted run through the finder: each input compared at once (``consider``,
    the Hypothesis engine's call), or in rounds of 32 (``queue``, the Atheris
    target's: a decoder's state then carries over a whole round)."""
    f = Finder(decoders, corpus_dir, "test", counted=True, call_every=every, tally=False,
               round_size=32)
    for x in inputs(n):
        if rounds:
            f.queue(x)
        else:
            f.consider(x)
    f.flush()
    return f


@pytest.mark.parametrize(("spec", "klass"), [
    ("keeps_flag+validator", calls.HISTORY),
    ("reads_past", calls.OUTSIDE),
    ("aligned_only", calls.ALIGNMENT),
    ("whole_buffer+text", calls.OUTSIDE),
])
def test_planted_found_once(spec: str, klass: str, tmp_path: Path) -> None:
    d = plugin.load(PLANTED + spec + "+inprocess")
    f = run([d], corpus_dir=tmp_path)
    assert [(n.klass, n.feature) for n in f.found] == [(klass, calls.FEATURES[klass])]
    new = f.found[0]
    assert new.finding["explanation"] == calls.TITLES[klass]
    # the entry replays: the decoder (the caller's, so owned) still has the bug
    assert new.path is not None
    entry = corpus.load_entry(new.path)
    verdict = replay.check(entry, d.name, [d])
    assert verdict.status == "open", verdict.message
    assert replay.reproduces(entry, [d]) is True  # corpus prune keeps it
    # ... and a correct decoder under its name would be fixed
    twin = plugin.load(PLANTED + ("valid+validator" if "validator" in spec else "strict")
                       + "+inprocess")
    twin.name = d.name
    assert replay.check(entry, d.name, [twin]).status == "fixed"
    # without the checks, nothing: the loop itself does not see these bugs
    assert run([d], every=0).found == []


@pytest.mark.parametrize("spec", ["keeps_flag+validator", "reads_past", "aligned_only",
                                  "whole_buffer+text"])
def test_planted_found_once_in_rounds(spec: str) -> None:
    d = plugin.load(PLANTED + spec + "+inprocess")
    found = run([d], rounds=True).found
    assert [n.klass for n in found] == [calls.HISTORY if "flag" in spec else
                                        calls.OUTSIDE if "past" in spec or "whole" in spec
                                        else calls.ALIGNMENT]


def test_planted_history_minimized_and_recorded(tmp_path: Path) -> None:
    d = plugin.load(PLANTED + "keeps_flag+validator+inprocess")
    new = run([d], corpus_dir=tmp_path).found[0]
    call = new.sidecar["call"]
    assert call["check"] == "history"
    # minimized: one earlier call of one byte that is rejected, then one byte
    assert len(call["history"]) == 1 and len(bytes.fromhex(call["history"][0])) == 1
    assert len(new.input) == 1
    assert calls.Call.from_json(call, len(new.input)).history


def test_correct_twins_and_builtin_decoders_find_nothing() -> None:
    twins = [plugin.load(PLANTED + s + "+inprocess") for s in ("valid+validator", "strict")]
    builtin = [d for d in registry.available()
               if not getattr(d, "out_of_process", False) and not d.name.startswith("ref:")]
    # the check stage alone, every input checked (the loop around it is not the point)
    c = calls.CallChecks(calls.decoders_checked(twins + builtin), 1)
    hits = [(h.decoder.name, h.klass, h.data.hex(), h.detail) for x in inputs(300)
            for h in c.check(x)]
    assert hits == []
    # the checks were made: history on every decoder, placement on those that take views
    assert c.asked["history"] > 0 < c.asked["placed"]
    assert "fast:unicode" not in c.summary()["declined"]["placed"]


def test_placed_view_and_probe() -> None:
    v = placed(b"\xe2\x82", 3, 9, 0xAC)
    assert bytes(v) == b"\xe2\x82" and bytes(v.obj) == b"\xac" * 3 + b"\xe2\x82" + b"\xac" * 4
    # a bytes -> str plug-in that fails on a view is not handed one: None
    only_bytes = plugin.load("tests.engine.planted_calls:strict+inprocess")
    only_bytes.fn = lambda data: data.decode("utf-8")  # type: ignore[attr-defined]
    assert only_bytes.run_placed(b"a", 1, 4, 0x80) is None
    assert calls.offered(only_bytes) == {"history": True, "placed": True}
    c = calls.CallChecks([only_bytes], 1)
    for x in inputs(50):
        c.check(x)
    assert c.summary()["declined"]["placed"] == [only_bytes.name]


def test_recorded_call_is_hostile_data() -> None:
    for bad in ({"check": "placed", "offset": 5, "total": 6, "guard": 0},
                {"check": "placed", "offset": 0, "total": 10**9, "guard": 0},
                {"check": "placed", "offset": 0, "total": 4, "guard": 256},
                {"check": "history", "history": ["zz"]},
                {"check": "history", "history": ["00"] * 9},
                {"check": "other"}, []):
        with pytest.raises(ValueError):
            calls.Call.from_json(bad, 2)


def test_diff_asks_after_and_placed() -> None:
    import argparse

    from utf8fuzz.commands.diff import _calls

    d = plugin.load(PLANTED + "reads_past+inprocess")
    ns = argparse.Namespace(after=["c3"], placed=2, guard="80")
    got = _calls(ns, b"\xe2\x82", [d])
    assert got is not None
    assert got[d.name]["placed"]["class"] == calls.OUTSIDE
    assert got[d.name]["history"]["class"] is None


def test_an_input_is_checked_once() -> None:
    # the empty input's CRC-32 is 0: chosen at any rate, and fuzzers repeat it
    c = calls.CallChecks([], 512)
    assert c.due(b"") and not c.due(b"")
    assert calls.CallChecks([], 0).due(b"") is False  # 0: off


@pytest.mark.parametrize("size", [2, 8192])
def test_diff_asks_after_and_placed_of_any_size(size: int, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # an input over diff's SUMMARY_ABOVE takes the summarizing path: it is asked too
    import json

    from utf8fuzz.cli import main

    f = tmp_path / "input"
    f.write_bytes(b"a" * (size - 2) + b"\xe2\x82")
    assert main(["diff", "--decoder", PLANTED + "reads_past+inprocess", "--file", str(f),
                 "--after", "c3", "--placed", "2", "--guard", "80", "--json"]) == 0
    asked = json.loads(capsys.readouterr().out)["calls"]
    (said,) = asked.values()
    assert said["placed"]["class"] == calls.OUTSIDE
    assert said["history"]["class"] is None
