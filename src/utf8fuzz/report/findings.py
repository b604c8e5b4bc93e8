"""Findings: the signatures of a report grouped by root cause (issue 16, item 6).

A *finding* is one (decoder family, explanation): for every decoder a signature
names as divergent, the finding its sidecar records (format 2: explained when it
was saved, checked on fresh inputs and generalized into a byte-class pattern), or
for a format-1 sidecar :func:`utf8fuzz.triage.explain.explain` on its recorded
outcome; :func:`~utf8fuzz.decoders.base.family` names its library. All the
signatures that give one family the same explanation rule are that finding's
evidence. So PyICU's ignore mode, which substitutes at every spec feature, is one
finding with many signatures; a crash and a wrong value in one decoder are two.

Computed from the report's sections only (no new decoding of decoders: the
recorded outcomes are what is explained). The order is deterministic: by
severity (:data:`~utf8fuzz.engine.signature.SEVERITIES`, most serious first), then
by number of signatures (most first), then by id.

Strings here are as recorded (decoder names, reasons are data from disk): the
renderers escape them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import utf8fuzz
from utf8fuzz import safe
from utf8fuzz.decoders.base import family
from utf8fuzz.engine.calls import TITLES as CALL_TITLES
from utf8fuzz.engine.signature import SEVERITIES
from utf8fuzz.outcome import VIEWS
from utf8fuzz.report.section import Section
from utf8fuzz.triage import group as triage_group
from utf8fuzz.triage.explain import Explanation, explain
from utf8fuzz.triage.group import group


@dataclass
class Finding(triage_group.Finding[Section]):
    """The engine's finding (:class:`utf8fuzz.triage.group.Finding`) whose evidence
    is report sections, in report order (one per signature); ``known``: every
    signature of it is accepted by ``known.toml`` (``reasons``: theirs, distinct,
    sorted)."""

    known: bool = False
    reasons: list[str] = field(default_factory=list)
    #: its smallest evidence's (:func:`smallest`) byte-class pattern
    #: (:mod:`utf8fuzz.triage.generalize`), and how many fresh inputs its explanation
    #: was checked on there (0: not checked)
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
    (:func:`utf8fuzz.triage.group.group`, as the fuzz run's summary groups)."""
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
        small = smallest(g.evidence)
        rec = _recorded(small) or {}
        out.append(Finding(g.id, g.family, g.rule, g.text, g.severity, g.decoders, g.evidence,
                           known=all(s.known is not None for s in g.evidence),
                           reasons=sorted({s.known for s in g.evidence if s.known is not None}),
                           pattern=pattern_of(small),
                           checked=int(rec.get("checked", 0))))
    return out


def smallest(sections: list[Section]) -> Section:
    """The evidence a finding is shown by: the shortest input (then the lowest id)."""
    return min(sections, key=lambda s: (len(s.entry.data), s.entry.sig_id))


def pattern_of(sec: Section) -> str:
    """The byte-class pattern its sidecar records, else its input in hex."""
    rec = _recorded(sec) or {}
    return str(rec.get("pattern") or sec.entry.data.hex(" ").upper())


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


# -- what a person reads first ------------------------------------------------------

#: How each policy cuts ill-formed bytes into errors (:mod:`utf8fuzz.policies`).
_POLICY_WORDS = {"maximal-subpart": "by maximal subparts", "per-sequence": "per sequence",
                 "per-byte": "per byte", "per-run": "per run of ill-formed bytes"}
#: What sets each profile apart from Unicode's Table 3.1B (see its module).
_PROFILE_WORDS = {
    "unicode": "Table 3.1B",
    "legacy": "accepts overlong forms",
    "rfc2279": "accepts surrogates and values up to U+7FFFFFFF",
    "kuhn": "5- and 6-byte forms up to U+7FFFFFFF",
    "surrogatepass": "accepts encoded surrogates",
    "cesu8": "surrogate pairs, no 4-byte forms",
    "mutf8": "C0 80 for U+0000, surrogate pairs, no 4-byte forms",
    "corrected": "offset forms, reserved FE and FF",
}
#: What a decoder did, by its signature's class (:data:`~utf8fuzz.engine.signature.CLASSES`).
_CLASS_WORDS = {
    "accepts-ill-formed": "accepts {}",
    "rejects-well-formed": "rejects well-formed {}",
    "different-code-point": "decodes {} to other code points",
    "different-error-offset": "reports errors at other offsets in {}",
    "different-replacement": "replaces {} by another number of U+FFFD",
    "different-reason": "gives another reason for {}",
    "incremental-differs": "fed in chunks, differs at {}",
}
#: What a failed outcome did, by its status.
_STATUS_WORDS = {"crash": "crashes", "timeout": "hangs",
                 "bad-outcome": "returns an impossible outcome"}
