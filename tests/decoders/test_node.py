"""Node's TextDecoder (fatal and replacement) and Buffer.toString, through one
persistent node process."""

from __future__ import annotations

import os
import shutil
import signal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE
from utf8fuzz.decoders import node
from utf8fuzz.decoders.reference import reference

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")
REF = reference("unicode")


@pytest.fixture(scope="module")
def decoders():
    proc = node.NodeProcess(NODE)
    ds = {v: node.NodeDecoder(proc, v) for v in node.OPS}
    yield ds
    proc.close()


@pytest.fixture
def test_proc():
    """A node worker with the test-only ops (hang, abort) switched on."""
    proc = node.NodeProcess(NODE, timeout=1.0,
                            env={**os.environ, "UTF8FUZZ_NODE_TEST_OPS": "1"})
    yield proc
    proc.close()


def test_versions(decoders):
    v = decoders["textdecoder"].versions()
    assert v["node"].startswith("v") and v["icu"] and v["unicode"]
    assert decoders["buffer"].decode(b"a").provenance["node"] == v["node"]


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


def test_a_killed_node_is_restarted(test_proc):
    d = node.NodeDecoder(test_proc, "buffer")
    assert d.decode(b"a").ok
    pid = test_proc.worker.proc.pid
    os.kill(pid, signal.SIGKILL)
    test_proc.worker.proc.wait()
    assert d.decode(b"\xc3\xa9").view("replace") == (0xE9,)
    assert test_proc.worker.proc.pid != pid and test_proc.worker.restarts == 1


def test_node_dying_mid_batch_is_a_crash_for_that_input_only(test_proc):
    d = node.NodeDecoder(test_proc, "textdecoder")
    outs = test_proc.worker.request_many([b"\x01a", b"\xffdie", b"\x01b"])
    assert outs[0][1:] == "a".encode("utf-16-le") and outs[2][1:] == "b".encode("utf-16-le")
    assert outs[1].status == "crash" and "SIGABRT" in outs[1].detail
    assert d.decode(b"ok").ok


def test_node_hanging_is_a_timeout_and_a_new_process(test_proc):
    outs = test_proc.worker.request_many([b"\x01a", b"\xfehang", b"\x01b"])
    assert outs[0][1:] == "a".encode("utf-16-le")
    assert outs[1].status == "timeout"
    assert outs[2][1:] == "b".encode("utf-16-le")
    # node answers a whole chunk at once, so the batch's timeout could not say
    # which request hung: "a" went again alone, then "hang" alone timed out.
    assert test_proc.worker.restarts == 3


def test_node_missing_is_one_line(monkeypatch):
    monkeypatch.setattr(node.shutil, "which", lambda _: None)
    found = node.discover()
    assert [u.name for u in found] == ["node:textdecoder-fatal", "node:textdecoder", "node:buffer"]
    assert all("not on PATH" in u.reason for u in found)
