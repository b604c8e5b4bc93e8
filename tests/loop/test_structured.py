"""Hypothesis's strategies inside the coverage-guided loop (loop/structured.py): a
libFuzzer input that starts with the tag is a Hypothesis buffer, and what it stands
for is a function of its bytes alone - the same drawn input on every replay, from a
crash file too; the tag twice is an escape, so any input still runs as itself."""

from __future__ import annotations

import random

from utf8fuzz.loop import structured
from utf8fuzz.loop.recover import read_candidates
from utf8fuzz.loop.structured import TAG, escape, input_of, is_structured, mutator


def _buffers(n: int, seed: int = 1) -> list[bytes]:
    r = random.Random(seed)
    return [TAG + r.randbytes(r.randint(0, 64)) for _ in range(n)]


def test_a_structured_input_replays_to_the_same_bytes():
    bufs = _buffers(100)
    first = [input_of(b) for b in bufs]
    structured._draw.cache_clear()  # a fresh fuzz target, as in another process
    assert [input_of(b) for b in bufs] == first
    drawn = [x for x in first if x is not None]
    # Hypothesis's draws, not the buffers: the strategies' shapes, mostly UTF-8-ish
    assert len(drawn) >= 95 and len(set(drawn)) > 75
    assert not any(x.startswith(TAG) or x in bufs for x in drawn)


def test_any_input_runs_as_itself_escaped():
    for data in (b"", b"\xc0\x80", TAG, TAG + b"\xc0\x80", TAG + TAG, b"\xffHY"):
        assert input_of(escape(data)) == data
        assert not is_structured(escape(data))
    assert input_of(b"\xc0\x80") == b"\xc0\x80"  # a plain input is itself


def test_a_crash_file_of_a_structured_input_is_read_as_its_draw(tmp_path):
    # libFuzzer writes the input it ran, the buffer; recovery re-runs what it drew
    buf = _buffers(1, seed=7)[0]
    (tmp_path / "crash-1").write_bytes(buf)
    (tmp_path / "inflight-1.hex").write_text(b"\xc0\x80".hex() + "\n")
    assert read_candidates([tmp_path / "crash-1", tmp_path / "inflight-1.hex"]) == [
        input_of(buf), b"\xc0\x80"]


def test_the_mutator_keeps_buffers_structured_and_their_share_of_the_work():
    made = mutator(lambda d, n, s: d + b"A", None, part=0.25)
    outs = [made(b"plain", 64, seed) for seed in range(4000)]
    new = [x for x in outs if is_structured(x)]
    plain = len(outs) - len(new)
    # a structured input costs COST plain ones: a quarter of the work is theirs
    work = len(new) * structured.COST
    assert 0.2 <= work / (work + plain) <= 0.3
    assert all(x == b"plainA" for x in outs if not is_structured(x))
    # under its share, a structured input is mutated as a buffer, and stays structured
    every = mutator(lambda d, n, s: d + b"A", None, part=1.0)
    again = [every(x, 64, 1) for x in new[:20]]
    assert all(is_structured(x) and len(x) <= 64 for x in again)
    assert [every(x, 64, 1) for x in new[:20]] == again  # deterministic in the seed
    # over it (share 0 here: never a new one), a structured input libFuzzer picks
    # from its corpus is mutated as the plain input it drew
    none = mutator(lambda d, n, s: d + b"A", None, part=0.0)
    assert not any(is_structured(none(b"x", 64, s)) for s in range(200))
    assert [none(x, 64, 1) for x in new[:20]] == [(input_of(x) or b"") + b"A" for x in new[:20]]


def test_a_finding_to_crash_on_is_handed_to_libfuzzer_escaped():
    # a target run directly crashes on the finding's minimized input, which the
    # custom mutator hands to libFuzzer: an input that starts with the tag goes
    # escaped, so that libFuzzer's run of it (and its crash file) is that input
    from utf8fuzz.loop.atheris_target import StopAtFinding
    from utf8fuzz.loop.finder import NewSignature

    found = TAG + b"\xc0\x80"
    stop = StopAtFinding(["target"])
    stop.note(NewSignature("s", ("d",), "accepts-ill-formed", "f", found, 6, None, False,
                           finding={"id": "x", "family": "d", "rule": "r"}))
    assert stop.pending == TAG + found and input_of(stop.pending) == found
    handed = stop.mutator(lambda d, n, s: d)(b"", 64, 1)
    assert input_of(handed) == found
