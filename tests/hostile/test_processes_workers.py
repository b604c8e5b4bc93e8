"""A plug-in worker whose decoder spins forever, or answers far more than its
input allows, costs one ``timeout`` or ``bad-outcome`` outcome of the input that
does it and a fresh worker: the batch stops at a hang, an answer past its bound is
never read, and ``utf8fuzz fuzz`` / ``diff`` end honestly (decoders/_subprocess.py,
"Bounded answers")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest

from tests.hostile.processes_common import ROOT, fuzz_runs
from utf8fuzz.decoders import plugin
from utf8fuzz.decoders._subprocess import Failure, Worker, WorkerUnavailable

M = "tests.hostile.worker_plugins"


def test_a_worker_that_spins_is_a_timeout_and_ends_the_batch() -> None:
    (dec,) = plugin.load_all(f"{M}:spins+timeout=1")
    assert isinstance(dec, plugin.IsolatedDecoder)
    try:
        outs = dec.decode_many([b"a", b"b\xfe", b"c", b"d"])
        assert [o.status for o in outs] == ["ok", "timeout"]  # c and d are not sent
        assert dec.decode(b"c").ok  # a fresh worker
    finally:
        dec.close()


def test_a_flood_of_text_is_a_bad_outcome_and_diff_stays_small() -> None:
    r = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "--json", "--decoder",
                        f"{M}:floods+text", "61 FE"], cwd=ROOT, capture_output=True,
                       timeout=120)
    # 10 MB of text for 2 bytes was 126 MB of JSON; now one line says why
    assert len(r.stdout) < 20_000, len(r.stdout)
    out = json.loads(r.stdout)["decoders"][f"plugin:{M}:floods"]
    assert out["status"] == "bad-outcome"
    # measured where the text is made, before any view (8 * 2 + 64 = 80: the bound)
    assert out["detail"].startswith("oversized-output: 10000000 ")
    assert out["detail"].endswith("(at most 80)")


FLOODER = textwrap.dedent("""
    import os, struct, sys
    os.write(1, struct.pack("<I", 2) + b"{}")
    while True:
        head = sys.stdin.buffer.read(4)
        if len(head) < 4:
            break
        req = sys.stdin.buffer.read(struct.unpack("<I", head)[0])
        if b"flood" in req:  # announces 1 GiB and starts writing it
            os.write(1, struct.pack("<I", 1 << 30))
            block = b"x" * (1 << 20)
            for _ in range(1024):
                os.write(1, block)
        os.write(1, struct.pack("<I", 2) + b"ok")
""")


def test_an_answer_past_its_bound_is_not_read() -> None:
    # a worker past any plug-in's reach (its own code writes the frame): the bound
    # is the harness's, whatever runs in the worker
    w = Worker([sys.executable, "-c", FLOODER], timeout=30, answer_limit=lambda p: 1000)
    try:
        got = w.request_many([b"a", b"flood", b"b"])
        assert got[0] == b"ok" and got[2] == b"ok"
        assert isinstance(got[1], Failure) and got[1].status == "bad-outcome"
        assert got[1].detail.startswith("oversized-output: worker began an answer of "
                                        "1073741824 bytes (at most 1000")
        assert w.restarts == 1
    finally:
        w.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: Any) -> tuple[int, Any, str, Any]:
    return fuzz_runs(tmp_path_factory)["spins"]


def test_fuzz_finds_the_spinning_worker_once_and_exits_1(run: Any) -> None:
    rc, out, err, _ = run
    assert rc == 1, err[-2000:]
    assert not out["failures"], out["failures"]
    (new,) = out["new"]
    assert (new["class"], new["feature"], new["decoders"]) == (
        "timeout", "timeout", [f"plugin:{M}:spins"])
    assert "fe" in new["input"], new


def test_a_ready_frame_past_its_bound_is_not_read() -> None:
    script = "import os, struct; os.write(1, struct.pack('<I', 1 << 31) + b'x' * 4096)"
    w = Worker([sys.executable, "-c", script], timeout=30)
    try:
        with pytest.raises(WorkerUnavailable, match="a ready frame of 2147483648 bytes"):
            w.start()
    finally:
        w.close()


def _texts(inputs: list[bytes]) -> list[tuple[int, ...]]:
    return [tuple(map(ord, x.decode("utf-8", "replace"))) for x in inputs]


def test_a_batch_gives_each_input_its_own_outcome() -> None:
    # many inputs per request (_subprocess.py, "Batches"): each outcome is its own
    # input's, in order, and one worker served them all
    (dec,) = plugin.load_all(f"{M}:floods+text")
    inputs = [b"%d \xe2\x82" % i if i % 3 else b"%d ok" % i for i in range(300)]
    try:
        outs = dec.decode_many(inputs)
        assert [o.view("replace") for o in outs] == _texts(inputs)
        assert all(o.length == len(x) for o, x in zip(outs, inputs, strict=True))
        assert dec.worker.restarts == 0
    finally:
        dec.close()


@pytest.mark.parametrize("at", [0, 17, 39])
def test_a_death_mid_batch_is_pinned_on_its_input_and_the_rest_go_on(at: int) -> None:
    (dec,) = plugin.load_all(f"{M}:exits+text")
    inputs = [b"in %d \xc3" % i for i in range(40)]
    inputs[at] = b"dies \xfe"
    try:
        outs = dec.decode_many(inputs)
        assert [o.status for o in outs] == ["crash" if i == at else "ok" for i in range(40)]
        assert "exited with status 3" in outs[at].detail
        mine = _texts(inputs)
        assert all(o.view("replace") == mine[i] for i, o in enumerate(outs) if i != at)
    finally:
        dec.close()


BATCH_FLOODER = textwrap.dedent("""
    import json, os, struct, sys
    from utf8fuzz.decoders.plugin import unpack_batch
    os.write(1, struct.pack("<I", 2) + b"{}")
    while True:
        head = sys.stdin.buffer.read(4)
        if len(head) < 4:
            break
        _, inputs = unpack_batch(sys.stdin.buffer.read(struct.unpack("<I", head)[0]))
        if b"flood" in inputs:  # announces 1 GiB and starts writing it
            os.write(1, struct.pack("<I", 1 << 30))
            block = b"x" * (1 << 20)
            for _ in range(1024):
                os.write(1, block)
        body = json.dumps([x.decode() for x in inputs]).encode()
        os.write(1, struct.pack("<I", len(body)) + body)
