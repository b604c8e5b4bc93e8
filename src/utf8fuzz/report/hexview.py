"""The input as annotated hex, and every decoder's output aligned under it.

The model is a :class:`Grid`: one column per input byte and a list of
:class:`Line` s, each a list of :class:`Cell` s that cover byte columns
``[start, end)``. Renderers (:mod:`.html`, :mod:`.markdown`) only lay the grid
out, so both reports show the same alignment:

``offset``  byte offsets;
``bytes``   the hex, with each error span of the reference bracketed (``[C0 80]``);
``class``   what each byte is to the reference: ``a`` ASCII, ``L`` lead, ``c``
            continuation, ``x`` in an error, ``t`` in a truncated error, ``r``
            reserved;
``blocks``  16/32/64-byte boundaries, only for position-dependent signatures
            (vectorized decoders change code path at block boundaries);
then one line per decoder and view. A decoder that shows ``tokens`` gets each
token under the bytes it consumed. One that shows only output code points
(``replace``, ``ignore``, ``escape``) is aligned against the reference's units
for as long as it agrees with them; from its first disagreement on, the rest of
its output is one cell running to the end of the input, because which bytes
produced it is unknown - the alignment never guesses. Error spans (``spans``,
``strict``) sit under their bytes. Cells that differ from the reference are
flagged ``differs``; the ``diverge`` line points at the first difference.

All labels are built with :mod:`.safe` (U+XXXX, hex, printable ASCII).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from utf8fuzz import safe
from utf8fuzz.outcome import REPLACEMENT, Outcome, TextViewName, Token, View, ViewUnavailable
from utf8fuzz.report.load import Entry, Record

MAX_UNITS = 8  # code points shown in one unaligned cell before "..."


@dataclass(frozen=True)
class Cell:
    start: int
    end: int
    label: str
    kind: str  # char, error, trunc, reserved, lead, cont, ascii, unaligned, note, ...
    differs: bool = False
    title: str = ""


@dataclass
class Line:
    name: str
    role: str  # offset, bytes, class, blocks, diverge, reference, decoder
    cells: list[Cell] = field(default_factory=list)
    members: tuple[str, ...] = ()  # decoders with exactly this line (decoder lines)
    view: str = ""

    @property
    def label(self) -> str:
        """The row header: the first decoder, how many more share the line, the view."""
        if not self.members:
            return self.name
        more = f" (+{len(self.members) - 1})" if len(self.members) > 1 else ""
        return f"{self.members[0]}{more} {self.view}".rstrip()


@dataclass
class Grid:
    data: bytes
    lines: list[Line]
    blocks: dict[int, int]  # byte offset -> block size (16, 32, 64) starting there
    diverge_at: int | None

    @property
    def length(self) -> int:
        return len(self.data)


def _byte_class(ref: Outcome, n: int) -> list[str]:
    cls = ["ascii"] * n
    for t in ref.tokens:
        for i in range(t.start, t.end):
            if t.kind == "char":
                if t.end - t.start == 1:
                    cls[i] = "ascii" if (t.value or 0) < 0x80 else "lead"
                else:
                    cls[i] = "lead" if i == t.start else "cont"
            elif t.kind == "reserved":
                cls[i] = "reserved"
            else:
                cls[i] = "trunc" if t.reason == "truncated" else "invalid"
    return cls


_CLASS_LETTER = {"ascii": "a", "lead": "L", "cont": "c", "invalid": "x", "trunc": "t",
                 "reserved": "r"}


def token_label(t: Token) -> str:
    if t.kind == "char":
        return safe.cp(t.value or 0)
    if t.kind == "reserved":
        return "RSV"
    return "ERR.t" if t.reason == "truncated" else "ERR"


def _token_kind(t: Token) -> str:
    if t.kind == "char":
        return "char"
    if t.kind == "reserved":
        return "reserved"
    return "trunc" if t.reason == "truncated" else "error"


def _view(out: Outcome, name: str) -> View:
    try:
        return out.view(name)
    except ViewUnavailable:
        return None


def _text_view(out: Outcome, name: TextViewName) -> tuple[int, ...] | None:
    try:
        return out.view(name)
    except ViewUnavailable:
        return None


_TEXT_VIEWS: tuple[TextViewName, ...] = ("replace", "ignore", "escape")


def _units(ref: Outcome, view: str) -> list[tuple[int, int, int]]:
    """The reference's output units for ``view`` as (start, end, code point)."""
    data = ref.data or b""
    units: list[tuple[int, int, int]] = []
    for t in ref.tokens:
        if t.kind == "char":
            units.append((t.start, t.end, t.value or 0))
        elif view == "replace":
            units.append((t.start, t.end, REPLACEMENT))
        elif view == "escape":
            units += [(i, i + 1, 0xDC00 + data[i]) for i in range(t.start, t.end)]
    return units


