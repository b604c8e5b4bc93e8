"""hexview: annotated hex, and outputs aligned under the bytes they consumed."""

from __future__ import annotations

import pytest

import utf8fuzz
from tests.engine.planted_long import Lead255, PageTail
from tests.report.builder import cpython_decoders
from tests.report.conftest import entry_for
from utf8fuzz.engine.corpus import build_sidecar, save
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.minimize import minimize
from utf8fuzz.report.analyze import analyze
from utf8fuzz.report.hexview import (
    alignment_of,
    blocks_of,
    boundary_of,
    build_grid,
    chunk,
    text_layout,
)
from utf8fuzz.report.html import render as html_render
from utf8fuzz.report.load import Corpus, Entry, load_corpus
from utf8fuzz.report.markdown import render as markdown_render


def grid_of(e: Entry):  # type: ignore[no-untyped-def]
    ref = utf8fuzz.decode(e.data, e.profile, e.reference_policy)
    refs = {n: utf8fuzz.decode(e.data, r.profile, r.policy) for n, r in e.records.items()}
    return build_grid(e, ref, refs, 1)


def line(grid, prefix: str):  # type: ignore[no-untyped-def]
    for ln in grid.lines:
        if ln.label.startswith(prefix) or prefix in ln.members:
            return ln
    raise AssertionError(f"no line {prefix!r}: {[ln.label for ln in grid.lines]}")


