"""Explanations: the simplest rule, in the spec's words, that reproduces what a
decoder did on an input where it diverged from its reference; and findings, one
per decoder family and explanation.

A signature names *where* a decoder first differed (class and spec feature); one
root cause shows at many features (a decoder that cuts errors per byte differs at
every ill-formed sequence longer than a byte). An explanation names the cause.
The rules, tried in this order, the first that reproduces every view the decoder
showed deciding:

1. a failure explains itself: the kind of crash (``SIGSEGV``, ``IndexError``), or a
   hang;
2. another reference: the decoder did exactly what the claimed profile under
   another policy does (``policy:per-byte``: a policy difference, not a bug), or
   what another profile does (``profile:rfc2279/maximal-subpart``: it decodes
   RFC 2279's forms);
3. a view transformation: its ignore view keeps one U+FFFD per error
   (``ignore-substitutes``); its text shows each ill-formed byte as U+0080..U+00FF
   (``bytes-as-latin1``);
4. a reason or span rule: it calls an impossible prefix at the end truncated, or a
   truncation illegal; its error spans cover the lead byte only;
5. otherwise the signature's own class and feature (``accepts-ill-formed/surrogate``).

What is not done here: checking an explanation on fresh inputs, and generalizing
an input into a byte-class pattern (issue 16, items 1 and 2).

A *finding* is one (decoder family, explanation): :func:`family` maps the adapters
of one library to one name (iconv's four targets, ICU system and bundled), and
:func:`finding_id` names the pair deterministically. Different bugs in one decoder
have different explanations, so never share a finding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from utf8fuzz.decoders.reference import Reference
from utf8fuzz.outcome import Outcome, ViewUnavailable
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import REGISTRY

#: Severities, most serious first (issue 16, item 4).
SEVERITIES: tuple[str, ...] = ("non-conformance", "reporting", "policy")
_REPORTING_CLASSES = frozenset({"different-error-offset", "different-reason",
                                "different-replacement"})


@dataclass(frozen=True)
class Explanation:
    """``rule``: a stable key (part of the finding's id); ``text``: the rule as a
    sentence; ``severity``: one of :data:`SEVERITIES`."""

    rule: str
    text: str
    severity: str


def family(decoder: str) -> str:
    """The library behind a decoder name: the part before the first ``:``, except
    for a user's decoders, each its own family without its mode (a plug-in's
    ``plugin:m:f[:mode][@claim]``, an ``exec:NAME:mode[@claim]`` program)."""
    head, _, rest = decoder.partition(":")
    if head in ("plugin", "exec"):
        name = rest.split("@", 1)[0]
        for mode in (":strict", ":replace", ":ignore", ":surrogateescape", ":validate"):
            name = name.removesuffix(mode)
        return f"{head}:{name}"
    return head


def finding_id(fam: str, rule: str) -> str:
    """A finding's name: 16 hex digits of SHA-256 over family and rule."""
    return hashlib.sha256(f"{fam}\0{rule}".encode()).hexdigest()[:16]


_refs: dict[tuple[str, str], Reference] = {}


def _ref(profile: str, policy: str) -> Reference:
    r = _refs.get((profile, policy))
    if r is None:
        r = _refs[profile, policy] = Reference(profile, policy)
    return r


def _shown(out: Outcome) -> tuple[str, ...]:
    # tokens imply every other view: compare them alone when the decoder has them
    if "tokens" in out.shows:
        return ("tokens",)
    return tuple(v for v in sorted(out.shows) if v != "escape" or out.data is not None)


def _same(out: Outcome, ref: Outcome, views: tuple[str, ...]) -> bool:
    try:
        return bool(views) and all(out.view(v) == ref.view(v) for v in views)
    except ViewUnavailable:
        return False


def explain(data: bytes, out: Outcome, profile: str, policy: str, klass: str,
            feature: str) -> Explanation:
    """The explanation of a decoder's outcome ``out`` on ``data``, where it claims
    ``profile`` and ``policy`` and its divergence was classed ``klass`` at
    ``feature`` (see the module docstring for the rules)."""
    if not out.ok:
        what = "hangs" if out.status == "timeout" else f"crashes ({feature})"
        return Explanation(f"{out.status}:{feature}", f"it {what}", "non-conformance")
    views = _shown(out)
    # 2. another reference
    for pol in POLICIES:
        if pol != policy and _same(out, _ref(profile, pol).decode(data), views):
            return Explanation(
                f"policy:{pol}",
                f"it cuts ill-formed bytes into errors by the {pol} policy, where it "
                f"claims {policy}: a policy difference, not a conformance bug", "policy")
    for prof in REGISTRY:
        if prof == profile:
            continue
        for pol in (policy, *[p for p in POLICIES if p != policy]):
            if _same(out, _ref(prof, pol).decode(data), views):
                spec = REGISTRY[prof].spec
                return Explanation(
                    f"profile:{prof}/{pol}",
                    f"it decodes these bytes as the {prof} profile does ({spec}), where "
                    f"it claims {profile}", _severity(klass))
    ref = _ref(profile, policy).decode(data)
    # 3. view transformations
    if "ignore" in views and out.view("ignore") == ref.view("replace") != ref.view("ignore"):
        return Explanation("ignore-substitutes",
                           "its ignore view keeps one U+FFFD for each error instead of "
                           "dropping it: it substitutes", "reporting")
    as_latin1 = _errors_as_bytes(data, ref)
    for v in ("replace", "ignore"):
        if v in views and out.view(v) == as_latin1 != ref.view(v):
            return Explanation("bytes-as-latin1",
                               "it passes each ill-formed byte through as the code point "
                               "of the same number (U+0080..U+00FF), as Latin-1 would",
                               "non-conformance")
    # 4. reason and span rules
    if klass == "different-reason" and "reason" in views:
        mine, theirs = ref.view("reason"), out.view("reason")
        if mine == "illegal" and theirs == "truncated":
            return Explanation("truncated-for-illegal",
                               "it calls truncated an error that no byte could complete "
                               "(an impossible prefix cut off by the end of the input)",
                               "reporting")
        if mine == "truncated" and theirs == "illegal":
            return Explanation("illegal-for-truncated",
                               "it calls illegal a well-formed prefix that only the end of "
                               "the input cut short", "reporting")
    if "spans" in views:
        spans, ref_spans = out.view("spans"), ref.view("spans")
        if (len(spans) == len(ref_spans) and spans != ref_spans
                and all(s == (a, a + 1) for s, (a, _) in zip(spans, ref_spans, strict=True))):
            return Explanation("spans-lead-byte-only",
                               "its error spans cover only the first byte of each error",
                               "reporting")
    # 5. the signature's own words
    return Explanation(f"{klass}/{feature}", f"{klass.replace('-', ' ')} at {feature}",
                       _severity(klass))


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


def _severity(klass: str) -> str:
    return "reporting" if klass in _REPORTING_CLASSES else "non-conformance"


def _errors_as_bytes(data: bytes, ref: Outcome) -> tuple[int, ...]:
    """The reference's output with each byte of each error as U+00XX."""
    out: list[int] = []
    for t in ref.tokens:
        if t.kind == "char" and t.value is not None:
            out.append(t.value)
        else:
            out.extend(data[t.start:t.end])
    return tuple(out)


__all__ = ["SEVERITIES", "Explanation", "Finding", "explain", "family", "finding_id", "group"]
