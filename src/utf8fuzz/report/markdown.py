"""``report.md``: the same report as the HTML one, for terminals, diffs and
issue trackers. Alignment grids are fixed-width text in code blocks; every
other string goes through :func:`safe.md` (or :func:`safe.code` inside code
blocks), so nothing in the input can open a link, image, table cell or HTML.
"""

from __future__ import annotations

from typing import Any

from utf8fuzz import safe
from utf8fuzz.report.analyze import Report
from utf8fuzz.report.facts import (
    MD_EVIDENCE,
    Code,
    CodePoints,
    Fact,
    Hex,
    Part,
    Text,
    entry_facts,
    evidence,
    finding_facts,
)
from utf8fuzz.report.findings import Finding, headline, title
from utf8fuzz.report.hexview import text_layout
from utf8fuzz.report.reproduce import WARNING, recorded_code
from utf8fuzz.report.section import Section

GRID_WIDTH = 16


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def part_md(p: Part) -> str:
    """One part of a fact (:mod:`.facts`), escaped for Markdown (no anchors here:
    a link is shown as its label)."""
    if isinstance(p, Text):
        return safe.md(p.value)
    if isinstance(p, Code):
        return safe.md_code(p.value)
    if isinstance(p, Hex):
        return safe.md_code(safe.hexbytes(p.value))
    if isinstance(p, CodePoints):
        return safe.md_code(safe.cps(p.value))
    return safe.md_code(p.label)


def facts_md(facts: list[Fact]) -> list[str]:
    return ["- " + (f"{safe.md(f.label)} " if f.label else "")
            + "".join(part_md(p) for p in f.parts) for f in facts]


def _section(i: int | str, sec: Section) -> list[str]:
    ev = sec.verdict
    out = [f"### {i}. {safe.md(sec.entry.signature)}" + (" (new in this run)" if sec.new else ""),
           "", *facts_md(entry_facts(sec))]
    out += ["", f"**Clause:** {safe.md(ev.clause.ref)}.", "", safe.md(ev.clause.explanation), ""]
    wrong = [v for v in ev.verdicts if not v.follows]
    right = [v for v in ev.verdicts if v.follows]
    if wrong:
        out += _table(["decoder", "verdict"],
                      [[safe.md_code(v.decoder), safe.md(v.sentence())] for v in wrong])
    else:
        out.append("Every recorded decoder follows the profile it claims.")
    if right:
        out += ["", "Follow the profile they claim: "
                + ", ".join(f"{safe.md_code(v.decoder)} ({safe.md(v.profile)})" for v in right)]
    out += ["", "```text", safe.code(text_layout(sec.grid, GRID_WIDTH)), "```", ""]
    caution = f" ({WARNING})" if recorded_code(sec.entry) else ""
    out += [f"Reproduce{caution}:", "", "```sh", safe.code(sec.command), "```", "",
            "```python", safe.code(sec.test), "```", ""]
    return out


def render(rep: Report) -> str:
    s = rep.summary
    corpus = rep.corpus
    out = [f"# utf8fuzz triage report, {safe.md(rep.date)}", ""]
    out.append(f"Corpus {safe.md_code(corpus.root)}: {len(corpus.entries)} entries"
               + (f", {len(corpus.corrupt)} unreadable" if corpus.corrupt else "") + ".")
    if rep.run:
        r = s["run"]
        out.append(f"Run: {r['executions']} executions at {r['execs_per_sec']} per second, "
                   f"{len(r['new'])} new signatures"
                   + (f", {len(r['known'])} known" if r.get("known") else "") + ", decoders: "
                   + ", ".join(safe.md_code(d) for d in r["decoders"]) + ".")
    out += ["", "How to read it: see reports/README.md. Bytes are hex, code points U+XXXX; "
            "nothing decoded is shown as text.", ""]
    if not corpus.entries:
        out += ["**The corpus has no entries: no divergence has been recorded.**", ""]
    out += _findings(rep)
    if corpus.corrupt:
        out += ["## Unreadable entries", ""]
        out += [f"- {safe.md_code(c.path)}: {safe.md(c.reason)}" for c in corpus.corrupt]
        out.append("")
    if rep.sections:
        out += ["## Overview", ""]
        out += _table(["class", "signatures"],
                      [[safe.md(k), str(v)] for k, v in s["by_class"].items()])
        out.append("")
        rows = []
        for i, sec in enumerate(rep.sections, 1):
            wrong = [v.decoder for v in sec.verdict.verdicts if not v.follows]
            rows.append([str(i), safe.md(sec.entry.signature) + (" (new)" if sec.new else ""),
                         safe.md(", ".join(wrong) or "none")])
        out += _table(["#", "signature", "decoders that do not follow their profile"], rows)
        out += ["", "## Signatures", ""]
        for i, sec in enumerate(rep.sections, 1):
            out += _section(i, sec)
    out += _known(rep)
    out += ["## Replacement-policy fingerprints", ""]
    if rep.fingerprint_note:
        out += [safe.md(rep.fingerprint_note), ""]
    if rep.fingerprints:
        rows = []
        for fp in rep.fingerprints:
            expl = ", ".join(f"{p} {n}/{fp.discriminating}" for p, n in fp.explained.items())
            un = ", ".join((f"{safe.md_code(sig)} ({safe.hexbytes(d)})" if sig
                            else safe.md_code(safe.hexbytes(d)))
                           for sig, d in fp.unexplained[:10])
            if len(fp.unexplained) > 10:
                un += f" and {len(fp.unexplained) - 10} more"
            rows.append([safe.md_code(fp.decoder), safe.md(fp.claimed_policy),
                         safe.md(fp.summary()), _fp_source(fp.source),
                         f"{fp.discriminating}/{fp.inputs}", safe.md(expl),
                         safe.md(_by_feature(fp.features)), un or "none"])
        out += _table(["decoder", "claims", "fingerprint", "counted over",
                       "discriminating inputs", "explained by", "by feature",
                       "inputs no policy explains"], rows)
    else:
        out.append("No decoder in the corpus shows its replacement output.")
    out += ["", "## Agreement matrix", "",
            "Inputs on which each pair disagrees, of the inputs where both show a view.", ""]
    m = rep.matrix
    if m.decoders:
        head = ["", *[f"{j + 1}" for j in range(len(m.decoders))]]
        rows = []
        for i, a in enumerate(m.decoders):
            cells = []
            for b in m.decoders:
                differ, compared = m.cell(a, b)
                cells.append("-" if a == b else
                             (f"{differ}/{compared}" if compared else "n/a"))
            rows.append([f"{i + 1} {safe.md_code(a)}", *cells])
        out += _table(head, rows)
    else:
        out.append("No decoders.")
    out += ["", "## Trend", ""]
    out += _table(["date", "corpus entries", "divergences found"],
                  [[safe.md(p.date), str(p.corpus), str(p.found)] for p in rep.trend])
    for b in rep.trend_unreadable:
        out.append(f"- unreadable earlier summary: {safe.md_code(b)}")
    out += ["", "## Decoders", ""]
    rows = []
    for d in rep.decoders:
        vers = "; ".join(f"{safe.md(v)}" + (f" (x{n})" if len(d.versions) > 1 else "")
                         for v, n in d.versions)
        rows.append([safe.md_code(d.name), safe.md(d.profile), safe.md(d.policy),
                     safe.md(", ".join(d.shows)), "yes" if d.own else "no",
                     "yes" if d.incremental else "no", vers or "-"])
    out += _table(["decoder", "profile", "policy", "shows", "own", "incremental", "versions"],
                  rows)
    if rep.environment:
        out += ["", "Environment recorded with the entries:", ""]
        out += [f"- {safe.md(k)}: {safe.md(v)} ({n} entries)" for k, v, n in rep.environment]
    out.append("")
    return "\n".join(out)


