""""The shortest input wins" under concurrent writers: ``corpus.save`` compares and
writes under the corpus lock, so no interleaving of writers can replace a shorter
input by a longer one (docs/corpus.md, "The lock")."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from tests.engine import handmade
from utf8fuzz.engine import corpus
from utf8fuzz.engine.signature import signature_id

WRITERS = 8
SIGNATURES = 100
LENGTHS = 8  # each signature gets inputs of 1..8 bytes, one length per writer


def length(writer: int, sig: int) -> int:
    return 1 + (sig + writer) % LENGTHS


def data(writer: int, sig: int) -> bytes:
    return bytes([0x41 + writer]) * length(writer, sig)


def writer(root: Path, k: int, start: mp.synchronize.Barrier) -> None:  # type: ignore[name-defined]
    sides = [(handmade.sidecar(f"S{i}", data(k, i)), data(k, i)) for i in range(SIGNATURES)]
    start.wait(timeout=120)  # all writers at once, on the same signatures in the same order
    for side, d in sides:
        corpus.save(root, side, d)


def test_every_signature_holds_its_shortest_input_and_every_sidecar_loads(
        tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    start = ctx.Barrier(WRITERS)
    ps = [ctx.Process(target=writer, args=(tmp_path, k, start)) for k in range(WRITERS)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(timeout=600)
        assert p.exitcode == 0
    entries, problems, notes = corpus.check(tmp_path)
    assert not problems  # every sidecar whole and valid
    assert all("superseded" in n.message for n in notes)  # longer inputs, replaced
    assert len(entries) == SIGNATURES
    for i in range(SIGNATURES):
        (e,) = [e for e in entries if e.id == signature_id(f"unicode/crash/S{i}/w")]
        (shortest,) = [k for k in range(WRITERS) if length(k, i) == 1]
        assert e.data == data(shortest, i), f"signature {i}: {e.data!r}"
    assert not list(tmp_path.rglob("*.tmp"))
