"""``report.html``: one self-contained file for a person triaging divergences.

No network: inline CSS, inline SVG figures, no scripts, no external fonts or
images, and a Content-Security-Policy (``default-src 'none'``) that makes the
browser refuse any request the page might still try. Every string that reaches
the page goes through :func:`safe.html` (printable ASCII, HTML-escaped), so the
document itself is pure ASCII.
"""

from __future__ import annotations

from utf8fuzz import safe
from utf8fuzz.report.analyze import Report
from utf8fuzz.report.facts import (
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
from utf8fuzz.report.hexview import Gap, Grid, layout
from utf8fuzz.report.reproduce import WARNING, recorded_code
from utf8fuzz.report.section import Section
from utf8fuzz.report.svg import matrix_svg, trend_svg

GRID_WIDTH = 16  # columns per grid row: fits a 1280px window with U+XXXX labels
h = safe.html

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;
 padding:0 1em;line-height:1.4}
h1{font-size:1.5em}h2{border-bottom:2px solid #ccc;margin-top:2em}
h3{font-size:1.05em;background:#f3f3f7;padding:.4em;border-left:4px solid #557}
code,pre,.grid{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;border:1px solid #ddd}
table.t{border-collapse:collapse;margin:.5em 0}
table.t td,table.t th{border:1px solid #ccc;padding:.2em .5em;text-align:left;
 vertical-align:top}
.new{background:#ffe08a;padding:0 .3em;border-radius:3px;font-size:.8em}
.ok{color:#17692a;font-weight:600}.bad{color:#b00020;font-weight:600}
.clause{background:#eef5ff;border-left:4px solid #3a6fb0;padding:.5em .8em}
.gridwrap{overflow-x:auto;margin:.5em 0}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
table.grid{border-collapse:collapse}
table.grid td,table.grid th{border:1px solid #e2e2e2;padding:1px 4px;white-space:nowrap;
 text-align:center}
table.grid th{text-align:right;font-weight:normal;color:#555;background:#fafafa}
tr.offset td{color:#999;font-size:10px}
tr.reference td{font-weight:600}
td.ascii{background:#f4f4f4}td.lead{background:#d9ecff}td.cont{background:#eef6ff}
td.invalid,td.error{background:#ffd6d6}td.trunc{background:#ffe9c7}
td.reserved{background:#e6ddff}td.char{background:#fff}
td.unaligned{background:#fff3cd;text-align:left}
td.failure{background:#b00020;color:#fff}
td.diff{outline:2px solid #b00020;outline-offset:-2px}
td.diverge{color:#b00020;font-weight:700}
td.blk16{border-left:2px solid #888}td.blk32{border-left:3px solid #555}
td.blk64{border-left:4px solid #000}
td.boundary,td.boundary-end{color:#3a6fb0;font-weight:700;text-align:left}
td.boundary{border-left:4px solid #3a6fb0}td.boundary-end{border-right:4px solid #3a6fb0}
p.elided{color:#555;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;
 margin:.2em 0}
.legend span{display:inline-block;padding:0 .4em;margin-right:.3em;border:1px solid #ccc}
.warn{color:#8a5300}.nowrap{white-space:nowrap}
.finding{margin:1em 0 1.5em}.finding ul{margin:.3em 0}
.finding details{margin-left:1.5em}.finding summary{cursor:pointer;color:#335}
"""


def _cell_classes(kind: str, differs: bool, start: int, blocks: dict[int, int]) -> str:
    cls = [kind]
    if differs:
        cls.append("diff")
    if start in blocks:
        cls.append(f"blk{blocks[start]}")
    return " ".join(cls)


def grid_html(grid: Grid) -> str:
    if grid.length == 0:
        return "<p>(empty input)</p>"
    out = []
    for item in layout(grid, GRID_WIDTH):
        if isinstance(item, Gap):  # bytes a long input's grid leaves out
            out.append(f'<p class="elided">{h(item.label)}</p>')
            continue
        lo, hi, lines = item
        out.append('<div class="gridwrap"><table class="grid">')
        for ln in lines:
            head = h(ln.name) if not ln.members else (
                "<br>".join(h(m) for m in ln.members) + f" <i>{h(ln.view)}</i>")
            out.append(f'<tr class="{h(ln.role)}"><th>{head}</th>')
            pos = lo
            for c in ln.cells:
                while pos < c.start:
                    blk = f' class="blk{grid.blocks[pos]}"' if pos in grid.blocks else ""
                    out.append(f"<td{blk}></td>")
                    pos += 1
                span = c.end - c.start
                attrs = f' colspan="{span}"' if span > 1 else ""
                if c.title:
                    attrs += f' title="{h(c.title)}"'
                cls = _cell_classes(c.kind, c.differs, c.start, grid.blocks)
                out.append(f'<td class="{h(cls)}"{attrs}>{h(c.label)}</td>')
                pos = c.end
            while pos < hi:
                blk = f' class="blk{grid.blocks[pos]}"' if pos in grid.blocks else ""
                out.append(f"<td{blk}></td>")
                pos += 1
            out.append("</tr>")
        out.append("</table></div>")
    return "".join(out)


def part_html(p: Part) -> str:
    """One part of a fact (:mod:`.facts`), escaped for HTML."""
    if isinstance(p, Text):
        return h(p.value)
    if isinstance(p, Code):
        return f"<code>{h(p.value)}</code>"
    if isinstance(p, Hex):
        return f"<code>{h(safe.hexbytes(p.value))}</code>"
    if isinstance(p, CodePoints):
        return f"<code>{h(safe.cps(p.value))}</code>"
    return f'<a href="#{h(p.anchor)}"><code>{h(p.label)}</code></a>'


def facts_html(facts: list[Fact]) -> str:
    items = []
    for f in facts:
        cls = ' class="warn"' if f.warn else ""
        label = f"{h(f.label)} " if f.label else ""
        items.append(f"<li{cls}>{label}{''.join(part_html(p) for p in f.parts)}</li>")
    return f"<ul>{''.join(items)}</ul>"


def _section(i: int | str, sec: Section) -> str:
    e, ev = sec.entry, sec.verdict
    new = ' <span class="new">new in this run</span>' if sec.new else ""
    wrong = [v for v in ev.verdicts if not v.follows]
    right = [v for v in ev.verdicts if v.follows]
    rows = "".join(
        f'<tr><td><code>{h(v.decoder)}</code></td><td class="bad">{h(v.sentence())}</td></tr>'
        for v in wrong
    )
    verdicts = (f'<table class="t"><tr><th>decoder</th><th>verdict</th></tr>{rows}</table>'
                if wrong else "<p>Every recorded decoder follows the profile it claims.</p>")
    if right:
        verdicts += ('<p><span class="ok">Follow the profile they claim:</span> '
                     + ", ".join(f"<code>{h(v.decoder)}</code> ({h(v.profile)})" for v in right)
                     + "</p>")
    return (
        f'<section id="sig-{h(e.sig_id)}"><h3>{i}. {h(e.signature)}{new}</h3>'
        f"{facts_html(entry_facts(sec))}"
        f'<div class="clause"><b>Clause:</b> {h(ev.clause.ref)}.<br>'
        f"{h(ev.clause.explanation)}</div>"
        f"{verdicts}"
        f"{grid_html(sec.grid)}"
        f"<p>Reproduce{_caution(sec)}:</p><pre>{h(sec.command)}</pre><pre>{_pre(sec.test)}</pre>"
        "</section>"
    )


def _caution(sec: Section) -> str:
    return f' <span class="bad">({h(WARNING)})</span>' if recorded_code(sec.entry) else ""


def _pre(text: str) -> str:
    return "\n".join(h(line) for line in text.split("\n"))


LEGEND = (
    '<p class="legend">Bytes: <span class="ascii" style="background:#f4f4f4">a ASCII</span>'
    '<span style="background:#d9ecff">L lead</span><span style="background:#eef6ff">'
    'c continuation</span><span style="background:#ffd6d6">x in an error</span>'
    '<span style="background:#ffe9c7">t truncated</span><span style="background:#e6ddff">'
    "r reserved</span>; [ ] brackets an error span of the reference. Tokens: U+XXXX a "
    "code point, ERR an error (ERR.t truncated), RSV a reserved unit; a red frame marks "
    "output that differs from the decoder's own reference; a yellow cell is output that "
    "cannot be attributed to bytes (after the first difference); ^N marks the first "
    "difference.</p>"
)


def render(rep: Report) -> str:
    s = rep.summary
    c = rep.corpus
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>utf8fuzz report {h(rep.date)}</title><style>{CSS}</style></head><body>",
        f"<h1>utf8fuzz triage report, {h(rep.date)}</h1>",
        f"<p>Corpus <code>{h(c.root)}</code>: {len(c.entries)} entries"
        + (f", {len(c.corrupt)} unreadable" if c.corrupt else "") + ".</p>",
    ]
    if rep.run:
        r = s["run"]
        parts.append(
            f"<p>Run: {h(r['executions'])} executions at {h(r['execs_per_sec'])} per second, "
            f"{len(r['new'])} new signatures"
            + (f", {len(r['known'])} known" if r.get("known") else "") + "; decoders: "
            + ", ".join(f"<code>{h(d)}</code>" for d in r["decoders"]) + ".</p>")
    parts.append("<p>Bytes are shown as hex and code points as U+XXXX; nothing decoded is "
                 "shown as text. See reports/README.md for how to read this report.</p>")
    if not c.entries:
        parts.append("<p><b>The corpus has no entries: no divergence has been recorded."
                     "</b></p>")
    parts.append(_findings(rep))
    if c.corrupt:
        parts.append("<h2>Unreadable entries</h2><ul>")
        parts += [f"<li><code>{h(x.path)}</code>: {h(x.reason)}</li>" for x in c.corrupt]
        parts.append("</ul>")
    if rep.sections:
        parts.append('<h2>Overview</h2><table class="t"><tr><th>class</th><th>signatures</th>'
                     "</tr>")
        parts += [f"<tr><td>{h(k)}</td><td>{v}</td></tr>" for k, v in s["by_class"].items()]
        parts.append('</table><table class="t"><tr><th>#</th><th>signature</th>'
                     "<th>decoders that do not follow their profile</th></tr>")
        for i, sec in enumerate(rep.sections, 1):
            wrong = ", ".join(v.decoder for v in sec.verdict.verdicts if not v.follows)
            new = ' <span class="new">new</span>' if sec.new else ""
            parts.append(f'<tr><td>{i}</td><td><a href="#sig-{h(sec.entry.sig_id)}">'
                         f"{h(sec.entry.signature)}</a>{new}</td><td>{h(wrong or 'none')}"
                         "</td></tr>")
        parts.append("</table><h2>Signatures</h2>" + LEGEND)
        parts += [_section(i, sec) for i, sec in enumerate(rep.sections, 1)]
    parts.append(_known(rep))
    parts.append(_fingerprints(rep))
    parts.append(_matrix(rep))
    parts.append(_trend(rep))
    parts.append(_decoders(rep))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _finding_blocks(fs: list[Finding], prefix: str = "") -> str:
    """Each finding once: its title, its facts (:func:`.facts.finding_facts`), then
    its evidence folded."""
    out = []
    for i, f in enumerate(fs, 1):
        summary, ev = evidence(f)
        out.append(f'<div class="finding" id="finding-{h(f.id)}">'
                   f"<h3>{prefix}{i}. {h(title(f))}</h3>"
                   f"{facts_html(finding_facts(f))}"
                   f"<details><summary>{h(summary)}</summary>{facts_html(ev)}</details>"
                   "</div>")
    return "".join(out)


def _findings(rep: Report) -> str:
    """What the report leads with: one row per (decoder family, explanation), its
    signatures linked as evidence; the known ones apart, below."""
    if not rep.findings:
        return ""
    open_ = [f for f in rep.findings if not f.known]
    known = [f for f in rep.findings if f.known]
    out = ['<h2 id="findings">Findings</h2>',
           f"<p><b>{h(headline(open_))}</b>"
           + (f"; known and listed apart: {h(headline(known))}" if known else "") + ".</p>",
           "<p>A finding is one cause in one decoder family: the simplest rule that "
           "reproduces what the decoder did, shown by its smallest example, with the "
           "signatures that show it, and the spec's clauses that decide them, as its "
           "evidence (unfold it).</p>"]
    if open_:
        out.append(_finding_blocks(open_))
    if known:
        out.append('<h3 id="known-findings">Known findings</h3><p>Every signature of these is '
                   "accepted in the corpus's known.toml.</p>" + _finding_blocks(known, "K"))
    return "".join(out)


def _known(rep: Report) -> str:
    """The signatures ``known.toml`` accepts, apart from the others: a table with
    each one's reason, then their details (numbered K1, K2, ...)."""
    if not rep.known_sections:
        return ""
    out = ['<h2 id="known">Known differences</h2><p>Accepted in the corpus\'s known.toml, '
           "each for the reason given there: saved and replayed like any entry, not counted "
           'as new.</p><table class="t"><tr><th>#</th><th>signature</th><th>reason</th></tr>']
    for i, sec in enumerate(rep.known_sections, 1):
        new = ' <span class="new">new</span>' if sec.new else ""
        out.append(f'<tr><td>K{i}</td><td><a href="#sig-{h(sec.entry.sig_id)}">'
                   f"{h(sec.entry.signature)}</a>{new}</td><td>{h(sec.known)}</td></tr>")
    out.append("</table>" + LEGEND)
    out += [_section(f"K{i}", sec) for i, sec in enumerate(rep.known_sections, 1)]
    return "".join(out)


def _fingerprints(rep: Report) -> str:
    out = ['<h2 id="fingerprints">Replacement-policy fingerprints</h2>']
    note = f"<p>{h(rep.fingerprint_note)}</p>" if rep.fingerprint_note else ""
    if not rep.fingerprints:
        return out[0] + note + "<p>No decoder in the corpus shows its replacement output.</p>"
    out.append("<p>Which policy's reference reproduces each decoder's error spans (or its "
               "U+FFFD output, when it shows no spans), place by place, over every input "
               "the fuzz runs compared in full (or, for a decoder no run counted, the corpus "
               "inputs). Discriminating inputs are those on which the policies themselves "
               "differ; each feature is where their cuts first differ.</p>" + note)
    # wide (a line per feature): it scrolls in its own box, never the page
    out.append('<div class="gridwrap"><table class="t"><tr><th>decoder</th><th>claims</th>'
               '<th>fingerprint</th>'
               "<th>counted over</th><th>discriminating</th><th>explained by</th>"
               "<th>by feature</th><th>inputs no policy explains</th></tr>")
    for fp in rep.fingerprints:
        expl = "<br>".join(f"{h(p)}: {n}/{fp.discriminating}" for p, n in fp.explained.items())
        feats = "<br>".join(
            f"{h(feat)} {f['inputs']}: " + ", ".join(
                f"{h(p)} {k}" for p, k in f["explained"].items())
            for feat, f in sorted(fp.features.items())[:20])
        if len(fp.features) > 20:
            feats += f"<br>and {len(fp.features) - 20} more"
        un = "<br>".join((f'<a href="#sig-{h(sig)}">{h(sig)}</a> ' if sig else "")
                         + f"<code>{h(safe.hexbytes(d))}</code>"
                         for sig, d in fp.unexplained[:20])
        if len(fp.unexplained) > 20:
            un += f"<br>and {len(fp.unexplained) - 20} more"
        source = "fuzz runs" if fp.source == "tally" else "corpus entries"
        out.append(f"<tr><td><code>{h(fp.decoder)}</code></td><td>{h(fp.claimed_policy)}</td>"
                   f"<td><b>{h(fp.summary())}</b></td><td>{source}</td>"
                   f"<td>{fp.discriminating}/{fp.inputs}</td>"
                   f'<td class="nowrap">{expl}</td><td class="nowrap">{feats or "none"}</td>'
                   f'<td>{un or "none"}</td></tr>')
    out.append("</table></div>")
    return "".join(out)


def _matrix(rep: Report) -> str:
    out = ['<h2 id="matrix">Agreement matrix</h2>']
    if not rep.matrix.decoders:
        return out[0] + "<p>No decoders.</p>"
    out.append("<p>Each cell: on how many corpus inputs the two decoders disagree, at the "
               "views both show (hover for the number compared); n/a: no shared view. "
               "Darker is more disagreement.</p>")
    out.append(f"<figure>{matrix_svg(rep.matrix)}</figure>")
    return "".join(out)


def _trend(rep: Report) -> str:
    out = ['<h2 id="trend">Trend</h2><p>Corpus size and divergences found per report date, '
           "from the summary.json of earlier reports.</p>"]
    out.append(f"<figure>{trend_svg(rep.trend)}</figure>")
    out.append('<table class="t"><tr><th>date</th><th>corpus entries</th>'
               "<th>divergences found</th></tr>")
    out += [f"<tr><td>{h(p.date)}</td><td>{p.corpus}</td><td>{p.found}</td></tr>"
            for p in rep.trend]
    out.append("</table>")
    out += [f'<p class="warn">unreadable earlier summary: {h(b)}</p>'
            for b in rep.trend_unreadable]
    return "".join(out)


def _decoders(rep: Report) -> str:
    out = ['<h2 id="decoders">Decoders</h2><table class="t"><tr><th>decoder</th><th>profile</th>'
           "<th>policy</th><th>shows</th><th>own</th><th>incremental</th><th>entries</th>"
           "<th>versions</th></tr>"]
    for d in rep.decoders:
        vers = "<br>".join(h(v) + (f" (x{n})" if len(d.versions) > 1 else "")
                           for v, n in d.versions)
        out.append(f"<tr><td><code>{h(d.name)}</code></td><td>{h(d.profile)}</td>"
                   f"<td>{h(d.policy)}</td><td>{h(', '.join(d.shows))}</td>"
                   f"<td>{'yes' if d.own else 'no'}</td>"
                   f"<td>{'yes' if d.incremental else 'no'}</td><td>{d.entries}</td>"
                   f"<td><code>{vers or '-'}</code></td></tr>")
    out.append("</table>")
    if rep.environment:
        out.append("<p>Environment recorded with the entries:</p><ul>")
        out += [f"<li>{h(k)}: {h(v)} ({n} entries)</li>" for k, v, n in rep.environment]
        out.append("</ul>")
    return "".join(out)
