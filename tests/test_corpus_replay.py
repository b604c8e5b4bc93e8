"""CI replays every entry of the committed corpus (corpus/entries) forever.

One test per entry and decoder it checks (:func:`utf8fuzz.engine.replay.checks`),
judged as the pytest plugin judges it (:func:`utf8fuzz.pytest_plugin.run_check`):
the reference is unchanged; this project's own decoders meet the expectation (an
open finding is an xfail naming its signature, one fixed or met before fails as
regressed); external decoders keep their recorded behaviour (a version change with
the same behaviour passes with a warning; a behaviour change fails and says so);
decoders absent here skip with the reason. A corrupt sidecar fails by its path while
every other entry still replays.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from utf8fuzz.engine.corpus import load
from utf8fuzz.engine.replay import checks
from utf8fuzz.pytest_plugin import label, run_check

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ENTRIES, PROBLEMS = load(CORPUS)
CASES = [(e, name) for e in ENTRIES for name in checks(e)]


@pytest.mark.parametrize(("entry", "decoder"), CASES,
                         ids=[f"{e.id}:{label(e, name)}" for e, name in CASES])
def test_entry_replays(entry, decoder):
    run_check(entry, decoder)


def test_no_corrupt_entry():
    assert not PROBLEMS, "corrupt corpus entries:\n" + "\n".join(map(str, PROBLEMS))


def test_corpus_has_seeds():
    assert len(list((CORPUS / "seeds").iterdir())) > 100
