"""Findings: the signatures of a report grouped by root cause (issue 16, item 6).

A *finding* is one (decoder family, explanation): for every decoder a signature
names as divergent, the finding its sidecar records (format 2: explained when it
was saved, checked on fresh inputs and generalized into a byte-class pattern), or
for a format-1 sidecar :func:`utf8fuzz.engine.explain.explain` on its recorded
outcome; :func:`~utf8fuzz.engine.explain.family` names its library. All the
signatures that give one family the same explanation rule are that finding's
evidence. So PyICU's ignore mode, which substitutes at every spec feature, is one
finding with many signatures; a crash and a wrong value in one decoder are two.

Computed from the report's sections only (no new decoding of decoders: the
recorded outcomes are what is explained). The order is deterministic: by
severity (:data:`~utf8fuzz.engine.explain.SEVERITIES`, most serious first), then
by number of signatures (most first), then by id.

Strings here are as recorded (decoder names, reasons are data from disk): the
renderers escape them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from utf8fuzz.engine import explain as engine_explain
from utf8fuzz.engine.explain import SEVERITIES, Explanation, explain, group

if TYPE_CHECKING:  # analyze imports this module
    from utf8fuzz.report.analyze import Section


@dataclass
class Finding(engine_explain.Finding["Section"]):
    """The engine's finding (:class:`utf8fuzz.engine.explain.Finding`) whose evidence
    is report sections, in report order (one per signature); ``known``: every
    signature of it is accepted by ``known.toml`` (``reasons``: theirs, distinct,
    sorted)."""

    known: bool = False
    reasons: list[str] = field(default_factory=list)
    #: its first evidence's byte-class pattern (:mod:`utf8fuzz.engine.generalize`),
    #: and how many fresh inputs its explanation was checked on (0: not checked)
    pattern: str = ""
    checked: int = 0

    @property
    def sections(self) -> list[Section]:
        return self.evidence

    @property
    def signatures(self) -> list[str]:
        """The evidence signatures' ids."""
        return [s.entry.sig_id for s in self.sections]


def divergent(sec: Section) -> list[str]:
    """The decoders of a signature that diverge: those the signature names (and
    recorded); if it names none that were recorded, those whose verdict is that
    they do not follow their profile."""
    e = sec.entry
    named = [d for d in e.decoders if d in e.records]
    if named:
        return sorted(set(named))
    return sorted({v.decoder for v in sec.verdict.verdicts
                   if not v.follows and v.decoder in e.records})


def _rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def findings(sections: Iterable[Section]) -> list[Finding]:
    """The findings of ``sections`` (the report's, known ones included), sorted
    (:func:`utf8fuzz.engine.explain.group`, as the fuzz run's summary groups)."""
    def explained(sec: Section, name: str) -> Explanation:
        e, rec = sec.entry, sec.entry.records[name]  # divergent() names recorded ones
        got = _recorded(sec)
        if got is not None and len(e.decoders) == 1:
            return Explanation(str(got["rule"]), str(got.get("explanation", "")),
                               str(got.get("severity", "non-conformance")),
                               int(got.get("checked", 0)))
        return explain(e.data, rec.outcome, rec.profile, rec.policy, e.cls, e.feature)

    grouped = group((name, explained(sec, name), sec.entry.sig_id, sec)
                    for sec in sections for name in divergent(sec))
    out = []
    for g in grouped:
        first = _recorded(g.evidence[0]) or {}
        out.append(Finding(g.id, g.family, g.rule, g.text, g.severity, g.decoders, g.evidence,
                           known=all(s.known is not None for s in g.evidence),
                           reasons=sorted({s.known for s in g.evidence if s.known is not None}),
                           pattern=str(first.get("pattern")
                                       or g.evidence[0].entry.data.hex(" ").upper()),
                           checked=int(first.get("checked", 0))))
    return out


def _recorded(sec: Section) -> dict[str, Any] | None:
    """The finding a format-2 sidecar records (validated when loaded)."""
    got = sec.entry.extra.get("finding")
    return got if isinstance(got, dict) and isinstance(got.get("rule"), str) else None


def counts(fs: Iterable[Finding]) -> dict[str, int]:
    """Findings per severity, in :data:`SEVERITIES` order, zeros left out."""
    n: dict[str, int] = {}
    for f in fs:
        n[f.severity] = n.get(f.severity, 0) + 1
    return {s: n[s] for s in [*SEVERITIES, *sorted(set(n) - set(SEVERITIES))] if s in n}


def headline(fs: list[Finding]) -> str:
    """``N findings (k non-conformance, ...) in D decoder families, from S
    signatures`` (plain text: severities and numbers only)."""
    by = ", ".join(f"{k} {s}" for s, k in counts(fs).items())
    fams = len({f.family for f in fs})
    sigs = len({sid for f in fs for sid in f.signatures})
    return (f"{len(fs)} finding{'s' if len(fs) != 1 else ''}" + (f" ({by})" if by else "")
            + f" in {fams} decoder famil{'ies' if fams != 1 else 'y'}, from {sigs} "
            f"signature{'s' if sigs != 1 else ''}")


def spec_side(f: Finding) -> str:
    """Which side the spec takes: its first evidence signature's clause (as
    recorded there; escape to show)."""
    return f.sections[0].verdict.clause.ref if f.sections else ""


__all__ = ["Finding", "counts", "divergent", "findings", "headline", "spec_side"]
