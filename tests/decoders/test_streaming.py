"""Streaming decoders: one split rule, and every streaming decoder fed by it.

* the rule (``utf8fuzz.decoders.chunks``), worked out by hand from its definition
  (the chunk at ``pos`` is ``1 + (data[pos] & 3)`` bytes);
* the ``+incremental`` plug-in shape: names, one-shot siblings, families, specs that
  load each decoder again, strict offsets made absolute;
* the ``exec:`` protocol's stream mode: the worked example of docs/protocol.md sent
  to the built C client, byte for byte; old clients get no stream requests;
* correct streaming decoders (CPython's, the standard library's incremental
  decoder as a plug-in, the C client's, Node's ``TextDecoder`` with ``stream``,
  Java's ``CharsetDecoder``) find nothing on the boundary inputs and 2,000 seeded
  inputs: the differ judges each against the references (and its one-shot sibling);
* ``utf8fuzz diff`` shows the chunks, in hex.

Expected values come from the specs (the reference decoders) and real decoders
(CPython's codec), never from the adapter under test.
"""

from __future__ import annotations

import codecs
import json
import random
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE
from tests.engine.planted_streaming import TRIGGER, LosesSplitFourByte
from utf8fuzz.decoders import UnknownDecoder, peers, resolve
from utf8fuzz.decoders import exec as exec_adapter
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.chunks import chunks, cuts, describe
from utf8fuzz.decoders.cpython import Incremental, input_splits
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.screening import decode_many, is_out_of_process

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "exec" / "c" / "utf8_client.c"
CC = shutil.which("cc")
NODE = shutil.which("node")
PLANTED = "tests.engine.planted_streaming:LosesSplitFourByte"
CORRECT = "encodings.utf_8:IncrementalDecoder"

#: Scalar values at the edges of Table 3-7's rows, encoded, and pieces of them.
_EDGES = [0x00, 0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF,
          0x10000, 0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF]
_PIECES = [chr(c).encode() for c in _EDGES] + [
    bytes([b]) for b in (0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xE0, 0xED, 0xF0, 0xF2, 0xF4, 0xF5,
                         0xFF, 0x41, 0x42, 0x43)]


def seeded_inputs(count: int = 2000) -> list[bytes]:
    """The boundary inputs, Unicode's example, and ``count`` seeded inputs (the same
    every run) made of well-formed sequences at Table 3-7's edges, their prefixes
    (truncated sequences) and single bytes, so chunks end inside sequences often."""
    rng = random.Random(18)
    out = [bytes.fromhex(h) for h in BOUNDARY.values()] + [EXAMPLE, TRIGGER]
    for _ in range(count):
        parts = []
        for _ in range(rng.randrange(1, 7)):
            p = rng.choice(_PIECES)
            parts.append(p[: rng.randrange(1, len(p) + 1)] if rng.random() < 0.2 else p)
        out.append(b"".join(parts))
    return out


def findings(decs: list[Decoder], data: list[bytes]) -> dict[str, str]:
    """Every signature the differ gives on ``data`` (each decoder judged against the
    reference of its claim, a streaming one also against its one-shot sibling),
    with the first input (hex) that gave it."""
    found: dict[str, str] = {}
    outproc = [d for d in decs if is_out_of_process(d)]
    inproc = [d for d in decs if d not in outproc]
    if inproc:
        differ = Differ(inproc)
        for x in data:
            for s in differ.run(x, full=True).signatures:
                found.setdefault(s, x.hex(" "))
    if outproc:  # in bulk, as the fuzz loop sends them
        differ = Differ(outproc, defer_out_of_process=True)
        assert len(differ.out_of_process) == len(outproc)
        for r in differ.run_out_of_process(data):
            for s in r.signatures:
                found.setdefault(s, r.data.hex(" "))
    return found


# -- the rule ------------------------------------------------------------------------


@pytest.mark.parametrize(("hexin", "expected"), [
    ("", []),
    ("41", [b"A"]),                                  # 41 & 3 = 1: 2 bytes, cut at the end
    ("F2 90 80 80 41", [b"\xf2\x90\x80", b"\x80", b"A"]),  # F2: 3 bytes; 80: 1 byte
    ("F3 90 80 80 F0", [b"\xf3\x90\x80\x80", b"\xf0"]),    # F3: 4 bytes; F0: 1 byte
    ("C1 C2 C3", [b"\xc1\xc2", b"\xc3"]),
])
def test_the_rule_cuts_by_the_low_bits_of_each_chunks_first_byte(hexin, expected):
    data = bytes.fromhex(hexin)
    assert chunks(data) == expected
    assert cuts(data) == [sum(map(len, expected[: k + 1])) for k in range(len(expected))]


def test_findings_sees_a_planted_bug_out_of_process():
    # the helper below is what the "find nothing" tests rest on: it must find this
    decs = resolve(f"{PLANTED}+incremental+replace")
    try:
        found = findings(decs, [TRIGGER])
    finally:
        for d in decs:
            d.close()
    assert [s.split("/")[1] for s in found] == ["incremental-differs"]