def _aligned_units(got: tuple[int, ...], ref: Outcome, view: str, n: int) -> list[Cell]:
    want = _units(ref, view)
    cells: list[Cell] = []
    k = 0
    while k < len(got) and k < len(want) and got[k] == want[k][2]:
        s, e, c = want[k]
        cells.append(Cell(s, e, safe.cp(c), "char" if c != REPLACEMENT else "error"))
        k += 1
    rest = got[k:]
    if k == len(want) and not rest:
        return cells
    if k < len(want):
        start = want[k][0]
        if rest:
            shown = safe.cps(rest[:MAX_UNITS]) + (" ..." if len(rest) > MAX_UNITS else "")
            title = f"{len(rest)} more output unit(s), not attributable to bytes"
        else:
            shown, title = "(output ends)", "the decoder's output ends here"
        cells.append(Cell(start, n, shown, "unaligned", True, title))
    else:  # matched every reference unit but has more output
        extra = "+" + safe.cps(rest[:MAX_UNITS]) + (" ..." if len(rest) > MAX_UNITS else "")
        if cells:
            last = cells[-1]
            cells[-1] = replace(last, label=f"{last.label} {extra}", kind="unaligned",
                                differs=True, title="extra output after the last byte")
        elif n:
            cells.append(Cell(0, n, extra, "unaligned", True, "output for no reference unit"))
    return cells


def decoder_lines(name: str, rec: Record, ref: Outcome, n: int) -> list[Line]:
    """The lines showing one decoder, aligned against its own reference ``ref``."""
    out = rec.outcome
    if not out.ok:
        # Only the exception's type: the message (often quoting the input) is in the
        # verdict, and one long label would make the grid unreadable.
        kind = safe.text((out.detail or "").split(":", 1)[0], 40)
        label = f"{out.status.upper()} ({kind})" if kind else out.status.upper()
        return [Line(name, "decoder", [Cell(0, max(n, 1), label, "failure", True,
                                             safe.text(out.detail or "", 300))],
                     (name,), out.status)]
    lines: list[Line] = []
    shows = out.shows
    if "tokens" in shows:
        rtoks = set(ref.tokens)
        cells = [Cell(t.start, t.end, token_label(t), _token_kind(t), t not in rtoks)
                 for t in out.tokens]
        return [Line(name, "decoder", cells, (name,), "tokens")]
    if "spans" in shows:
        rspans = set(ref.view("spans"))
        spans = out.view("spans")
        lines.append(Line(name, "decoder",
                          [Cell(s, e, "ERR", "error", (s, e) not in rspans) for s, e in spans],
                          (name,), "spans"))
    elif "strict" in shows:
        fe = out.view("strict")
        want = ref.view("strict")
        reason = _view(out, "reason") if "reason" in shows else None
        if fe is None:
            cells = [Cell(0, max(n, 1), "valid (no error)", "char", want is not None)]
        else:
            lab = "1st ERR" + {"truncated": ".t", "reserved": " RSV"}.get(str(reason), "")
            diff = fe != want or (reason is not None and reason != ref.view("reason"))
            cells = [Cell(fe[0], fe[1], lab, "error", diff)]
        lines.append(Line(name, "decoder", cells, (name,), "strict"))
    for view in _TEXT_VIEWS:
        if view in shows:
            got = _text_view(out, view)
            if got is None:
                continue
            lines.append(Line(name, "decoder", _aligned_units(tuple(got), ref, view, n),
                              (name,), view))
    if not lines:
        lines.append(Line(name, "decoder", [Cell(0, max(n, 1), "(shows no view)", "note")],
                          (name,), ""))
    return lines


def blocks_of(n: int) -> dict[int, int]:
    """Offsets in (0, n) where a 16-, 32- or 64-byte block begins (largest wins)."""
    out: dict[int, int] = {}
    for o in range(16, n, 16):
        out[o] = 64 if o % 64 == 0 else 32 if o % 32 == 0 else 16
    return out


