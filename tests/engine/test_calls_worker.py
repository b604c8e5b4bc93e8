"""The checks of the call (:mod:`utf8fuzz.engine.calls`) on plug-ins in their
worker process (the default): the history runs in the worker's own state, the
placed view is made in the worker (a ``PLACED`` request), and a plug-in that takes
only bytes answers None there too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from utf8fuzz.decoders import plugin
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import calls

PLANTED = "tests.engine.planted_calls:"


@pytest.fixture
def load() -> Iterator[object]:
    made: list[Decoder] = []

    def loader(spec: str) -> Decoder:
        d = plugin.load(PLANTED + spec)
        made.append(d)
        return d
    yield loader
    for d in made:
        d.close()


def test_history_in_the_worker(load) -> None:  # type: ignore[no-untyped-def]
    d = load("keeps_flag+validator")
    assert getattr(d, "out_of_process", False)
    hit = calls.judge(d, calls.Call((b"\xff",)), b"\x80", calls.settled(d, b"\x80"))
    assert hit is not None and hit.klass == calls.HISTORY
    twin = load("valid+validator")
    assert calls.judge(twin, calls.Call((b"\xff",)), b"\x80",
                       calls.settled(twin, b"\x80")) is None


def test_placed_in_the_worker(load) -> None:  # type: ignore[no-untyped-def]
    d = load("reads_past")
    call = calls.Call(placement=(3, 10, 0x80))
    hit = calls.judge(d, call, b"\xf0\x9f\x98", calls.settled(d, b"\xf0\x9f\x98"))
    assert hit is not None and hit.klass == calls.OUTSIDE
    twin = load("strict")
    assert calls.judge(twin, call, b"\xf0\x9f\x98", calls.settled(twin, b"\xf0\x9f\x98")) is None
    # a plug-in that fails on a view takes only bytes: None, and not asked again
    only_bytes = load("bytes_only")
    assert only_bytes.run_placed(b"a", 1, 4, 0x80) is None
    assert only_bytes.run_placed(b"a", 1, 4, 0x80) is None
