"""Replacement-policy fingerprints: which policy explains a decoder's U+FFFD.

For every decoder that shows its replacement output (``replace``; also
``spans``, and ``tokens`` which implies both), each corpus input is decoded by
the reference of the decoder's claimed profile under every policy in
``utf8fuzz.POLICIES``, and the policies whose output equals the decoder's at
every such view are said to *explain* that input. A policy that explains every
input is the decoder's fingerprint. Inputs where the policies all agree (no
errors, or errors all three cut the same) explain nothing about policy, so
the number of *discriminating* inputs is reported too: a fingerprint from zero
discriminating inputs is "undetermined", not a finding. Inputs no policy
explains are listed: the decoder's U+FFFD are placed in a way none of the
traditions produces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import utf8fuzz
from utf8fuzz import POLICIES
from utf8fuzz.outcome import Outcome
from utf8fuzz.report.load import Entry

_VIEWS = ("replace", "spans")


@dataclass
class Fingerprint:
    decoder: str
    profile: str
    claimed_policy: str
    views: tuple[str, ...]
    inputs: int = 0
    discriminating: int = 0
    explained: dict[str, int] = field(default_factory=lambda: {p: 0 for p in POLICIES})
    unexplained: list[tuple[str, bytes]] = field(default_factory=list)  # (sig id, input)

    @property
    def policies(self) -> tuple[str, ...]:
        """The policies that explain every input, in POLICIES order."""
        if not self.inputs:
            return ()
        return tuple(p for p in POLICIES if self.explained[p] == self.inputs)

    def summary(self) -> str:
        if not self.inputs:
            return "no input with a comparable outcome"
        pol = self.policies
        if not pol:
            return "no single policy explains every input"
        if not self.discriminating:
            return "undetermined (no input in the corpus tells the policies apart)"
        return " or ".join(pol)


def _shown(out: Outcome) -> tuple[str, ...]:
    return tuple(v for v in _VIEWS if v in out.shows)


def fingerprints(entries: list[Entry]) -> list[Fingerprint]:
    fps: dict[str, Fingerprint] = {}
    seen: set[tuple[str, bytes]] = set()  # one input found under several signatures counts once
    for e in entries:
        for name, rec in sorted(e.records.items()):
            out = rec.outcome
            views = _shown(out) if out.ok else ()
            if not views or name.startswith("ref:") or (name, e.data) in seen:
                continue
            seen.add((name, e.data))
            fp = fps.get(name)
            if fp is None:
                fp = fps[name] = Fingerprint(name, rec.profile, rec.policy, views)
            elif fp.views != views:
                fp.views = tuple(v for v in _VIEWS if v in set(fp.views) | set(views))
            fp.inputs += 1
            refs = {p: utf8fuzz.decode(e.data, rec.profile, p) for p in POLICIES}
            got = {v: out.view(v) for v in views}
            keys = {p: tuple(r.view(v) for v in views) for p, r in refs.items()}
            if len(set(keys.values())) > 1:
                fp.discriminating += 1
            hit = False
            for p in POLICIES:
                if all(refs[p].view(v) == got[v] for v in views):
                    fp.explained[p] += 1
                    hit = True
            if not hit:
                fp.unexplained.append((e.sig_id, e.data))
    return [fps[k] for k in sorted(fps)]
