"""Findings: one per root cause, a decoder family (:func:`~utf8fuzz.decoders.base.family`)
and the rule that explains its divergences (:mod:`.explain`).

A finding's id is a function of family and rule alone (:func:`finding_id`), so the
same cause found on two machines, in two runs or by two engines has one name, and a
known-differences file or a corpus names it across runs. :func:`group` brings the
divergences of one cause together, whatever the caller keeps as evidence.

A corpus entry records its finding as data (format 2: the sidecar's ``finding``);
:func:`entry_findings` reads it, and explains a format-1 entry (one without) from its
recorded outcomes, unchecked. :func:`stale` says when a recorded finding was made by
older rules than :data:`.explain.RULES`; ``utf8fuzz corpus migrate`` explains it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from utf8fuzz.decoders.base import family
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.signature import SEVERITIES
from utf8fuzz.triage.explain import RULES, Explanation, explain
from utf8fuzz.triage.generalize import render


def finding_id(fam: str, rule: str) -> str:
    """A finding's name: 16 hex digits of SHA-256 over family and rule."""
    return hashlib.sha256(f"{fam}\0{rule}".encode()).hexdigest()[:16]


E = TypeVar("E")


@dataclass
class Finding(Generic[E]):
    """One (decoder family, explanation rule): the decoders that showed it (sorted)
    and its evidence (whatever the caller groups: sidecars, report sections), in
    the order met, each once; ``severity`` is the most serious of its evidence."""

    id: str
    family: str
    rule: str
    text: str
    severity: str
    decoders: list[str] = field(default_factory=list)
    evidence: list[E] = field(default_factory=list)


def group(items: Iterable[tuple[str, Explanation, Hashable, E]]) -> list[Finding[E]]:
    """Findings from ``(decoder name, explanation, evidence key, evidence)``; a key
    met twice adds its evidence once. Sorted by severity, then by how much evidence,
    then id: deterministic."""
    found: dict[str, Finding[E]] = {}
    keys: dict[str, set[Hashable]] = {}
    for name, why, key, evidence in items:
        fam = family(name)
        fid = finding_id(fam, why.rule)
        f = found.get(fid)
        if f is None:
            f = found[fid] = Finding(fid, fam, why.rule, why.text, why.severity)
            keys[fid] = set()
        if SEVERITIES.index(why.severity) < SEVERITIES.index(f.severity):
            f.severity = why.severity
        if name not in f.decoders:
            f.decoders.append(name)
        if key not in keys[fid]:
            keys[fid].add(key)
            f.evidence.append(evidence)
    for f in found.values():
        f.decoders.sort()
    return sorted(found.values(), key=lambda f: (SEVERITIES.index(f.severity),
                                                 -len(f.evidence), f.id))


def entry_findings(entry: corpus_mod.Entry) -> list[dict[str, Any]]:
    """The finding of each decoder an entry's signature names, with a ``decoder``
    key: the one its sidecar records (format 2), or, for a format-1 entry, each
    decoder's explanation from its recorded outcome, not checked on fresh inputs
    (``checked`` 0) and with the input's bytes as its pattern."""
    side = entry.sidecar
    rec = side.get("finding")
    if isinstance(rec, dict) and "id" in rec and "rule" in rec:
        return [{**rec, "decoder": str(side["decoders"][0])}]
    out: list[dict[str, Any]] = []
    outcomes = corpus_mod.outcomes_of(side, len(entry.data))
    for name in side["decoders"]:
        o, r = outcomes.get(name), side["outcomes"].get(name) or {}
        if o is None:
            continue
        why = explain(entry.data, o, str(r.get("profile", side["profile"])),
                      str(r.get("policy", "maximal-subpart")), str(side["class"]),
                      str(side["feature"]))
        fam = family(name)
        out.append({"id": finding_id(fam, why.rule), "family": fam, "rule": why.rule,
                    "explanation": why.text, "severity": why.severity,
                    "pattern": render([[(b, b)] for b in entry.data]), "checked": 0,
                    "rules": RULES, "decoder": name})
    return out


def stale(entry: corpus_mod.Entry) -> bool:
    """Was the entry's finding made by older explanation rules than this utf8fuzz's
    (:data:`.explain.RULES`; a format-2 finding without ``rules`` is of rules 1)?
    ``utf8fuzz corpus migrate`` explains it again."""
    rec = entry.sidecar.get("finding")
    return isinstance(rec, dict) and int(rec.get("rules", 1)) < RULES


def finding_ids(corpus: Path) -> set[str]:
    """The ids of the findings the corpus holds evidence of (bad entries skipped)."""
    entries, _ = corpus_mod.load(corpus)
    return {f["id"] for e in entries for f in entry_findings(e)}
