"""The compiled walk (``utf8fuzz.profiles.walk``) equals the transcription.

``decode_tokens`` is the reference of record; the C walker interprets the same
compiled table. Here every profile under every policy is walked both ways and
every attribute compared: all inputs of up to two bytes, three-byte inputs over
the byte values where tables change, Hypothesis inputs, and the whole corpus.
"""

from __future__ import annotations

import bisect
import gc
import itertools
import os
import tracemalloc
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import nomemory
from utf8fuzz import strategies
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.loop.coverage import TableCoverage
from utf8fuzz.outcome import VIEWS, Outcome, Token, pack_tokens
from utf8fuzz.policies import POLICIES, decode_tokens
from utf8fuzz.profiles import REGISTRY, walk
from utf8fuzz.profiles._pairs import pair_value
from utf8fuzz.profiles.table import Profile
from utf8fuzz.profiles.walk import PyWalk, feature_key, is_compiled, py_features, walker

TEXTS = ("replace", "ignore", "escape")
PAIRS = [(p, pol) for p in REGISTRY for pol in POLICIES]
ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(
    f for d in ("corpus/seeds", "corpus/inputs") for f in (ROOT / d).glob("*") if f.is_file()
)
# Where the tables change: ASCII, continuation ranges, every lead class and the
# bytes no profile or only some profiles use.
ALPHABET = bytes.fromhex(
    "00 41 7F 80 8F 90 9F A0 BF C0 C1 C2 DF E0 E1 EC ED EE EF F0 F1 F3 F4 F5 F7 F8 FB FC FD FE FF"
)


def shape(x: Any) -> Any:
    """Types all the way down: equality alone would let 1 == True through."""
    if isinstance(x, tuple):
        return (type(x), tuple(shape(y) for y in x))
    return type(x)


def check(profile: Profile, policy: str, data: bytes) -> None:
    """Every attribute of the C walk against PyWalk (and decode_tokens itself)."""
    c = walker(profile, policy)(data)
    p = PyWalk(data, profile, policy)
    assert c.tokens == p.tokens == tuple(decode_tokens(data, profile, policy)), data.hex(" ")
    assert all(type(t) is Token for t in c.tokens)
    for v in VIEWS:
        assert c.view(v) == p.view(v), (v, data.hex(" "))
        assert shape(c.view(v)) == shape(p.view(v)), (v, data.hex(" "))
    for v in TEXTS:
        assert c.text(v) == p.text(v), (v, data.hex(" "))
    assert c.features == p.features, data.hex(" ")
    assert c.packed == p.packed == pack_tokens(p.tokens), data.hex(" ")
    assert c.data == data
    check_classification(c, p.tokens, data)
    check_cover(c, p)
    prov = {"utf8fuzz": "test"}
    co, po = c.outcome(prov), p.outcome(prov)
    assert co == po and co.provenance == prov and co.data == data
    assert co == Outcome.from_tokens(decode_tokens(data, profile, policy), len(data), data=data)


def token_index_by_bisect(tokens: tuple[Token, ...], offset: int) -> int:
    """The differ's token_at, the definition token_index is held to."""
    return max(0, bisect.bisect_right([t.start for t in tokens], offset) - 1)


def check_classification(r: Any, tokens: tuple[Token, ...], data: bytes) -> None:
    """first_error and token_index against their Python definitions, on every
    offset of the input, either side of it, and past any int64."""
    assert r.first_error == next(
        (k for k, t in enumerate(tokens) if t.kind != "char"), -1), data.hex(" ")
    for off in [*range(-2, len(data) + 3), -(1 << 70), 1 << 70, 1 << 63, -(1 << 63) - 1]:
        assert r.token_index(off) == token_index_by_bisect(tokens, off), (off, data.hex(" "))
    for i in [*range(-2, len(tokens) + 2), 1 << 70, -(1 << 70)]:
        assert r.token(i) == (tokens[i] if 0 <= i < len(tokens) else None), (i, data.hex(" "))