def _finding_blocks(fs: list[Finding], prefix: str = "") -> list[str]:
    """Each finding once (see html._finding_blocks); its evidence a short list."""
    out = []
    for i, f in enumerate(fs, 1):
        summary, ev = evidence(f)
        sigs = [x for x in ev if not x.label]
        rest = [x for x in ev if x.label]
        more = len(sigs) - MD_EVIDENCE
        out += [f"### {prefix}{i}. {safe.md(title(f))}", "", *facts_md(finding_facts(f)),
                f"- {safe.md(summary)}",
                *["  " + x for x in facts_md(sigs[:MD_EVIDENCE])],
                *([f"  - and {more} more signatures"] if more > 0 else []),
                *["  " + x for x in facts_md(rest)], ""]
    return out


def _findings(rep: Report) -> list[str]:
    """What the report leads with (see html._findings)."""
    if not rep.findings:
        return []
    open_ = [f for f in rep.findings if not f.known]
    known = [f for f in rep.findings if f.known]
    out = ["## Findings", "",
           f"**{safe.md(headline(open_))}**"
           + (f"; known and listed apart: {safe.md(headline(known))}" if known else "") + ".",
           "", "A finding is one cause in one decoder family: the simplest rule that "
           "reproduces what the decoder did, shown by its smallest example, with the "
           "signatures that show it, and the spec's clauses that decide them, as its "
           "evidence.", ""]
    if open_:
        out += _finding_blocks(open_)
    if known:
        out += ["### Known findings", "",
                "Every signature of these is accepted in the corpus's known.toml.", "",
                *_finding_blocks(known, "K")]
    return out


def _known(rep: Report) -> list[str]:
    """The signatures ``known.toml`` accepts, apart from the others: a table with
    each one's reason, then their details (numbered K1, K2, ...)."""
    if not rep.known_sections:
        return []
    out = ["## Known differences", "",
           "Accepted in the corpus's known.toml, each for the reason given there: saved and "
           "replayed like any entry, not counted as new.", ""]
    out += _table(["#", "signature", "reason"],
                  [[f"K{i}", safe.md(sec.entry.signature) + (" (new)" if sec.new else ""),
                    safe.md(sec.known)]
                   for i, sec in enumerate(rep.known_sections, 1)])
    out.append("")
    for i, sec in enumerate(rep.known_sections, 1):
        out += _section(f"K{i}", sec)
    return out


def _fp_source(source: str) -> str:
    return "the fuzz runs' inputs" if source == "tally" else "the corpus entries"


def _by_feature(features: dict[str, dict[str, Any]], limit: int = 12) -> str:
    """Per feature where the policies' cuts differ: inputs, and the policies that
    explain all of them (plain text; callers escape)."""
    parts = []
    for feat, f in sorted(features.items())[:limit]:
        n = f["inputs"]
        full = [p for p, k in f["explained"].items() if k == n]
        parts.append(f"{feat} {n}: {' or '.join(full) or 'no policy'}")
    if len(features) > limit:
        parts.append(f"and {len(features) - limit} more")
    return "; ".join(parts) or "none"
