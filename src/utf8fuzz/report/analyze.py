"""Everything a report shows, computed once from the corpus (and the run).

:func:`analyze` returns a :class:`Report`; the renderers (:mod:`.html`,
:mod:`.markdown`) and ``summary.json`` only present it. Everything is sorted,
and nothing depends on the clock or on dict order, so the same corpus gives the
same report; the date is a parameter.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import utf8fuzz
from utf8fuzz import safe
from utf8fuzz.outcome import Outcome
from utf8fuzz.report.findings import Finding, findings, spec_side, title
from utf8fuzz.report.fingerprint import Fingerprint, policy_fingerprints
from utf8fuzz.report.hexview import build_grid
from utf8fuzz.report.load import Corpus, Entry
from utf8fuzz.report.matrix import Matrix, agreement_matrix
from utf8fuzz.report.reproduce import diff_command, pytest_body
from utf8fuzz.report.section import Section
from utf8fuzz.report.trend import Point, read_trend
from utf8fuzz.report.verdict import judge_entry
from utf8fuzz.triage.known import Known

FORMAT = 1


@dataclass
class DecoderInfo:
    name: str
    profile: str
    policy: str
    shows: tuple[str, ...]
    own: bool
    incremental: bool
    versions: list[tuple[str, int]]  # distinct version records (JSON text) and counts
    entries: int


@dataclass
class Report:
    date: str
    corpus: Corpus
    run: dict[str, Any] | None
    #: the signatures that are not known differences (the report's main lists)
    sections: list[Section]
    fingerprints: list[Fingerprint]
    matrix: Matrix
    decoders: list[DecoderInfo]
    environment: list[tuple[str, str, int]]  # key, value, entries
    trend: list[Point] = field(default_factory=list)
    trend_unreadable: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    #: why the corpus's policy tally was not used (plain text), if it was not
    fingerprint_note: str | None = None
    #: the signatures ``known.toml`` accepts, shown apart ("Known differences")
    known_sections: list[Section] = field(default_factory=list)
    #: one per (decoder family, explanation), over every signature (known ones
    #: too), sorted (:mod:`.findings`); a finding is known when all its signatures are
    findings: list[Finding] = field(default_factory=list)


def _run_new(run: dict[str, Any] | None) -> set[str]:
    if not run:
        return set()
    new = run.get("new") or []
    return {str(x.get("signature")) for x in new if isinstance(x, dict)}


def _decoder_infos(entries: list[Entry]) -> tuple[list[DecoderInfo], list[tuple[str, str, int]]]:
    infos: dict[str, DecoderInfo] = {}
    versions: dict[str, Counter[str]] = {}
    env: Counter[tuple[str, str]] = Counter()
    for e in entries:
        for k, v in sorted(e.versions.items()):
            if k not in e.records and not isinstance(v, dict):
                env[(safe.text(k, 80), safe.text(v, 200))] += 1
        for name, rec in e.records.items():
            if name not in infos:
                infos[name] = DecoderInfo(name, rec.profile, rec.policy, rec.shows, rec.own,
                                          rec.incremental, [], 0)
            infos[name].entries += 1
            # Where a decoder's versions are: its outcome record (format 1), else an
            # older sidecar's top-level "versions" by name, else the outcome's provenance.
            v = e.versions.get(name)
            prov = rec.versions or (v if isinstance(v, dict) else rec.outcome.provenance)
            text = json.dumps({safe.text(a, 80): safe.text(b, 300) for a, b in prov.items()},
                              sort_keys=True)
            versions.setdefault(name, Counter())[text] += 1
    for name, info in infos.items():
        info.versions = sorted(versions[name].items())
    return ([infos[k] for k in sorted(infos)],
            sorted((k, v, n) for (k, v), n in env.items()))


def _section(e: Entry, new: set[str], known: Known) -> Section:
    ev = judge_entry(e)
    ref = utf8fuzz.decode(e.data, e.profile, e.reference_policy)
    refs: dict[str, Outcome] = {}
    for name, rec in e.records.items():
        refs[name] = utf8fuzz.decode(e.data, rec.profile, rec.policy)
    grid = build_grid(e, ref, refs, ev.offset)
    return Section(e, ev, grid, diff_command(e), pytest_body(e, ev.clause.ref),
                   e.signature in new,
                   known.match(e.signature, (e.extra.get("finding") or {}).get("rule")))


def analyze(corpus: Corpus, date: str, run: dict[str, Any] | None = None,
            out_dir: Path | None = None, known: Known | None = None) -> Report:
    """The report of ``corpus``; signatures ``known`` (the corpus's ``known.toml``)
    accepts go to ``known_sections``, the rest to ``sections``."""
    new = _run_new(run)
    every = [_section(e, new, known or Known()) for e in corpus.entries]
    sections = [s for s in every if s.known is None]
    decs, env = _decoder_infos(corpus.entries)
    fps = policy_fingerprints(corpus)
    rep = Report(
        date=date, corpus=corpus, run=run, sections=sections,
        fingerprints=fps.items, fingerprint_note=fps.note,
        matrix=agreement_matrix(corpus.entries), decoders=decs, environment=env,
        known_sections=[s for s in every if s.known is not None],
        findings=findings(every),
    )
    rep.summary = summary_of(rep)
    if out_dir is not None:
        rep.trend, rep.trend_unreadable = read_trend(out_dir, rep.summary)
    else:
        rep.trend = [Point(date, len(corpus.entries), rep.summary["divergences_found"])]
    rep.summary["trend"] = [
        {"date": p.date, "corpus": p.corpus, "found": p.found} for p in rep.trend
    ]
    return rep


def _signature_json(sec: Section) -> dict[str, Any]:
    """What summary.json says of every signature, known or not."""
    e = sec.entry
    return {"id": e.sig_id, "signature": safe.text(e.signature, 500), "profile": e.profile,
            "class": safe.text(e.cls), "feature": safe.text(e.feature),
            "input": e.data.hex(), "new": sec.new}


def _counts(d: dict[str, int]) -> dict[str, int]:
    """Counts by policy name, the names escaped (a tally file is data from disk)."""
    return {safe.text(k, 200): v for k, v in sorted(d.items())}


def summary_of(rep: Report) -> dict[str, Any]:
    """The machine-readable summary (``summary.json``). Every string in it is
    printable ASCII from :mod:`.safe`, so ``jq -r`` on it is safe too."""
    entries = rep.corpus.entries
    run = rep.run
    if run:
        found = len(run.get("new") or [])  # the run left known ones out already
        source = "run"
    else:
        found = sum(1 for sec in rep.sections if sec.entry.found_date == rep.date)
        source = "found.at"
    m = rep.matrix
    s: dict[str, Any] = {
        "format": FORMAT,
        "date": rep.date,
        "utf8fuzz": utf8fuzz.__version__,
        "corpus": {
            "path": safe.text(rep.corpus.root),
            "entries": len(entries),
            "unreadable": [
                {"path": safe.text(c.path), "reason": safe.text(c.reason, 300)}
                for c in rep.corpus.corrupt
            ],
        },
        "divergences_found": found,
        # one per (decoder family, explanation), known ones too ("known": true)
        "findings_count": sum(1 for f in rep.findings if not f.known),
        "findings": [
            {
                "id": f.id,
                "title": safe.text(title(f), 500),
                "family": safe.text(f.family, 200),
                "decoders": [safe.text(d, 200) for d in f.decoders],
                "rule": safe.text(f.rule, 300),
                "explanation": safe.text(f.text, 800),
                "severity": f.severity,
                "pattern": safe.text(f.pattern, 500),
                "checked": f.checked,
                "spec": safe.text(spec_side(f), 500),
                "signatures": f.signatures,
                "known": f.known,
                "reasons": [safe.text(r, 1000) for r in f.reasons],
            }
            for f in rep.findings
        ],
        "divergences_found_source": source,
        "run": None if not run else {
            "decoders": [safe.text(d, 200) for d in run.get("decoders") or []],
            "executions": run.get("executions"),
            "execs_per_sec": run.get("execs_per_sec"),
            "new": sorted(safe.text(x, 500) for x in _run_new(run)),
            "known": sorted(safe.text(x.get("signature"), 500) for x in run.get("known") or []
                            if isinstance(x, dict)),
        },
        # over the signatures that are not known, as the overview lists them
        "by_class": dict(sorted(Counter(sec.entry.cls for sec in rep.sections).items())),
        "by_profile": dict(sorted(Counter(sec.entry.profile
                                          for sec in rep.sections).items())),
        "signatures": [
            {
                **_signature_json(sec),
                "clause": safe.text(sec.verdict.clause.ref, 500),
                "offset": sec.verdict.offset,
                "verdicts": {
                    safe.text(v.decoder, 200): {"follows": v.follows,
                                                "verdict": safe.text(v.sentence(), 800)}
                    for v in sec.verdict.verdicts
                },
            }
            for sec in rep.sections
        ],
        "known": [
            {**_signature_json(sec), "reason": safe.text(sec.known, 1000)}
            for sec in rep.known_sections
        ],
        "fingerprints": {
            safe.text(fp.decoder, 200): {
                "profile": safe.text(fp.profile, 200),
                "claimed_policy": safe.text(fp.claimed_policy),
                "views": [safe.text(v) for v in fp.views],
                "source": fp.source,
                "inputs": fp.inputs,
                "discriminating": fp.discriminating,
                "outside": fp.outside,
                "explained": fp.explained,
                "policies": list(fp.policies),
                "summary": safe.text(fp.summary(), 2000),
                "features": {
                    safe.text(k, 200): {"inputs": f["inputs"],
                                        "explained": _counts(f["explained"])}
                    for k, f in sorted(fp.features.items())
                },
                "fails": {
                    safe.text(p, 200): {
                        safe.text(g, 200): {"inputs": f["inputs"],
                                            "there": _counts(f["there"])}
                        for g, f in sorted(where.items())
                    }
                    for p, where in sorted(fp.fails.items())
                },
                "unexplained": [sig for sig, _ in fp.unexplained if sig],
                "unexplained_inputs": [d.hex() for _, d in fp.unexplained],
            }
            for fp in rep.fingerprints
        },
        "fingerprints_note": safe.text(rep.fingerprint_note, 600)
        if rep.fingerprint_note else None,
        "matrix": {
            "decoders": [safe.text(d, 200) for d in m.decoders],
            "disagree": [[m.cell(a, b)[0] for b in m.decoders] for a in m.decoders],
            "compared": [[m.cell(a, b)[1] for b in m.decoders] for a in m.decoders],
        },
        "decoders": {
            safe.text(d.name, 200): {
                "profile": d.profile, "policy": safe.text(d.policy), "shows": list(d.shows),
                "own": d.own, "incremental": d.incremental, "entries": d.entries,
                "versions": [json.loads(v) for v, _ in d.versions],
            }
            for d in rep.decoders
        },
    }
    return s