def check_cover(c: Any, p: PyWalk) -> None:
    """The C cover against PyWalk.cover: with no counters known, every other one
    known, and all known (plus ids of no feature), the same counters are bumped
    and the same ids come back."""
    feats = p.features
    for known in (set(), set(feats[::2]), set(feats)):
        counters = {f: 100 + i for i, f in enumerate(feats) if f in known}
        counters[(9 << 20) | 5] = 7  # not a feature id: never bumped
        regions = [bytearray(200), bytearray(200)]
        missing = [c.cover(dict(counters), regions[0]), p.cover(dict(counters), regions[1])]
        want_region = bytearray(200)
        for f in feats:
            if f in known:
                want_region[counters[f]] += 1
        assert regions[0] == regions[1] == want_region
        want = [f for f in feats if f not in known] or None
        assert missing[0] == missing[1] == want


def check_inputs(inputs: list[bytes], profiles: list[str]) -> None:
    """check() for many inputs, with the oracle's cost cut where that is sound.

    Tokens are compared with decode_tokens for every input, profile and policy.
    A walk's views and texts are a function of its tokens and the input alone
    (the C builds both from the same arrays), so they are compared once per
    distinct token tuple of an input, whichever profiles and policies produced
    it (first_error and token_index too); features also depend on the profile's
    rows, so once per profile.
    """
    distinct: dict[bytes, dict[tuple[Token, ...], Any]] = {d: {} for d in inputs}
    for name in profiles:
        profile = REGISTRY[name]
        featured: set[tuple[bytes, tuple[Token, ...]]] = set()
        for pol in POLICIES:
            walks = list(map(walker(profile, pol), inputs))
            want = [tuple(decode_tokens(d, profile, pol)) for d in inputs]
            if [r.tokens for r in walks] != want:
                bad = next(d for d, r, t in zip(inputs, walks, want, strict=True) if r.tokens != t)
                pytest.fail(f"{name} {pol}: tokens differ on {bad.hex(' ')}")
            for d, r, toks in zip(inputs, walks, want, strict=True):
                distinct[d].setdefault(toks, r)
                if (d, toks) not in featured:
                    featured.add((d, toks))
                    assert r.features == py_features(profile, d, toks), (name, pol, d.hex(" "))
    for d, by_tokens in distinct.items():
        for toks, r in by_tokens.items():
            check_classification(r, toks, d)
            o = Outcome.from_tokens(toks, len(d), data=d, check=False)
            for v in VIEWS:
                assert r.view(v) == o.view(v), (v, d.hex(" "), toks)
            for v in TEXTS:
                want_cps = o.view(v)
                assert r.text(v) == (
                    None if any(x > 0x10FFFF for x in want_cps) else "".join(map(chr, want_cps))
                ), (v, d.hex(" "), toks)


SHORT = [b""] + [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(256)
                                                      for b in range(256)]
THREE = [bytes(t) for t in itertools.product(ALPHABET, repeat=3)]


# -- the walker is the C one -------------------------------------------------------


def test_the_extension_is_built_and_used() -> None:
    # A silent fallback to Python would pass every equality test below: fail here.
    for name, pol in PAIRS:
        assert is_compiled(walker(REGISTRY[name], pol)), (name, pol)
    assert type(Reference("unicode").walk(b"A")).__module__ == "utf8fuzz.profiles._walk"


@pytest.mark.skipif(not os.environ.get("UTF8FUZZ_EXPECT_SANITIZED"),
                    reason="only under make asan-test")
def test_the_sanitized_build_is_the_one_tested() -> None:
    want = Path(os.environ["UTF8FUZZ_EXPECT_SANITIZED"]).resolve()
    assert want in Path(walk._walk.__file__).resolve().parents


def test_pure_reference_env_gives_the_python_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTF8FUZZ_PURE_REFERENCE", "1")
    w = walker(REGISTRY["unicode"], "per-byte")
    assert not is_compiled(w)
    assert isinstance(w(b"\xff"), PyWalk)
    assert isinstance(Reference("kuhn", "per-sequence").walk(b"\xff"), PyWalk)
    monkeypatch.delenv("UTF8FUZZ_PURE_REFERENCE")
    assert is_compiled(walker(REGISTRY["unicode"], "per-byte"))


