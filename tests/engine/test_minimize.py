import time

from tests.engine.planted import planted_block, planted_c080, planted_truncated4
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.minimize import minimize


def shrink(decoder, data, **kw):
    d = Differ([decoder])
    (sig,) = d.signatures(data)
    m = minimize(data, lambda b: sig in d.signatures(b), **kw)
    assert sig in d.signatures(m.data)
    return m


def test_shrinks_to_the_two_bytes():
    m = shrink(planted_c080(), bytes.fromhex("E2 82 AC 41 C0 80 F0 9F 98 80 41 42"))
    assert m.data == b"\xc0\x80"
    assert m.complete and not m.position_dependent and m.original_size == 12


def test_result_is_one_minimal():
    m = shrink(planted_truncated4(), bytes.fromhex("41 42 E2 82 AC F0 9F 98 43 44 45"))
    # F0 alone is a maximal subpart of a 4-byte sequence (Table 3.1B), and A the
    # byte it swallows
    assert m.data == b"\xf0A"
    d = Differ([planted_truncated4()])
    (sig,) = d.signatures(m.data)
    for i in range(len(m.data)):
        assert sig not in d.signatures(m.data[:i] + m.data[i + 1 :])


def test_keeps_position_when_the_bug_depends_on_it():
    data = bytes.fromhex("E2 82 AC") * 3 + b"xyzabc" + bytes.fromhex("C1 BF") + b"tail"
    m = shrink(planted_block(), data)
    assert len(m.data) == 17 and m.data[15:] == b"\xc1\xbf"
    assert m.data[:15] == b"A" * 15  # simplified in place, not deleted
    assert m.position_dependent


def test_bounded_in_time_and_returns_the_best_so_far():
    d = Differ([planted_c080()])
    data = b"A" * 300 + b"\xc0\x80" + b"B" * 300
    (sig,) = d.signatures(data)

    def slow(b):  # ddmin needs dozens of steps here: 20 ms each cannot fit in 0.1 s
        time.sleep(0.02)
        return sig in d.signatures(b)

    m = minimize(data, slow, seconds=0.1)
    assert not m.complete and sig in d.signatures(m.data) and len(m.data) <= len(data)


def test_interrupt_returns_what_it_has():
    d = Differ([planted_c080()])
    data = b"AB" * 40 + b"\xc0\x80"
    (sig,) = d.signatures(data)
    calls = 0

    def keeps(b):
        nonlocal calls
        calls += 1
        if calls == 5:
            raise KeyboardInterrupt
        return sig in d.signatures(b)

    m = minimize(data, keeps)
    assert not m.complete and sig in d.signatures(m.data)


def test_bounded_by_counts_not_by_the_clock(monkeypatch):
    """The same input minimizes to the same result however slow the machine: the
    clock (made to jump an hour a step) stops nothing unless ``seconds`` is given,
    and ``max_bytes`` cuts the search at the same candidate every time."""
    import itertools

    import utf8fuzz.engine.minimize as minimize_mod

    d = Differ([planted_c080()])
    data = b"A" * 300 + b"\xc0\x80" + b"B" * 300
    (sig,) = d.signatures(data)
    calm = minimize(data, lambda b: sig in d.signatures(b))
    hours = itertools.count(0.0, 3600.0)
    monkeypatch.setattr(minimize_mod.time, "monotonic", lambda: next(hours))
    loaded = minimize(data, lambda b: sig in d.signatures(b))
    assert loaded.complete and calm.complete and loaded.data == calm.data == b"\xc0\x80"
    cut = [minimize(data, lambda b: sig in d.signatures(b), max_bytes=len(data)) for _ in range(2)]
    assert not cut[0].complete and cut[0].data == cut[1].data and cut[0].steps == cut[1].steps
