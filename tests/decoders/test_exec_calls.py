"""Bugs that live in the call, on the exec protocol (docs/protocol.md): history
requests (hello flag 64), placed requests (flag 128) and streaming validators
(flag 256).

* the example clients (C, JavaScript) answer each as they answer a plain request:
  an input decoded after a history, or placed in a buffer of guard bytes, is
  decoded as alone, and their streaming validators say what the reference says;
* planted clients whose bugs live in the call (a validator that keeps a flag after
  a rejection, a decoder that reads one byte past its view) give other outcomes
  through ``run_after`` and ``run_placed`` than alone;
* a client without the flags is never sent such requests; replies to them are
  judged against the input alone (garbage and bad outcomes as for any reply).

Expected values come from the reference decoder and the plain requests.
"""

from __future__ import annotations

import random
import re
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE
from utf8fuzz.decoders import UnknownDecoder, peers, resolve
from utf8fuzz.decoders import exec as exec_adapter
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference
from utf8fuzz.engine.screening import decode_many

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "exec"
MISBEHAVING = Path(__file__).with_name("exec_clients") / "misbehaving.py"
CC = shutil.which("cc")
NODE = shutil.which("node")
REF = reference("unicode")
#: A history of the kinds a fuzzer chooses: an ill-formed input, a sequence cut off
#: at the end, a long input.
HISTORY = [b"\xff\xe0\x80", b"a\xf0\x9f\x98", "é".encode() * 40]
#: Placements: (offset, bytes after the input, guard byte).
PLACEMENTS = [(0, 0, 0x41), (1, 3, 0x80), (7, 1, 0xF0)]
_NEAR = (0x41, 0x7F, 0x80, 0xBF, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF)


def inputs(count: int) -> list[bytes]:
    """The boundary inputs, Unicode's example and ``count`` seeded short inputs of
    bytes near Table 3-7's edges (the same every run)."""
    rng = random.Random(28)
    return [bytes.fromhex(h) for h in BOUNDARY.values()] + [EXAMPLE] + [
        bytes(rng.choice(_NEAR) for _ in range(rng.randrange(8))) for _ in range(count)]


def misbehaving(*options: str, flags: str = "") -> str:
    return "exec:" + shlex.join([sys.executable, str(MISBEHAVING), *options]) + flags


def one(spec: str) -> exec_adapter.ExecDecoder:
    (d,) = resolve(spec)
    assert isinstance(d, exec_adapter.ExecDecoder)
    return d


def views(d: Decoder, o: object) -> dict[str, object]:
    assert hasattr(o, "view") and hasattr(o, "ok")
    assert o.ok, getattr(o, "detail", None)
    return {v: o.view(v) for v in d.shows}


def check_calls(decs: list[Decoder], data: list[bytes]) -> None:
    """Each one-shot decoder answers each input after the history and in each
    placement exactly as alone; a streaming validator says what the reference says
    of each input, as its one-shot sibling does."""
    for d in decs:
        assert isinstance(d, exec_adapter.ExecDecoder)
        alone = decode_many(d, data)
        if d.incremental:
            assert d.run_after(HISTORY, b"a") is None and d.run_placed(b"a", 0, 1, 0) is None
            assert [o.view("accept") for o in alone] == [
                REF.decode(x).view("accept") for x in data], d.name
            continue
        for x, o in zip(data, alone, strict=True):
            want = views(d, o)
            assert views(d, d.run_after(HISTORY, x)) == want, (d.name, x.hex(" "))
            for offset, after, guard in PLACEMENTS:
                got = d.run_placed(x, offset, offset + len(x) + after, guard)
                assert views(d, got) == want, (d.name, x.hex(" "), offset, guard)


@pytest.fixture(scope="module")
def c_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CC is None:
        pytest.skip("cc is not on PATH")
    exe = tmp_path_factory.mktemp("c") / "utf8_client"
    subprocess.run([CC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(EXAMPLES / "c" / "utf8_client.c")], check=True)
    return exe


# -- the example clients -----------------------------------------------------------------


