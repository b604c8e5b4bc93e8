"""An exec client's reply that is no outcome of its input (more code points than
``outcome.output_bound`` allows, a code point above 0x8421109F, an error span past
the input) is a ``bad-outcome`` of that input, never accepted and never read past
its bound; ``utf8fuzz fuzz`` finds it once and exits 1."""

from __future__ import annotations

from typing import Any

import pytest

from tests.hostile.processes_common import client, fuzz_runs
from utf8fuzz.decoders import resolve
from utf8fuzz.decoders.exec import ExecDecoder


@pytest.mark.parametrize("do,kind,restarts", [
    # 10 M code points announced: the frame is over its bound, not read, restarted
    ("flood", "oversized-output: exec:python began a reply of 40000013 bytes", 1),
    # a well-framed reply one code point over the bound: the client goes on
    ("many", "oversized-output: 97 code points for a 4-byte input (at most 96)", 0),
    ("bigcp", "code-point-out-of-range: 0x842110a0 at index 0", 0),
    ("farspan", "span-outside-input: ", 0),
])
def test_a_reply_past_what_its_input_allows_is_a_bad_outcome(
        do: str, kind: str, restarts: int) -> None:
    (dec,) = resolve(client(f"--do={do}"))
    assert isinstance(dec, ExecDecoder)
    try:
        outs = dec.decode_many([b"a", b"ab\xfec", b"\xc3"])
        assert [o.status for o in outs] == ["ok", "bad-outcome", "ok"]
        assert (outs[1].detail or "").startswith(kind), outs[1].detail
        assert outs[2].view("strict") == (0, 1)
        assert dec.proc.worker.restarts == restarts
    finally:
        dec.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: Any) -> tuple[int, Any, str, Any]:
    return fuzz_runs(tmp_path_factory)["many"]


def test_fuzz_finds_the_oversized_reply_once_and_exits_1(run: Any) -> None:
    rc, out, err, _ = run
    assert rc == 1, err[-2000:]
    assert not out["failures"], out["failures"]
    # every finding is the planted one (its feature, hence how many signatures it
    # makes, is the differ's to name for a bad-outcome, not this area's)
    assert out["new"]
    for new in out["new"]:
        assert (new["class"], new["decoders"]) == ("bad-outcome", ["exec:hostile:strict"])
        assert "fe" in new["input"], new