def test_the_rule_is_cpythons_and_its_c_loops_still_run():
    # cpython:incremental's C loops are used only while its splits are this rule
    assert input_splits is cuts
    d = Incremental()
    assert d._written_out(TRIGGER)


def test_chunks_are_shown_in_hex():
    assert describe(bytes.fromhex("F2 90 80 80 41")) == "F2 90 80 | 80 | 41"
    assert describe(b"") == "(empty)"


# -- the +incremental plug-in shape ----------------------------------------------------


def test_each_mode_is_a_streaming_decoder_and_its_one_shot_sibling():
    decs = resolve(f"{CORRECT}+incremental+inprocess")
    base = f"plugin:{CORRECT}"
    modes = ("strict", "replace", "ignore", "surrogateescape")
    assert [d.name for d in decs] == [n for m in modes
                                      for n in (f"{base}:{m}", f"{base}:{m}:oneshot")]
    assert [d.incremental for d in decs] == [True, False] * 4
    assert {d.family for d in decs[:2]} == {f"{base}:strict"}
    # a decoder's spec loads it again (by name among those it loads)
    for d in decs:
        again = [x for x in resolve(d.spec or "") if x.name == d.name]
        assert len(again) == 1 and again[0].incremental == d.incremental


def test_a_claim_is_in_every_name_and_modes_select():
    decs = resolve(f"{CORRECT}@unicode/per-byte+incremental+replace+inprocess")
    assert [d.name for d in decs] == [f"plugin:{CORRECT}:replace@unicode/per-byte",
                                      f"plugin:{CORRECT}:replace:oneshot@unicode/per-byte"]
    assert {d.policy for d in decs} == {"per-byte"}


@pytest.mark.parametrize(("spec", "match"), [
    (f"{CORRECT}+incremental+text", "two shapes"),
    (f"{CORRECT}+incremental+replace+replace", "given twice"),
    ("codec:utf-8+validator", "incremental"),
])
def test_bad_incremental_specs_are_one_line(spec, match):
    with pytest.raises(UnknownDecoder, match=match) as e:
        resolve(spec)
    assert "\n" not in str(e.value)


def test_the_codec_registrys_incremental_decoder_is_a_plugin():
    decs = resolve("codec:utf-8+incremental+replace")
    assert [d.name for d in decs] == ["plugin:codec:utf-8:replace",
                                      "plugin:codec:utf-8:replace:oneshot"]
    for x in (EXAMPLE, TRIGGER):
        want = tuple(map(ord, x.decode("utf-8", "replace")))  # CPython, one shot
        assert [d.decode(x).view("replace") for d in decs] == [want, want]


@pytest.mark.parametrize("isolated", [False, True])
def test_the_planted_bug_is_incremental_differs_in_every_mode(isolated):
    spec = f"{PLANTED}+incremental" + ("" if isolated else "+inprocess")
    decs = resolve(spec)
    try:
        result = Differ(decs).run(TRIGGER, full=True)
        diffs = [x for dv in result.divergences for x in dv.differences]
        streaming = {d.name for d in decs if d.incremental}
        assert {x.decoder for x in diffs} == streaming  # the one-shot siblings agree
        assert {x.klass for x in diffs} == {"incremental-differs"}
        # the bug by hand: F2 90 80 is dropped, the 80 after it is a lone continuation
        # byte at offset 4, an error the reference does not have
        strict = next(d for d in decs if d.name == f"plugin:{PLANTED}:strict")
        assert strict.decode(TRIGGER).view("strict") == (4, 5)
    finally:
        for d in decs:
            d.close()


def test_strict_offsets_are_absolute_as_cpythons():
    (strict, oneshot) = resolve(f"{CORRECT}+incremental+strict+inprocess")
    for x in seeded_inputs(300):
        try:
            x.decode("utf-8")
            want = None
        except UnicodeDecodeError as e:  # CPython, one shot: the real decoder
            want = (e.start, e.end)
        assert strict.decode(x).view("strict") == want, x.hex(" ")
        assert oneshot.decode(x).view("strict") == want, x.hex(" ")


def test_the_planted_class_really_loses_the_sequence():
    # the planted bug, through the standard library's own feeding loop
    dec = LosesSplitFourByte("replace")
    text = "".join(dec.decode(c, False) for c in chunks(TRIGGER)) + dec.decode(b"", True)
    assert text != TRIGGER.decode("utf-8", "replace")
    assert codecs.getincrementaldecoder("utf-8")("replace").decode(TRIGGER, True) == \
        TRIGGER.decode("utf-8", "replace")


# -- correct streaming decoders find nothing ----------------------------------------------