def test_the_c_client_answers_history_placed_and_stream_validate_requests(c_client: Path):
    decs = resolve("exec:" + shlex.quote(str(c_client)) + " --stream-validate")
    try:
        assert [d.name for d in decs] == [f"exec:c-maximal-subpart:{m}" for m in
                                          ("strict", "replace", "validate", "validate:stream")]
        stream = decs[-1]
        assert stream.incremental and stream.family == "exec:c-maximal-subpart:validate"
        assert decs[2].family == stream.family and decs[0].family is None
        check_calls(decs, inputs(100))
    finally:
        for d in decs:
            d.close()


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_the_js_client_answers_history_placed_and_stream_validate_requests():
    decs = resolve("exec:" + shlex.join([NODE or "node", str(EXAMPLES / "js" / "client.js")]))
    try:
        assert [d.name for d in decs] == [f"exec:node-textdecoder:{m}" for m in
                                          ("strict", "replace", "validate", "validate:stream")]
        check_calls(decs, inputs(30))
    finally:
        for d in decs:
            d.close()


# -- planted bugs that live in the call -------------------------------------------------


@pytest.mark.parametrize("sticky", [True, False])
def test_a_validator_that_keeps_a_flag_after_a_rejection(sticky: bool):
    d = one(misbehaving(*(["--sticky"] if sticky else []), "--flags=72"))  # validate, history
    try:
        after = d.run_after([b"\xff"], b"\xc0")
        alone = d.run(b"\xc0")
        assert after is not None and alone.view("accept") is False
        # the sticky one says C0 is well-formed after a rejection; a correct one does not
        assert after.view("accept") is sticky
    finally:
        d.close()


@pytest.mark.parametrize("overread", [True, False])
def test_a_decoder_that_reads_past_its_view(overread: bool):
    d = one(misbehaving(*(["--overread"] if overread else []), "--flags=133"))  # placed
    try:
        alone = d.run(b"ab")
        placed = d.run_placed(b"ab", 2, 8, 0x41)
        cut = d.run_placed(b"ab", 2, 8, 0xFF)
        assert placed is not None and cut is not None
        assert alone.view("replace") == (0x61, 0x62)
        # the guard byte 41 read past the view is an A; FF an error past the input
        assert placed.view("replace") == ((0x61, 0x62, 0x41) if overread else (0x61, 0x62))
        assert cut.status == ("bad-outcome" if overread else "ok"), cut.detail
        # at the end of the buffer there is nothing past the view to read
        assert d.run_placed(b"ab", 6, 8, 0x41).view("replace") == (0x61, 0x62)  # type: ignore[union-attr]
    finally:
        d.close()


# -- what is sent, and what a reply may be --------------------------------------------------


def test_a_client_without_the_flags_is_never_sent_such_requests():
    d = one(misbehaving())  # strict, reasons: no flag 64 or 128
    try:
        assert d.run_after([b"\xff"], b"a") is None
        assert d.run_placed(b"a", 1, 3, 0x41) is None
        assert d.proc._ids == 0  # nothing was sent
        assert d.run(b"a").ok and d.proc.worker.restarts == 0
    finally:
        d.close()
    with pytest.raises(ValueError, match="no placement"):
        d.run_placed(b"ab", 1, 2, 0x41)


@pytest.mark.parametrize("call,word,status,why", [
    ("history", "badspan", "bad-outcome", "span-outside-input: "),
    ("placed", "badspan", "bad-outcome", "span-outside-input: "),
    ("history", "overlimit", "bad-outcome", "oversized-output: "),
    ("history", "badid", "crash", "garbage reply from "),
    ("placed", "badlen", "crash", "garbage reply from "),
])
def test_replies_to_history_and_placed_requests_are_judged_on_the_input_alone(
        call: str, word: str, status: str, why: str):
    # flags: strict, reasons, history, placed; a reply is its input's, not the
    # history's or the buffer's: a span past the input is outside it, a length past
    # the input's bound is not read
    d = one(misbehaving("--flags=197", flags="+timeout=3"))
    try:
        data = word.encode() + b"\xc3"
        got = (d.run_after([b"x" * 2000], data) if call == "history"
               else d.run_placed(data, 5, len(data) + 2000, 0x41))
        assert got is not None and got.status == status, got.detail
        assert (got.detail or "").startswith(why), got.detail
        assert d.run(b"\xc3").view("strict") == (0, 1)  # and the client goes on
    finally:
        d.close()


