"""Long inputs (:mod:`utf8fuzz.engine.long`): the generator, the minimizer on
position-dependent bugs, the mutator's long mode, and ``utf8fuzz fuzz`` finding
three bugs only long inputs reach (``planted_long.py``) while CPython's codec,
which is correct, gives nothing.

The fuzz run is the real command in a subprocess on the hypothesis engine, from
an empty corpus (no seeds: the generator must reach the bugs by itself). Its
long share is raised to a half (``UTF8FUZZ_LONG_SHARE``) for margin: each bug is
met on one long input in 5 to 40 (measured on 3,000 inputs), and the run makes
hundreds of long inputs even on a slow machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import accumulate
from pathlib import Path

import pytest

from tests.engine.planted_long import Lead255, PageTail, Run101
from utf8fuzz import decode
from utf8fuzz import decoders as registry
from utf8fuzz.engine.corpus import load
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.long import (
    CLASSES,
    MAX_LONG,
    SHORT_MAX,
    SplitMix64,
    _encode,
    _fill,
    _text_cps,
    long_input,
    long_share,
    mutate_long,
)
from utf8fuzz.engine.minimize import minimize
from utf8fuzz.loop.mutator import PER_INPUT_BYTES, make_custom_mutator
from utf8fuzz.profiles import REGISTRY, get_profile

ROOT = Path(__file__).resolve().parents[2]
P = "tests.engine.planted_long"
PLANTED = {"planted-long:lead255": "Lead255", "planted-long:run101": "Run101",
           "planted-long:page-tail": "PageTail"}


# -- the generator ----------------------------------------------------------------------


def test_long_inputs_are_long_and_bounded_and_the_same_for_the_same_seed():
    for profile in REGISTRY:
        rng = SplitMix64(1)
        xs = [long_input(rng, profile) for _ in range(20)]
        assert all(SHORT_MAX < len(x) <= MAX_LONG for x in xs), profile
        rng = SplitMix64(1)
        assert xs == [long_input(rng, profile) for _ in range(20)]


@pytest.mark.parametrize("profile", sorted(REGISTRY))
def test_texts_are_the_profiles_own_encoding(profile):
    # the generator's fast encoders against the profile's own (the spec's table)
    prof = get_profile(profile)
    for cls in CLASSES:
        cps = _text_cps(SplitMix64(3), cls, 400)
        data, starts = _encode(profile, cps)
        assert data == prof.encode(cps), cls
        # each character starts where the ones before it end
        ends = list(accumulate(len(prof.encode([cp])) for cp in cps))
        assert starts == [0, *ends[:-1]], cls


@pytest.mark.parametrize("profile", ["unicode", "corrected", "cesu8"])
def test_filler_is_well_formed_and_exactly_as_long_as_asked(profile):
    rng = SplitMix64(4)
    for cls in CLASSES:
        for n in (1, 5, 63, 255, 4093, 4096):
            text = _fill(rng, profile, cls, n)
            assert len(text) == n
            assert decode(text, profile=profile).valid, (cls, n)


def test_edges_sit_at_the_boundaries_ends_and_runs_the_module_promises():
    # Read off the reference (not the generator): where its first ill-formed
    # token is, and how long the input is.
    rng = SplitMix64(5)
    lengths, at_block, runs = set(), 0, 0
    for _ in range(300):
        x = long_input(rng, "unicode")
        lengths.add(len(x))
        out = decode(x, profile="unicode")
        if out.error_spans:
            s, e = out.error_spans[0]
            at_block += any(s <= b * k <= e or s == b * k + 1 for b in (256, 4096)
                            for k in (1, 2, 3))
        cps = out.codepoints()
        runs += any(all(0x80 <= c <= 0x7FF for c in cps[i:i + 101])
                    for i in range(0, max(0, len(cps) - 100), 50))
    assert {4096, 256, 512}.issubset(lengths)  # exactly a power of two
    assert lengths & {4093, 4094, 4095, 4097, 4098, 4099}
    assert at_block > 5 and runs > 5


def test_long_share_reads_the_environment(monkeypatch):
    monkeypatch.delenv("UTF8FUZZ_LONG_SHARE", raising=False)
    assert long_share() == 0.25
    monkeypatch.setenv("UTF8FUZZ_LONG_SHARE", "0.5")
    assert long_share() == 0.5
    monkeypatch.setenv("UTF8FUZZ_LONG_SHARE", "2")
    with pytest.raises(ValueError, match="from 0 to 1"):
        long_share()


def test_the_mutator_gives_long_inputs_their_share_of_the_work():
    # An input's work is its length plus PER_INPUT_BYTES: long inputs get a quarter
    # of the total, so only a few calls in a hundred make one (a share of the calls
    # instead would have given them nearly all of the time).
    m = make_custom_mutator(None, ["unicode", "corrected"], share=0.25)
    outs = [m(b"hello", MAX_LONG, seed) for seed in range(20000)]
    work = [len(x) + PER_INPUT_BYTES for x in outs]
    long_work = sum(w for x, w in zip(outs, work, strict=True) if len(x) > SHORT_MAX)
    assert 0.2 < long_work / sum(work) < 0.3
    assert all(len(x) <= MAX_LONG for x in outs)
    # no long input where libFuzzer allows none, and none at share 0
    assert all(len(m(b"hello", SHORT_MAX, seed)) <= SHORT_MAX for seed in range(200))
    never = make_custom_mutator(None, ["unicode"], share=0.0)
    big = long_input(SplitMix64(6), "unicode")
    assert all(len(never(big, MAX_LONG, seed)) <= SHORT_MAX for seed in range(200))
    # the same seeds give the same inputs
    again = make_custom_mutator(None, ["unicode", "corrected"], share=0.25)
    assert [again(b"hello", MAX_LONG, seed) for seed in range(2000)] == outs[:2000]
    # a long input is mutated as a long one, within the size libFuzzer gives
    for seed in range(50):
        assert len(mutate_long(big, 5000, SplitMix64(seed))) <= 5000
    always = make_custom_mutator(None, ["unicode"], share=1.0)
    assert all(SHORT_MAX < len(always(big, 5000, seed)) <= 5000 for seed in range(50))


def test_a_correct_decoder_finds_nothing_on_long_inputs():
    decs = [d for d in registry.resolve("cpython:*") if d.profile == "unicode"]
    assert decs
    d = Differ(decs)
    rng = SplitMix64(7)
    for _ in range(150):
        x = long_input(rng, "unicode")
        assert not d.signatures(x), x.hex()[:80]


# -- the minimizer on position-dependent bugs ---------------------------------------------


def _shrink(decoder, data):
    d = Differ([decoder])
    (sig,) = d.signatures(data)
    m = minimize(data, lambda b: sig in d.signatures(b), seconds=30)
    assert m.complete and sig in d.signatures(m.data)
    return m


CYR = bytes.fromhex("d0b6")  # U+0436, 2 bytes


def test_a_256_byte_block_bug_minimizes_to_the_block():
    text = (b"some words " + CYR * 3) * 400
    at = 4095 + 256  # offset % 256 == 255
    data = text[:at] + CYR + text[at + 2 :][:900]
    data = data[:at].replace(b"\xd0", b"a").replace(b"\xb6", b"b") + data[at:]  # ASCII before
    m = _shrink(Lead255(), data)
    assert m.data == b"A" * 255 + CYR
    assert m.position_dependent and m.alignment == 256


def test_a_run_bug_minimizes_to_the_run():
    data = b"text before " * 40 + CYR * 180 + b" and after" * 30
    m = _shrink(Run101(), data)
    assert m.data == CYR * 101
    assert not m.position_dependent


def test_a_page_tail_bug_keeps_the_page():
    data = (b"filler " * 600)[:4094] + b"\xe2\x82"  # a truncated 3-byte character
    assert len(data) == 4096
    m = _shrink(PageTail(), data)
    assert m.data == b"A" * 4094 + b"\xe2\x82"
    assert m.position_dependent and m.alignment is None


# -- utf8fuzz fuzz ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    exe = Path(sys.executable).parent / "utf8fuzz"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "utf8fuzz"]
    corpus = tmp_path_factory.mktemp("long")
    # a count of inputs from a fixed seed, not a time: the same inputs on any machine
    # under any load (--time 18 once missed page-tail under a load of 8); the bugs are
    # found by the 600 examples of seed 1 (not by its first 200); one seed of its own,
    # not the packaged boundary seeds a corpus without seeds is given
    (corpus / "seeds").mkdir()
    (corpus / "seeds" / "a").write_bytes(b"A")
    args = [*cmd, "fuzz", "--engine", "hypothesis", "--jobs", "1", "--runs", "600",
            "--seed", "1", "--time", "600", "--corpus", str(corpus), "--no-report", "--json"]
    for cls in PLANTED.values():
        args += ["--decoder", f"{P}:{cls}"]
    args += ["--decoder", "codec:utf-8"]
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900,
                       env={**os.environ, "PYTHONPATH": str(ROOT),
                            "UTF8FUZZ_LONG_SHARE": "0.5",
                            # as in CI (GitHub Actions sets it): Hypothesis's "ci"
                            # profile must not make every batch the same
                            "CI": "true"})
    return p.returncode, json.loads(p.stdout) if p.stdout.strip() else None, p.stderr, corpus


def test_fuzz_finds_each_planted_long_bug(run):
    rc, out, err, corpus = run
    assert rc == 1, err
    assert not out["failures"], out["failures"]
    assert out["ended"] == "runs"
    entries, problems = load(corpus)
    assert not problems
    for name in PLANTED:
        saved = [e for e in entries if e.signature.endswith(f"/{name}")]
        assert saved, f"{name} not found: {sorted(e.signature for e in entries)}"
    for e in entries:
        data = e.data
        if e.signature.endswith("/planted-long:lead255"):
            assert any(i % 256 == 255 and 0xC2 <= data[i] <= 0xDF for i in range(len(data)))
        if e.signature.endswith("/planted-long:page-tail"):
            assert len(data) == 4096


def test_fuzz_finds_nothing_in_cpythons_codec(run):
    _, out, _, _ = run
    assert not [x for x in out["new"] if any("utf-8" in d for d in x["decoders"])]
    assert {x for d in (x["decoders"] for x in out["new"]) for x in d} <= set(PLANTED)
