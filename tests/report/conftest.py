"""Shared corpora for the report tests, built once per session from real
outcomes (see builder.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.builder import write_corpus
from utf8fuzz.report.load import Corpus, load_corpus


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    write_corpus(root)
    return root


@pytest.fixture(scope="session")
def corpus(corpus_dir: Path) -> Corpus:
    return load_corpus(corpus_dir)


def entry_for(corpus: Corpus, signature_part: str):  # type: ignore[no-untyped-def]
    hits = [e for e in corpus.entries if signature_part in e.signature]
    assert hits, f"no entry with {signature_part!r}: {[e.signature for e in corpus.entries]}"
    return hits[0]
