"""Table coverage: what libFuzzer is told the references met."""

from pathlib import Path

import pytest

import utf8fuzz
from utf8fuzz.engine.coverage import TableCoverage
from utf8fuzz.profiles import get_profile
from utf8fuzz.profiles.walk import PyWalk, Walk, feature_key, walker


class Recorder:
    def __init__(self) -> None:
        self.next, self.hits = 0, []

    def reserve(self) -> int:
        self.next += 1
        return self.next

    def hit(self, i: int) -> None:
        self.hits.append(i)


def keys_for(hexin: str, profile: str = "unicode") -> set[tuple[object, ...]]:
    rec = Recorder()
    cov = TableCoverage(rec.reserve, rec.hit, pool=64)
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


def test_pool_is_reserved_up_front_and_keys_map_to_stable_counters():
    rec = Recorder()
    cov = TableCoverage(rec.reserve, rec.hit, pool=8)
    assert rec.next == 8  # reserved before any input: libFuzzer must be given them
    p, data = get_profile("unicode"), b"A"
    cov.feed(p, data, utf8fuzz.decode(data).tokens)
    first = list(rec.hits)
    cov.feed(p, data, utf8fuzz.decode(data).tokens)
    assert rec.hits[len(first):] == first


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
        cov._hit(c)


def test_feed_walk_is_the_loop_over_feature_ids():
    inputs = [f.read_bytes()[:64] for f in CORPUS] + [bytes(range(0x80, 0x100))[:64]]
    assert len(inputs) > 20
    runs = {}
    for how in ("loop", "c", "python"):
        rec = Recorder()
        cov = TableCoverage(rec.reserve, rec.hit, pool=4096)
        per_input = []
        for data in inputs:
            for name in FUZZ_PROFILES:
                p = get_profile(name)
                n = len(rec.hits)
                if how == "loop":
                    loop_feed_walk(cov, name, walker(p)(data))
                else:
                    w = walker(p)(data) if how == "c" else PyWalk(data, p, "maximal-subpart")
                    cov.feed_walk(name, w)
                per_input.append(sorted(rec.hits[n:]))
        # the same key given the same counter, in the same order; the same bumps
        runs[how] = (list(cov._ids.items()), per_input)
    assert type(walker(get_profile("unicode"))(b"")).__module__ == "utf8fuzz.profiles._walk"
    assert runs["loop"] == runs["c"] == runs["python"]
    assert len(runs["c"][0]) > 200
    assert all(len(h) == len(set(h)) for h in runs["c"][1])  # one bump per key an input


def test_feed_walk_propagates_what_hit_raises():
    def hit(c: int) -> None:
        raise OSError(c)

    cov = TableCoverage(Recorder().reserve, hit, pool=64)
    p = get_profile("unicode")
    for make in (walker(p), lambda d: PyWalk(d, p, "maximal-subpart")):
        with pytest.raises(OSError):  # a new key: hit from Python
            cov.feed_walk("unicode", make(b"A\xff"))
        with pytest.raises(OSError):  # its first key now known: hit from the cover
            cov.feed_walk("unicode", make(b"A\xff"))
