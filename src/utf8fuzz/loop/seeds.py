"""The inputs every run starts from: ``seeds/`` (or, where it holds none, the
packaged boundary seeds) and ``inputs/`` of the corpus; for libFuzzer, the
directories it reads them from, less the inputs that end a process."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

from utf8fuzz import safe
from utf8fuzz.engine import boundaries
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.loop.state import Work


def seed_paths(d: Path) -> list[Path]:
    """The seed files of directory ``d`` (none when it is missing), by name."""
    return [p for p in (sorted(d.iterdir()) if d.is_dir() else [])
            if not p.name.startswith(".") and p.suffix != ".md" and p.is_file()]


def seeds(corpus: Path) -> list[bytes]:
    """The files of ``seeds/`` (where it holds none, the packaged boundary seeds, by
    name) and ``inputs/``. One over ``corpus.MAX_INPUT_BYTES``, or not readable, is
    skipped with a note on stderr, never read whole."""
    out = []
    if not seed_paths(Path(corpus) / "seeds"):
        out = [data for _, data in sorted(boundaries.seed_files().items())]
    for d in (Path(corpus) / "seeds", corpus_mod.inputs_dir(corpus)):
        for p in seed_paths(d):
            try:
                out.append(corpus_mod.read_seed(p))
            except corpus_mod.CorpusError as e:
                print(f"utf8fuzz: note: seed {safe.text(p)} skipped: {safe.text(e)}",
                      file=sys.stderr)
    return out


def seed_dirs(corpus: Path, work: Work, exclude: set[bytes]) -> list[Path]:
    """The seed directories libFuzzer reads (``seeds/``, or where it holds none the
    packaged boundary seeds written into ``work``; ``inputs/``); with inputs to leave
    out, a copy of them without those (hard links where possible) in ``work``."""
    given = corpus / "seeds"
    if not seed_paths(given):
        given = work.boundary_seeds
        packaged = boundaries.seed_files()
        if {p.name for p in seed_paths(given)} != set(packaged):
            given.mkdir(parents=True, exist_ok=True)
            for name, data in packaged.items():  # a scratch copy: no fsync, still whole
                tmp = given / f".{name}.{os.getpid()}.tmp"
                tmp.write_bytes(data)
                os.replace(tmp, given / name)
    dirs = [d for d in (given, corpus_mod.inputs_dir(corpus)) if d.is_dir()]
    for name in {hashlib.sha1(x).hexdigest() for x in exclude}:  # libFuzzer's file names
        (work.libfuzzer_corpus / name).unlink(missing_ok=True)
    if not exclude:
        return dirs
    longest = max(len(x) for x in exclude)
    out = work.libfuzzer_seeds
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for d in dirs:
        for p in d.iterdir():
            try:
                st = p.stat()
                if not p.is_file() or p.name.startswith(".") or p.suffix == ".md" or (
                        st.st_size <= longest and p.read_bytes() in exclude):
                    continue
                dest = out / f"{d.name}-{p.name}"
                try:
                    os.link(p, dest)
                except OSError:
                    shutil.copyfile(p, dest)
            except OSError:
                continue
    return [out]
