"""Seeds (``seeds/``, ``inputs/``) over ``corpus.MAX_INPUT_BYTES`` are skipped with a
note, never read into memory (docs/corpus.md, "Size limit")."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from utf8fuzz.engine import boundaries, corpus
from utf8fuzz.loop import seeds as seeding
from utf8fuzz.loop.state import Work


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
        got = seeding.seeds(tmp_path)
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


# -- a corpus utf8fuzz init did not make ---------------------------------------------


def test_a_corpus_without_seeds_replays_the_packaged_boundary_seeds(tmp_path: Path) -> None:
    packaged = [data for _, data in sorted(boundaries.seed_files().items())]
    assert seeding.seeds(tmp_path / "new") == packaged  # no directory at all yet
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "1234567890abcdef.bin").write_bytes(b"\xed\xa0\x80")
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "README.md").write_text("not a seed")
    assert seeding.seeds(tmp_path) == [*packaged, b"\xed\xa0\x80"]
    (tmp_path / "seeds" / "mine").write_bytes(b"\xc0\x80")
    assert seeding.seeds(tmp_path) == [b"\xc0\x80", b"\xed\xa0\x80"]  # the user's own alone


def _read(dirs: list[Path]) -> list[bytes]:
    return sorted(p.read_bytes() for d in dirs for p in d.iterdir())


def test_libfuzzer_is_given_the_packaged_boundary_seeds_where_the_corpus_has_none(
        tmp_path: Path) -> None:
    corpus_dir, work = tmp_path / "corpus", Work(tmp_path / "work")
    corpus_dir.mkdir()
    work.make()
    packaged = sorted(boundaries.seed_files().values())
    assert _read(seeding.seed_dirs(corpus_dir, work, set())) == packaged
    assert _read(seeding.seed_dirs(corpus_dir, work, set())) == packaged  # again, as restarted
    # an input that ends a process is left out of them too
    killer = packaged[0]
    assert _read(seeding.seed_dirs(corpus_dir, work, {killer})) == [
        x for x in packaged if x != killer]
    (corpus_dir / "seeds").mkdir()
    (corpus_dir / "seeds" / "mine").write_bytes(b"\xc0\x80")
    assert _read(seeding.seed_dirs(corpus_dir, work, set())) == [b"\xc0\x80"]