def test_a_streaming_validator_alone_is_validate_stream():
    decs = resolve(misbehaving("--flags=264"))  # validate, its validator streams
    try:
        assert [(d.name, d.incremental, d.family) for d in decs] == [
            ("exec:misbehaving:validate", False, "exec:misbehaving:validate"),
            ("exec:misbehaving:validate:stream", True, "exec:misbehaving:validate")]
        stream = decs[1]
        outs = stream.decode_many([b"\xf2\x90\x80\x80A", b"\xe0\x80", b"badvalid"])
        assert [o.view("accept") for o in outs[:2]] == [True, False]
        assert outs[2].status == "crash" and "a validate reply of 17 bytes" in (
            outs[2].detail or "")
    finally:
        for d in decs:
            d.close()
    # a peer that must stream its validator takes flag 256 alone
    p = exec_adapter.peer([sys.executable, str(MISBEHAVING), "--flags=264"], name="t:v",
                          mode="validate", stream=True)
    try:
        assert p.decode(b"\xf0\x9f\x98\x80").view("accept") is True
    finally:
        p.close()


def test_a_streaming_validator_needs_a_validate_mode():
    with pytest.raises(UnknownDecoder, match=r"validator streams \(flag 256\) but offers no "
                                             r"validate mode"):
        resolve(misbehaving("--flags=261"))


@pytest.mark.parametrize("section", ["History requests", "Placed requests"])
def test_the_worked_examples_of_the_docs(c_client: Path, section: str):
    doc = (ROOT / "docs" / "protocol.md").read_text()
    text = doc.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    request, reply = (bytes.fromhex(" ".join(re.findall(r"^([0-9A-F ]+?)(?:  .*)?$",
                                                          block, re.MULTILINE)))
                      for block in re.findall(r"```text\n(.*?)```", text, re.DOTALL))
    # the harness writes each request as the docs do
    proc = exec_adapter.ExecProcess(["never-started"])
    proc._ids = request[4]
    assert request[4:] == (
        proc.history_request(exec_adapter.MODE_REPLACE, [b"\xc3"], b"\xa9")
        if section.startswith("History") else
        proc.placed_request(exec_adapter.MODE_REPLACE, b"\xe2\x82", 1, 4, 0xAC))
    p = subprocess.run([str(c_client)], input=request, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    (hello_len,) = struct.unpack_from("<I", p.stdout)
    assert p.stdout[4 + hello_len :] == reply


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_the_node_peers_answer_history_and_placed_requests():
    decs = [d for spec in ("node:textdecoder-fatal", "node:textdecoder", "node:buffer")
            for d in resolve(spec)]
    try:
        assert len(decs) == 3
        check_calls(decs, inputs(20))
    finally:
        for d in decs:
            d.close()


@pytest.mark.parametrize("lang,specs", [
    ("go", ["go:decoderune", "go:runes", "go:tovalidutf8", "go:valid"]),
    ("java", ["java:string", "java:charsetdecoder"]),
    ("rust", ["rust:from-utf8", "rust:from-utf8-lossy"]),
])
def test_the_compiled_peers_answer_history_and_placed_requests(lang: str, specs: list[str]):
    if peers.find(lang) is None:
        pytest.skip(f"the {lang} peer is not built: {peers.why_unavailable(lang)}")
    decs = [d for spec in specs for d in resolve(spec)]
    try:
        assert len(decs) == len(specs)
        check_calls(decs, inputs(20))
    finally:
        for d in decs:
            d.close()


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_a_js_decoder_that_decodes_the_whole_buffer_under_its_view():
    # through the triage script's client (which copies every input but a placed
    # one): placement shows the bug, a history request does not misplace it
    planted = Path(__file__).with_name("exec_clients") / "reads_whole_buffer.js"
    d = one("exec:" + shlex.join([NODE or "node", str(ROOT / "scripts" / "triage_real" /
                                                       "textdecoder_client.js"),
                                  str(planted), "TextDecoder"]))
    try:
        assert d.name.endswith("reads_whole_buffer.js:replace")
        placed = d.run_placed(b"ab", 3, 7, 0x41)
        assert placed is not None
        assert placed.view("replace") == (0x41,) * 3 + (0x61, 0x62, 0x41, 0x41)
        after = d.run_after([b"\xc3"], b"\xa9")
        assert after is not None and after.view("replace") == d.run(b"\xa9").view("replace") == (
            0xFFFD,)
    finally:
        d.close()