def test_walkers_are_compiled_once() -> None:
    p = REGISTRY["corrected"]
    assert walker(p, "per-sequence") is walker(p, "per-sequence")
    assert walker(p, "per-sequence") is not walker(p, "per-byte")


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="unknown policy"):
        walker(REGISTRY["unicode"], "per-bite")


# -- equality ----------------------------------------------------------------------


#: Under make asan-test (the same C walk, sanitized, several times slower) the
#: exhaustive tests below take one input in SANITIZED_STRIDE: every lead byte and,
#: the stride being prime to 256, every second byte under a third of the leads. What
#: the sanitizers look for (a read or write out of bounds) is a property of the code
#: paths, which a third of the inputs still takes; equality itself is exhaustive
#: under make test.
SANITIZED_STRIDE = 3 if os.environ.get("UTF8FUZZ_EXPECT_SANITIZED") else 1


@pytest.mark.exhaustive
@pytest.mark.parametrize("lead", [(0x00, 0x80), (0x80, 0xC0), (0xC0, 0xE0), (0xE0, 0x100)])
def test_every_input_of_up_to_two_bytes(lead: tuple[int, int]) -> None:
    inputs = [d for d in SHORT if d[:1] and lead[0] <= d[0] < lead[1]]
    check_inputs(inputs[::SANITIZED_STRIDE] + ([b""] if lead[0] == 0 else []),
                 list(REGISTRY))


@pytest.mark.exhaustive
@pytest.mark.parametrize("part", range(3))
def test_three_bytes_over_interesting_values(part: int) -> None:
    check_inputs(THREE[part::3][::SANITIZED_STRIDE], list(REGISTRY))


@pytest.mark.parametrize(("name", "policy"), PAIRS)
def test_corpus(name: str, policy: str) -> None:
    assert CORPUS, "corpus/seeds and corpus/inputs hold the regression inputs"
    for f in CORPUS:
        check(REGISTRY[name], policy, f.read_bytes())


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", list(REGISTRY))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_hypothesis(name: str, data: st.DataObject) -> None:
    blob = data.draw(st.one_of(strategies.inputs(name), st.binary(max_size=80)))
    for pol in POLICIES:
        check(REGISTRY[name], pol, blob)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_per_run_merges_runs_of_any_length(name: str) -> None:
    # per-run's C merge steps back over the token before; runs far longer than any
    # sequence, runs that end in a truncation, runs cut by ASCII, by a well-formed
    # sequence and (corrected) by a reserved unit, and a run at the very start.
    p = REGISTRY[name]
    for blob in [b"\x80" * 1000, b"\xc0\xaf" * 300 + b"\xe1\x80", b"A\xff" * 200,
                 b"\x80\xe2\x82\xac" * 100, b"\xfe\x80\xc2\xc2\xfe\xff" * 50,
                 b"\xed\xa0\x80" * 100 + b"\xf0\x90\x80", b"\xf0\x90\x80"]:
        check(p, "per-run", blob)
    assert walker(p, "per-run")(b"\x80" * 1000).tokens == (
        Token("error", None, 0, 1000, "illegal"),)


def test_the_walker_takes_four_policies() -> None:
    d = REGISTRY["unicode"].dfa
    kw: dict[str, Any] = dict(
        trans=d.trans, accept=d.accept, live_after=d.live_after, single=d.single,
        start=d.start, reserved_leads=(), recognized_leads=(), max_length=4,
        rows=[(r.length, r.offset, walk._row_value(r)) for r in REGISTRY["unicode"].rows])
    assert walk._walk.Walker(**kw, policy=POLICIES.index("per-run"))(b"\x80\x80").tokens == (
        Token("error", None, 0, 2, "illegal"),)
    for bad in (-1, len(POLICIES)):
        with pytest.raises(ValueError, match="policy must be"):
            walk._walk.Walker(**kw, policy=bad)


