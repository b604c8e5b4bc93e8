"""An exec client that hangs (mid-batch, on every input after its hello, or deaf
to its requests) is a ``timeout`` finding pinned on the input that hangs, and
``utf8fuzz fuzz`` exits 1; the bulk path of the fuzz loop stops a batch at a hang
instead of paying a timeout or two for each input after it (docs/protocol.md,
"What the harness does on each failure")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.hostile.processes_common import TIMEOUT, client, fuzz_runs
from utf8fuzz.decoders import resolve
from utf8fuzz.decoders.exec import ExecDecoder


@pytest.fixture(scope="module")
def runs(tmp_path_factory: Any) -> dict[str, tuple[int, Any, str, Any]]:
    return fuzz_runs(tmp_path_factory)


@pytest.mark.parametrize("name", ["batched", "deaf", "hang"])
def test_fuzz_finds_the_hang_once_and_exits_1(runs: Any, name: str) -> None:
    rc, out, err, _ = runs[name]
    assert rc == 1, err[-2000:]
    assert not out["failures"], out["failures"]
    (new,) = out["new"]
    assert (new["class"], new["feature"], new["decoders"]) == (
        "timeout", "timeout", ["exec:hostile:strict"])
    if name != "deaf":  # it hangs on every input; the others only on FE
        assert "fe" in new["input"], new


def test_a_hang_mid_batch_is_pinned_on_its_input_and_ends_the_batch() -> None:
    (dec,) = resolve(client("--do=hang", "--batched", options=TIMEOUT))
    assert isinstance(dec, ExecDecoder)
    try:
        inputs = [b"a", b"b\xc3", b"c", b"d\xfe", b"e", b"f"]
        outs = dec.decode_many(inputs)
        # the batch times out with no reply; sent one by one, the first three answer
        # and the fourth hangs alone; the last two are not sent
        assert [o.status for o in outs] == ["ok", "ok", "ok", "timeout"]
        assert outs[1].view("strict") == (1, 2)
        assert dec.run(b"e").ok  # restarted
    finally:
        dec.close()


def test_a_client_that_reads_nothing_never_blocks_the_harness() -> None:
    (dec,) = resolve(client("--deaf", options=TIMEOUT))
    assert isinstance(dec, ExecDecoder)
    try:
        # 4 MiB of requests: far more than a pipe holds, so writes must not block
        outs = dec.decode_many([bytes(64 << 10)] * 64)
        assert [o.status for o in outs] == ["timeout"]
    finally:
        dec.close()


def test_requests_sent_ahead_are_pinned_on_their_inputs_around_other_exchanges() -> None:
    # send_many (the fuzz loop's pipelining): the requests are written, the loop goes
    # on; another exchange meanwhile reads their replies first and keeps them
    (dec,) = resolve(client("--do=hang", "--batched", options=TIMEOUT))
    assert isinstance(dec, ExecDecoder)
    try:
        first = dec.send_many([b"a", b"b\xc3", b"c"])
        alone = dec.decode(b"x\xc3")
        second = dec.send_many([b"d", b"e\xc3", b"f\xfe", b"g"])
        assert [o.status for o in second()] == ["ok", "ok", "timeout"]
        outs = first()
        assert [o.status for o in outs] == ["ok", "ok", "ok"]
        assert outs[1].view("strict") == (1, 2) and alone.view("strict") == (1, 2)
    finally:
        dec.close()