def test_bytes_are_classified_and_errors_bracketed(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:accepts-c080")
    assert e.data == b"\x41\xc0\x80\x42"
    g = grid_of(e)
    assert [c.label for c in line(g, "bytes").cells] == ["41", "[C0]", "[80]", "42"]
    assert [c.label for c in line(g, "class").cells] == ["a", "x", "x", "a"]
    ref = line(g, "ref:unicode")
    assert [(c.start, c.end, c.label) for c in ref.cells] == [
        (0, 1, "U+0041"), (1, 2, "ERR"), (2, 3, "ERR"), (3, 4, "U+0042")]


def test_lead_and_continuation_bytes() -> None:
    from utf8fuzz.report.load import Entry

    data = "\u202e".encode() + b"\xe1\x80"
    e = Entry(path=None, sig_id="x", signature="s", profile="unicode", cls="c",  # type: ignore[arg-type]
              feature="f", decoders=(), reference="ref:unicode:maximal-subpart", data=data,
              position_dependent=False, first_difference={}, records={}, versions={}, found={})
    g = build_grid(e, utf8fuzz.decode(data), {}, None)
    assert [c.label for c in line(g, "class").cells] == ["L", "c", "c", "t", "t"]
    assert [c.label for c in line(g, "bytes").cells] == ["E2", "80", "AE", "[E1", "80]"]
    assert [c.label for c in line(g, "ref:").cells] == ["U+202E", "ERR.t"]


def test_a_replace_only_decoder_is_aligned_until_it_differs(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:accepts-c080")
    g = grid_of(e)
    planted = line(g, "planted:accepts-c080")
    first, rest = planted.cells
    assert (first.start, first.end, first.label, first.differs) == (0, 1, "U+0041", False)
    # From the first difference on, its output cannot be attributed to bytes.
    assert (rest.start, rest.end, rest.label, rest.differs) == (1, 4, "U+0000 U+0042", True)
    assert rest.kind == "unaligned"
    replace = line(g, "cpython:replace")
    assert [c.label for c in replace.cells] == ["U+0041", "U+FFFD", "U+FFFD", "U+0042"]
    assert not any(c.differs for c in replace.cells)


def test_identical_lines_are_grouped(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:accepts-c080")
    g = grid_of(e)
    shared = line(g, "cpython:replace")
    assert "cpython:replace" in shared.members and len(shared.members) > 1
    assert len({ln.label for ln in g.lines}) == len(g.lines)


def test_strict_and_crash_lines(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:accepts-c080")
    g = grid_of(e)
    strict = line(g, "cpython:strict")
    assert [(c.start, c.end, c.label) for c in strict.cells] == [(1, 2, "1st ERR")]
    crash = line(g, "plugin:quotes-input")
    assert crash.cells[0].kind == "failure" and crash.cells[0].label == "CRASH (ValueError)"


def test_text_layout_aligns_labels_under_their_bytes(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:accepts-c080")
    text = text_layout(grid_of(e))
    rows = {ln.split(" | ")[0].strip(): ln.split(" | ", 1)[1] for ln in text.splitlines()
            if " | " in ln}
    b, r = rows["bytes"], rows["ref:unicode:maximal-subpart (reference)"]
    assert b.index("42") == r.index("U+0042")
    assert b.index("[80]") == r.index("ERR", r.index("ERR") + 1)


def test_block_boundaries_only_when_position_dependent(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:block-boundary")
    assert e.position_dependent and len(e.data) > 32
    g = grid_of(e)
    assert g.blocks == blocks_of(len(e.data)) == {16: 16, 32: 32}
    assert [c.label for c in line(g, "blocks").cells] == ["|16", "|32"]
    other = entry_for(corpus, "planted:accepts-c080")
    assert not any(ln.role == "blocks" for ln in grid_of(other).lines)
    assert blocks_of(130) == {16: 16, 32: 32, 48: 16, 64: 64, 80: 16, 96: 32, 112: 16, 128: 64}


def test_chunks_split_cells_and_mark_continuations(corpus: Corpus) -> None:
    e = entry_for(corpus, "planted:block-boundary")
    pieces = chunk(grid_of(e), 16)
    assert [(lo, hi) for lo, hi, _ in pieces] == [(0, 16), (16, 32), (32, len(e.data))]
    _, _, lines = pieces[1]
    planted = next(ln for ln in lines if "planted:block-boundary" in ln.members)
    assert planted.cells[0].label == ".."


# -- long inputs: the rows around the first difference, and the boundary ------------------


@pytest.fixture(scope="module")
def long_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """Entries as the engine makes them for two planted long bugs (engine/planted_long.py):
    found by the Differ on a long input, beside two of CPython's decoders; minimized by the
    minimizer, whose stats go into the sidecar; written by build_sidecar and save."""
    root = tmp_path_factory.mktemp("long")
    cases = [(Lead255(), b"a" * (4096 + 255) + "\u0436".encode() + b" tail" * 100),
             (PageTail(), (b"filler " * 600)[:4094] + b"\xe2\x82")]  # a 3-byte lead cut short
    # CPython's decoders of the views the planted ones show (each of the others costs
    # as much on every step of minimizing a 4 KiB input, and shows nothing more here)
    beside = [d for d in cpython_decoders() if d.name in ("cpython:replace", "cpython:strict")]
    for planted, data in cases:
        decs = [planted, *beside]
        differ = Differ(decs)
        (sig,) = [s for s in differ.signatures(data) if planted.name in str(s)]
        m = minimize(data, lambda b, sig=sig, differ=differ: sig in differ.signatures(b),
                     seconds=30)
        res = differ.run(m.data, full=True)
        dv = next(d for d in res.divergences if str(d.signature) == sig)
        side = build_sidecar(res, dv, {d.name: d for d in decs}, engine="manual",
                             original_size=len(data), minimizer=m.stats(),
                             position_dependent=m.position_dependent)
        save(root, side, m.data)
    return load_corpus(root)


def section_for(corpus: Corpus, part: str):  # type: ignore[no-untyped-def]
    rep = analyze(corpus, "2026-11-27")
    return next(s for s in rep.sections if part in s.entry.signature)


def test_a_block_bug_shows_the_row_of_its_difference_and_the_boundary(long_corpus) -> None:  # type: ignore[no-untyped-def]
    sec = section_for(long_corpus, "planted-long:lead255")
    e, g = sec.entry, sec.grid
    # the minimizer's result: 255 bytes of filler, then U+0436 across the 256-byte line
    assert e.data == b"A" * 255 + "\u0436".encode() and alignment_of(e) == 256
    assert sec.verdict.offset == 255
    assert g.windows == [(240, 257)] and g.boundary == 256
    assert [(x.start, x.end, x.label) for x in g.gaps] == [
        (0, 240, "... 240 bytes of 41 at 0x0-0xEF (0-239) ...")]
    assert [c.label for c in line(g, "offset").cells] == [str(i) for i in range(240, 257)]
    (mark,) = line(g, "boundary").cells
    assert (mark.start, mark.label) == (256, "|0x100 = 256")
    assert all(c.start >= 240 for ln in g.lines for c in ln.cells)
    text = text_layout(g)
    assert text.startswith("... 240 bytes of 41 at 0x0-0xEF (0-239) ...\n")
    assert "|0x100 = 256" in text and "\n0 " not in text


def test_a_page_tail_bug_shows_its_last_row_and_where_the_page_ends(long_corpus) -> None:  # type: ignore[no-untyped-def]
    sec = section_for(long_corpus, "planted-long:page-tail")
    e, g = sec.entry, sec.grid
    assert len(e.data) == 4096 and e.data.endswith(b"\xe2\x82") and e.position_dependent
    assert alignment_of(e) is None  # no prefix keeps it: the bug needs the length
    assert g.boundary == 4096 and g.windows == [(4080, 4096)]
    assert 4080 <= sec.verdict.offset < 4096
    (gap,) = g.gaps
    assert gap.label == "... 4,080 bytes of 41 at 0x0-0xFEF (0-4079) ..."
    (mark,) = line(g, "boundary").cells
    assert (mark.start, mark.end, mark.label) == (4095, 4096, "0x1000 = 4096|")
    assert len(chunk(g, 16)) == 1  # one row, not 256
    assert max(len(ln.cells) for ln in g.lines) <= 16
    rep = analyze(long_corpus, "2026-11-27")
    page = html_render(rep)
    assert page.isascii()
    assert '<p class="elided">... 4,080 bytes of 41 at 0x0-0xFEF (0-4079) ...</p>' in page
    assert "0x1000 = 4096|" in page and "|0x100 = 256" in page
    md = markdown_render(rep)
    assert "... 4,080 bytes of 41 at 0x0-0xFEF (0-4079) ..." in md


def test_windows_and_gaps_by_hand() -> None:
    # an entry the fuzzer did not make: two windows (the difference, the boundary),
    # the bytes between and after them described by the reference's tokens
    data = b"A" * 100 + "\u00e9".encode() * 200 + b"\xc0" + b"B" * 300
    e = Entry(path=None, sig_id="x", signature="s", profile="unicode", cls="c",  # type: ignore[arg-type]
              feature="f", decoders=(), reference="ref:unicode:maximal-subpart", data=data,
              position_dependent=True, first_difference={}, records={}, versions={},
              found={"minimizer": {"alignment": 128}})
    g = build_grid(e, utf8fuzz.decode(data), {}, 40)
    assert g.boundary == 128
    assert boundary_of(len(data), 40, 128, True) == 128  # nearest multiple; never 0
    assert boundary_of(len(data), 200, 128, True) == 256
    assert boundary_of(len(data), 192, 128, True) == 256  # a tie: the upper one
    assert boundary_of(4099, 4090, None, True) == 4096  # the most aligned nearby
    assert boundary_of(4099, 4090, None, False) is None
    assert [(lo, hi) for lo, hi in g.windows] == [(32, 48), (112, 144)]
    assert [(x.start, x.end) for x in g.gaps] == [(0, 32), (48, 112), (144, len(data))]
    assert g.gaps[0].label == "... 32 bytes of 41 at 0x0-0x1F (0-31) ..."
    # 48-99 ASCII (52), then 6 two-byte characters (100-111)
    assert g.gaps[1].label == ("... 64 bytes at 0x30-0x6F (48-111): 58 characters, "
                               "0 errors or reserved ...")
    # from 144: 78 two-byte characters, the C0, 300 B
    assert g.gaps[2].label.endswith(": 478 characters, 1 errors or reserved ...")
    # unset or bad alignments in a sidecar are no alignment
    for bad in (0, 3, True, "256", 1 << 20, None):
        e.found = {"minimizer": {"alignment": bad}}
        assert alignment_of(e) is None