_FIXED = {
    "checked-when-complete": "checks a sequence only once it has every byte its lead "
                             "announces",
    "ignore-substitutes": "keeps a U+FFFD for each error in its ignore mode",
    "bytes-as-latin1": "passes ill-formed bytes through as Latin-1 (U+0080..U+00FF)",
    "continuations-unchecked": "takes the bytes a lead announces without checking them",
    "continuations-unchecked+latin1": "takes the bytes a lead announces without checking "
                                      "them, and passes other bytes through as Latin-1",
    "truncated-by-structure": "cuts a sequence the end cuts short by its lead byte alone",
    "truncated-for-illegal": "calls an impossible prefix at the end truncated",
    "illegal-for-truncated": "calls a sequence the end cuts short illegal",
    "end-unchecked": "accepts a sequence the end cuts short (its end is not checked)",
    "spans-lead-byte-only": "reports error spans of the lead byte only",
    "profile:latin1": "decodes every byte as the character of its value (Latin-1): no UTF-8",
    "checked-when-complete+continuations-unchecked":
        "takes the bytes a lead announces unchecked and checks the sequence once complete",
    "renders-errors-as:U+FFFD-per-byte": "writes one U+FFFD for each ill-formed byte in its "
                                         "replace text, where its errors are cut as it claims",
    "end-cut-short-as-text": "writes text of its own, and no error, for a sequence the end "
                             "cuts short",
}
#: A box of byte ranges in a rule's name (triage/explain.py: ``accepts:80..BF``,
#: ``rejects:F0_90_80..BF_80..BF``), not a spec feature's name.
_BOX = re.compile(r"[0-9A-F]{2}(?:\.\.[0-9A-F]{2})?(?:_[0-9A-F]{2}(?:\.\.[0-9A-F]{2})?)*")


def feature_words(feature: str) -> str:
    """A spec feature (:data:`~utf8fuzz.engine.signature.FEATURES`) in words, plural."""
    fixed = {"non-shortest-form": "non-shortest forms", "surrogate": "encoded surrogates",
             "above-10ffff": "values above U+10FFFF", "5-byte-form": "5-byte forms",
             "6-byte-form": "6-byte forms", "fe-ff": "FE and FF",
             "noncharacter": "noncharacters", "lone-continuation": "lone continuation bytes",
             "ascii": "ASCII", "replacement-character": "a U+FFFD in the input",
             "empty": "the empty input"}
    if feature in fixed:
        return fixed[feature]
    for head, tail, words in (("truncated-", "-byte-at-end", "{}-byte sequences the end cuts "
                               "short"),
                              ("incomplete-", "-byte-sequence", "incomplete {}-byte sequences"),
                              ("well-formed-", "-byte", "well-formed {}-byte characters")):
        n = feature.removeprefix(head).removesuffix(tail)
        if feature.startswith(head) and feature.endswith(tail) and n.isdigit():
            return words.format(n)
    return feature.replace("-", " ")


#: How a stream carries a sequence a chunk boundary splits (explain's ``stream:``).
_STREAM_WORDS = {
    "each-chunk-as-final": "decodes each chunk as if it were the last",
    "drops-held-bytes": "loses the bytes it should hold for the next chunk",
    "forgets-held-bytes": "loses the bytes it held when the next chunk comes",
}


