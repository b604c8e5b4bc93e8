"""The summary of a ``utf8fuzz fuzz`` run: the ``--json`` object (:mod:`.run`'s
docstring lists its keys), from the engines' :class:`~.state.Progress`."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from utf8fuzz import safe
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.calls import plan as calls_plan
from utf8fuzz.engine.signature import FAILURES
from utf8fuzz.loop.state import Progress
from utf8fuzz.triage.explain import Explanation, explain
from utf8fuzz.triage.group import group
from utf8fuzz.triage.known import Known


def as_saved(x: dict[str, Any]) -> dict[str, Any]:
    """The new signature ``x`` as the corpus holds it now: with the input and finding
    of what another worker saved, if shorter (the minimized input a finding was
    explained on), never the input this worker met before minimizing."""
    path = x.get("path")
    if path:
        try:
            side = corpus_mod.read_sidecar(Path(path))
            if side.get("signature") == x["signature"] and isinstance(side.get("input"), str):
                rec = side.get("finding")
                return {**x, "input": str(side["input"]),
                        **({"finding": rec} if isinstance(rec, dict) else {})}
        except (corpus_mod.CorpusError, OSError, ValueError):
            pass
    return x


def split_known(found: Sequence[dict[str, Any]],
                known: Known | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``found`` (items with a ``signature``) as (not known, known); each known item
    is a copy carrying its ``reason`` (:meth:`Known.match`)."""
    if known is None:
        return list(found), []
    fresh: list[dict[str, Any]] = []
    accepted: list[dict[str, Any]] = []
    for x in found:
        reason = known.match(str(x["signature"]), (x.get("finding") or {}).get("rule"))
        if reason is None:
            fresh.append(x)
        else:
            accepted.append({**x, "reason": reason})
    return fresh, accepted


def findings_of(saved: Sequence[dict[str, Any]],
                before: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The findings (:func:`~utf8fuzz.triage.group.group`: one per decoder family and
    explanation) of the signatures a run saved (items of ``new`` and ``known``),
    each from the finding its sidecar records (:func:`.finder.finding_of`: checked on
    fresh inputs, generalized); for an item without one, explained from its
    sidecar's outcomes. Each has id, family, rule, explanation, pattern (its first
    evidence's), severity, decoders, signatures, ``known`` when every one of its
    signatures is, and ``new`` when its id is not in ``before`` (the findings the
    corpus held evidence of when the run began)."""
    items: list[tuple[str, Explanation, Hashable, dict[str, Any]]] = []
    for x in saved:
        rec = x.get("finding")
        if isinstance(rec, dict) and rec.get("rule"):
            why = Explanation(str(rec["rule"]), str(rec.get("explanation", "")),
                              str(rec.get("severity", "non-conformance")),
                              int(rec.get("checked", 0)))
            items.append((str(x["decoders"][0]), why, x["signature"], x))
            continue
        try:
            side = corpus_mod.read_sidecar(Path(str(x.get("path"))))
            data = bytes.fromhex(str(side["input"]))
            outs = corpus_mod.outcomes_of(side, len(data))
        except (corpus_mod.CorpusError, OSError, ValueError, KeyError, TypeError):
            continue  # gone or replaced meanwhile: its own entry says what it is
        for name in x["decoders"]:
            r, out = side["outcomes"].get(name), outs.get(name)
            if r is None or out is None:
                continue
            why = explain(data, out, str(r.get("profile", side["profile"])),
                          str(r.get("policy", "maximal-subpart")), str(x["class"]),
                          str(x["feature"]))
            items.append((name, why, x["signature"], x))
    return [{"id": f.id, "family": f.family, "rule": safe.text(f.rule, 200),
             "explanation": safe.text(f.text, 500), "severity": f.severity,
             "pattern": safe.text((f.evidence[0].get("finding") or {}).get("pattern", ""), 500),
             "decoders": f.decoders, "signatures": [x["signature"] for x in f.evidence],
             "known": all("reason" in x for x in f.evidence), "new": f.id not in before}
            for f in group(items)]


def summary(decoders: Sequence[Decoder], progress: Progress, corpus: Path | None,
            engines: Sequence[str], extra: dict[str, Any] | None = None,
            known: Known | None = None) -> dict[str, Any]:
    """The run's summary object (``utf8fuzz fuzz --json``). Signatures saved in
    this run are split by ``known`` (the corpus's ``known.toml``): ``new`` holds
    those it does not accept, the only ones that make the run's exit status 1;
    ``known`` the others, each with its ``reason`` (escaped with :mod:`.safe`).
    Both are saved in the corpus alike. ``findings`` groups them (:func:`findings_of`);
    ``new_findings`` lists the ids of those neither known nor in the corpus when the
    run began (``progress.before``): the run's "new" count and exit status."""
    elapsed = max(1e-9, time.monotonic() - progress.started)
    with progress.lock:
        execs = progress.total
        new, unrep = list(progress.new), list(progress.unreproduced)
        divergent = sum(progress.divergent.values())
        # None where no engine counted them (a worker that died before its end)
        nbytes = sum(progress.bytes.values()) if progress.bytes else None
        seen: dict[str, int] = {}
        for per in progress.seen.values():
            for k, v in per.items():
                seen[k] = seen.get(k, 0) + v
        failures, notes, crashes = list(progress.failures), list(progress.notes), \
            progress.crashes
        calls_made = dict(progress.calls)
    new, accepted = split_known([as_saved(x) for x in new], known)
    return {
        "decoders": sorted(d.name for d in decoders),
        "engines": list(engines),
        "executions": execs,
        "execs_per_sec": round(execs / elapsed, 1),
        # the bytes of the inputs the finders compared, and per decoder how many
        # inputs it was compared on (of the names run, so none is the log's own)
        "bytes": nbytes,
        "mb_per_sec": None if nbytes is None else round(nbytes / elapsed / 1e6, 3),
        "inputs_seen": {d.name: seen.get(d.name, 0) for d in sorted(decoders, key=lambda d: d.name)
                        if d.name in seen},
        "seconds": round(elapsed, 1),
        "divergent_inputs": divergent,
        "new": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"],
             "position_dependent": x.get("position_dependent", False)}
            for x in new
        ],
        "known": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"],
             "reason": safe.text(x["reason"], 1000)}
            for x in accepted
        ],
        "unreproduced": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"]}
            for x in unrep
        ],
        "findings": (found := findings_of([*new, *accepted], progress.before)),
        "new_findings": [f["id"] for f in found if f["new"] and not f["known"]],
        # findings that are failures (a crash, a hang, a bad outcome), so the count
        # agrees with the findings beside it; processes_ended: how many of them (or of
        # known ones) ended a fuzzing process, which was recovered
        "crashes": sum(f["rule"].split(":", 1)[0] in FAILURES for f in found),
        "processes_ended": crashes,
        "failures": failures,
        "notes": notes,
        "corpus": str(corpus) if corpus else None,
        # signatures, and entries (another cause's entry shares its signature)
        "corpus_size": len(corpus_mod.signature_ids(corpus)) if corpus else 0,
        "corpus_entries": corpus_mod.entry_count(corpus) if corpus else 0,
        # the checks of the call: which each decoder gets, and how many were made
        "call_checks": {**calls_plan(decoders), "asked": dict(sorted(sum(
            map(Counter, calls_made.values()), Counter()).items()))},
        **(extra or {}),
    }
