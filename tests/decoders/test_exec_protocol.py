"""Decoders in any language: ``exec:'CMD'`` and the protocol of docs/protocol.md.

The example clients (examples/exec/) are built with the real toolchains and must
agree with ref:unicode:maximal-subpart on the boundary inputs and a seeded batch
of near-UTF-8 inputs: every expectation is the reference's outcome. Misbehaving
clients (tests/decoders/exec_clients/) exit, hang and write garbage; each failure
is one outcome, and the process is restarted for the next input.
"""

from __future__ import annotations

import json
import os
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
from tests.decoders.test_exec_calls import check_calls
from utf8fuzz import bench
from utf8fuzz.decoders import UnknownDecoder, resolve
from utf8fuzz.decoders import exec as exec_adapter
from utf8fuzz.decoders.reference import reference
from utf8fuzz.decoders.spec import parse as parse_spec
from utf8fuzz.engine import screening

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "exec"
MISBEHAVING = Path(__file__).with_name("exec_clients") / "misbehaving.py"
REF = reference("unicode")
#: Bytes that meet every row of Table 3-7 and its edges.
NEAR = (0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
        0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFE, 0xFF)
GCC = shutil.which("gcc")
RUSTC = shutil.which("rustc") or next(
    (str(p) for p in [Path.home() / ".cargo" / "bin" / "rustc"] if p.exists()), None)
JAVAC, JAVA = shutil.which("javac"), shutil.which("java")
NODE = shutil.which("node")
GO = shutil.which("go")
#: The JVM reserves more address space than a worker's default limit allows.
JAVA_FLAGS = "-Xmx64m -XX:ReservedCodeCacheSize=64m -XX:CompressedClassSpaceSize=64m"


def inputs() -> list[bytes]:
    """The boundary inputs, Unicode's example, and 1,500 seeded short inputs of
    bytes near Table 3-7's edges (the same every run)."""
    rng = random.Random(2026)
    near = [bytes(rng.choice(NEAR) for _ in range(rng.randrange(12))) for _ in range(1500)]
    return [bytes.fromhex(h) for h in BOUNDARY.values()] + [EXAMPLE, *near]


def disagreements(spec: str, data: list[bytes]) -> dict[str, list[str]]:
    """For each decoder of ``spec``: the inputs (hex) where a view it shows differs
    from the reference's, or where it did not decode; every decoder is closed."""
    decs = resolve(spec)
    try:
        out: dict[str, list[str]] = {}
        for d in decs:
            got = screening.decode_many(d, data)
            out[d.name] = [x.hex(" ") for x, o in zip(data, got, strict=True)
                           if not o.ok or any(o.view(v) != REF.decode(x).view(v)
                                              for v in o.shows)]
        return out
    finally:
        for d in decs:
            d.close()


def calls_agree(spec: str, count: int = 20) -> None:
    """Each decoder of ``spec`` answers history and placed requests as it answers the
    input alone (tests/decoders/test_exec_calls.py), on ``count`` of the inputs."""
    decs = resolve(spec)
    try:
        assert all(d.run_after([b"\xff"], b"a") is not None for d in decs if not d.incremental)
        check_calls(decs, inputs()[:count])
    finally:
        for d in decs:
            d.close()


def quote(*argv: str | Path) -> str:
    return shlex.join(str(a) for a in argv)


@pytest.fixture(scope="module")
def c_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if GCC is None:
        pytest.skip("gcc is not on PATH")
    exe = tmp_path_factory.mktemp("c") / "utf8_client"
    subprocess.run([GCC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                    "-o", str(exe), str(EXAMPLES / "c" / "utf8_client.c")], check=True)
    return exe


def misbehaving(*options: str, flags: str = "") -> str:
    return "exec:" + quote(sys.executable, MISBEHAVING, *options) + flags


# -- the example clients agree with the reference ------------------------------------


def test_c_client_agrees_with_the_reference(c_client: Path) -> None:
    got = disagreements("exec:" + quote(c_client), inputs())
    assert set(got) == {"exec:c-maximal-subpart:strict", "exec:c-maximal-subpart:replace",
                        "exec:c-maximal-subpart:validate"}
    assert got == {name: [] for name in got}