def title_of(rule: str, pattern: str, profile: str, policy: str) -> str:
    """The one line a maintainer would write for a finding: what the decoder does,
    from its explanation ``rule`` (:func:`utf8fuzz.triage.explain.candidates`) where
    it claims ``profile`` and ``policy``; with the byte ``pattern`` where the rule
    names no behaviour of its own (a failure, or a class at a feature). Plain text
    as recorded (escape to show)."""
    if rule in _FIXED:
        return _FIXED[rule]
    if rule in CALL_TITLES:  # a difference in the call (engine/calls.py): its class
        return CALL_TITLES[rule]
    head, _, rest = rule.partition(":")
    if head == "policy" and rest in _POLICY_WORDS:
        return f"cuts errors {_POLICY_WORDS[rest]} where it claims {policy}"
    if head in ("accepts", "rejects") and _BOX.fullmatch(rest):
        box = rest.replace("_", " ")
        return (f"accepts the sequences {box}, which {profile} rejects" if head == "accepts"
                else f"rejects the well-formed sequences {box}")
    if head == "accepts" and rest.endswith(":as-U+FFFD") and rest.count(":") == 2:
        feature, _, length = rest.removesuffix(":as-U+FFFD").partition(":")
        return (f"takes {length.removesuffix('-byte')}-byte {feature_words(feature)} as one "
                "U+FFFD each, reporting no error")
    if head == "end-unchecked" and rest.removesuffix("-byte").isdigit():
        n = rest.removesuffix("-byte")
        return (f"drops a sequence the end cuts short after {n} byte{'s' * (n != '1')}, "
                "without an error")
    if head == "profile" and "|" in rest.partition("/")[0]:
        both, _, how = rest.partition("/")
        mine, _, other = both.partition("|")
        out = f"accepts what {mine} and the {other} profile accept"
        if other in _PROFILE_WORDS:
            out += f" ({_PROFILE_WORDS[other]})"
        if how == "checked-when-complete":
            out += ", checking a sequence only once complete"
        elif how and how != policy:
            out += f", cutting errors {_POLICY_WORDS.get(how, 'by ' + how)}"
        return out
    if head == "profile" and rest:
        prof, _, how = rest.partition("/")
        how, _, extra = how.partition("+")
        out = f"decodes as the {prof} profile"
        if prof in _PROFILE_WORDS:
            out += f" ({_PROFILE_WORDS[prof]})"
        if how == "checked-when-complete":
            out += ", checking a sequence only once complete"
        elif how and how != policy:
            out += f", cutting errors {_POLICY_WORDS.get(how, 'by ' + how)}"
        if extra == "surrogate-one-error":
            out += "; an encoded surrogate is one error"
        elif extra == "4-byte-one-error":
            out += "; a 4-byte sequence is one error"
        elif extra.startswith("beyond-") and extra.endswith("-one-error"):
            out += f"; a value above U+{extra[7:-10]} is one error"
        return out
    if head == "swallows-next-byte":
        return f"loses the byte after {feature_words(rest) if rest else 'each error'}"
    if head == "accepts" and rest and ":" not in rest:
        return f"accepts {feature_words(rest)} of every length, as the value their bits spell"
    if head == "rejects" and rest and ":" not in rest:
        return f"rejects well-formed {feature_words(rest)} of every length, each as one error"
    if head in ("accepts", "rejects") and rest.count(":") == 1:
        feature, _, length = rest.partition(":")
        n = length.removesuffix("-byte")
        return (f"accepts {n}-byte {feature_words(feature)}, as the value their bits spell"
                if head == "accepts" else
                f"rejects well-formed {n}-byte {feature_words(feature)}, each as one error")
    if head == "renders-errors-as":
        return f"writes {rest.replace('+U+', ' U+')} for each error in its replace text"
    if head == "stream" and rest in _STREAM_WORDS:
        return f"fed in chunks, {_STREAM_WORDS[rest]}"
    if head == "errors-as":
        return f"accepts what {profile} accepts, but cuts errors as the {rest} profile does"
    if head == "split":
        return (f"fed in chunks, differs where a chunk boundary splits a "
                f"{rest.replace('-', ' ')}")
    if head in _STATUS_WORDS:
        return f"{_STATUS_WORDS[head]} ({rest}) on {pattern}"
    klass, _, feature = rule.partition("/")
    if klass in _CLASS_WORDS and feature:
        return f"{_CLASS_WORDS[klass].format(feature_words(feature))}: {pattern}"
    return f"{rule}: {pattern}"


def _claim(f: Finding) -> tuple[str, str]:
    """The profile and policy its first decoder claims, where it was recorded."""
    for sec in f.sections:
        for name in f.decoders:
            rec = sec.entry.records.get(name)
            if rec is not None:
                return rec.profile, rec.policy
    return "", ""


def title(f: Finding) -> str:
    """:func:`title_of` the finding."""
    return title_of(f.rule, f.pattern, *_claim(f))


@dataclass(frozen=True)
class Example:
    """A finding's smallest example (:func:`smallest`): its input, the decoder shown
    and the first view where it differs (for one that failed, the first view it
    claims to show), what the reference of its claim (``profile``, ``policy``) shows
    there (``spec``) and what the decoder did (``did``; how it failed, for one that
    failed). Plain text as recorded."""

    sig_id: str
    data: bytes
    decoder: str
    profile: str
    policy: str
    view: str
    spec: str
    did: str


