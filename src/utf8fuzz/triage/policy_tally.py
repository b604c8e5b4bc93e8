"""Policy tallies: which error-cutting policy each decoder follows, feature by feature.

The corpus holds only inputs on which something diverged, so a decoder that cuts
errors like ``maximal-subpart`` everywhere except at one spec feature is, judged
on the corpus alone, explained by no policy on any entry. The fuzz loop sees far
more inputs; this module keeps count over them, cheaply, and saves the counts in
``<corpus>/fingerprints.json`` (:data:`TALLY_NAME`), where the report reads them
(:mod:`utf8fuzz.report.fingerprint`).

One input (:class:`Cuts`). The references of the decoder's profile under every
policy of :data:`utf8fuzz.policies.POLICIES` walk it. It *discriminates* when their
views differ; its *feature* is the spec feature (:func:`.signature.feature_of`) of
the first token at which the policies' cuts differ, read from the first policy's
tokens. A decoder's view is judged (:class:`Verdict`):

* *matched*: the policies whose view equals the decoder's, whole;
* for each other policy, the *places* where it fails. At the ``spans`` view a
  place is a byte range where the two cuts differ, bounded where both have a
  boundary (the differing spans, merged where they overlap): its feature is that
  of the policy's token there, and *there* are the policies that cut those bytes
  exactly as the decoder does. So a decoder that cuts encoded surrogates whole
  and all else by maximal subparts fails maximal-subpart at ``surrogate`` only,
  and there per-sequence cuts alike, whatever else the input holds. At the
  ``replace`` view alone (a decoder that shows no spans) a run of U+FFFD does not
  say where its errors begin: the place is the policy's token at the first code
  point that differs, and there are the policies that reproduce the whole text;
* *outside*: a place where every policy agrees and the decoder does not (no
  policy explains that); *unexplained*: outside, or no policy reproduces the view
  and each has a place no policy cuts as the decoder does.

A decoder that did not diverge on an input showed its claimed policy's view: its
verdict is that policy's (:meth:`Cuts.judge_policy`), where the other policies'
places are named by the input's feature alone - exact places are worked out for
the views that are not a policy's, which is where a decoder's exceptions are.

What is counted (:class:`DecoderTally`), per decoder, profile, claimed policy and
view: the inputs; the discriminating ones; per policy, the inputs it explains
whole; per feature, the inputs and how many each policy explains; per policy, the
features where it fails, with the inputs and, per other policy, on how many it
cuts every such place alike; a few inputs no policy explains, in hex.

The fuzz loop (:class:`LoopTally`, used by :class:`~.finder.Finder`) observes only
inputs the differ compared in full (one in ``full_every``), within a share of the
loop's time (:data:`.finder.TALLY_SHARE`): screened inputs cost nothing. An input
on which some reference finds no error, or on which every policy cuts alike,
costs a walk per policy and a comparison; equal verdicts are counted together and
folded into counts when saved.

The file (:func:`save`, :func:`load`) accumulates across runs: each save merges
what was counted since the last one into it, under the corpus lock, written whole
to a temporary file and renamed into place (:func:`.corpus.atomic_write`). Counts
are kept per set of policies (a section per ``POLICIES`` tuple), so adding a policy
starts a new section and keeps the old one. A file that is not a tally is never
overwritten: :func:`save` moves it aside with one line on stderr; one from a newer
utf8fuzz is left alone and this run's counts are not saved, with one line.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from utf8fuzz import safe
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.signature import feature_of
from utf8fuzz.outcome import Outcome, ViewUnavailable
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles.table import Profile

if TYPE_CHECKING:
    from utf8fuzz.decoders.base import Decoder
    from utf8fuzz.engine.result import Result

#: The tally's file name in the corpus root.
TALLY_NAME = "fingerprints.json"
FORMAT = "utf8fuzz-policy-tally"
VERSION = 1
#: Largest tally file read (a real one is a few KiB per decoder).
MAX_TALLY_BYTES = 16 << 20
#: Inputs kept per decoder as examples of what no policy explains, and their
#: longest length (bytes).
MAX_EXAMPLES = 5
MAX_EXAMPLE_BYTES = 256
#: The views judged, the most exact first.
VIEWS = ("spans", "replace")

Key = tuple[str, str, str, str]  # decoder, profile, claimed policy, view


class TallyError(ValueError):
    """A tally file that cannot be used; the message says why, in one line."""


# -- one input: the policies' cuts, and a decoder's view judged against them -------


class Verdict(NamedTuple):
    """A decoder's view on one input, judged against every policy (hashable: the
    fuzz loop counts equal verdicts together and folds them in later).

    ``feature``: where the policies' cuts first differ; ``matched``: the policies
    that reproduce the view whole; ``fails``: for each other policy, its places
    (module docstring), each as (feature, the policies that cut those bytes as the
    decoder does); ``outside``: a place where every policy agrees and the decoder
    does not; ``unexplained``: outside, or no policy reproduces the view and each
    has a place no policy cuts as the decoder does."""

    feature: str
    matched: frozenset[str]
    fails: tuple[tuple[str, tuple[tuple[str, frozenset[str]], ...]], ...]
    outside: bool
    unexplained: bool
    #: False: the policies agree at this view (and the decoder does not: outside)
    discriminating: bool = True


#: The verdict of a view that differs from every policy where they all agree.
OUTSIDE_ONLY = Verdict("", frozenset(), (), True, True, False)


def _common_prefix(a: bytes | tuple[Any, ...], b: bytes | tuple[Any, ...]) -> int:
    """The length of the longest common prefix (slices compared in C, halving)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