def build_grid(entry: Entry, ref: Outcome, refs: dict[str, Outcome],
               diverge_at: int | None) -> Grid:
    """``ref`` is the entry's reference (its profile and policy); ``refs`` maps each
    recorded decoder to the reference of the profile and policy it claims."""
    data = entry.data
    n = len(data)
    cls = _byte_class(ref, n)
    opens = {t.start for t in ref.tokens if t.kind != "char"}
    closes = {t.end - 1 for t in ref.tokens if t.kind != "char"}
    hex_cells = [
        Cell(i, i + 1, ("[" if i in opens else "") + safe.hexbyte(b)
             + ("]" if i in closes else ""), cls[i])
        for i, b in enumerate(data)
    ]
    lines = [
        Line("offset", "offset", [Cell(i, i + 1, str(i), "offset") for i in range(n)]),
        Line("bytes", "bytes", hex_cells),
        Line("class", "class", [Cell(i, i + 1, _CLASS_LETTER[c], c) for i, c in enumerate(cls)]),
    ]
    blocks = blocks_of(n) if entry.position_dependent else {}
    if blocks:
        lines.append(Line("blocks", "blocks",
                          [Cell(o, o + 1, f"|{b}", "block") for o, b in sorted(blocks.items())]))
    ref_name = f"{safe.text(entry.reference, 80)} (reference)"
    lines.append(Line(ref_name, "reference",
                      [Cell(t.start, t.end, token_label(t), _token_kind(t)) for t in ref.tokens]))
    # Decoders with identical lines share one (as ``utf8fuzz diff`` groups them), so
    # the eye goes to where they part; divergent lines sort first.
    groups: dict[tuple[str, tuple[Cell, ...]], Line] = {}
    for name, rec in sorted(entry.records.items()):
        if name == entry.reference:
            continue
        for ln in decoder_lines(safe.text(name, 80), rec, refs[name], n):
            key = (ln.view, tuple(ln.cells))
            if key in groups:
                g = groups[key]
                g.members = (*g.members, *ln.members)
            else:
                groups[key] = ln
    lines += sorted(groups.values(),
                    key=lambda ln: (not any(c.differs for c in ln.cells), ln.members))
    if diverge_at is not None and n:
        at = min(diverge_at, n - 1)
        lines.append(Line("diverge", "diverge",
                          [Cell(at, at + 1, f"^{diverge_at}", "diverge",
                                title="first difference between the decoders")]))
    return Grid(data, lines, blocks, diverge_at)


# -- chunking and the text layout (shared by both renderers) --------------------------


def chunk(grid: Grid, width: int) -> list[tuple[int, int, list[Line]]]:
    """The grid cut into pieces of ``width`` byte columns. A cell crossing a cut is
    split; the piece after the cut is labelled ``..`` (continued)."""
    n = max(grid.length, 1)
    pieces = []
    for lo in range(0, n, width):
        hi = min(lo + width, n)
        lines = []
        for ln in grid.lines:
            cells = []
            for c in ln.cells:
                s, e = max(c.start, lo), min(c.end, hi)
                if s >= e:
                    continue
                label = c.label if c.start >= lo else ".."
                cells.append(replace(c, start=s, end=e, label=label))
            lines.append(Line(ln.name, ln.role, cells, ln.members, ln.view))
        pieces.append((lo, hi, lines))
    return pieces


def text_layout(grid: Grid, width: int = 16) -> str:
    """The grid as fixed-width text (for Markdown code blocks): column widths grow
    so that every label fits under the bytes it belongs to. A differing cell's
    label ends with ``*``."""
    out: list[str] = []
    if grid.length == 0:
        return "(empty input)"
    name_w = max(len(ln.label) for ln in grid.lines)
    for lo, hi, lines in chunk(grid, width):
        widths = {i: 2 for i in range(lo, hi)}
        labels: list[list[tuple[Cell, str]]] = []
        for ln in lines:
            row = []
            for c in ln.cells:
                lab = c.label + ("*" if c.differs else "")
                row.append((c, lab))
                have = sum(widths[i] for i in range(c.start, c.end)) + (c.end - c.start - 1)
                # The last cell of a chunk may run past the grid's right edge: widening
                # every row for one long label (a crash message) would spread them all.
                if len(lab) > have and c.end < hi:
                    widths[c.end - 1] += len(lab) - have
            labels.append(row)
        for ln, row in zip(lines, labels, strict=True):
            buf: list[str] = []
            pos = lo
            for c, lab in row:
                while pos < c.start:
                    buf.append(" " * widths[pos])
                    pos += 1
                span_w = sum(widths[i] for i in range(c.start, c.end)) + (c.end - c.start - 1)
                buf.append(lab.ljust(span_w))
                pos = c.end
            while pos < hi:
                buf.append(" " * widths[pos])
                pos += 1
            out.append((ln.label.ljust(name_w) + " | " + " ".join(buf)).rstrip())
        out.append("")
    shared = [ln for ln in grid.lines if len(ln.members) > 1]
    if shared:
        out.append("same line:")
        out += [f"  {ln.label}: {', '.join(ln.members)}" for ln in shared]
    return "\n".join(out).rstrip("\n")
