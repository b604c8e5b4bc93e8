"""The real peers (Go, Java, Rust through the exec protocol) against the reference
of the policy each claims, at every view it shows.

Each peer is started once for the module and fed one batch: the spec's boundary
inputs, every input of one byte, two bytes over the byte values where the tables
change, three bytes over a smaller set, and seeded random 64-byte inputs. Go and
Rust must equal ``ref:unicode:<policy>`` on all of them. Java's decoders must too,
except where an input holds ``ED A0..BF`` (the lead of an encoded surrogate):
there the JDK does what its own code does (one malformed unit), and the tests
say exactly what that is.

A peer whose toolchain is missing here is skipped with its Unavailable reason; a
peer whose toolchain is here but which is not built fails (``make setup`` or
``utf8fuzz peers build`` builds it, and CI runs it).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE
from utf8fuzz import cli
from utf8fuzz.decoders import go, java, peers, rust
from utf8fuzz.decoders._subprocess import DEFAULT_MEMORY_MIB
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.decoders.exec import ExecDecoder, peer
from utf8fuzz.decoders.peers import build
from utf8fuzz.outcome import Outcome, Token
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles.walk import walker

ADAPTERS = {"go": go, "java": java, "rust": rust}
NAMES = {
    "go": ["go:decoderune", "go:runes", "go:tovalidutf8", "go:valid"],
    "java": ["java:string", "java:charsetdecoder", "java:charsetdecoder-stream"],
    "rust": ["rust:from-utf8", "rust:from-utf8-lossy"],
}
CLAIMS = {  # name -> (policy, shows): what each peer's documentation states
    "go:decoderune": ("per-byte", {"replace", "spans", "strict", "reason"}),
    "go:runes": ("per-byte", {"replace"}),
    "go:tovalidutf8": ("per-run", {"replace"}),
    "go:valid": ("maximal-subpart", {"accept"}),
    "java:string": ("maximal-subpart", {"replace"}),
    "java:charsetdecoder": ("maximal-subpart", {"strict", "reason"}),
    "java:charsetdecoder-stream": ("maximal-subpart", {"strict", "reason"}),
    "rust:from-utf8": ("maximal-subpart", {"strict", "reason"}),
    "rust:from-utf8-lossy": ("maximal-subpart", {"replace"}),
}

# -- inputs ----------------------------------------------------------------------------

# Where the tables change (as tests/profiles/test_walk.py), and a smaller set for
# three-byte inputs: each lead class, both ends of each continuation range.
ALPHABET = bytes.fromhex(
    "00 41 7F 80 8F 90 9F A0 BF C0 C1 C2 DF E0 E1 EC ED EE EF F0 F1 F3 F4 F5 F7 F8 FB FC FD FE FF")
SMALL = bytes.fromhex("41 80 8F 90 9F A0 BF C0 C2 E0 E1 ED EF F0 F4 F5 FF")
# Inputs where the policies cut differently (tests/policies): the claims must show.
POLICY_CASES = ["E0 80 80", "C0 AF", "F0 90 80 41", "ED A0 80", "F8 88 80 80 80", "F0 80 80",
                "80 BF", "C2 C2 A9", "E1 80", "80 41 80", "80 E2 82 AC 80", "C0 E1 80",
                "41 E1 80", "EF BF BD", "ED A0 BD ED B8 80 41"]


def _random_inputs(n: int, size: int) -> list[bytes]:
    rng = random.Random(15)  # fixed: the same inputs every run
    pieces = [bytes([b]) for b in ALPHABET] + ["é€😀".encode(), "\U0010ffff".encode(),
                                               bytes.fromhex("ED 9F BF"), b"\x00"]
    out = []
    for _ in range(n):
        blob = b"".join(rng.choice(pieces) for _ in range(size))
        out.append(blob[: rng.randrange(1, size + 1)])
    return out


INPUTS: list[bytes] = list(dict.fromkeys(
    [bytes.fromhex(h) for h in BOUNDARY.values()] + [EXAMPLE]
    + [bytes.fromhex(h) for h in POLICY_CASES]
    + [bytes([a]) for a in range(256)]
    + [bytes(t) for t in itertools.product(ALPHABET, repeat=2)]
    + [bytes(t) for t in itertools.product(SMALL, repeat=3)]
    + _random_inputs(1500, 64)))


# -- the peers, started once -----------------------------------------------------------


def _offered(lang: str) -> list[Decoder]:
    """The adapter's decoders; skip (toolchain absent) or fail (not built)."""
    found = ADAPTERS[lang].discover()
    missing = [d for d in found if isinstance(d, Unavailable)]
    if missing:
        if peers.compiler(lang) is None:
            pytest.skip(missing[0].reason)
        pytest.fail(f"{lang}: {missing[0].reason} (the toolchain is here: "
                    f"python -m utf8fuzz.decoders.peers.build builds it)")
    return found