_RECORD = 32  # bytes per packed token (utf8fuzz.outcome.pack_tokens)


class Cuts:
    """Every policy's walk of one input under one profile (``walks`` in
    :data:`POLICIES` order), and decoder views judged against them."""

    def __init__(self, data: bytes, profile: Profile, walks: Sequence[Any]) -> None:
        self.data, self.profile, self.walks = data, profile, walks
        self._spans: list[frozenset[tuple[int, int]] | None] = [None] * len(walks)
        self._feature: str | None = None

    @property
    def feature(self) -> str:
        """The feature of the first token at which the policies' cuts differ (of the
        first policy's tokens)."""
        if self._feature is None:
            first = self.walks[0].packed
            k = min(_common_prefix(first, w.packed) for w in self.walks[1:])
            tok = self.walks[0].token(min(k // _RECORD, len(first) // _RECORD - 1))
            self._feature = feature_of(self.data, tok, self.profile)
        return self._feature

    def spans(self, i: int) -> frozenset[tuple[int, int]]:
        got = self._spans[i]
        if got is None:
            got = self._spans[i] = frozenset(self.walks[i].view("spans"))
        return got

    def judge_policy(self, view: str, policy: str) -> Verdict | None:
        """The verdict of a view that is ``policy``'s own (a decoder that agreed with
        its reference): which policies reproduce it, and where each other one fails
        named by the input's :attr:`feature` alone - the exact places are worked out
        only for views that are not a policy's (:meth:`judge`), which is where a
        decoder's exceptions are; this keeps the common case cheap."""
        i = POLICIES.index(policy)
        if view == "spans":
            views: list[Any] = [self.spans(j) for j in range(len(self.walks))]
        else:
            views = [w.view("replace") for w in self.walks]
        if all(v == views[0] for v in views[1:]):
            return None
        matched = frozenset(p for p, v in zip(POLICIES, views, strict=True) if v == views[i])
        there = ((self.feature, matched),)
        return Verdict(self.feature, matched,
                       tuple((p, there) for p in POLICIES if p not in matched), False, False)

    def judge(self, view: str, shown: Sequence[Any]) -> Verdict | None:
        """``shown`` (a decoder's ``spans`` or ``replace`` view) against every
        policy; None when the policies agree at that view and so does ``shown``
        (:data:`OUTSIDE_ONLY` when it does not)."""
        if view == "spans":
            return self._judge_spans(frozenset(tuple(x) for x in shown))
        return self._judge_replace(tuple(shown))

    def _judge_spans(self, mine: frozenset[tuple[int, ...]]) -> Verdict | None:
        cuts = [self.spans(i) for i in range(len(self.walks))]
        if all(c == cuts[0] for c in cuts[1:]):
            return None if mine == cuts[0] else OUTSIDE_ONLY
        matched = frozenset(p for p, c in zip(POLICIES, cuts, strict=True) if c == mine)
        fails = []
        outside = False
        lost = 0  # policies with a place no policy cuts as the decoder does
        for i, p in enumerate(POLICIES):
            if p in matched:
                continue
            places = []
            for a, b in _places(mine ^ cuts[i]):
                here = frozenset(sp for sp in mine if a <= sp[0] and sp[1] <= b)
                near = [frozenset(sp for sp in c if sp[0] < b and sp[1] > a) for c in cuts]
                there = frozenset(q for j, q in enumerate(POLICIES) if near[j] == here)
                outside = outside or all(n == near[0] for n in near[1:])
                w = self.walks[i]
                places.append((feature_of(self.data, w.token(w.token_index(a)), self.profile),
                               there))
            lost += any(not t for _, t in places)
            fails.append((p, tuple(places)))
        return Verdict(self.feature, matched, tuple(fails), outside,
                       outside or (not matched and lost == len(fails)))

    def _judge_replace(self, mine: tuple[int, ...]) -> Verdict | None:
        texts = [w.view("replace") for w in self.walks]
        if all(t == texts[0] for t in texts[1:]):
            return None if mine == texts[0] else OUTSIDE_ONLY
        matched = frozenset(p for p, t in zip(POLICIES, texts, strict=True) if t == mine)
        fails = []
        for i, p in enumerate(POLICIES):
            if p in matched:
                continue
            # a run of U+FFFD does not say where its errors begin: the place is the
            # first code point that differs, and there, the policies that
            # reproduce the whole text
            w = self.walks[i]
            k = _common_prefix(texts[i], mine)
            tok = w.token(min(k, len(texts[i]) - 1)) if texts[i] else None
            fails.append((p, ((feature_of(self.data, tok, self.profile), matched),)))
        return Verdict(self.feature, matched, tuple(fails), False, not matched)


def _places(diff: frozenset[tuple[int, ...]]) -> list[tuple[int, int]]:
    """The spans in which two cuts differ, merged where they overlap: each is a
    byte range at whose ends both cuts have a boundary."""
    out: list[tuple[int, int]] = []
    for sp in sorted(diff):
        a, b = sp[0], sp[1]
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def view_of(shows: Iterable[str], compared: Iterable[str] | None = None) -> str | None:
    """The view a decoder is judged at: ``spans`` if it shows them (``tokens``
    implies both), else ``replace``, else None; only views in ``compared``."""
    have = set(shows)
    if "tokens" in have:
        have |= {"spans", "replace"}
    if compared is not None:
        have &= set(compared) | ({"spans", "replace"} if "tokens" in set(compared) else set())
    return next((v for v in VIEWS if v in have), None)


def shown_view(out: Outcome, view: str) -> Sequence[Any] | None:
    """``out``'s ``view``, or None when it cannot show it (a failure, a partial outcome)."""
    if not out.ok:
        return None
    try:
        got = out.view(view)
    except ViewUnavailable:
        return None
    return got if isinstance(got, tuple | list) else None


# -- counts --------------------------------------------------------------------------


def _zero(policies: Sequence[str]) -> dict[str, int]:
    return dict.fromkeys(policies, 0)


@dataclass
class DecoderTally:
    """The counts for one decoder (module docstring); ``policies`` are the
    section's, in order."""

    policies: tuple[str, ...]
    inputs: int = 0
    discriminating: int = 0
    outside: int = 0
    explained: dict[str, int] = field(default_factory=dict)
    #: feature -> {"inputs": n, "explained": {policy: n}}
    features: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: policy -> feature -> {"inputs": n, "there": {policy: n}}
    fails: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    unexplained: list[str] = field(default_factory=list)  # hex

    def __post_init__(self) -> None:
        for p in self.policies:
            self.explained.setdefault(p, 0)

    def add(self, verdict: Verdict | None, n: int = 1) -> None:
        """Count ``n`` inputs with this verdict (None: the policies agreed there)."""
        self.inputs += n
        if verdict is None:
            return
        self.outside += n * verdict.outside
        if not verdict.discriminating:
            return
        self.discriminating += n
        for p in verdict.matched:
            self.explained[p] = self.explained.get(p, 0) + n
        f = self.features.setdefault(verdict.feature,
                                     {"inputs": 0, "explained": _zero(self.policies)})
        f["inputs"] += n
        for p in verdict.matched:
            f["explained"][p] = f["explained"].get(p, 0) + n
        for p, places in verdict.fails:
            where: dict[str, list[frozenset[str]]] = {}
            for g, there in places:
                where.setdefault(g, []).append(there)
            for g, theres in where.items():
                f = self.fails.setdefault(p, {}).setdefault(
                    g, {"inputs": 0, "there": _zero(self.policies)})
                f["inputs"] += n
                for q in frozenset.intersection(*theres):
                    f["there"][q] = f["there"].get(q, 0) + n

    def example(self, data: bytes) -> None:
        """Keep ``data`` as an input no policy explains (a few, short ones)."""
        if (len(self.unexplained) < MAX_EXAMPLES and len(data) <= MAX_EXAMPLE_BYTES
                and data.hex() not in self.unexplained):
            self.unexplained.append(data.hex())

    def merge(self, other: DecoderTally) -> None:
        self.inputs += other.inputs
        self.discriminating += other.discriminating
        self.outside += other.outside
        _add_counts(self.explained, other.explained)
        for feat, f in other.features.items():
            mine = self.features.setdefault(feat, {"inputs": 0, "explained": {}})
            mine["inputs"] += f["inputs"]
            _add_counts(mine["explained"], f["explained"])
        for p, where in other.fails.items():
            for g, f in where.items():
                mine = self.fails.setdefault(p, {}).setdefault(g, {"inputs": 0, "there": {}})
                mine["inputs"] += f["inputs"]
                _add_counts(mine["there"], f["there"])
        for x in other.unexplained:
            if len(self.unexplained) < MAX_EXAMPLES and x not in self.unexplained:
                self.unexplained.append(x)

    def to_json(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "discriminating": self.discriminating,
                "outside": self.outside, "explained": dict(self.explained),
                "features": {k: {"inputs": v["inputs"], "explained": dict(v["explained"])}
                             for k, v in sorted(self.features.items())},
                "fails": {p: {g: {"inputs": f["inputs"], "there": dict(f["there"])}
                              for g, f in sorted(w.items())}
                          for p, w in self.fails.items()},
                "unexplained": list(self.unexplained)}


def _add_counts(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


@dataclass
class Tally:
    """Counts per (decoder, profile, claimed policy, view), for one set of policies."""

    policies: tuple[str, ...] = POLICIES
    decoders: dict[Key, DecoderTally] = field(default_factory=dict)

    def get(self, key: Key) -> DecoderTally:
        t = self.decoders.get(key)
        if t is None:
            t = self.decoders[key] = DecoderTally(self.policies)
        return t

    def merge(self, other: Tally) -> None:
        assert other.policies == self.policies
        for key, t in other.decoders.items():
            self.get(key).merge(t)

    def __bool__(self) -> bool:
        return any(t.inputs for t in self.decoders.values())

    def section_json(self) -> dict[str, Any]:
        return {"policies": list(self.policies),
                "decoders": [{"decoder": k[0], "profile": k[1], "claimed_policy": k[2],
                              "view": k[3], **t.to_json()}
                             for k, t in sorted(self.decoders.items())]}


def judge_outcome(data: bytes, profile: str, view: str, shown: Sequence[Any]) -> Verdict | None:
    """One decoder view on ``data`` judged against every policy's cuts (the report's
    fallback on corpus entries, and tests); None when the policies agree there."""
    table = REGISTRY[profile]
    return Cuts(data, table, [Reference(profile, p).walk(data) for p in POLICIES]).judge(
        view, shown)


class _Watch:
    """Decoders judged together, by profile, with the inputs counted for them on
    which the policies agreed (added to each of them by :meth:`LoopTally.take`)."""

    def __init__(self, decoders: Iterable[Decoder], compared: frozenset[str]) -> None:
        #: profile -> (decoder name, claimed policy, view) for each decoder judged
        self.by_profile: dict[str, list[tuple[str, str, str]]] = {}
        for d in decoders:
            v = view_of(d.shows, compared)
            if (v is None or isinstance(d, Reference) or d.profile not in REGISTRY
                    or d.policy not in POLICIES):
                continue
            self.by_profile.setdefault(d.profile, []).append((d.name, d.policy, v))
        self.plain = dict.fromkeys(self.by_profile, 0)


class LoopTally:
    """The fuzz loop's tally (module docstring): :meth:`observe` each result the
    differ compared in full, :meth:`observe_bulk` each input sampled for the
    decoders judged in bulk (out of process), and :meth:`take` what was counted
    since the last take. ``decoders`` are those the differ compares per input,
    ``bulk`` those it leaves to :meth:`~.differ.Differ.run_out_of_process`.

    Cheap by construction: equal verdicts are counted together (a dict increment
    per decoder and input) and folded into :class:`DecoderTally` counts only by
    :meth:`take`; a decoder that did not diverge shares its claimed policy's
    verdict, made once per input."""

    def __init__(self, decoders: Iterable[Decoder], views: Iterable[str],
                 bulk: Iterable[Decoder] = ()) -> None:
        compared = frozenset(views)
        self.inline = _Watch(decoders, compared)
        self.bulk = _Watch(bulk, compared)
        profiles = {*self.inline.by_profile, *self.bulk.by_profile}
        self._walkers = {prof: [Reference(prof, p).walk for p in POLICIES] for prof in profiles}
        self._tables = {prof: REGISTRY[prof] for prof in profiles}
        self._counts: dict[tuple[Key, Verdict | None], int] = {}
        self._examples: dict[Key, list[bytes]] = {}

    @property
    def watching(self) -> bool:
        """Some decoder is judged (one shows spans or replace at a compared view)."""
        return bool(self.inline.by_profile or self.bulk.by_profile)

    def observe(self, res: Result) -> None:
        """Count ``res`` (a result the differ compared in full) for the decoders it
        compares per input."""
        self._count(self.inline, res.data, res.walks, res)

    def observe_bulk(self, data: bytes, res: Result | None) -> None:
        """Count ``data`` for the decoders judged in bulk; ``res`` is their result
        on it when one of them diverged (:meth:`~.differ.Differ.run_out_of_process`
        returns none otherwise)."""
        self._count(self.bulk, data, res.walks if res is not None else {}, res)

    def _count(self, watch: _Watch, data: bytes, known: Mapping[tuple[str, str], Any],
               res: Result | None) -> None:
        diverged: set[str] | None = None
        counts = self._counts
        for prof, watched in watch.by_profile.items():
            some = next((k for p in POLICIES if (k := known.get((prof, p))) is not None), None)
            if some is not None and not some.view("spans"):
                # well-formed (under any policy: they differ only in cutting errors)
                watch.plain[prof] += 1
                continue
            walks = [w(data) if (k := known.get((prof, p))) is None else k
                     for p, w in zip(POLICIES, self._walkers[prof], strict=True)]
            packed = walks[0].packed
            if all(w.packed == packed for w in walks[1:]):
                watch.plain[prof] += 1  # the policies agree: nothing tells them apart
                continue
            cuts = Cuts(data, self._tables[prof], walks)
            if diverged is None:
                diverged = ({n for s in res.signature_set() for n in s.decoders}
                            if res is not None and res.diverged else set())
            memo: dict[Any, Verdict | None] = {}
            for name, claimed, view in watched:
                if name in diverged:
                    assert res is not None
                    out = res.outcome_of(name)
                    shown = shown_view(out, view) if out is not None else None
                    if shown is None:
                        continue  # a crash: no view to judge
                    mkey: Any = (view, tuple(shown))
                    verdict = memo[mkey] if mkey in memo else memo.setdefault(
                        mkey, cuts.judge(view, shown))
                else:
                    # it agreed with its reference at every view it shows: its
                    # view is the claimed policy's
                    mkey = (view, claimed)
                    verdict = memo[mkey] if mkey in memo else memo.setdefault(
                        mkey, cuts.judge_policy(view, claimed))
                key = (name, prof, claimed, view)
                counts[key, verdict] = counts.get((key, verdict), 0) + 1
                if verdict is not None and verdict.unexplained:  # rare: keep the input
                    kept = self._examples.setdefault(key, [])
                    if len(kept) < MAX_EXAMPLES:
                        kept.append(data)

    def take(self) -> Tally:
        """What was counted since the last take (and forget it)."""
        out = Tally()
        for (key, verdict), n in self._counts.items():
            out.get(key).add(verdict, n)
        for key, kept in self._examples.items():
            for data in kept:
                out.get(key).example(data)
        for watch in (self.inline, self.bulk):
            for prof, n in watch.plain.items():
                if n:
                    for name, claimed, view in watch.by_profile[prof]:
                        out.get((name, prof, claimed, view)).inputs += n
                    watch.plain[prof] = 0
        self._counts, self._examples = {}, {}
        return out


# -- the file --------------------------------------------------------------------------


def tally_path(corpus: Path) -> Path:
    return Path(corpus) / TALLY_NAME


def _count(v: object) -> bool:
    return type(v) is int and v >= 0


def _counts(v: object) -> bool:
    return isinstance(v, dict) and all(_name(k) and _count(x) for k, x in v.items())


def _name(v: object) -> bool:
    return isinstance(v, str) and 0 < len(v) <= corpus_mod.MAX_NAME_CHARS


def _record(r: object, policies: tuple[str, ...]) -> tuple[Key, DecoderTally]:
    if not isinstance(r, dict):
        raise TallyError("a decoder record is not an object")
    for k in ("decoder", "profile", "claimed_policy", "view"):
        if not _name(r.get(k)):
            raise TallyError(f"a decoder record has no valid {k!r}")
    if r["view"] not in VIEWS:
        raise TallyError(f"a decoder record has an unknown view {safe.text(r['view'], 40)}")
    for k in ("inputs", "discriminating", "outside"):
        if not _count(r.get(k)):
            raise TallyError(f"decoder {safe.text(r['decoder'], 80)}: {k!r} is not a count")
    if not _counts(r.get("explained")):
        raise TallyError(f"decoder {safe.text(r['decoder'], 80)}: 'explained' is not counts")
    feats, fails, examples = r.get("features"), r.get("fails"), r.get("unexplained")
    if not isinstance(feats, dict) or not all(
            _name(k) and isinstance(f, dict) and _count(f.get("inputs"))
            and _counts(f.get("explained")) for k, f in feats.items()):
        raise TallyError(f"decoder {safe.text(r['decoder'], 80)}: 'features' is malformed")
    if not isinstance(fails, dict) or not all(
            _name(p) and isinstance(w, dict) and all(
                _name(g) and isinstance(f, dict) and _count(f.get("inputs"))
                and _counts(f.get("there")) for g, f in w.items())
            for p, w in fails.items()):
        raise TallyError(f"decoder {safe.text(r['decoder'], 80)}: 'fails' is malformed")
    if not isinstance(examples, list) or not all(
            isinstance(x, str) and len(x) <= 2 * MAX_EXAMPLE_BYTES and _is_hex(x)
            for x in examples):
        raise TallyError(f"decoder {safe.text(r['decoder'], 80)}: 'unexplained' is malformed")
    t = DecoderTally(policies, r["inputs"], r["discriminating"], r["outside"],
                     dict(r["explained"]),
                     {k: {"inputs": f["inputs"], "explained": dict(f["explained"])}
                      for k, f in feats.items()},
                     {p: {g: {"inputs": f["inputs"], "there": dict(f["there"])}
                          for g, f in w.items()} for p, w in fails.items()},
                     list(examples[:MAX_EXAMPLES]))
    return (r["decoder"], r["profile"], r["claimed_policy"], r["view"]), t


def _is_hex(x: str) -> bool:
    try:
        bytes.fromhex(x)
    except ValueError:
        return False
    return True


def parse(doc: object) -> list[Tally]:
    """The tallies of a file's JSON, one per section; :class:`TallyError` if it is
    not a tally of this version (one line, the reason)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TallyError(f"not a policy tally (no \"format\": \"{FORMAT}\")")
    version = doc.get("version")
    if type(version) is not int:
        raise TallyError("no valid \"version\"")
    if version > VERSION:
        raise TallyError(f"written by a newer utf8fuzz (version {version}; this one reads "
                         f"{VERSION})")
    sections = doc.get("sections")
    if not isinstance(sections, list):
        raise TallyError("\"sections\" is not a list")
    out: list[Tally] = []
    for s in sections:
        if not isinstance(s, dict):
            raise TallyError("a section is not an object")
        pols = s.get("policies")
        if not isinstance(pols, list) or not pols or not all(_name(p) for p in pols) \
                or len(set(pols)) != len(pols):
            raise TallyError("a section has no valid \"policies\"")
        decs = s.get("decoders")
        if not isinstance(decs, list):
            raise TallyError("a section's \"decoders\" is not a list")
        tally = Tally(tuple(pols))
        if any(t.policies == tally.policies for t in out):
            raise TallyError("two sections for the same policies")
        for r in decs:
            key, t = _record(r, tally.policies)
            if key in tally.decoders:
                tally.decoders[key].merge(t)
            else:
                tally.decoders[key] = t
        out.append(tally)
    return out


def read(path: Path) -> list[Tally]:
    """The tallies in ``path``: [] when there is no file; :class:`TallyError`
    (one line) when it cannot be used."""
    if path.is_symlink():
        raise TallyError("a symbolic link, not read")
    if not path.exists():
        return []
    try:
        raw = corpus_mod.read_regular(path, MAX_TALLY_BYTES)
    except corpus_mod.CorpusError as e:
        raise TallyError(str(e)) from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise TallyError(f"not JSON: {safe.text(e, 200)}") from None
    return parse(doc)


def load(corpus: Path, policies: tuple[str, ...] = POLICIES) -> Tally | None:
    """The corpus's tally for ``policies``, None when it has none;
    :class:`TallyError` (one line) when its file cannot be used."""
    for t in read(tally_path(corpus)):
        if t.policies == policies:
            return t
    return None


def document(tallies: Sequence[Tally]) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION,
            "sections": [t.section_json() for t in tallies]}


def save(corpus: Path, delta: Tally, *, warn: Any = None) -> bool:
    """Merge ``delta`` into the corpus's tally file (under the corpus lock, written
    atomically); True when saved. A file that is not a tally is moved aside to
    ``fingerprints.json.unreadable-<n>`` first; one from a newer utf8fuzz is left
    alone and ``delta`` is not saved. Either way one line goes to ``warn``
    (default: stderr)."""
    if not delta:
        return True
    path = tally_path(corpus)

    def say(msg: str) -> None:
        print(f"utf8fuzz: note: {safe.text(path)}: {msg}", file=warn or sys.stderr)

    with corpus_mod.locked(corpus):
        try:
            tallies = read(path)
        except TallyError as e:
            if "newer utf8fuzz" in str(e):
                say(f"{safe.text(e, 300)}; this run's policy tally is not saved")
                return False
            aside = _aside(path)
            try:
                os.replace(path, aside)
            except OSError as e2:
                say(f"unusable ({safe.text(e, 300)}) and could not be moved aside "
                    f"({safe.text(e2.strerror or e2, 100)}); this run's policy tally is not saved")
                return False
            say(f"unusable ({safe.text(e, 300)}): moved to {safe.text(aside.name)}, "
                "a new tally started")
            tallies = []
        for t in tallies:
            if t.policies == delta.policies:
                t.merge(delta)
                break
        else:
            tallies.append(delta)
        corpus_mod.atomic_write(path, (json.dumps(document(tallies), indent=1, sort_keys=True)
                                       + "\n").encode())
    return True


def _aside(path: Path) -> Path:
    for n in range(1, 10_000):
        p = path.with_name(f"{path.name}.unreadable-{n}")
        if not p.exists() and not p.is_symlink():
            return p
    return path.with_name(f"{path.name}.unreadable-{time.time_ns()}")