def example(f: Finding) -> Example | None:
    """The finding's smallest example, None when no decoder of it is shown
    differing there (a verdict that follows: nothing to show)."""
    if not f.sections:
        return None
    sec = smallest(f.sections)
    e = sec.entry
    by = {v.decoder: v for v in sec.verdict.verdicts}
    for name in sorted(f.decoders, key=lambda d: d not in e.decoders):  # its own first
        v = by.get(name)
        rec = e.records.get(name)
        if v is None or v.follows or v.view is None or rec is None:
            continue
        ref = utf8fuzz.decode(e.data, rec.profile, rec.policy)
        if not rec.outcome.ok:  # it failed: what the spec says in the view it claims
            view = next((w for w in VIEWS if w in rec.shows), "replace")
            return Example(e.sig_id, e.data, name, rec.profile, rec.policy, view,
                           describe(view, ref.view(view)), v.detail)
        return Example(e.sig_id, e.data, name, rec.profile, rec.policy, v.view,
                       describe(v.view, ref.view(v.view)),
                       describe(v.view, rec.outcome.view(v.view)))
    return None


def describe(view: str, value: Any, limit: int = 12) -> str:
    """A view's value in words: code points as U+XXXX, spans as [start,end), at most
    ``limit`` items then how many more. A reason is the decoder's own text."""
    if view == "accept":
        return "accepts" if value else "rejects"
    if view == "strict":
        return "valid" if value is None else f"an error at [{value[0]},{value[1]})"
    if view == "reason":
        return "no error" if value is None else f"first error {value}"
    if view == "spans":
        items = [f"an error at [{a},{b})" for a, b in value]
        empty = "no errors"
    elif view == "tokens":
        items = [safe.cp(t.value or 0) if t.kind == "char" else
                 f"{t.kind} [{t.start},{t.end})" + (f" {t.reason}" if t.reason else "")
                 for t in value]
        empty = "nothing"
    else:
        items = [safe.cp(c) for c in value]
        empty = "nothing"
    if not items:
        return empty
    more = f" ... and {len(items) - limit} more" if len(items) > limit else ""
    sep = " " if view not in ("spans", "tokens") else ", "
    return sep.join(items[:limit]) + more


def mode_of(decoder: str) -> str | None:
    """The error mode a decoder name ends in (``cpython:replace``, a plug-in's
    ``...:ignore``), None when it names none."""
    last = decoder.split("@", 1)[0].rsplit(":", 1)[-1]
    return last if last in _MODES else None


_MODES = ("strict", "replace", "ignore", "surrogateescape", "surrogatepass", "spans",
          "validate", "escape", "incremental")


def modes(f: Finding) -> str:
    """Where it shows: ``in the strict, replace and escape modes; the ignore mode
    agrees with the spec``. The modes (else the decoders) of the finding, then those
    of its family recorded on its evidence that follow their profile on every
    evidence input where they ran, then those that differ there otherwise (another
    finding's). Plain text as recorded."""
    agree: dict[str, bool] = {}
    for sec in f.sections:
        for v in sec.verdict.verdicts:
            if v.decoder not in f.decoders and family(v.decoder) == f.family:
                agree[v.decoder] = agree.get(v.decoder, True) and v.follows
    out = "in " + _names(f.decoders, "mode", "modes")
    for ok, one, many in ((True, "agrees with the spec", "agree with the spec"),
                          (False, "differs otherwise", "differ otherwise")):
        them = sorted(d for d, good in agree.items() if good is ok)
        if them:
            out += f"; {_names(them, 'mode', 'modes')} {one if len(them) == 1 else many}"
    return out


def _names(decoders: list[str], one: str, many: str) -> str:
    ms = [m for m in map(mode_of, decoders) if m is not None]
    if len(ms) == len(decoders) and len(set(ms)) == len(ms):
        ms.sort(key=_MODES.index)
        return f"the {_and(ms)} {one if len(ms) == 1 else many}"
    return _and(decoders)


def _and(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + f" and {xs[-1]}"


__all__ = ["Example", "Finding", "counts", "describe", "divergent", "example",
           "feature_words", "findings", "headline", "mode_of", "modes", "pattern_of",
           "smallest", "spec_side", "title", "title_of"]