@pytest.fixture(scope="module")
def running() -> Iterator[dict[str, tuple[Decoder, list[Outcome]]]]:
    """Each available peer and its outcomes on INPUTS, in one batch; languages
    whose toolchain is absent are left out (their tests skip)."""
    got: dict[str, tuple[Decoder, list[Outcome]]] = {}
    try:
        for lang in ADAPTERS:
            if peers.find(lang) is None:
                continue
            for d in ADAPTERS[lang].discover():
                assert isinstance(d, ExecDecoder)
                got[d.name] = (d, d.decode_many(INPUTS))
        yield got
    finally:
        for d, _ in got.values():
            d.close()


def _peer(running: dict[str, tuple[Decoder, list[Outcome]]],
          name: str) -> tuple[Decoder, list[Outcome]]:
    if name not in running:
        _offered(name.split(":")[0])  # skips or fails with the reason
    return running[name]


def ref_view(policy: str, data: bytes, view: str) -> Any:
    return walker(REGISTRY["unicode"], policy)(data).view(view)


# -- discovery ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", list(ADAPTERS))
def test_discovery_names_the_claims_and_starts_nothing(lang: str) -> None:
    found = _offered(lang)
    try:
        assert [d.name for d in found] == NAMES[lang]
        for d in found:
            assert isinstance(d, ExecDecoder)
            assert d.proc.worker.proc is None  # nothing started
            assert d.profile == "unicode"
            assert (d.policy, set(d.shows)) == CLAIMS[d.name], d.name
    finally:
        for d in found:
            d.close()


@pytest.mark.parametrize("lang", list(ADAPTERS))
def test_discovery_never_runs_a_program(lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"discover() started {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse)
    for d in ADAPTERS[lang].discover():
        if isinstance(d, Decoder):
            d.close()


def test_unbuilt_peers_say_run_peers_build(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTF8FUZZ_PEERS_DIR", str(tmp_path / "empty"))
    for lang, mod in ADAPTERS.items():
        offered = mod.discover()
        assert [u.name for u in offered] == NAMES[lang]
        want = ("not built: run utf8fuzz peers build" if peers.compiler(lang)
                else peers.not_installed(lang))
        assert {u.reason for u in offered if isinstance(u, Unavailable)} == {want}


def test_missing_toolchains_are_named_with_their_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTF8FUZZ_PEERS_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.cargo/bin/rustc
    reasons = {lang: {u.reason for u in mod.discover() if isinstance(u, Unavailable)}
               for lang, mod in ADAPTERS.items()}
    assert reasons == {
        "go": {"go is not installed (apt-get install golang-go, then utf8fuzz peers build)"},
        "java": {"javac is not installed (apt-get install default-jdk-headless, then "
                 "utf8fuzz peers build)"},
        "rust": {"rustc is not installed (apt-get install rustc, then utf8fuzz peers build)"},
    }


def test_peers_build_builds_into_the_users_cache_where_discovery_finds_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # an installed package: no make, an environment with no builds in it; the
    # command builds into $XDG_CACHE_HOME, and every command finds it there
    if peers.compiler("rust") is None:
        pytest.skip(peers.not_installed("rust"))
    monkeypatch.delenv("UTF8FUZZ_PEERS_DIR", raising=False)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert peers.find("rust") is None
    assert cli.main(["peers", "build", "rust"]) == 0
    out = capsys.readouterr().out
    where = tmp_path / "cache" / "utf8fuzz" / "peers" / f"rust-{peers.source_hash('rust')}"
    assert out.startswith("peers: rust: built in ") and out.endswith(f"{where}\n")
    found = peers.find("rust")
    assert found is not None and found.path == where
    offered = rust.discover()
    assert offered and all(isinstance(d, Decoder) for d in offered)
    for d in offered:
        assert isinstance(d, Decoder)
        d.close()


def test_peers_build_names_each_missing_toolchain_in_one_line(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "utf8fuzz", "peers", "build"],
                       capture_output=True, text=True, timeout=300, check=False,
                       env={**os.environ, "PATH": str(tmp_path), "HOME": str(tmp_path),
                            "UTF8FUZZ_PEERS_DIR": str(tmp_path / "peers")})
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"peers: {lang}: skipped: {peers.not_installed(lang)}"
                                     for lang in ("go", "java", "rust")]