def test_cpython_and_a_correct_plugin_find_nothing():
    decs = [*resolve("cpython:incremental"), *resolve(f"{CORRECT}+incremental+inprocess")]
    assert findings(decs, seeded_inputs()) == {}


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_nodes_streaming_textdecoder_finds_nothing():
    decs = [*resolve("node:textdecoder"), *resolve("node:textdecoder-stream")]
    try:
        assert [d.incremental for d in decs] == [False, True]
        assert {d.family for d in decs} == {"node:textdecoder"}
        assert findings(decs, seeded_inputs()) == {}
    finally:
        for d in decs:
            d.close()


def test_javas_streaming_charsetdecoder():
    if peers.find("java") is None:
        pytest.skip(f"the Java peer is not available: {peers.why_unavailable('java')}")
    decs = [*resolve("java:charsetdecoder"), *resolve("java:charsetdecoder-stream")]
    try:
        assert [d.incremental for d in decs] == [False, True]
        data = seeded_inputs()
        one, streamed = (decode_many(d, data) for d in decs)
        # fed in chunks, the JDK says what it says fed whole (its known surrogate
        # difference from maximal subparts included: test_peers.py asserts that one)
        assert [(x.hex(" "), o.view("strict"), o.view("reason")) for x, o in
                zip(data, one, strict=True)] == [
            (x.hex(" "), o.view("strict"), o.view("reason")) for x, o in
            zip(data, streamed, strict=True)]
        # so no difference is ever its own: none is classed incremental-differs
        assert not [s for s in findings(decs, data) if "/incremental-differs/" in s]
    finally:
        for d in decs:
            d.close()


# -- exec: stream mode -----------------------------------------------------------------


@pytest.fixture(scope="module")
def c_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CC is None:
        pytest.skip("cc is not on PATH")
    exe = tmp_path_factory.mktemp("c") / "utf8_client"
    subprocess.run([CC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(CLIENT)], check=True)
    return exe


def _frames(raw: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos + 4 <= len(raw):
        (n,) = struct.unpack_from("<I", raw, pos)
        out.append(raw[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return out


def test_the_worked_stream_example_of_the_protocol(c_client: Path):
    # docs/protocol.md, "Stream mode": the request and its reply, byte for byte
    request = bytes.fromhex("1A000000 09000000 82 03000000 03000000 01000000 01000000"
                            "F2908080 41")
    assert request[4:] == (struct.pack("<IB", 9, 0x82)
                           + exec_adapter.chunk_table(bytes.fromhex("F2 90 80 80 41"))
                           + bytes.fromhex("F2 90 80 80 41"))
    out = subprocess.run([str(c_client), "--stream"], input=request, capture_output=True,
                         check=True).stdout
    hello, reply = _frames(out)
    flags = struct.unpack_from("<H", hello, 6)[0]
    assert flags & 32
    # U+90000 and U+0041, no errors: what the input decodes to whole (the spec)
    assert reply == bytes.fromhex("09000000 00 02000000 00000000 00000900 41000000")


def test_the_c_client_streams_and_finds_nothing(c_client: Path):
    decs = resolve("exec:" + shlex.quote(str(c_client)) + " --stream")
    try:
        names = [d.name for d in decs]
        assert names == [f"exec:c-maximal-subpart:{m}{s}" for m in
                         ("strict", "replace", "validate") for s in ("", ":stream")]
        assert [d.incremental for d in decs] == [False, True] * 3
        assert findings(decs, seeded_inputs()) == {}
    finally:
        for d in decs:
            d.close()


def test_a_client_that_does_not_stream_gets_no_stream_decoder(c_client: Path):
    decs = resolve("exec:" + shlex.quote(str(c_client)))
    try:
        assert not any(d.incremental for d in decs)
        assert [d.name for d in decs] == [f"exec:c-maximal-subpart:{m}"
                                          for m in ("strict", "replace", "validate")]
    finally:
        for d in decs:
            d.close()
    # a peer that must stream refuses such a client, in one line
    d = exec_adapter.peer([str(c_client)], name="c:stream", mode="replace", reasons=True,
                          stream=True)
    try:
        out = d.decode(TRIGGER)
        assert out.status == "crash" and "does not say it streams (flag 32)" in (out.detail or "")
    finally:
        d.close()


# -- utf8fuzz diff shows the chunks ----------------------------------------------------------


def test_diff_shows_the_chunks_of_a_streaming_decoder():
    def diff(*args: str) -> str:
        r = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "--decoder",
                            "cpython:incremental", *args, "F2 90 80 80 41"], cwd=ROOT,
                           capture_output=True, text=True, check=True)
        return r.stdout

    text = diff()
    assert "F2 90 80 | 80 | 41" in " ".join(text.split())
    obj = json.loads(diff("--json"))
    assert obj["decoders"]["cpython:incremental"]["chunks"] == ["f29080", "80", "41"]
    assert "chunks" not in obj["decoders"]["ref:unicode:maximal-subpart"]