def test_c_client_through_utf8fuzz_diff(c_client: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "--json", "--decoder",
                        "exec:" + quote(c_client), "--decoder", "ref:unicode:maximal-subpart",
                        EXAMPLE.hex()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["decoders"]
    ref = out.pop("ref:unicode:maximal-subpart")
    validate = out.pop("exec:c-maximal-subpart:validate")
    assert validate["status"] == "ok"
    assert set(out) == {"exec:c-maximal-subpart:strict", "exec:c-maximal-subpart:replace"}
    for name, o in out.items():
        assert o["status"] == "ok"
        assert (o["first_error"], o["reason"]) == (ref["first_error"], ref["reason"]), name
    assert out["exec:c-maximal-subpart:replace"]["replace"] == ref["replace"]


def test_c_client_meets_the_committed_corpus_through_the_pytest_plugin(
        c_client: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", corpus, ignore=shutil.ignore_patterns("work"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--utf8fuzz-corpus={corpus}", "--utf8fuzz-decoder=exec:"
                        + quote(c_client), str(corpus), "-k", "exec"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    last = r.stdout.strip().splitlines()[-1]
    # each entry of the unicode profile is an expectation a conforming decoder meets
    assert r.returncode == 0 and " passed" in last and "failed" not in last, r.stdout[-2000:]


def test_utf8fuzz_fuzz_finds_and_saves_an_exec_clients_divergence(tmp_path: Path) -> None:
    # corpus/seeds hold ED A0 80, which this client accepts: the seeds are fuzzed first
    spec = misbehaving("--surrogatepass")
    r = subprocess.run([sys.executable, "-m", "utf8fuzz", "fuzz", "--decoder", spec,
                        "--runs", "100", "--seed", "1", "--time", "120", "--jobs", "1",
                        "--corpus", str(tmp_path / "c"),
                        "--no-report", "--json"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stderr[-2000:]
    new = json.loads(r.stdout)["new"]
    assert any(n["signature"] == "unicode/accepts-ill-formed/surrogate/exec:misbehaving:strict"
               for n in new), new
    entry = json.loads(next((tmp_path / "c" / "entries").glob("*.json")).read_text())
    # the entry loads the decoder again by its spec, that one mode alone
    assert entry["outcomes"]["exec:misbehaving:strict"]["spec"] == spec + "+mode=strict"


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_js_client_agrees_with_the_reference() -> None:
    got = disagreements("exec:" + quote(NODE or "node", EXAMPLES / "js" / "client.js"),
                        inputs())
    assert set(got) == {"exec:node-textdecoder:strict", "exec:node-textdecoder:replace",
                        "exec:node-textdecoder:validate", "exec:node-textdecoder:validate:stream"}
    assert got == {name: [] for name in got}


@pytest.mark.skipif(RUSTC is None, reason="rustc is not on PATH or in ~/.cargo/bin")
def test_rust_client_agrees_with_the_reference(tmp_path: Path) -> None:
    exe = tmp_path / "utf8_client_rs"
    subprocess.run([RUSTC or "rustc", "--edition", "2021", "-O", "-o", str(exe),
                    str(EXAMPLES / "rust" / "main.rs")], check=True, cwd=tmp_path)
    got = disagreements("exec:" + quote(exe), inputs())
    assert set(got) == {"exec:rust-std:strict", "exec:rust-std:replace"}
    assert got == {name: [] for name in got}
    calls_agree("exec:" + quote(exe))


@pytest.mark.skipif(JAVAC is None or JAVA is None, reason="javac or java is not on PATH")
def test_java_client_agrees_with_the_reference_but_on_encoded_surrogates(
        tmp_path: Path) -> None:
    subprocess.run([JAVAC or "javac", "-d", str(tmp_path), str(EXAMPLES / "java" /
                                                              "Client.java")], check=True)
    spec = "exec:" + quote(JAVA or "java", *JAVA_FLAGS.split(), "-cp", tmp_path, "Client")
    data = inputs()
    got = disagreements(spec, data)
    assert set(got) == {"exec:java-charsetdecoder:strict", "exec:java-charsetdecoder:replace"}
    # The JDK's decoder takes an encoded surrogate (ED A0..BF, then a byte) as one
    # malformed sequence where Unicode's maximal subparts are one byte each: every
    # disagreement is such an input, and each such input is one.
    surrogate = re.compile(r"ed [ab][0-9a-f]")
    for name, where in got.items():
        assert where, name
        assert all(surrogate.search(x) for x in where), (name, where)
    assert "ed a0 80" in got["exec:java-charsetdecoder:strict"]
    calls_agree(spec)


@pytest.mark.skipif(GO is None, reason="go is not on PATH (make setup installs golang-go)")
def test_go_client_cuts_errors_per_byte(tmp_path: Path) -> None:
    exe = tmp_path / "utf8_client_go"
    subprocess.run([GO or "go", "build", "-o", str(exe), str(EXAMPLES / "go" / "main.go")],
                   check=True, cwd=tmp_path)
    # utf8.DecodeRune returns (RuneError, 1) for each ill-formed byte: claimed as such
    decs = resolve("exec:" + quote(exe) + "@unicode/per-byte")
    per_byte = reference("unicode", "per-byte")
    try:
        assert {d.policy for d in decs} == {"per-byte"}
        for d in decs:
            for x in inputs():
                o, ref = d.decode(x), per_byte.decode(x)
                assert o.ok, o.detail
                for v in o.shows - {"reason"}:  # the example names no reasons
                    assert o.view(v) == ref.view(v), (d.name, x.hex(" "), v)
    finally:
        for d in decs:
            d.close()
    calls_agree("exec:" + quote(exe) + "@unicode/per-byte")


# -- the worked example of docs/protocol.md is what the C client says ----------------


def test_the_worked_example_of_the_docs(c_client: Path) -> None:
    doc = (ROOT / "docs" / "protocol.md").read_text()
    section = doc.split("## A worked example", 1)[1]
    request, reply = (bytes.fromhex(" ".join(re.findall(r"^([0-9A-F ]+?)(?:  .*)?$",
                                                          block, re.MULTILINE)))
                      for block in re.findall(r"```text\n(.*?)```", section, re.DOTALL)[:2])
    p = subprocess.run([str(c_client)], input=request, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    hello_len = struct.unpack_from("<I", p.stdout)[0]
    assert p.stdout[4 + hello_len :] == reply


# -- failures are outcomes, and the next input decodes ----------------------------------


def test_a_client_that_exits_mid_stream_is_a_crash_and_is_restarted() -> None:
    (dec,) = resolve(misbehaving())
    try:
        assert isinstance(dec, exec_adapter.ExecDecoder)
        outs = dec.decode_many([b"a\xc3", b"exit", b"b", b"\xff"])
        assert [o.status for o in outs] == ["ok", "crash", "ok", "ok"]
        assert "exited with status 3: misbehaving: asked to exit" in (outs[1].detail or "")
        assert [outs[0].view("strict"), outs[3].view("strict")] == [
            REF.decode(b"a\xc3").view("strict"), REF.decode(b"\xff").view("strict")]
        # killed, started again, the request sent alone (it fails again), started again
        assert dec.proc.worker.restarts == 2
        assert dec.run(b"exit").status == "crash" and dec.run(b"z").ok
    finally:
        dec.close()


def test_a_client_that_hangs_is_a_timeout_and_is_restarted() -> None:
    (dec,) = resolve(misbehaving(flags="+timeout=0.5"))
    try:
        outs = dec.decode_many([b"a", b"hang", b"\xe0\x80"])
        # pinned on the input that hangs; nothing more of the batch is sent
        assert [o.status for o in outs] == ["ok", "timeout"]
        assert "no answer within 0.5 s" in (outs[1].detail or "")
        assert dec.run(b"\xe0\x80").view("strict") == REF.decode(b"\xe0\x80").view("strict")
    finally:
        dec.close()


@pytest.mark.parametrize("word,why", [
    ("badid", "expected"),
    ("badlen", "bytes for 5 code points and 0 errors"),
])
def test_a_garbage_reply_is_a_crash_and_the_client_is_restarted(word: str, why: str) -> None:
    (dec,) = resolve(misbehaving())
    try:
        assert isinstance(dec, exec_adapter.ExecDecoder)
        bad = word.encode() + b"\xc3"
        outs = dec.decode_many([b"x", bad, b"y\xed\xa0\x80"])
        assert [o.status for o in outs] == ["ok", "crash", "ok"]
        detail = outs[1].detail or ""
        assert detail.startswith("garbage reply from exec:") and why in detail, detail
        assert detail.isascii() and detail.isprintable()
        assert outs[2].view("strict") == REF.decode(b"y\xed\xa0\x80").view("strict")
        # the reply was its request's own: killed and started again, nothing re-sent
        assert dec.proc.worker.restarts == 1
    finally:
        dec.close()


@pytest.mark.parametrize("word,kind,restarts", [
    ("noise", "oversized-output: exec:", 1),  # a length prefix of 4 GiB: not read
    ("badspan", "span-outside-input: ", 0),  # well framed: the client goes on
])
def test_a_reply_that_is_no_outcome_of_its_input_is_a_bad_outcome(
        word: str, kind: str, restarts: int) -> None:
    (dec,) = resolve(misbehaving())
    try:
        outs = dec.decode_many([b"x", word.encode() + b"\xc3", b"y\xed\xa0\x80"])
        assert [o.status for o in outs] == ["ok", "bad-outcome", "ok"]
        assert (outs[1].detail or "").startswith(kind), outs[1].detail
        assert dec.proc.worker.restarts == restarts
    finally:
        dec.close()


# -- specs ----------------------------------------------------------------------------------


def test_spec_grammar() -> None:
    s = parse_spec("exec:'./my client' -q 'a b'@corrected+timeout=2+mode=strict")
    assert (s.argv, s.claim.profile, s.timeout, s.modes) == (
        ("./my client", "-q", "a b"), "corrected", 2.0, ("strict",))
    s = parse_spec("exec:node client.js+memory=0")
    assert (s.argv, s.claim.profile, s.memory_mib) == (("node", "client.js"), None, 0)
    # quoted, an @ or + of the command's own is the command's
    assert parse_spec("exec:'./a+b' 'x@y'").argv == ("./a+b", "x@y")


@pytest.mark.parametrize("spec,match", [
    ("exec:", "expected exec:'COMMAND ARGS'"),
    ("exec:'unbalanced", "bad command"),
    ("exec:./x@nosuchprofile", "nosuchprofile"),
    ("exec:./x+bogus", "bad decoder option"),
    ("exec:./x+timeout=0", "bad timeout"),
    ("exec:./x+mode=lenient", "bad decoder option"),
    ("exec:/no/such/client", "cannot start"),
])
def test_bad_specs_say_why(spec: str, match: str) -> None:
    with pytest.raises(UnknownDecoder, match=match):
        resolve(spec)


def test_a_client_with_a_bad_hello_is_refused_when_loaded() -> None:
    with pytest.raises(UnknownDecoder, match="protocol version 9"):
        resolve(misbehaving("--bad-hello"))
    with pytest.raises(UnknownDecoder, match="offers strict mode, not replace"):
        resolve(misbehaving(flags="+mode=replace"))


def test_the_claimed_profile_and_each_decoders_own_spec(c_client: Path) -> None:
    decs = resolve("exec:" + quote(c_client) + "@unicode")
    try:
        assert [(d.name, d.profile) for d in decs] == [
            ("exec:c-maximal-subpart:strict@unicode", "unicode"),
            ("exec:c-maximal-subpart:replace@unicode", "unicode"),
            ("exec:c-maximal-subpart:validate@unicode", "unicode")]
        # a corpus entry records one decoder: its spec loads that one alone
        for d in decs:
            (again,) = resolve(d.spec or "")
            assert again.name == d.name
            again.close()
    finally:
        for d in decs:
            d.close()


def test_utf8fuzz_bench_exec_runs_through_the_protocol(c_client: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "utf8fuzz", "bench", "--exec", quote(c_client),
                        "--inputs", "200", "--runs", "1", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["decoder"] == "exec:c-maximal-subpart:replace" and got["failed"] == 0
    assert [row["batch"] for row in got["rows"]] == list(bench.EXEC_BATCHES)
    assert got["inputs"] == 200 and got["size"] == 64


def test_an_exec_decoder_is_out_of_process() -> None:
    (dec,) = resolve(misbehaving())
    try:
        assert screening.is_out_of_process(dec)
        assert os.path.basename(sys.executable) in dec.versions()["exec"]
    finally:
        dec.close()


# -- validate mode (hello flag 8) and text-only replies (flag 16) ---------------------


def test_validate_mode_shows_only_accept() -> None:
    (dec,) = resolve(misbehaving("--flags=8"))
    try:
        assert dec.name == "exec:misbehaving:validate" and dec.shows == {"accept"}
        outs = dec.decode_many([b"", b"a\xc3\xa9", b"a\xc3", b"\xed\xa0\x80"])
        assert [o.view("accept") for o in outs] == [True, True, False, False]
        assert all(o.shows == {"accept"} for o in outs)
    finally:
        dec.close()


def test_the_c_client_validates(c_client: Path) -> None:
    got = disagreements("exec:" + quote(c_client) + "+mode=validate", inputs())
    assert got == {"exec:c-maximal-subpart:validate": []}


@pytest.mark.parametrize("word,why", [
    ("badvalid", "a validate reply of 17 bytes, not 5"),
    ("badstat", "unknown status 3 in validate mode"),
])
def test_a_garbage_validate_reply_is_a_crash(word: str, why: str) -> None:
    (dec,) = resolve(misbehaving("--flags=8"))
    try:
        assert isinstance(dec, exec_adapter.ExecDecoder)
        outs = dec.decode_many([b"x", word.encode(), b"\xff"])
        assert [o.status for o in outs] == ["ok", "crash", "ok"]
        assert why in (outs[1].detail or ""), outs[1].detail
        assert outs[2].view("accept") is False
        assert dec.proc.worker.restarts == 1  # its own reply: not re-sent
    finally:
        dec.close()


def test_a_text_only_client_shows_only_replace() -> None:
    (dec,) = resolve(misbehaving("--flags=18"))
    try:
        assert dec.name == "exec:misbehaving:replace" and dec.shows == {"replace"}
        outs = dec.decode_many([b"a\xff", b"ok", b"\xf0\x9f\x98"])
        assert [o.view("replace") for o in outs] == [
            REF.decode(x).view("replace") for x in (b"a\xff", b"ok", b"\xf0\x9f\x98")]
        # it replaced a byte and sent no error record: that is what text only means,
        # so the outcome says nothing of spans, not "accepted"
        assert outs[0].shows == {"replace"}
    finally:
        dec.close()


def test_a_text_only_reply_with_errors_is_garbage() -> None:
    (dec,) = resolve(misbehaving("--flags=18"))
    try:
        outs = dec.decode_many([b"x", b"errors\xff", b"y"])
        assert [o.status for o in outs] == ["ok", "crash", "ok"]
        assert "errors in a text-only reply" in (outs[1].detail or "")
    finally:
        dec.close()


def test_parse_reply_text_only_and_validate_rules() -> None:
    req = struct.pack("<IB", 7, exec_adapter.MODE_REPLACE) + b"a\xff"
    with_error = struct.pack("<IBII2IIII", 7, 0, 2, 1, 0x61, 0xFFFD, 1, 2, 1)
    assert exec_adapter.parse_reply(with_error, req, True)[2] == ((1, 2),)  # type: ignore[index]
    assert "text-only" in str(exec_adapter.parse_reply(with_error, req, True, True))
    vreq = struct.pack("<IB", 7, exec_adapter.MODE_VALIDATE) + b"a"
    assert exec_adapter.parse_reply(struct.pack("<IB", 7, 1), vreq, False)[0] == 1
    assert "expected 7" in str(exec_adapter.parse_reply(struct.pack("<IB", 8, 0), vreq, False))
    failed = exec_adapter.parse_reply(struct.pack("<IB", 7, 2) + b"boom", vreq, False)
    assert failed == (2, (), (), None, "boom")


# -- the policy claim -------------------------------------------------------------------


def test_spec_grammar_with_a_policy() -> None:
    s = parse_spec("exec:./c@corrected/per-byte+timeout=2+mode=validate")
    assert (s.argv, s.claim.profile, s.claim.policy, s.timeout, s.modes) == (
        ("./c",), "corrected", "per-byte", 2.0, ("validate",))
    assert parse_spec("exec:./c@unicode").claim.policy is None
    assert str(parse_spec("exec:./c@unicode/per-byte").claim) == \
        "@unicode/per-byte"


def test_a_claimed_policy_names_and_judges_the_decoder(c_client: Path) -> None:
    decs = resolve("exec:" + quote(c_client) + "@unicode/per-byte+mode=strict")
    try:
        assert [(d.name, d.profile, d.policy) for d in decs] == [
            ("exec:c-maximal-subpart:strict@unicode/per-byte", "unicode", "per-byte")]
    finally:
        for d in decs:
            d.close()
    (d,) = resolve("exec:" + quote(c_client) + "@unicode+mode=validate")
    assert (d.name, d.policy) == ("exec:c-maximal-subpart:validate@unicode", "maximal-subpart")
    d.close()


@pytest.mark.parametrize("claim,match", [
    ("@unicode/no-such-policy", "unknown policy 'no-such-policy'"),
    ("@unicode/", "unknown policy ''"),
    ("@nosuchprofile/per-byte", "nosuchprofile"),
])
def test_a_bad_claim_is_one_line_and_exit_2(claim: str, match: str) -> None:
    spec = "exec:./never-started" + claim
    with pytest.raises(UnknownDecoder, match=match):
        resolve(spec)
    r = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "--decoder", spec, "41"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and match in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


# -- peer(): the built-in peers' way onto the protocol ---------------------------------------


def strict_peer(**kw: object) -> exec_adapter.ExecDecoder:
    args: dict[str, object] = {"name": "test:peer", "mode": "strict", "reasons": True, **kw}
    d = exec_adapter.peer([sys.executable, str(MISBEHAVING)], **args)  # type: ignore[arg-type]
    assert isinstance(d, exec_adapter.ExecDecoder)
    return d


def test_a_peer_starts_nothing_until_its_first_input() -> None:
    d = strict_peer(versions={"peer": "1.0"}, policy="per-byte", profile="corrected")
    try:
        assert (d.name, d.profile, d.policy) == ("test:peer", "corrected", "per-byte")
        assert d.shows == {"strict", "reason"} and d.spec is None
        assert d.versions() == {"peer": "1.0"} and d.describe()["name"] == "test:peer"
        assert d.proc.worker.proc is None  # shows, versions, describe: no process
        out = d.decode(b"a\xff")
        assert (out.view("strict"), out.view("reason")) == ((1, 2), "illegal")
        # the hello's JSON free text joins the caller's versions
        assert set(out.provenance) == {"peer", "python"} and out.provenance["peer"] == "1.0"
        assert d.proc.worker.proc is not None
    finally:
        d.close()


@pytest.mark.parametrize("mode,reasons,text_only,shows", [
    ("strict", False, False, {"strict"}),
    ("replace", True, False, {"replace", "spans", "strict", "reason"}),
    ("replace", False, True, {"replace"}),
    ("validate", False, False, {"accept"}),
])
def test_a_peers_views_follow_from_what_it_declares(mode: str, reasons: bool, text_only: bool,
                                                    shows: set[str]) -> None:
    d = exec_adapter.peer(["/no/such/program"], name="test:x", mode=mode, reasons=reasons,
                          text_only=text_only)
    assert d.shows == shows
    d.close()


@pytest.mark.parametrize("kw,why", [
    ({"mode": "replace"}, "its hello offers strict mode, not replace"),
    ({"reasons": False}, "its hello says reasons (flag 4)"),
    ({"text_only": True}, "its hello does not say text only (flag 16)"),
])
def test_a_peer_whose_hello_does_not_match_crashes_every_input(kw: dict[str, object],
                                                               why: str) -> None:
    d = strict_peer(**kw)
    try:
        for _ in range(2):  # and the refusal stands: it is not started again
            outs = d.decode_many([b"a", b"\xff"])
            assert [o.status for o in outs] == ["crash", "crash"]
            assert all(o.detail == f"test:peer cannot run: {why}" for o in outs), outs[0].detail
        assert d.proc.worker.restarts == 0 and d.proc.worker.proc is None
    finally:
        d.close()


def test_a_peer_that_cannot_start_is_a_crash() -> None:
    d = exec_adapter.peer(["/no/such/program"], name="test:gone", mode="strict")
    out = d.decode(b"a")
    assert out.status == "crash" and (out.detail or "").startswith("test:gone cannot run: ")
    d.close()


@pytest.mark.parametrize("kw,match", [
    ({"mode": "lenient"}, "unknown mode"),
    ({"mode": "strict", "policy": "no-such"}, "unknown policy"),
    ({"mode": "strict", "profile": "no-such"}, "no-such"),
])
def test_peer_refuses_a_bad_declaration(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        exec_adapter.peer(["x"], name="test:bad", **kw)  # type: ignore[arg-type]