@pytest.mark.parametrize("name", ["cesu8", "mutf8"])
def test_surrogate_pair_rows_take_their_value_function(name: str) -> None:
    p = REGISTRY[name]
    cps = [0x10000, 0x10001, 0x103FF, 0x10400, 0x1F600, 0xFFFFF, 0x100000, 0x10FFFF,
           *range(0x10000, 0x110000, 4099)]
    blob = p.encode(cps)
    for pol in POLICIES:
        assert walker(p, pol)(blob).view("ignore") == tuple(cps)
        check(p, pol, blob)
        for cut in range(1, 7):  # a pair cut short at the end, and lone halves
            check(p, pol, blob[: 6 * 3 + cut])
            check(p, pol, blob[6 : 6 + cut] + b"A" + blob[:3])


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", ["cesu8", "mutf8"])
def test_the_pair_value_in_c_is_pair_value_on_every_sequence_of_the_row(name: str) -> None:
    p = REGISTRY[name]
    (row,) = [r for r in p.rows if r.value_fn is pair_value]
    assert walk._row_value(row) == "utf16-pair"  # so the C transcription is what runs
    seqs = [bytes(t) for t in itertools.product(*(range(lo, hi + 1) for lo, hi in row.ranges))]
    assert len(seqs) == 1 << 20
    r = walker(p, "maximal-subpart")(b"".join(seqs))
    assert r.view("spans") == ()
    assert r.view("ignore") == tuple(map(pair_value, seqs))


def test_value_function_errors_propagate() -> None:
    def boom(seq: bytes) -> int:
        raise ZeroDivisionError(seq.hex())

    base = REGISTRY["cesu8"]
    rows = [r if r.value_fn is None else type(r)(r.ranges, value_fn=boom) for r in base.rows]
    p = Profile("boom", "t", "t", rows, 0x10FFFF)
    w = walker(p, "maximal-subpart")
    assert is_compiled(w)
    assert w(b"A\xed\xa0\x80").tokens[0] == Token("char", 0x41, 0, 1)
    with pytest.raises(ZeroDivisionError, match="eda080edb080"):
        w(b"A\xed\xa0\x80\xed\xb0\x80")


# -- the interface -------------------------------------------------------------------


def test_text_is_none_past_u10ffff_only() -> None:
    r = walker(REGISTRY["rfc2279"])(bytes.fromhex("41 FD BF BF BF BF BF 80"))
    assert r.view("replace") == (0x41, 0x7FFFFFFF, 0xFFFD)
    assert r.text("replace") is r.text("ignore") is r.text("escape") is None
    s = walker(REGISTRY["surrogatepass"])(bytes.fromhex("ED A0 80 80"))
    assert s.text("replace") == "\ud800\ufffd" and s.text("escape") == "\ud800\udc80"


def test_views_are_built_once() -> None:
    r = walker(REGISTRY["unicode"])(b"a\xe2\x82\xac\xff\xe1\x80")
    assert r.tokens is r.tokens and r.features is r.features
    for v in VIEWS:
        assert r.view(v) is r.view(v)
    for v in TEXTS:
        assert r.text(v) is r.text(v)
    assert r.view("tokens") is r.tokens
    assert r.view("reason") == "illegal" and r.view("strict") == (4, 5)
    # a feature id is one int object for all of a walker's walks (so cover's dict
    # look-ups find their keys by identity)
    again = walker(REGISTRY["unicode"])(bytearray(b"a\xe2\x82\xac\xff\xe1\x80"))
    assert list(map(id, r.features)) == list(map(id, again.features))


def test_bad_names() -> None:
    r = walker(REGISTRY["unicode"])(b"")
    with pytest.raises(ValueError, match="unknown view"):
        r.view("nope")
    with pytest.raises(ValueError, match="only replace, ignore and escape"):
        r.text("spans")
    with pytest.raises(ValueError):
        PyWalk(b"", REGISTRY["unicode"], "per-byte").text("tokens")
    w = walker(REGISTRY["unicode"])
    for args in [(), (b"", b"")]:
        with pytest.raises(TypeError):
            w(*args)
    with pytest.raises(TypeError):
        w("text")


