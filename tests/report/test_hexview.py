"""hexview: annotated hex, and outputs aligned under the bytes they consumed."""

from __future__ import annotations

import utf8fuzz
from tests.report.conftest import entry_for
from utf8fuzz.report.hexview import blocks_of, build_grid, chunk, text_layout
from utf8fuzz.report.load import Corpus, Entry


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