""")


def test_a_batch_answer_past_its_bound_is_pinned_on_its_input() -> None:
    w = Worker([sys.executable, "-c", BATCH_FLOODER], timeout=30,
               answer_limit=lambda p: 1000)
    try:
        got = w.request_batch([b"a", b"b", b"flood", b"c"],
                              lambda xs: plugin.pack_batch(0, xs),
                              lambda a, xs: list(json.loads(a)))
        assert got[:2] == ["a", "b"] and got[3] == "c"
        assert isinstance(got[2], Failure) and got[2].status == "bad-outcome"
        assert got[2].detail.startswith("oversized-output: worker began an answer of "
                                        "1073741824 bytes (at most 1000")
        assert w.restarts == 2  # the batch's, then "flood" alone
    finally:
        w.close()


def test_two_threads_on_one_worker_each_get_their_own_outcomes() -> None:
    # the fuzz loop decodes a batch in a thread of its own (engine/screening.py,
    # Pipeline) while it may ask the same worker for one input: one exchange at a time
    (dec,) = plugin.load_all(f"{M}:floods+text")
    wrong: list[str] = []

    def use(tag: bytes) -> None:
        for k in range(12):
            inputs = [b"%s %d %d \xe2" % (tag, k, i) for i in range(1 + k % 7)]
            if [o.view("replace") for o in dec.decode_many(inputs)] != _texts(inputs):
                wrong.append(f"{tag!r} {k}")

    try:
        # started here, before the threads share it
        assert dec.decode(b"x").ok
        threads = [threading.Thread(target=use, args=(t,)) for t in (b"one", b"two")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not wrong and dec.worker.restarts == 0
    finally:
        dec.close()


def test_a_batch_sent_is_answered_in_order_around_other_exchanges() -> None:
    # send_many (the fuzz loop's pipelining): the batch is written, the loop goes on;
    # another exchange meanwhile reads its answer first and keeps it for its call
    (dec,) = plugin.load_all(f"{M}:exits+text")
    a = [b"a %d \xe2" % i for i in range(50)]
    b = [b"b %d \xf0" % i for i in range(50)]
    b[20] = b"dies \xfe"
    try:
        first = dec.send_many(a)
        alone = dec.decode(b"c \xc3")
        second = dec.send_many(b)
        outs = second()
        assert [o.status for o in outs] == ["crash" if i == 20 else "ok" for i in range(50)]
        mine = _texts(b)
        assert all(o.view("replace") == mine[i] for i, o in enumerate(outs) if i != 20)
        assert [o.view("replace") for o in first()] == _texts(a)
        assert alone.view("replace") == (ord("c"), ord(" "), 0xFFFD)
    finally:
        dec.close()


def test_a_failed_batch_goes_again_alone_while_the_next_is_outstanding() -> None:
    # the loop sends batch k+1 before it reads batch k: k's death is found then, and
    # its inputs go again alone only once k+1's answer is read and kept
    (dec,) = plugin.load_all(f"{M}:exits+text")
    a = [b"a %d \xe2" % i for i in range(30)]
    a[5] = b"dies \xfe"
    b = [b"b %d \xf0" % i for i in range(30)]
    try:
        first, second = dec.send_many(a), dec.send_many(b)
        outs = first()
        assert [o.status for o in outs] == ["crash" if i == 5 else "ok" for i in range(30)]
        mine = _texts(a)
        assert all(o.view("replace") == mine[i] for i, o in enumerate(outs) if i != 5)
        assert [o.view("replace") for o in second()] == _texts(b)
    finally:
        dec.close()
