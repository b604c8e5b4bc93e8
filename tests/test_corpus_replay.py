"""CI replays every entry of the committed corpus (corpus/entries) forever.

What each test checks: :func:`utf8fuzz.engine.replay.replay_entry` - own decoders now
agree with the reference (a fixed bug stays fixed), external decoders keep their
recorded behaviour (a version change with the same behaviour passes with a warning;
a behaviour change fails and says so), decoders absent here skip with the reason.
A corrupt sidecar fails by its path while every other entry still replays.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from utf8fuzz.engine.corpus import load
from utf8fuzz.pytest_plugin import check_entry

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ENTRIES, PROBLEMS = load(CORPUS)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.signature for e in ENTRIES])
def test_entry_replays(entry):
    check_entry(entry)


def test_no_corrupt_entry():
    assert not PROBLEMS, "corrupt corpus entries:\n" + "\n".join(map(str, PROBLEMS))


def test_corpus_has_seeds():
    assert len(list((CORPUS / "seeds").iterdir())) > 100
