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
``boundary`` long inputs only: the 2^k boundary the bug depends on (below);
then one line per decoder and view. A decoder that shows ``tokens`` gets each
token under the bytes it consumed. One that shows only output code points
(``replace``, ``ignore``, ``escape``) is aligned against the reference's units
for as long as it agrees with them; from its first disagreement on, the rest of
its output is one cell running to the end of the input, because which bytes
produced it is unknown - the alignment never guesses. Error spans (``spans``,
``strict``) sit under their bytes. Cells that differ from the reference are
flagged ``differs``; the ``diverge`` line points at the first difference.

Long inputs (over :data:`LONG` bytes) of an entry whose minimizer recorded an
``alignment`` (``found.minimizer.alignment``: the block size the bug depends on),
or that is ``position_dependent``, and any input over :data:`MAX_FULL` bytes, are
shown in *windows*: the :data:`ROW`-byte rows holding the first difference and
either side of the boundary (:func:`boundary_of`), marked on the ``boundary`` line
with its offset in hex and decimal; the bytes between windows are one :class:`Gap`
each (``... 240 bytes of 41 ...``), so a 4 KiB input makes a grid of a few rows.
:func:`layout` gives the windows' pieces and the gaps in order, for both renderers.

All labels are built with :mod:`.safe` (U+XXXX, hex, printable ASCII).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from utf8fuzz import safe
from utf8fuzz.outcome import REPLACEMENT, Outcome, TextViewName, Token, View, ViewUnavailable
from utf8fuzz.report.load import Entry, Record

MAX_UNITS = 8  # code points shown in one unaligned cell before "..."
#: Longer inputs are long: the short fuzz loop's longest (engine.long.SHORT_MAX).
LONG = 64
#: Inputs longer than this are windowed whatever their entry says.
MAX_FULL = 1024
#: Windows are whole rows of this many bytes (the renderers' grid width).
ROW = 16
#: How far (bytes) from the first difference a boundary is looked for when the
#: minimizer recorded no alignment.
NEAR = 8


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


@dataclass(frozen=True)
class Gap:
    """Bytes ``[start, end)`` left out of a windowed grid, and what they were."""

    start: int
    end: int
    label: str  # "... 240 bytes of 41 at 0x0-0xEF (0-239) ..."


@dataclass
class Grid:
    data: bytes
    lines: list[Line]
    blocks: dict[int, int]  # byte offset -> block size (16, 32, 64) starting there
    diverge_at: int | None
    #: the byte ranges shown, in order (the whole input unless windowed)
    windows: list[tuple[int, int]] = field(default_factory=list)
    #: the ranges between them
    gaps: list[Gap] = field(default_factory=list)
    #: the boundary marked on the ``boundary`` line (an offset, possibly the length)
    boundary: int | None = None

    @property
    def length(self) -> int:
        return len(self.data)

    @property
    def shown(self) -> list[tuple[int, int]]:
        return self.windows or [(0, len(self.data))]


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


def alignment_of(entry: Entry) -> int | None:
    """The minimizer's ``alignment`` in the entry's sidecar (``found.minimizer``): a
    power of two from 2 to 65,536, else None (a sidecar is untrusted data)."""
    m = entry.found.get("minimizer") if isinstance(entry.found, dict) else None
    a = m.get("alignment") if isinstance(m, dict) else None
    if isinstance(a, int) and not isinstance(a, bool) and 2 <= a <= 65536 and not a & (a - 1):
        return a
    return None


