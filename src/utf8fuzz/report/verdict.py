"""Who is right: each decoder against the reference of the profile it claims,
and the clause of the spec that decides it.

For every recorded decoder, the reference outcome is recomputed
(``utf8fuzz.decode(input, claimed profile, claimed policy)`` - deterministic,
this project's own transcription of the spec) and compared at every view the
decoder shows, most detailed first, by the fuzz loop's own comparator
(:class:`utf8fuzz.engine.classify.Judge`: one comparator for the engine and the
report). The verdict is "follows <profile>" or "does not follow <profile>" with
the first view that differs, the byte offset of the reference token the
difference is blamed on, and what the decoder did there (its class). A view the
decoder cannot show is never a difference.

The clause that decides an entry is :func:`utf8fuzz.triage.clauses.clause_at`'s,
at the offset where the engine says the outcomes first differ.
"""

from __future__ import annotations

from dataclasses import dataclass

import utf8fuzz
from utf8fuzz import safe
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.classify import Judge
from utf8fuzz.outcome import VIEWS, Outcome, ViewUnavailable
from utf8fuzz.report.load import Entry, Record
from utf8fuzz.triage.clauses import Clause, clause_at


@dataclass(frozen=True)
class Verdict:
    decoder: str
    profile: str
    policy: str
    follows: bool
    view: str | None = None  # first differing view
    offset: int | None = None  # byte offset of the first difference
    detail: str = ""  # what differs, already safe text
    compared: tuple[str, ...] = ()
    #: what the decoder did there (:data:`utf8fuzz.engine.signature.CLASSES`), "" when
    #: it follows or failed
    klass: str = ""

    def sentence(self) -> str:
        claim = f"{self.profile} ({self.policy})"
        if self.follows:
            views = ", ".join(self.compared) or "no view"
            return f"follows {claim} at every view it shows ({views})"
        if self.view in ("crash", "timeout"):
            return f"does not follow {claim}: it failed ({self.detail})"
        if self.view == "bad-outcome":
            return (f"does not follow {claim}: what it answered is not an outcome of this "
                    f"input ({self.detail})")
        where = f" at byte {self.offset}" if self.offset is not None else ""
        what = f" ({self.klass.replace('-', ' ')})" if self.klass else ""
        return f"does not follow {claim}: {self.view} differs{where}{what}; {self.detail}"


# -- the reference ------------------------------------------------------------------


def reference_outcome(data: bytes, profile: str, policy: str) -> Outcome:
    return utf8fuzz.decode(data, profile, policy)


def judge(rec: Record, data: bytes) -> tuple[Verdict, Outcome]:
    """The verdict on one recorded decoder, and the reference it was judged by.

    The first difference is :class:`utf8fuzz.engine.classify.Judge`'s, the fuzz
    loop's own comparator: the views the decoder shows, most detailed first; its
    offset is where the reference token it is blamed on (the anchor) begins."""
    ref = reference_outcome(data, rec.profile, rec.policy)
    out = rec.outcome
    if not out.ok:
        return Verdict(rec.name, rec.profile, rec.policy, False, out.status, None,
                       f"{out.status}: {safe.text(out.detail or '', 300)}"), ref
    shown: list[str] = [v for v in VIEWS if v in out.shows and _shows(out, v)]
    judge_ = Judge(data, ref, Reference(rec.profile, rec.policy))
    found = judge_.compare(out, shown)
    if found is None:
        return Verdict(rec.name, rec.profile, rec.policy, True, compared=tuple(shown)), ref
    klass, anchor, view, detail = found
    tok = judge_.walk.token(anchor)
    off = tok.start if tok is not None else len(data)
    return Verdict(rec.name, rec.profile, rec.policy, False, view, off,
                   safe.text(detail, 300), tuple(shown[:shown.index(view) + 1]),
                   klass), ref


def _shows(out: Outcome, view: str) -> bool:
    """Whether ``out`` has ``view``: an escape view can be absent from an outcome
    that says it shows it (a value no string can hold)."""
    try:
        return out.view(view) is not None or view != "escape"
    except ViewUnavailable:
        return False


@dataclass(frozen=True)
class EntryVerdict:
    verdicts: tuple[Verdict, ...]
    clause: Clause
    offset: int


def judge_entry(entry: Entry) -> EntryVerdict:
    verdicts = tuple(judge(rec, entry.data)[0] for _, rec in sorted(entry.records.items()))
    # The deciding offset: where the engine says the outcomes first differ, else the
    # earliest offset where a divergent decoder leaves its profile, else 0.
    off = entry.first_difference.get("offset")
    if (entry.cls in ("crash", "timeout", "bad-outcome")
            or entry.first_difference.get("view") == "status"):
        # A failure has no position of its own; like the engine's feature, the clause
        # is that of the first ill-formed token, else the first non-ASCII character.
        off = _failure_anchor(entry)
    elif not isinstance(off, int) or not 0 <= off <= len(entry.data):
        offs = [v.offset for v in verdicts if not v.follows and v.offset is not None]
        off = min(offs) if offs else 0
    clause = clause_at(entry.data, entry.profile, entry.reference_policy, off)
    return EntryVerdict(verdicts, clause, off)


def _failure_anchor(entry: Entry) -> int:
    toks = utf8fuzz.decode(entry.data, entry.profile, entry.reference_policy).tokens
    for t in toks:
        if t.kind != "char":
            return t.start
    for t in toks:
        if (t.value or 0) >= 0x80:
            return t.start
    return 0


__all__ = [
    "Clause",
    "EntryVerdict",
    "Verdict",
    "clause_at",
    "judge",
    "judge_entry",
    "reference_outcome",
]