def test_bytes_like_input() -> None:
    w = walker(REGISTRY["unicode"])
    assert w(bytearray(b"\xc3\xa9")).tokens == w(memoryview(b"\xc3\xa9")).tokens == (
        Token("char", 0xE9, 0, 2),)


def test_no_leak() -> None:
    w = walker(REGISTRY["corrected"], "per-sequence")
    blob = bytes.fromhex("41 E2 82 AC FE 80 F0 90 80 FF C0 80 EC BD A0 80 F8")

    def run(k: int) -> None:
        for _ in range(k):
            r = w(blob)
            r.tokens, r.features, r.outcome({})
            for v in VIEWS:
                r.view(v)
            for v in TEXTS:
                r.text(v)

    run(200)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run(5000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown  # a leak of one object per walk is 5000+ objects


# -- coverage features -----------------------------------------------------------------


#: Byte 0 to 0, any other to 1 (bytes.translate).
_NONZERO = bytes([0] + [1] * 255)


def bumped(before: bytes, after: bytearray) -> set[int]:
    """The counters bumped between two snapshots of a region."""
    # Scans in C, the found ones by memchr (a loop in Python over a whole pool per
    # input took minutes under make asan-test, a regex most of this test's time).
    n = len(after)
    if before.count(0) == n:  # the usual case: counters reset
        diff = after.translate(_NONZERO)
    else:
        diff = (int.from_bytes(before, "little") ^ int.from_bytes(after, "little")).to_bytes(
            n, "little").translate(_NONZERO)
    out, i = set(), diff.find(1)
    while i >= 0:
        out.add(i)
        i = diff.find(1, i + 1)
    return out


@pytest.mark.parametrize(("name", "policy"), PAIRS)
def test_features_are_the_keys_feed_bumps(name: str, policy: str) -> None:
    p = REGISTRY[name]
    w = walker(p, policy)
    cov = TableCoverage(bytearray(TableCoverage.POOL))
    key_of: dict[int, Any] = {}
    for data in [*(f.read_bytes() for f in CORPUS), *THREE[::37]]:
        r = w(data)
        before = bytes(cov.counters)
        cov.feed(p, data, r.tokens)
        if len(key_of) != len(cov._ids):  # keys are only ever added
            key_of = {c: k for k, c in cov._ids.items()}
        assert len(key_of) == len(cov._ids)  # the pool is not exhausted: one key a counter
        fed = {key_of[c][1:] for c in bumped(before, cov.counters)}
        cov.counters[:] = bytes(len(cov.counters))  # as libFuzzer, between inputs
        assert {feature_key(i) for i in r.features} == fed, data.hex(" ")
        assert list(r.features) == sorted(set(r.features))


def test_feed_walk_bumps_the_counters_feed_does() -> None:
    cov = TableCoverage(bytearray(4096))
    for name in ("corrected", "cesu8"):
        ref = Reference(name, "per-sequence")
        for k, f in enumerate(CORPUS):
            data = f.read_bytes()
            r = ref.walk(data)
            hit: list[set[int]] = []
            # whichever of the two meets a key first, both bump the same counter
            for how in (("walk", "feed") if k % 2 else ("feed", "walk")):
                before = bytes(cov.counters)
                if how == "walk":
                    cov.feed_walk(name, r)
                else:
                    cov.feed(REGISTRY[name], data, r.tokens)
                hit.append(bumped(before, cov.counters))
                cov.counters[:] = bytes(len(cov.counters))  # no counter saturates
            assert hit[0] == hit[1], data.hex()
    assert len(cov.keys) > 100


def test_feature_key_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        feature_key(7 << 20)


# -- cover, first_error, token_index: the fuzz loop's ---------------------------------


def both_walks(data: bytes, name: str = "unicode") -> list[Any]:
    return [walker(REGISTRY[name])(data), PyWalk(data, REGISTRY[name], "maximal-subpart")]


def test_cover_bumps_in_the_region_and_nowhere_else() -> None:
    for r in both_walks(b"A\xe2\x82\xac\xff\xc3"):
        feats = r.features
        region = bytearray(b"\x07" * (len(feats) + 2))
        region[1] = 255  # saturated: stays
        counters = {f: k + 1 for k, f in enumerate(feats)}
        assert r.cover(counters, region) is None
        want = bytearray(b"\x07" * (len(feats) + 2))
        for k in range(len(feats)):
            want[k + 1] = 255 if k == 0 else 8
        assert region == want
        with pytest.raises(IndexError):  # a counter past the region's end
            r.cover({feats[-1]: len(region)}, region)
        with pytest.raises(IndexError):
            r.cover({feats[0]: -1}, region)
        assert region == want  # nothing written on the way to the error


def test_cover_argument_errors() -> None:
    for r in both_walks(b"A"):
        with pytest.raises(TypeError):
            r.cover([], bytearray(4))
        with pytest.raises(BufferError):  # read-only memory
            r.cover({}, bytes(4))
        with pytest.raises(TypeError):  # a counter that is not an int
            r.cover({f: "0" for f in r.features}, bytearray(4))
    c = walker(REGISTRY["unicode"])(b"A")
    with pytest.raises(TypeError):
        c.cover({})
    with pytest.raises(TypeError):  # not a buffer
        c.cover({}, None)


def test_first_error_and_token_index_on_the_edges() -> None:
    for r in both_walks(b""):
        assert r.first_error == -1
        assert [r.token_index(o) for o in (-1, 0, 5)] == [0, 0, 0]
    for r in both_walks(b"\xe2\x82\xacA\xffB"):
        assert r.first_error == 2
        assert [r.token_index(o) for o in range(-1, 8)] == [0, 0, 0, 0, 1, 2, 3, 3, 3]
        assert r.token_index(True) == 0
        with pytest.raises(TypeError):
            r.token_index(1.0)
    c = walker(REGISTRY["unicode"])(b"A")
    with pytest.raises(AttributeError):
        c.first_error = 3


def test_token_before_and_after_the_tuple_is_built() -> None:
    data = b"\xe2\x82\xacA\xffB"
    fresh, built = walker(REGISTRY["unicode"])(data), walker(REGISTRY["unicode"])(data)
    toks = built.tokens
    for i in range(len(toks)):
        assert fresh.token(i) == toks[i]
        assert built.token(i) is toks[i]  # the kept tuple's own
    with pytest.raises(TypeError):
        fresh.token("0")


# -- out of memory -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["unicode", "rfc2279", "corrected", "cesu8"])
def test_the_c_walk_when_memory_runs_out(name: str) -> None:
    """Each thing a walk builds (tokens, views, texts, features, one token) with
    each of its allocations failing in turn: MemoryError or the same answer
    (tests/nomemory.py). A fresh walk each run: a walk keeps what it built."""
    w = walker(REGISTRY[name])
    assert is_compiled(w)
    data = bytes.fromhex("41 c3a9 e282ac f09f9880 c080 eda080 f888808080 fe e282")
    # a walk is compared by what it records: its tokens, built afterwards
    failed = nomemory.check_every_allocation(lambda: partial(w, data), f"{name}: walk",
                                             key=lambda r: (r.tokens, r.first_error))
    calls: list[tuple[str, Any]] = []
    for attr in ("tokens", "features", "packed"):
        calls.append((attr, lambda attr=attr: partial(getattr, w(data), attr)))
    for v in VIEWS:
        calls.append((f"view {v}", lambda v=v: partial(w(data).view, v)))
    for v in TEXTS:
        calls.append((f"text {v}", lambda v=v: partial(w(data).text, v)))
    calls.append(("token", lambda: partial(w(data).token, 3)))
    failed += sum(nomemory.check_every_allocation(make, f"{name}: {what}")
                  for what, make in calls)
    assert failed > len(calls)  # failures were met, not run past


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12))
def test_the_accept_view_is_the_strict_view_saying_none(data):
    for profile in REGISTRY.values():
        w = walker(profile)(data)
        assert w.view("accept") is (w.view("strict") is None)
        assert w.view("accept") is PyWalk(data, profile, "maximal-subpart").view("accept")
