"""Replacement-policy fingerprints: which policy explains a decoder's U+FFFD.

For every decoder that shows its error spans or its replacement output (``spans``,
``replace``; ``tokens`` implies both), its view is judged, place by place, against
the reference of its claimed profile under every policy in ``utf8fuzz.POLICIES``
(:mod:`utf8fuzz.triage.policy_tally`: where the policies' cuts differ, which of
them the decoder's view matches, and at which spec feature each other one
fails).

Where the counts come from. The fuzz loop counts every input it compares in full
into ``<corpus>/fingerprints.json`` (the *tally*, accumulated across runs); that is
the source for each decoder it has counts for. The corpus entries alone are the
fallback (a corpus no run has tallied, a decoder no run has seen): every entry is
a divergent input, so a decoder that departs from a policy at one feature is
explained by it on few of them. An unusable tally file is named in the report
(:attr:`Fingerprints.note`) and the entries are used instead.

The description (:meth:`Fingerprint.summary`) says exactly what was counted:

* ``per-byte 812/812``: the policies that explain every discriminating input
  (one on which the policies themselves cut differently);
* ``maximal-subpart except at surrogate (there: per-sequence 40/40)``: the policy
  that fails at the fewest features (of those, the one that explains most
  inputs), the features where it fails (at most :data:`EXCEPTIONS`), and there
  the policy that cuts those bytes as the decoder does on most of those inputs;
* ``no single policy: ...``: each policy with the features where it fails;
* ``undetermined``: no discriminating input, so nothing tells the policies apart.

Inputs on which the decoder's view differs from every policy even where the
policies agree (``outside``) are counted and said; they are not a policy's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.report.load import Corpus, Entry
from utf8fuzz.triage import policy_tally as pt

#: Features a description names as a policy's exceptions; more is "no single policy".
EXCEPTIONS = 3


@dataclass
class Fingerprint:
    decoder: str
    profile: str
    claimed_policy: str
    views: tuple[str, ...]
    inputs: int = 0
    discriminating: int = 0
    explained: dict[str, int] = field(default_factory=lambda: dict.fromkeys(POLICIES, 0))
    #: (signature id, input) for corpus entries; ("", input) for the tally's examples
    unexplained: list[tuple[str, bytes]] = field(default_factory=list)
    #: "tally" (the fuzz loop's counts) or "corpus" (the corpus entries)
    source: str = "corpus"
    outside: int = 0
    #: feature -> {"inputs": n, "explained": {policy: n}}
    features: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: policy -> feature where it fails -> {"inputs": n, "there": {policy: n}}
    fails: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    @property
    def policies(self) -> tuple[str, ...]:
        """The policies that explain every discriminating input, in POLICIES order
        (all of them when none discriminates)."""
        if not self.inputs or self.outside:
            return ()
        return tuple(p for p in POLICIES if self.explained.get(p, 0) == self.discriminating)

    def summary(self) -> str:
        """The description (module docstring)."""
        if not self.inputs:
            return "no input with a comparable outcome"
        d = self.discriminating
        if not d:
            text = "undetermined (no input tells the policies apart)"
            return text + self._outside()
        full = [p for p in POLICIES if self.explained.get(p, 0) == d]
        if full:
            return " or ".join(f"{p} {d}/{d}" for p in full) + self._outside()
        # the policy that fails at the fewest features (then: that explains most)
        best = min(POLICIES, key=lambda p: (len(self.fails.get(p, {})),
                                            -self.explained.get(p, 0)))
        where = self.fails.get(best, {})
        if not where or self.explained.get(best, 0) == d:
            return (f"no single policy explains every input: {best} "
                    f"{self.explained.get(best, 0)}/{d}" + self._outside())
        if len(where) <= EXCEPTIONS:
            parts = [f"{g} ({self._there(best, f)})" for g, f in sorted(where.items())]
            return f"{best} except at {', '.join(parts)}" + self._outside()
        each = [f"{p} fails at {', '.join(sorted(self.fails[p]))}"
                for p in POLICIES if self.fails.get(p)]
        return "no single policy: " + "; ".join(each) + self._outside()

    @staticmethod
    def _there(best: str, f: dict[str, Any]) -> str:
        n = f["inputs"]
        there = f.get("there", {})
        q = max((p for p in POLICIES if p != best), key=lambda p: there.get(p, 0),
                default=None)
        if q is None or not there.get(q, 0):
            return f"there: no policy, {n} input{'s' if n != 1 else ''}"
        return f"there: {q} {there[q]}/{n}"

    def _outside(self) -> str:
        if not self.outside:
            return ""
        s = "s" if self.outside != 1 else ""
        return (f"; on {self.outside} input{s} it differs from every policy where the "
                "policies agree")


@dataclass
class Fingerprints:
    """The report's fingerprint section: one per decoder, and why the tally was not
    used if it was not (one line of plain text: renderers escape it)."""

    items: list[Fingerprint]
    note: str | None = None

    @property
    def source(self) -> str:
        kinds = {fp.source for fp in self.items}
        return "+".join(sorted(kinds)) if kinds else "none"


def _from_tally(key: pt.Key, t: pt.DecoderTally) -> Fingerprint:
    name, profile, claimed, view = key
    unexplained = []
    for x in t.unexplained:
        try:
            unexplained.append(("", bytes.fromhex(x)))
        except ValueError:
            continue
    return Fingerprint(name, profile, claimed, (view,), t.inputs, t.discriminating,
                       {p: t.explained.get(p, 0) for p in POLICIES}, unexplained, "tally",
                       t.outside, t.features, t.fails)


def fingerprints(entries: list[Entry]) -> list[Fingerprint]:
    """The fingerprints of the corpus entries alone (the fallback)."""
    tallies: dict[pt.Key, pt.DecoderTally] = {}
    unexplained: dict[pt.Key, list[tuple[str, bytes]]] = {}
    shows: dict[pt.Key, tuple[str, ...]] = {}
    seen: set[tuple[str, bytes]] = set()  # one input found under several signatures counts once
    for e in entries:
        for name, rec in sorted(e.records.items()):
            out = rec.outcome
            view = pt.view_of(out.shows) if out.ok else None
            if (view is None or name.startswith("ref:") or (name, e.data) in seen
                    or rec.profile not in REGISTRY or rec.policy not in POLICIES):
                continue
            shown = pt.shown_view(out, view)
            if shown is None:
                continue
            seen.add((name, e.data))
            key = (name, rec.profile, rec.policy, view)
            t = tallies.get(key)
            if t is None:
                t = tallies[key] = pt.DecoderTally(POLICIES)
                unexplained[key] = []
                shows[key] = tuple(v for v in ("replace", "spans") if v in out.shows)
            verdict = pt.judge_outcome(e.data, rec.profile, view, shown)
            t.add(verdict)
            if verdict is not None and verdict.unexplained:
                unexplained[key].append((e.sig_id, e.data))
    out_fps = []
    for key in sorted(tallies):
        fp = _from_tally(key, tallies[key])
        fp.source, fp.unexplained = "corpus", unexplained[key]
        fp.views = shows[key] or fp.views
        out_fps.append(fp)
    return out_fps


def policy_fingerprints(corpus: Corpus) -> Fingerprints:
    """Each decoder's fingerprint: from the corpus's tally where it has counts for
    the decoder, else from the corpus entries (module docstring)."""
    note = None
    tally: pt.Tally | None = None
    if corpus.exists:
        try:
            tally = pt.load(corpus.root)
        except pt.TallyError as e:
            note = f"{pt.TALLY_NAME} not used ({e}); fingerprints from the corpus entries"
    items = [_from_tally(k, t) for k, t in sorted(tally.decoders.items()) if t.inputs] \
        if tally is not None else []
    have = {fp.decoder for fp in items}
    items += [fp for fp in fingerprints(corpus.entries) if fp.decoder not in have]
    items.sort(key=lambda fp: (fp.decoder, fp.profile, fp.claimed_policy, fp.views))
    return Fingerprints(items, note)