def test_a_build_of_other_sources_is_not_run(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # a directory with a complete peer.json, but named for another hash: stale
    monkeypatch.setenv("UTF8FUZZ_PEERS_DIR", str(tmp_path))
    stale = tmp_path / "rust-000000000000"
    stale.mkdir()
    (stale / "rust-peer").write_bytes(b"")
    (stale / "rust-peer").chmod(0o755)
    (stale / peers.MARKER).write_text(json.dumps({"command": ["./rust-peer"]}))
    assert peers.find("rust") is None


def test_utf8fuzz_decoders_lists_each_peer_or_why_not() -> None:
    out = subprocess.run([Path(sys.executable).parent / "utf8fuzz", "decoders", "--json"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    listed = json.loads(out)
    text = json.dumps(listed)
    for names in NAMES.values():
        for n in names:
            assert f'"{n}"' in text, n


# -- each peer equals the reference of its claim ----------------------------------------


def _differences(name: str, outs: list[Outcome], expect: Any) -> list[str]:
    policy, shows = CLAIMS[name]
    bad = []
    for data, out in zip(INPUTS, outs, strict=True):
        assert out.status == "ok", (name, data.hex(" "), out)
        for v in sorted(shows):
            got, want = out.view(v), expect(policy, data, v)
            if got != want:
                bad.append(f"{data.hex(' ')} {v}: {got} != {want}")
    return bad


@pytest.mark.parametrize("name", NAMES["go"] + NAMES["rust"])
def test_go_and_rust_equal_the_reference_of_their_claim(
        running: dict[str, tuple[Decoder, list[Outcome]]], name: str) -> None:
    _, outs = _peer(running, name)
    bad = _differences(name, outs, ref_view)
    assert not bad, f"{name}: {len(bad)} differences, first: {bad[:5]}"


def encoded_surrogate_lead(data: bytes) -> bool:
    """Does ``data`` hold ED followed by A0..BF (a lead of U+D800..U+DFFF)?"""
    return any(a == 0xED and 0xA0 <= b <= 0xBF for a, b in itertools.pairwise(data))


def jdk_view(policy: str, data: bytes, view: str) -> Any:
    """What the JDK's UTF-8 decoders do (sun.nio.cs.UTF_8 and String's decoder):
    they cut a three-byte sequence by its structure alone (the lead, E0's
    overlong rule, continuation bytes) and only then reject a surrogate value, as
    one malformed unit. That is maximal subparts under the ``surrogatepass``
    profile (where ED A0..BF 80..BF is a character), each surrogate then made one
    illegal error."""
    assert policy == "maximal-subpart"
    toks = tuple(
        Token("error", None, t.start, t.end, "illegal")
        if t.kind == "char" and t.value is not None and 0xD800 <= t.value <= 0xDFFF else t
        for t in walker(REGISTRY["surrogatepass"], policy)(data).tokens)
    return Outcome.from_tokens(toks, len(data), data=data).view(view)  # type: ignore[call-overload]


@pytest.mark.parametrize("name", NAMES["java"])
def test_java_equals_the_reference_but_for_encoded_surrogates(
        running: dict[str, tuple[Decoder, list[Outcome]]], name: str) -> None:
    _, outs = _peer(running, name)
    plain = [k for k, d in enumerate(INPUTS) if not encoded_surrogate_lead(d)]
    odd = [k for k, d in enumerate(INPUTS) if encoded_surrogate_lead(d)]
    assert len(odd) > 100  # the exception is exercised, not vacuous

    def expect(policy: str, data: bytes, view: str) -> Any:
        return (jdk_view if encoded_surrogate_lead(data) else ref_view)(policy, data, view)

    bad = _differences(name, outs, expect)
    assert not bad, f"{name}: {len(bad)} differences, first: {bad[:5]}"
    # and where the JDK's rule applies, it does differ from Unicode's practice
    _, shows = CLAIMS[name]
    assert any(any(outs[k].view(v) != ref_view("maximal-subpart", INPUTS[k], v) for v in shows)
               for k in odd)
    assert all(outs[k].view(v) == ref_view("maximal-subpart", INPUTS[k], v)
               for k in plain for v in shows)


# -- the known facts, each as what it is -------------------------------------------------


def _one(running: dict[str, tuple[Decoder, list[Outcome]]], name: str, hexs: str) -> Outcome:
    d, _ = _peer(running, name)
    return d.decode(bytes.fromhex(hexs))


def test_java_string_gives_one_replacement_for_an_encoded_surrogate(
        running: dict[str, tuple[Decoder, list[Outcome]]]) -> None:
    # The JDK's behaviour, a finding for the report, not a harness bug: new
    # String(bytes, UTF_8) replaces ED A0 80 (U+D800 encoded) as one malformed
    # unit, where maximal subparts give three U+FFFD (ED cannot take A0).
    assert _one(running, "java:string", "ED A0 80").view("replace") == (0xFFFD,)
    assert ref_view("maximal-subpart", bytes.fromhex("ED A0 80"), "replace") == (0xFFFD,) * 3
    # the same rule, structure first: ED A0 then A is one unit of two bytes
    assert _one(running, "java:string", "ED A0 41").view("replace") == (0xFFFD, 0x41)


def test_java_charsetdecoder_reports_an_encoded_surrogate_as_three_bytes(
        running: dict[str, tuple[Decoder, list[Outcome]]]) -> None:
    # The JDK's behaviour (CoderResult.length() is 3), not a harness bug; maximal
    # subparts end the first error after ED.
    out = _one(running, "java:charsetdecoder", "41 ED BF BF")
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "illegal")
    assert ref_view("maximal-subpart", bytes.fromhex("41 ED BF BF"), "strict") == (1, 2)


def test_go_decoderune_is_per_byte_which_is_not_a_bug(
        running: dict[str, tuple[Decoder, list[Outcome]]]) -> None:
    # utf8.DecodeRune returns (RuneError, 1): F0 90 80 then A is three errors for
    # Go (per-byte, as it documents), one maximal subpart for Unicode.
    out = _one(running, "go:decoderune", "F0 90 80 41")
    assert out.view("spans") == ((0, 1), (1, 2), (2, 3))
    assert ref_view("maximal-subpart", bytes.fromhex("F0 90 80 41"), "spans") == ((0, 3),)
    # reasons from utf8.FullRune: E1 80 at the end, per byte, is truncated then illegal
    end = _one(running, "go:decoderune", "41 E1 80")
    assert end.view("reason") == "truncated" and end.view("spans") == ((1, 2), (2, 3))


def test_go_tovalidutf8_is_one_replacement_per_run(
        running: dict[str, tuple[Decoder, list[Outcome]]]) -> None:
    out = _one(running, "go:tovalidutf8", EXAMPLE.hex(" "))
    assert out.view("replace") == (0x61, 0xFFFD, 0x62, 0xFFFD, 0x63, 0xFFFD, 0x64)
    # a U+FFFD in the input is a character, and it does not join a run
    assert _one(running, "go:tovalidutf8", "80 EF BF BD 80").view("replace") == (0xFFFD,) * 3


def test_rust_reasons_come_from_error_len(
        running: dict[str, tuple[Decoder, list[Outcome]]]) -> None:
    cut = _one(running, "rust:from-utf8", "41 F0 9F 98")  # error_len() None
    assert (cut.view("strict"), cut.view("reason")) == ((1, 4), "truncated")
    bad = _one(running, "rust:from-utf8", "41 F0 9F 41")  # error_len() Some(2): F0 9F
    assert (bad.view("strict"), bad.view("reason")) == ((1, 3), "illegal")


def test_the_jvm_starts_under_the_default_memory_limit() -> None:
    # the address-space limit every worker gets unless told otherwise; a JVM with
    # its default reservations does not start under it (JVM_OPTIONS)
    _offered("java")
    built = peers.find("java")
    assert built is not None
    d = peer(built.argv("string"), name="java:string", mode="replace", text_only=True,
             memory_mib=DEFAULT_MEMORY_MIB)
    try:
        assert isinstance(d, ExecDecoder) and d.proc.worker.memory_mib == DEFAULT_MEMORY_MIB
        out = d.decode(b"caf\xc3\xa9")
        assert out.status == "ok" and out.view("replace") == (0x63, 0x61, 0x66, 0xE9), out
        assert d.versions().get("java"), d.versions()  # from the hello: it ran
    finally:
        d.close()


# -- the builder -------------------------------------------------------------------------


def test_the_builder_builds_once_atomically_and_drops_stale_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if peers.compiler("rust") is None:
        pytest.skip(peers.not_installed("rust"))
    monkeypatch.setenv("UTF8FUZZ_PEERS_DIR", str(tmp_path))
    stale = tmp_path / "rust-0123456789ab"
    stale.mkdir()
    assert build.build("rust") == ("built", str(peers.build_dir("rust")))
    assert not stale.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [peers.build_dir("rust").name]
    found = peers.find("rust")
    assert found is not None and found.toolchain.startswith("rustc ")
    assert build.build("rust")[0] == "up-to-date"
    # the build directory is named by the sources: an edit is a new name
    assert peers.build_dir("rust").name == f"rust-{peers.source_hash('rust')}"
