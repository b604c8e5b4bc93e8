"""Shortest wins under every command that writes an entry (docs/corpus.md "The
lock"): a fuzz worker's shorter save that lands after a command read the corpus and
before it writes is kept, never overwritten by the longer input the command read.

Deterministic: the worker's ``corpus.save`` is run at the point where the command
has judged what it read and is about to write (by wrapping the function it calls
there), not raced by timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine import handmade
from utf8fuzz.engine import corpus, replay
from utf8fuzz.loop.migrate import migrate
from utf8fuzz.outcome import Outcome

LONG, SHORT = b"\xc0\x80\x41\x41", b"\xc0\x80"


def crashed(data: bytes, **extra: Any) -> dict[str, Any]:
    """An entry of decoder ``w``, which crashed on ``data`` (so migrate runs nothing)."""
    side = handmade.sidecar("A", data, **extra)
    side["outcomes"]["w"] = {"outcome": Outcome.failure(len(data), "crash", "boom").to_json()}
    return side


def format2(data: bytes, rules: int) -> dict[str, Any]:
    return crashed(data, format=2, finding={
        "id": "0123456789abcdef", "family": "w", "rule": "crash:boom", "checked": 0,
        "explanation": "it crashes", "severity": "non-conformance", "rules": rules,
        "pattern": data.hex(" ").upper()})


def worker_saves_between(monkeypatch: pytest.MonkeyPatch, module: Any, name: str,
                         root: Path) -> None:
    """Make ``module.name`` save the worker's shorter input first, then do its work."""
    real = getattr(module, name)

    def racing(*args: Any, **kw: Any) -> Any:
        corpus.save(root, format2(SHORT, 2), SHORT)
        return real(*args, **kw)

    monkeypatch.setattr(module, name, racing)


@pytest.mark.parametrize("old", ["format 1", "explained by older rules"])
def test_migrate_keeps_the_shorter_input_a_worker_saved_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str) -> None:
    side = crashed(LONG) if old == "format 1" else format2(LONG, 1)
    path, _ = corpus.save(tmp_path, side, LONG)
    worker_saves_between(monkeypatch, corpus, "replace_entry", tmp_path)
    done = migrate(tmp_path)
    assert len(done.converted) + len(done.reexplained) == 1  # it did judge and write
    (entry,) = corpus.load(tmp_path)[0]
    assert entry.path == path and entry.data == SHORT


def test_prune_keeps_the_shorter_input_a_worker_saved_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # w is not available here, so prune would keep the entry anyway: make it judge
    # the entry stale, as it would once the engine no longer gives the signature
    corpus.save(tmp_path, crashed(LONG), LONG)
    monkeypatch.setattr(replay, "reproduces", lambda e, extra=(): False)
    worker_saves_between(monkeypatch, replay, "reproduces", tmp_path)
    assert replay.prune(tmp_path) == []
    (entry,) = corpus.load(tmp_path)[0]
    assert entry.data == SHORT
