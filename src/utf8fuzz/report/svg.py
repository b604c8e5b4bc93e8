"""The two figures of the HTML report, as inline SVG.

Written by hand on purpose: the report must be one self-contained file with no
network requests and no JavaScript libraries, and the figures are a heat map and
two line series. matplotlib would add a large dependency (and its SVG output
embeds fonts and ids that vary between versions, which would break the "same
corpus, same report" guarantee) for ~100 lines of deterministic markup. Every
label goes through :mod:`.safe`.
"""

from __future__ import annotations

from utf8fuzz import safe
from utf8fuzz.report.matrix import Matrix
from utf8fuzz.report.trend import Point

CHAR_W = 6.6  # approximate width of a 11px monospace character
#: The widest the matrix is drawn: the report's body is 1,200 px (html.py), so a
#: 1,400-px window shows the whole matrix without scrolling sideways.
MATRIX_MAX_W = 1150


def _color(ratio: float) -> str:
    """White-to-red: 0 disagreements is near white, all inputs is dark red."""
    r = 255
    g = round(245 - 190 * ratio)
    b = round(240 - 200 * ratio)
    if ratio > 0.6:
        r = round(255 - 80 * (ratio - 0.6) / 0.4)
    return f"#{r:02x}{g:02x}{b:02x}"


def matrix_svg(m: Matrix) -> str:
    names = [safe.text(n, 48) for n in m.decoders]
    n = len(names)
    if n == 0:
        return ""
    label_w = round(max(len(x) for x in names) * CHAR_W) + 12
    # cells shrink (down to 18 px, their count in a smaller font) so that the
    # matrix fits MATRIX_MAX_W; the page scales the rare larger one down (html.py)
    cell = max(18, min(44, (MATRIX_MAX_W - label_w - 10) // n))
    count_font = 11 if cell >= 32 else 9 if cell >= 24 else 7
    top = label_w  # column labels are rotated, so they need as much height
    width = label_w + n * cell + 10
    height = top + n * cell + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="agreement matrix" '
        'font-family="monospace" font-size="11">'
    ]
    for i, name in enumerate(names):
        y = top + i * cell + cell / 2 + 4
        out.append(f'<text x="{label_w - 6}" y="{y:.0f}" text-anchor="end">{safe.xml(name)}</text>')
        x = label_w + i * cell + cell / 2 + 4
        out.append(f'<text transform="translate({x:.0f},{top - 6}) rotate(-90)" '
                   f'text-anchor="start">{safe.xml(name)}</text>')
    for i, a in enumerate(m.decoders):
        for j, b in enumerate(m.decoders):
            x, y = label_w + j * cell, top + i * cell
            if i == j:
                fill, label, tip = "#e8e8e8", "-", f"{a}"
            else:
                d, c = m.cell(a, b)
                if c == 0:
                    fill, label, tip = "#d0d0d0", "n/a", f"{a} vs {b}: no shared view"
                else:
                    fill, label = _color(d / c), str(d)
                    tip = f"{a} vs {b}: disagree on {d} of {c} inputs"
            dark = i != j and m.cell(a, b)[1] and m.cell(a, b)[0] / m.cell(a, b)[1] > 0.6
            ink = ' fill="#fff"' if dark else ""
            out.append(
                f'<g><title>{safe.xml(tip)}</title>'
                f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{fill}"/>'
                f'<text x="{x + (cell - 2) / 2:.0f}" y="{y + cell / 2 + 3:.0f}" '
                f'text-anchor="middle" font-size="{count_font}"{ink}>{safe.xml(label)}</text></g>'
            )
    out.append("</svg>")
    return "".join(out)


def trend_svg(points: list[Point]) -> str:
    if not points:
        return ""
    w, h = 680, 260
    left, right, top, bottom = 50, 150, 20, 60
    pw, ph = w - left - right, h - top - bottom
    ymax = max(1, *(p.corpus for p in points), *(p.found for p in points))
    n = len(points)

    def xy(i: int, v: int) -> tuple[float, float]:
        x = left + (pw * i / (n - 1) if n > 1 else pw / 2)
        return x, top + ph - ph * v / ymax

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="trend over runs" '
        'font-family="sans-serif" font-size="11">',
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#444"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#444"/>',
    ]
    for v in sorted({0, ymax // 2, ymax}):
        _, y = xy(0, v)
        out.append(f'<text x="{left - 6}" y="{y + 4:.0f}" text-anchor="end">{v}</text>')
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
    step = max(1, (n + 7) // 8)  # at most ~8 date labels
    for i, p in enumerate(points):
        if i % step == 0 or i == n - 1:
            x, _ = xy(i, 0)
            out.append(f'<text transform="translate({x:.0f},{top + ph + 12}) rotate(35)" '
                       f'text-anchor="start">{safe.xml(p.date)}</text>')
    series = (("corpus size", "#1f5fa8", [p.corpus for p in points]),
              ("divergences found", "#c0392b", [p.found for p in points]))
    for k, (label, color, vals) in enumerate(series):
        pts = [xy(i, v) for i, v in enumerate(vals)]
        if n > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                       'stroke-width="2"/>')
        for (x, y), v, p in zip(pts, vals, points, strict=True):
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}">'
                       f'<title>{safe.xml(p.date)}: {safe.xml(label)} {v}</title></circle>')
        ly = top + 10 + 18 * k
        out.append(f'<rect x="{left + pw + 16}" y="{ly - 8}" width="12" height="4" '
                   f'fill="{color}"/>')
        out.append(f'<text x="{left + pw + 34}" y="{ly - 3}">{safe.xml(label)}</text>')
    out.append("</svg>")
    return "".join(out)
