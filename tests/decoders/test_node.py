"""Node's TextDecoder (fatal and replacement) and Buffer.toString: exec-protocol
peers (node_client.js through exec.peer), one node process each."""

from __future__ import annotations

import os
import shutil
import signal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE
from utf8fuzz.decoders import exec as exec_protocol
from utf8fuzz.decoders import node
from utf8fuzz.decoders.reference import reference

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")
REF = reference("unicode")
NAMES = ["node:textdecoder-fatal", "node:textdecoder", "node:buffer",
         "node:textdecoder-stream"]


@pytest.fixture(scope="module")
def decoders():
    ds = {v: node.decoder(NODE or "node", v) for v in node.VARIANTS}
    yield ds
    for d in ds.values():
        d.close()


def with_test_inputs(variant: str = "buffer",
                     timeout: float = 10.0) -> exec_protocol.ExecDecoder:
    """A decoder whose node aborts on the input ``\\xff!abt`` and hangs on
    ``\\xff!hng`` (node_client.js, ``UTF8FUZZ_NODE_TEST_OPS=1``)."""
    d = node.decoder(NODE or "node", variant, timeout=timeout,
                     env={**os.environ, "UTF8FUZZ_NODE_TEST_OPS": "1"})
    assert isinstance(d, exec_protocol.ExecDecoder)
    return d


def test_discovery_starts_nothing_and_keeps_the_names():
    found = node.discover()
    try:
        assert [d.name for d in found] == NAMES
        assert [sorted(d.shows) for d in found] == [["reason", "strict"], ["replace"],
                                                     ["replace"], ["replace"]]
        assert [d.incremental for d in found] == [False, False, False, True]
        for d in found:
            assert isinstance(d, exec_protocol.ExecDecoder)
            assert d.proc.worker.proc is None and d.versions() == {}
            assert (d.profile, d.policy) == ("unicode", "maximal-subpart")
    finally:
        for d in found:
            d.close()  # type: ignore[union-attr]


def test_versions(decoders):
    out = decoders["buffer"].decode(b"a")
    v = decoders["buffer"].versions()
    assert v["node"].startswith("v") and v["icu"] and v["unicode"]
    assert out.provenance["node"] == v["node"]


def test_unicode_example(decoders):
    fatal = decoders["textdecoder-fatal"].decode(EXAMPLE)
    assert (fatal.view("strict"), fatal.view("reason")) == ((1, 4), "illegal")
    assert decoders["textdecoder"].decode(EXAMPLE).view("replace") == EXAMPLE_REPLACE
    assert decoders["buffer"].decode(EXAMPLE).view("replace") == EXAMPLE_REPLACE


@pytest.mark.parametrize("hexin", BOUNDARY.values(), ids=BOUNDARY.keys())
def test_boundary_inputs_agree_with_the_reference(decoders, hexin):
    data = bytes.fromhex(hexin)
    ref = REF.decode(data)
    for d in decoders.values():
        out = d.decode(data)
        assert out.ok, out.detail
        assert {v: out.view(v) for v in out.shows} == {v: ref.view(v) for v in out.shows}, d.name


def test_bom_is_kept_as_u_feff(decoders):
    for d in decoders.values():
        if "replace" in d.shows:
            assert d.decode(bytes.fromhex("EF BB BF 41")).view("replace") == (0xFEFF, 0x41)


def test_the_replacing_decoders_are_text_only(decoders):
    # they replace without saying where: the outcome shows the text and nothing else
    for v in ("textdecoder", "buffer"):
        out = decoders[v].decode(b"a\xff")
        assert out.shows == {"replace"} and out.view("replace") == (0x61, 0xFFFD)


def test_the_fatal_decoder_shows_the_text_of_a_valid_input(decoders):
    out = decoders["textdecoder-fatal"].decode("a\u00e9\U0001F600".encode())
    assert out.view("strict") is None and out.view("replace") == (0x61, 0xE9, 0x1F600)


def test_fatal_span_is_searched_truncation_and_illegal(decoders):
    fatal = decoders["textdecoder-fatal"]
    out = fatal.decode(bytes.fromhex("41 F0 9F 98"))
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "truncated")
    out = fatal.decode(bytes.fromhex("41 F0 9F 98 42"))
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "illegal")
    out = fatal.decode(bytes.fromhex("41 42 80"))
    assert out.view("strict") == (2, 3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=24), min_size=1, max_size=20))
def test_batches_agree_with_the_reference(decoders, batch):
    for d in decoders.values():
        outs = d.decode_many(batch)
        for data, out in zip(batch, outs, strict=True):
            ref = REF.decode(data)
            assert {v: out.view(v) for v in out.shows} == {v: ref.view(v) for v in out.shows}


def test_a_killed_node_is_restarted():
    d = with_test_inputs()
    try:
        assert d.decode(b"a").ok
        pid = d.proc.worker.proc.pid
        os.kill(pid, signal.SIGKILL)
        d.proc.worker.proc.wait()
        assert d.decode(b"\xc3\xa9").view("replace") == (0xE9,)
        assert d.proc.worker.proc.pid != pid and d.proc.worker.restarts == 1
    finally:
        d.close()


def test_node_dying_mid_batch_is_a_crash_for_that_input_only():
    d = with_test_inputs("textdecoder")
    try:
        outs = d.decode_many([b"a", b"\xff!abt", b"b"])
        assert [o.status for o in outs] == ["ok", "crash", "ok"]
        assert outs[0].view("replace") == (0x61,) and outs[2].view("replace") == (0x62,)
        assert "node:textdecoder killed by SIGABRT" in (outs[1].detail or "")
        assert d.decode(b"ok").ok
    finally:
        d.close()


def test_node_hanging_is_a_timeout_and_a_new_process():
    d = with_test_inputs("textdecoder-fatal", timeout=1.0)
    try:
        outs = d.decode_many([b"a", b"\xff!hng", b"b"])
        # after the hang nothing more of the batch is sent
        assert [o.status for o in outs] == ["ok", "timeout"]
        assert outs[0].view("replace") == (0x61,)
        # node answers a whole chunk at once, so the batch's timeout could not say
        # which request hung: "a" went again alone to a new process, then "hang"
        # alone timed out; "b" goes to a third
        assert d.run(b"b").view("replace") == (0x62,)
        assert d.proc.worker.restarts == 2
    finally:
        d.close()


def test_node_missing_is_one_line(monkeypatch):
    monkeypatch.setattr(node.shutil, "which", lambda _: None)
    found = node.discover()
    assert [u.name for u in found] == NAMES
    assert all("not on PATH" in u.reason for u in found)
