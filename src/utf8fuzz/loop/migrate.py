"""``utf8fuzz corpus migrate``: a corpus of an older format rewritten in the current
one (:data:`utf8fuzz.engine.corpus.FORMAT`).

Format 1 to 2. A format-1 signature may name several decoders (every decoder that
diverged in one class and feature on the input); format 2 names one, and records
its finding. Each format-1 entry becomes one entry per decoder it names, for the
same input, with that decoder's outcome and the reference's (the other decoders'
outcomes are kept too: they are what the entry was found with). Its finding is
checked on fresh inputs and generalized (:func:`.finder.finding_of`) when the
decoder is available here (this project's, an installed entry point, or given with
``--decoder``: :func:`utf8fuzz.decoders.trusted`; a corpus never loads one) and
still gives the outcome recorded; otherwise it is explained from the recorded
outcome, not checked (``checked`` 0).

Explained again. A format-2 entry whose finding was made by older explanation
rules (:func:`~utf8fuzz.triage.group.stale`) gets its finding again from the current rules, where
its decoder is available and still gives the recorded outcome (a finding's id
depends on its rule: left stale, a nightly run would call the next evidence of the
same cause new); otherwise it keeps its finding, and a note says why.

Rules: nothing is lost (an entry is removed only once its replacements are
written, under the corpus lock; a replacement never overwrites an entry of the
same signature with a shorter input); running it twice changes nothing the
second time; a format-2 entry is left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine import replay
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.signature import Signature
from utf8fuzz.loop.finder import finding_of
from utf8fuzz.triage.explain import RULES
from utf8fuzz.triage.group import entry_findings, stale


@dataclass
class Migrated:
    """What :func:`migrate` did: entries converted (old id -> new ids), entries
    already current, and notes (one line each, escaped by the caller)."""

    converted: list[tuple[str, list[str]]] = field(default_factory=list)
    #: (entry id, the finding's rule before, after) for each entry explained again
    reexplained: list[tuple[str, str, str]] = field(default_factory=list)
    current: int = 0
    notes: list[str] = field(default_factory=list)


def _finding(entry: corpus_mod.Entry, sig: Signature, recorded: dict[str, Any],
             extra: Sequence[Decoder] = ()) -> tuple[dict[str, Any], str | None]:
    """The finding of ``sig``'s one decoder; and a note when it could not be checked."""
    name = sig.decoders[0]
    unchecked = next(f for f in entry_findings(entry) if f["decoder"] == name)
    unchecked.pop("decoder")
    out = recorded.get(name)
    if out is None or not out.ok:
        return unchecked, None  # a crash or hang is its own explanation: not run again
    d, rec, _ = replay._decoder(entry, name, extra)
    if isinstance(d, str) or rec is None:
        return unchecked, f"{name}: not available here ({d}); finding not checked"
    now = Differ([d]).run(entry.data, full=True).outcomes.get(name)
    if now is None or replay._differs(out, now) is not None:
        return unchecked, f"{name}: no longer gives the recorded outcome; finding not checked"
    return finding_of(entry.data, sig, now, d), None


def migrate(corpus: Path, *, dry_run: bool = False, extra: Sequence[Decoder] = ()) -> Migrated:
    """Convert every entry of ``corpus`` older than the current format (see the
    module docstring); ``dry_run``: say what would change, write nothing. The
    decoders run are the caller's (``extra``: ``--decoder``) and those
    :func:`utf8fuzz.decoders.trusted` finds by name, never one the corpus names only
    (its finding is then not checked)."""
    entries, _ = corpus_mod.load(corpus)
    done = Migrated()
    for e in entries:
        side = e.sidecar
        if side.get("format", 1) >= corpus_mod.FORMAT and isinstance(side.get("finding"), dict):
            if not stale(e):
                done.current += 1
                continue
            sig = Signature.parse(str(side["signature"]))
            recorded = corpus_mod.outcomes_of(side, len(e.data))
            out = recorded.get(sig.decoders[0])
            if out is None or not out.ok:  # a failure explains itself under any rules
                finding, note = {**side["finding"], "rules": RULES}, None
            else:
                finding, note = _finding(e, sig, recorded, extra)
            if note:
                done.notes.append(f"{e.id}: {note}; it keeps its finding")
                continue
            if not dry_run:
                corpus_mod.replace_entry(corpus, e, [{**side, "finding": finding}])
            done.reexplained.append((e.id, str(side["finding"]["rule"]), finding["rule"]))
            continue
        old = Signature.parse(str(side["signature"]))
        recorded = corpus_mod.outcomes_of(side, len(e.data))
        new: list[dict[str, Any]] = []
        for name in old.decoders:
            if name not in side["outcomes"]:
                done.notes.append(f"{e.id}: {name} has no recorded outcome; left out")
                continue
            sig = Signature(old.profile, old.klass, old.feature, (name,))
            finding, note = _finding(e, sig, recorded, extra)
            if note:
                done.notes.append(f"{e.id}: {note}")
            new.append({**side, "format": corpus_mod.FORMAT, "signature": str(sig),
                        "decoders": [name], "finding": finding})
        if not new:
            continue
        ids = [Signature.parse(s["signature"]).id for s in new]
        if not dry_run:
            corpus_mod.replace_entry(corpus, e, new)
        done.converted.append((e.id, ids))
    return done


__all__ = ["Migrated", "migrate"]
