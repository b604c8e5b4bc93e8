"""Seeds (``seeds/``, ``inputs/``) over ``corpus.MAX_INPUT_BYTES`` are skipped with a
note, never read into memory (docs/corpus.md, "Size limit")."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from utf8fuzz.engine import corpus, run


def test_a_seed_over_the_limit_is_skipped_with_a_note_and_not_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "seeds").mkdir()
    (tmp_path / "inputs").mkdir()
    (tmp_path / "seeds" / "small").write_bytes(b"\xc0\x80")
    (tmp_path / "inputs" / "1234567890abcdef.bin").write_bytes(b"\xed\xa0\x80")
    big = tmp_path / "inputs" / "0123456789abcdef.bin"
    with open(big, "wb") as f:  # sparse: costs no disk
        f.truncate(4 * corpus.MAX_INPUT_BYTES)
    at_limit = tmp_path / "seeds" / "at-limit"
    with open(at_limit, "wb") as f:
        f.truncate(corpus.MAX_INPUT_BYTES)

    tracemalloc.start()
    try:
        got = run.seeds(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert [len(x) for x in got] == [corpus.MAX_INPUT_BYTES, 2, 3]  # seeds/, then inputs/
    assert got[1:] == [b"\xc0\x80", b"\xed\xa0\x80"] and not any(got[0])
    assert peak < 2 * corpus.MAX_INPUT_BYTES  # the one at the limit, not the big one
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(big) in err[0] and "over the 1 MiB limit" in err[0]

    _, _, notes = corpus.check(tmp_path)
    assert any(n.path == big and "over the 1 MiB limit" in n.message for n in notes)
