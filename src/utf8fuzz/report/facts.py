"""The facts a report lists about one corpus entry, as data: both renderers
(:mod:`.html`, :mod:`.markdown`) print this one list, each escaping every part
through :mod:`utf8fuzz.safe` for its markup, so the two say the same thing in the
same words.

A :class:`Fact` is a label (this module's own words, printed before its value)
and the parts of its value. A part says what it holds, so that a renderer shows
it as such: :class:`Text` (plain text, possibly recorded: escape it), :class:`Code`
(an identifier, a decoder name, a pattern: code font), :class:`Hex` (bytes: upper-
case hex), :class:`CodePoints` (U+XXXX), :class:`Link` (a place in the report, by
its anchor; a renderer without anchors shows the label as code).
"""

from __future__ import annotations

from dataclasses import dataclass

from utf8fuzz.report.findings import Finding, example, modes, pattern_of
from utf8fuzz.report.load import Entry, fed_chunks
from utf8fuzz.report.section import Section


@dataclass(frozen=True)
class Text:
    value: str


@dataclass(frozen=True)
class Code:
    value: str


@dataclass(frozen=True)
class Hex:
    value: bytes


@dataclass(frozen=True)
class CodePoints:
    value: tuple[int, ...]


@dataclass(frozen=True)
class Link:
    """A place in the report: ``anchor`` is its id (``finding-<id>``, ``sig-<id>``)."""

    anchor: str
    label: str


Part = Text | Code | Hex | CodePoints | Link


@dataclass(frozen=True)
class Fact:
    """``label`` (plain words of this module; "" for none) then ``parts``;
    ``warn``: a warning, shown as one."""

    label: str
    parts: tuple[Part, ...]
    warn: bool = False


def entry_facts(sec: Section) -> list[Fact]:
    """What a signature's section lists about its entry, in order."""
    e, ev = sec.entry, sec.verdict
    view = e.first_difference.get("view")
    out = [
        Fact("id", (Code(e.sig_id), Text(f"; profile {e.profile}, class {e.cls}, "
                                         f"feature {e.feature}"))),
        Fact(f"input ({len(e.data)} bytes):", (Hex(e.data),)),
        Fact("reference", (Code(e.reference),
                           Text(f"; first difference at byte {ev.offset}"
                                + (f" ({view} view)" if view else "")))),
    ]
    if e.position_dependent:
        out.append(Fact("position-dependent:", (Text("block boundaries are marked"),)))
    fnd = e.extra.get("finding")
    if isinstance(fnd, dict):
        fid = str(fnd.get("id", ""))
        out.append(Fact("finding", (Link(f"finding-{fid}", fid[:8]),
                                    Text(f": {fnd.get('explanation', '')}; pattern "),
                                    Code(str(fnd.get("pattern", ""))))))
    out += [Fact("", (Code(name), Text(" was fed in chunks: "), Code(split)))
            for name, split in fed_chunks(e)]
    call = handed_over(e)
    if call:
        out.append(Fact("handed over:", (Text(call),)))
    if e.found:
        out.append(Fact("found:", (Text(", ".join(
            f"{k} {e.found[k]}" for k in ("at", "engine", "original_size", "minimized_size")
            if k in e.found)),)))
    out += [Fact("warning:", (Text(w),), warn=True) for w in e.warnings]
    if sec.known is not None:
        out.append(Fact("known difference:", (Text(sec.known),)))
    return out


def handed_over(e: Entry) -> str | None:
    """How the entry's input was handed to its decoder, when the call is the
    difference (:mod:`utf8fuzz.engine.calls`: after earlier calls, or as a view in a
    guarded buffer), in one line of hex; a recorded call that does not load says so."""
    from utf8fuzz.engine.calls import Call

    if "call" not in e.extra:
        return None
    try:
        return Call.from_json(e.extra["call"], len(e.data)).describe()
    except ValueError as err:
        return f"(the recorded call does not load: {err})"


def finding_facts(f: Finding) -> list[Fact]:
    """What the findings list shows of a finding under its title: its smallest
    example (input, what the spec says, what the decoder did), its pattern, how sure
    it is, its severity, its decoders, and why it is known."""
    out = []
    ex = example(f)
    if ex is not None:
        n = len(ex.data)
        out.append(Fact("smallest example:", (Hex(ex.data),
                                              Text(f" ({n} byte{'s' if n != 1 else ''}, "),
                                              Link(f"sig-{ex.sig_id}", ex.sig_id),
                                              Text(")"))))
        out.append(Fact(f"the spec ({ex.profile}, {ex.policy}), {ex.view} view:",
                        (Text(ex.spec),)))
        out.append(Fact("decoder", (Code(ex.decoder), Text(f": {ex.did}"))))
    sure = (f"checked on {f.checked} fresh inputs" if f.checked
            else "not checked on fresh inputs")
    out.append(Fact("pattern", (Code(f.pattern), Text(f", {sure}; severity {f.severity}"))))
    names: list[Part] = []
    for d in f.decoders:
        names += [Text(", "), Code(d)] if names else [Code(d)]
    out.append(Fact("decoders:", (*names, Text(f"; finding {f.id}"))))
    out += [Fact("known:", (Text(r),)) for r in f.reasons]
    return out


#: The most evidence signatures listed in Markdown (a short list); HTML folds them all.
MD_EVIDENCE = 10


def evidence(f: Finding) -> tuple[str, list[Fact]]:
    """A finding's evidence, folded: a one-line summary (its signatures, and the
    modes it shows in) and its facts: each signature with its own pattern, the spec's
    clauses that decide them, and the rule in full."""
    n = len(f.sections)
    summary = f"evidence: {n} signature{'s' if n != 1 else ''}, {modes(f)}"
    out = [Fact("", (Link(f"sig-{sec.entry.sig_id}", sec.entry.sig_id),
                     Text(f" {sec.entry.signature}; pattern "), Code(pattern_of(sec))))
           for sec in f.sections]
    clauses = sorted({sec.verdict.clause.ref for sec in f.sections})
    out += [Fact("the spec:", (Text(c),)) for c in clauses]
    out.append(Fact("the rule:", (Text(f.text),)))
    return summary, out


__all__ = ["MD_EVIDENCE", "Code", "CodePoints", "Fact", "Hex", "Link", "Part", "Text",
           "entry_facts", "evidence", "finding_facts"]