def boundary_of(n: int, at: int | None, alignment: int | None,
                position_dependent: bool) -> int | None:
    """The boundary to mark in an input of ``n`` bytes whose first difference is at
    ``at``: with an ``alignment``, its multiple nearest ``at`` (the upper one on a
    tie; never 0, never past ``n``); without one, for a position-dependent entry,
    the most aligned multiple of 16 within :data:`NEAR` bytes of ``at``, the end of
    the input included (a bug that needs a page's tail); else None."""
    if at is None or n <= 0:
        return None
    at = min(max(at, 0), n - 1)
    if alignment is not None:
        lo = at // alignment * alignment
        cands = [p for p in (lo, lo + alignment) if 0 < p <= n]
        return min(cands, key=lambda p: (abs(p - at), -p)) if cands else None
    if not position_dependent:
        return None
    cands = [p for p in range(max(16, (at - NEAR + 15) // 16 * 16), min(n, at + NEAR) + 1, 16)]
    if n % 16 == 0 and abs(n - at) <= NEAR and n not in cands:
        cands.append(n)
    return max(cands, key=lambda p: (p & -p, -abs(p - at))) if cands else None


def _windows(n: int, at: int | None, boundary: int | None) -> list[tuple[int, int]]:
    """Whole rows: the first difference's, and the rows either side of the
    boundary; rows closer than two rows apart are joined (eliding one row says
    nothing)."""
    rows = set()
    if at is not None:
        rows.add(min(max(at, 0), n - 1) // ROW * ROW)
    if boundary is not None:
        rows.update(r // ROW * ROW for r in (boundary - 1, boundary) if 0 <= r < n)
    if not rows:
        rows.add(0)
    out: list[tuple[int, int]] = []
    for r in sorted(rows):
        if out and r <= out[-1][1] + ROW:
            out[-1] = (out[-1][0], min(r + ROW, n))
        else:
            out.append((r, min(r + ROW, n)))
    if out[0][0] <= ROW:  # an elided first row would say less than the row itself
        out[0] = (0, out[0][1])
    if n - out[-1][1] <= ROW:
        out[-1] = (out[-1][0], n)
    return out


def _gap(data: bytes, ref: Outcome, lo: int, hi: int) -> Gap:
    """What the bytes ``[lo, hi)`` were: one byte value, or the reference's count of
    characters and errors starting there."""
    where = f"at 0x{lo:X}-0x{hi - 1:X} ({lo}-{hi - 1})"
    chunk = data[lo:hi]
    if chunk.count(chunk[:1]) == len(chunk):
        return Gap(lo, hi, f"... {hi - lo:,} bytes of {safe.hexbyte(chunk[0])} {where} ...")
    chars = errors = 0
    for t in ref.tokens:
        if lo <= t.start < hi:
            if t.kind == "char":
                chars += 1
            else:
                errors += 1
    return Gap(lo, hi, f"... {hi - lo:,} bytes {where}: {chars:,} characters, "
                       f"{errors:,} errors or reserved ...")


def _clip(cells: list[Cell], windows: list[tuple[int, int]]) -> list[Cell]:
    """The cells' parts inside the windows; a cell's first visible part keeps its
    label (its start may be elided), later parts are ``..`` (continued)."""
    out: list[Cell] = []
    for c in cells:
        first = True
        for lo, hi in windows:
            s, e = max(c.start, lo), min(c.end, hi)
            if s < e:
                out.append(replace(c, start=s, end=e, label=c.label if first else ".."))
                first = False
    return out


def build_grid(entry: Entry, ref: Outcome, refs: dict[str, Outcome],
               diverge_at: int | None) -> Grid:
    """``ref`` is the entry's reference (its profile and policy); ``refs`` maps each
    recorded decoder to the reference of the profile and policy it claims. A long
    input is windowed (module docstring)."""
    data = entry.data
    n = len(data)
    alignment = alignment_of(entry)
    boundary: int | None = None
    windows: list[tuple[int, int]] = []
    if n > MAX_FULL or (n > LONG and (alignment is not None or entry.position_dependent)):
        boundary = boundary_of(n, diverge_at, alignment, entry.position_dependent)
        if diverge_at is not None or boundary is not None:
            windows = _windows(n, diverge_at, boundary)
    shown = windows or [(0, n)]
    cls = _byte_class(ref, n)
    opens = {t.start for t in ref.tokens if t.kind != "char"}
    closes = {t.end - 1 for t in ref.tokens if t.kind != "char"}
    cols = [i for lo, hi in shown for i in range(lo, hi)]
    hex_cells = [
        Cell(i, i + 1, ("[" if i in opens else "") + safe.hexbyte(data[i])
             + ("]" if i in closes else ""), cls[i])
        for i in cols
    ]
    lines = [
        Line("offset", "offset", [Cell(i, i + 1, str(i), "offset") for i in cols]),
        Line("bytes", "bytes", hex_cells),
        Line("class", "class", [Cell(i, i + 1, _CLASS_LETTER[cls[i]], cls[i]) for i in cols]),
    ]
    blocks = blocks_of(n) if entry.position_dependent else {}
    if windows:
        blocks = {o: b for o, b in blocks.items() if any(lo <= o < hi for lo, hi in windows)}
    if blocks:
        lines.append(Line("blocks", "blocks",
                          [Cell(o, o + 1, f"|{b}", "block") for o, b in sorted(blocks.items())]))
    if boundary is not None:
        size = alignment or (boundary & -boundary)
        if boundary < n:
            mark = Cell(boundary, boundary + 1, f"|0x{boundary:X} = {boundary}", "boundary",
                        title=f"a {size:,}-byte boundary: byte {boundary} begins a block")
        else:
            mark = Cell(n - 1, n, f"0x{boundary:X} = {boundary}|", "boundary-end",
                        title=f"the input ends at a {size:,}-byte boundary")
        lines.append(Line("boundary", "boundary", [mark]))
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
    if not windows:
        return Grid(data, lines, blocks, diverge_at)
    for ln in lines:
        if ln.role not in ("offset", "bytes", "class"):  # made for the windows already
            ln.cells = _clip(ln.cells, windows)
    ends = [0, *(x for w in windows for x in w), n]
    gaps = [_gap(data, ref, ends[k], ends[k + 1]) for k in range(0, len(ends), 2)
            if ends[k] < ends[k + 1]]
    return Grid(data, lines, blocks, diverge_at, windows, gaps, boundary)


# -- chunking and the text layout (shared by both renderers) --------------------------


def chunk(grid: Grid, width: int) -> list[tuple[int, int, list[Line]]]:
    """The grid's windows (the whole input unless windowed) cut into pieces of
    ``width`` byte columns. A cell crossing a cut is split; the piece after the cut
    is labelled ``..`` (continued)."""
    bounds = [(lo, min(lo + width, whi)) for wlo, whi in grid.shown
              for lo in range(wlo, whi, width)] or [(0, 1)]
    pieces = []
    for lo, hi in bounds:
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


def layout(grid: Grid, width: int) -> list[tuple[int, int, list[Line]] | Gap]:
    """:func:`chunk`'s pieces with the grid's gaps between them, in byte order: what
    a renderer lays out, top to bottom."""
    gaps = sorted(grid.gaps, key=lambda g: g.start)
    out: list[tuple[int, int, list[Line]] | Gap] = []
    for piece in chunk(grid, width):
        while gaps and gaps[0].start < piece[0]:
            out.append(gaps.pop(0))
        out.append(piece)
    out += gaps
    return out


def text_layout(grid: Grid, width: int = 16) -> str:
    """The grid as fixed-width text (for Markdown code blocks): column widths grow
    so that every label fits under the bytes it belongs to. A differing cell's
    label ends with ``*``."""
    out: list[str] = []
    if grid.length == 0:
        return "(empty input)"
    name_w = max(len(ln.label) for ln in grid.lines)
    for item in layout(grid, width):
        if isinstance(item, Gap):
            out += [item.label, ""]
            continue
        lo, hi, lines = item
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
