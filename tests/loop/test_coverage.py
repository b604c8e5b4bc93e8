"""Table coverage: what libFuzzer is told the references met."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import utf8fuzz
from utf8fuzz.loop.coverage import TableCoverage
from utf8fuzz.loop.run import atheris_available
from utf8fuzz.profiles import get_profile
from utf8fuzz.profiles.walk import PyWalk, Walk, feature_key, walker


def bumps(before: bytes, after: bytearray) -> list[int]:
    """The counters bumped between two snapshots, each as often as it was."""
    return [i for i, (a, b) in enumerate(zip(before, after, strict=True)) for _ in range(b - a)]


def keys_for(hexin: str, profile: str = "unicode") -> set[tuple[object, ...]]:
    cov = TableCoverage(bytearray(64))
    data = bytes.fromhex(hexin)
    cov.feed(get_profile(profile), data, utf8fuzz.decode(data, profile).tokens)
    return set(cov.keys)


def row_index(profile: str, hexseq: str) -> int:
    p = get_profile(profile)
    return p.rows.index(p.row_of(bytes.fromhex(hexseq)))


def test_each_row_of_table_3_1b_is_its_own_coverage():
    # E0 A0 80 and E1 80 80 are both 3-byte characters, but different rows
    assert ("unicode", "char", row_index("unicode", "E0 A0 80")) in keys_for("E0 A0 80")
    assert ("unicode", "char", row_index("unicode", "E1 80 80")) in keys_for("E1 80 80")
    assert row_index("unicode", "E0 A0 80") != row_index("unicode", "E1 80 80")


def test_corrected_offset_ranges_are_told_apart():
    # EC BD 9F and EC BD A0 differ only in the third byte, and sit in two rows
    a, b = row_index("corrected", "EC BD 9F"), row_index("corrected", "EC BD A0")
    assert a != b
    assert ("corrected", "char", a) in keys_for("EC BD 9F", "corrected")
    assert ("corrected", "char", b) in keys_for("EC BD A0", "corrected")


def test_errors_by_shape_and_neighbours():
    keys = keys_for("E1 80 41")
    assert ("unicode", "error", 2, "illegal", 0xE1) in keys
    assert ("unicode", "next", "error", 2, "illegal", "char", 1) in keys
    assert ("unicode", "error", 2, "truncated", 0xE1) in keys_for("41 E1 80")


def test_block_boundaries_straddled():
    assert ("unicode", "block", 16, "char", 3) in keys_for("41" * 15 + "E2 82 AC")
    assert not any(k[1] == "block" for k in keys_for("41" * 13 + "E2 82 AC"))


def test_keys_map_to_stable_counters_and_share_the_last_when_the_region_is_full():
    cov = TableCoverage(bytearray(8))
    p, data = get_profile("unicode"), b"A"
    cov.feed(p, data, utf8fuzz.decode(data).tokens)
    first = bytes(cov.counters)
    assert sum(first) == 3  # ("char", row), ("next", "start", ...), ("next", ..., "end")
    cov.feed(p, data, utf8fuzz.decode(data).tokens)
    assert bytes(cov.counters) == bytes(2 * c for c in first)  # the same counters again
    for k in range(10):  # more keys than counters: the last one takes the rest
        data = bytes([0xE1, 0x80, 0x41]) * k + bytes([0xC2 + k, 0xA9])
        cov.feed(p, data, utf8fuzz.decode(data).tokens)
    assert len(cov.keys) > 8 and set(cov._ids.values()) == set(range(8))


def test_counters_saturate_at_255():
    cov = TableCoverage(bytearray(4))
    p = get_profile("unicode")
    for _ in range(300):
        cov.feed(p, b"A", utf8fuzz.decode(b"A").tokens)
        cov.feed_walk("unicode", walker(p)(b"A"))
    assert set(cov.counters[:3]) == {255}


def test_a_region_libfuzzer_can_read_is_needed():
    with pytest.raises(ValueError):
        TableCoverage(bytearray())


# -- feed_walk: the walk's cover does the loop over the feature ids ---------------------

CORPUS = sorted(f for d in ("corpus/seeds", "corpus/inputs")
                for f in (Path(__file__).resolve().parents[2] / d).glob("*") if f.is_file())
FUZZ_PROFILES = ("unicode", "corrected", "surrogatepass", "cesu8", "mutf8")


def loop_feed_walk(cov: TableCoverage, name: str, walk: Walk) -> None:
    """feed_walk as one Python loop over the ids: the definition cover must keep."""
    counters = cov._features.setdefault(name, {})
    for f in walk.features:
        c = counters.get(f)
        if c is None:
            c = counters[f] = cov._counter((name, *feature_key(f)))
        cov.counters[c] += 1


def test_feed_walk_is_the_loop_over_feature_ids():
    inputs = [f.read_bytes()[:64] for f in CORPUS] + [bytes(range(0x80, 0x100))[:64]]
    assert len(inputs) > 20
    if os.environ.get("UTF8FUZZ_EXPECT_SANITIZED"):
        # make asan-test: the same code paths on a third of the inputs (sanitized, the
        # three feeds take several times longer; make test compares all of them)
        inputs = inputs[::3]
    runs = {}
    for how in ("loop", "c", "python"):
        cov = TableCoverage(bytearray(4096))
        per_input = []
        for data in inputs:
            for name in FUZZ_PROFILES:
                p = get_profile(name)
                before = bytes(cov.counters)
                if how == "loop":
                    loop_feed_walk(cov, name, walker(p)(data))
                else:
                    w = walker(p)(data) if how == "c" else PyWalk(data, p, "maximal-subpart")
                    cov.feed_walk(name, w)
                per_input.append(bumps(before, cov.counters))
                cov.counters[:] = bytes(len(cov.counters))  # as libFuzzer, between inputs
        # the same key given the same counter, in the same order; the same bumps
        runs[how] = (list(cov._ids.items()), per_input)
    assert type(walker(get_profile("unicode"))(b"")).__module__ == "utf8fuzz.profiles._walk"
    assert runs["loop"] == runs["c"] == runs["python"]
    assert len(runs["c"][0]) > 200
    assert all(len(h) == len(set(h)) for h in runs["c"][1])  # one bump per key an input


def test_two_coverages_fed_by_one_walker_keep_their_own_counters():
    # The C walker keeps the counter of each id for the last counters dict it saw:
    # a second coverage (its own numbering) must not get the first one's.
    p, make = get_profile("unicode"), walker(get_profile("unicode"))
    first, second = TableCoverage(bytearray(256)), TableCoverage(bytearray(256))
    second.feed_walk("unicode", make(b"\xff\xfe\xc0\x80"))  # numbers other keys first
    for cov in (first, second, first, second):
        before = bytes(cov.counters)
        cov.feed_walk("unicode", make(b"A\xc3\xa9"))
        hit = set(bumps(before, cov.counters))
        want = {cov._ids[("unicode", *feature_key(f))]
                for f in PyWalk(b"A\xc3\xa9", p, "maximal-subpart").features}
        assert hit == want


def test_feed_walk_never_writes_outside_the_region():
    p = get_profile("unicode")
    for make in (walker(p), lambda d: PyWalk(d, p, "maximal-subpart")):
        cov = TableCoverage(bytearray(64))
        cov.feed_walk("unicode", make(b"A\xff"))
        cov.counters = bytearray(1)  # counters handed out beyond it
        with pytest.raises(IndexError):
            cov.feed_walk("unicode", make(b"A\xff"))
        cov.counters = bytes(64)  # type: ignore[assignment]  # read-only
        with pytest.raises(BufferError):
            cov.feed_walk("unicode", make(b"A\xff"))


# -- the region libFuzzer reads ---------------------------------------------------------


def test_libfuzzer_counters_need_libfuzzer_in_the_process():
    code = ("from utf8fuzz.loop.coverage import libfuzzer_counters\n"
            "try:\n    libfuzzer_counters(8)\nexcept OSError as e:\n    print('OSError', e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.stdout.startswith("OSError no libFuzzer in this process"), p.stderr[-2000:]


@pytest.mark.skipif(atheris_available() is not None, reason=str(atheris_available()))
def test_libfuzzer_reads_the_table_coverage(tmp_path):
    """The references run uninstrumented: whatever coverage libFuzzer reports on the
    seeds is the table coverage, read from the region handed to it."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "UTF8FUZZ_DECODERS": json.dumps(["cpython:replace"]),
           "UTF8FUZZ_CORPUS": str(tmp_path / "corpus")}
    p = subprocess.run([sys.executable, str(root / "fuzz" / "differential.py"), "-runs=0",
                        str(root / "corpus" / "seeds")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r"INITED cov: (\d+) ft: (\d+)", p.stderr)
    assert m is not None, p.stderr[-2000:]
    # one reference (unicode) over the seeds: Table 3.1B's nine rows, and many
    # error shapes, neighbours and block boundaries (107 when written)
    assert int(m.group(1)) > 50, m.group(0)
    assert not list(tmp_path.glob("inflight-*")), "the in-flight file is removed at exit"


# -- long inputs: where the 128-byte to 64 KiB boundaries fall ---------------------------


def long_keys_for(data: bytes, profile: str = "unicode") -> set[tuple[object, ...]]:
    return {k for k in keys_for(data.hex(), profile) if str(k[1]).startswith("l")}


def test_no_large_boundary_keys_up_to_64_bytes():
    # the short loop's keys are what they were: nothing past the 64-byte blocks
    assert long_keys_for(b"A" * 62 + b"\xe2\x82\xac"[:2]) == set()
    assert long_keys_for(b"A" * 63 + b"\xc0") == set()


def test_where_large_boundaries_fall():
    # C0 is in no row of Table 3.1B: a one-byte ill-formed sequence (maximal subpart),
    # here starting two bytes past the 4 KiB page boundary
    keys = long_keys_for(b"A" * 4098 + b"\xc0" + b"A" * 900)
    assert ("unicode", "lnear", 4096, 2, "error", 1, "illegal") in keys
    assert ("unicode", "lblock", 4096, 0, "char", 1) in keys  # ASCII starts the page
    assert not any(k[1] == "lnear" and k[2] != 4096 for k in keys)
    # E2 82 AC (U+20AC, a 3-byte row) from offset 254: its third byte is the 257th
    keys = long_keys_for(b"A" * 254 + "\u20ac".encode() + b"A" * 60)
    assert ("unicode", "lblock", 256, 2, "char", 3) in keys
    assert not any(k[1] == "lnear" for k in keys)  # no error anywhere
    # a 4,096-byte input ending in E2 82: a truncated 3-byte sequence at the page's end
    keys = long_keys_for(b"A" * 4094 + b"\xe2\x82")
    assert ("unicode", "lend", 4096, 0, "error", 2, "truncated") in keys
    assert ("unicode", "lnear", 4096, -2, "error", 2, "truncated") in keys
    # 4,092 bytes: four short of the page, too far to count as its end
    assert not any(k[1] == "lend" for k in long_keys_for(b"A" * 4090 + b"\xe2\x82"))


def test_large_boundary_keys_are_the_same_from_every_walk():
    """feed (tokens), feed_walk on the C walk and on PyWalk: the same keys for long
    inputs of every class and layout (engine/long.py), each bumped once an input."""
    from utf8fuzz.engine.long import SplitMix64, long_input

    rng = SplitMix64(18)
    inputs = [long_input(rng, "unicode") for _ in range(40)]
    inputs = [x for x in inputs if len(x) <= 20_000][:25]  # the Python walk is slow
    assert any(len(x) > 4096 for x in inputs)
    for name in ("unicode", "cesu8"):
        p = get_profile(name)
        covs = {how: TableCoverage(bytearray(1 << 14)) for how in ("feed", "c", "python")}
        for data in inputs:
            covs["feed"].feed(p, data, utf8fuzz.decode(data, name).tokens)
            for how, walk in (("c", walker(p)(data)),
                              ("python", PyWalk(data, p, "maximal-subpart"))):
                cov = covs[how]
                before = bytes(cov.counters)
                cov.feed_walk(name, walk)
                hit = bumps(before, cov.counters)
                assert len(hit) == len(set(hit))
        keys = [set(c.keys) for c in covs.values()]
        assert keys[0] == keys[1] == keys[2]
        assert list(covs["c"]._ids) == list(covs["python"]._ids)  # the same counters
        assert sum(k[1] in ("lblock", "lnear", "lend") for k in keys[0]) > 20


def test_feed_walk_says_when_a_feature_is_new():
    # what makes an input novel for the slow decoders (engine/screening.py, SlowShare)
    cov = TableCoverage(bytearray(4096))
    w = walker(get_profile("unicode"))
    assert cov.feed_walk("unicode", w(b"A\xc3\xa9"))
    assert not cov.feed_walk("unicode", w(b"A\xc3\xa9"))
    assert not cov.feed_walk("unicode", w(b"B\xc3\xa8"))  # the same rows and shapes
    assert cov.feed_walk("unicode", w(b"A\xed\xa0\x80"))  # a surrogate: new
    long = b"a" * 200
    assert cov.feed_walk("unicode", w(long))  # long keys: new
    assert not cov.feed_walk("unicode", w(long))
