"""``utf8fuzz fuzz --time`` is a limit for the atheris engine: its target ends
libFuzzer's loop by the run's deadline whatever its own start took, compares nothing
libFuzzer runs past it, and minimizes nothing past it (loop/atheris_target.py,
loop/finder.py). The target's part is run in tests/loop/test_libfuzzer_findings.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.engine.planted import Planted, swallows_after_truncated4
from utf8fuzz.loop.atheris_target import until_deadline
from utf8fuzz.loop.finder import Finder
from utf8fuzz.loop.state import deadline_of

INPUT = b"abc def ghi \xf0\x90\x41 jkl mno"


def found_with(tmp_path: Path, deadline: float | None) -> tuple[bytes, dict[str, object]]:
    f = Finder([Planted("planted:truncated4", swallows_after_truncated4)],
               tmp_path / "corpus", "test", tally=False, minimize_seconds=60, full_every=1,
               deadline=deadline)
    f.consider(INPUT)
    (found,) = f.found
    assert found.path is not None and found.path.exists()
    return found.input, found.sidecar["found"]["minimizer"]


def test_a_signature_met_past_the_deadline_is_saved_as_met(tmp_path):
    # minimize_seconds alone would let it minimize for a minute past the run's end
    data, stats = found_with(tmp_path / "late", time.monotonic() - 1)
    assert data == INPUT and stats["complete"] is False and stats["steps"] == 0
    # before the deadline, or with none, it is minimized (by its counts)
    for name, deadline in (("early", time.monotonic() + 3600), ("none", None)):
        data, stats = found_with(tmp_path / name, deadline)
        assert len(data) < 8 and stats["complete"] is True, name


@pytest.mark.parametrize(("argv", "left", "want"), [
    # libFuzzer stops once more whole seconds than its limit have passed: one less
    (["t.py", "-runs=5", "-max_total_time=60", "dir"], 30.7, ["t.py", "-max_total_time=29",
                                                             "-runs=5", "dir"]),
    (["t.py", "-max_total_time=10"], 30.0, ["t.py", "-max_total_time=10"]),  # sooner: kept
    (["t.py"], 30.0, ["t.py", "-max_total_time=29"]),  # none given: added
    (["t.py", "-max_total_time=0"], 30.0, ["t.py", "-max_total_time=29"]),  # 0: no limit
    (["t.py", "-max_total_time=60"], 0.5, ["t.py", "-max_total_time=1"]),  # never 0
    (["t.py", "-max_total_time=60"], -5.0, ["t.py", "-max_total_time=1"]),
])
def test_libfuzzers_loop_is_told_to_end_by_the_deadline(argv, left, want):
    assert until_deadline(argv, left) == want


def test_the_deadline_from_the_environment():
    assert deadline_of(None) is None and deadline_of(" ") is None
    now = time.monotonic()
    assert now + 50 < (deadline_of(repr(time.time() + 100)) or 0) < now + 150
    for bad in ("soon", "nan", "inf", "1e999"):
        with pytest.raises(ValueError, match="UTF8FUZZ_DEADLINE"):
            deadline_of(bad)
