"""facts: one list of per-entry facts, printed by both renderers in the same
words and order."""

from __future__ import annotations

from pathlib import Path

from tests.engine.planted import planted_c080
from tests.report.builder import cpython_decoders, write_corpus
from utf8fuzz import safe
from utf8fuzz.report import render_all
from utf8fuzz.report.analyze import analyze
from utf8fuzz.report.facts import Code, Fact, Hex, Text, entry_facts
from utf8fuzz.report.load import load_corpus
from utf8fuzz.triage.known import load as load_known

NON_SHORTEST = b"A\xc0\x80B"  # C0 80: a non-shortest form of U+0000 (Table 3.1B)


def _corpus(root: Path) -> Path:
    write_corpus(root, inputs=[NON_SHORTEST], decoders=[*cpython_decoders(), planted_c080()],
                 position_dependent=())
    (root / "known.toml").write_text(
        '[[known]]\ndecoder = "planted:accepts-c080"\nreason = "planted <on purpose>"\n')
    return root


def _order(page: str, needles: list[str]) -> list[int]:
    at, out = 0, []
    for n in needles:
        at = page.index(n, at)
        out.append(at)
    return out


def test_the_facts_of_an_entry_are_data(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "corpus")
    rep = analyze(load_corpus(root), "2026-03-04", known=load_known(root))
    (sec,) = rep.known_sections
    facts = entry_facts(sec)
    by = {f.label: f for f in facts}
    assert by["input (4 bytes):"].parts == (Hex(NON_SHORTEST),)
    assert by["id"].parts[0] == Code(sec.entry.sig_id)
    # the first difference is C0 (byte 1), where the planted decoder accepts C0 80
    assert by["reference"].parts[1].value.startswith("; first difference at byte 1")
    assert by["known difference:"] == Fact("known difference:", (Text("planted <on purpose>"),))


def test_both_renderers_print_the_one_list(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "corpus")
    rep = analyze(load_corpus(root), "2026-03-04", known=load_known(root))
    (sec,) = rep.known_sections
    labels = [f.label for f in entry_facts(sec) if f.label]
    assert labels[:3] == ["id", "input (4 bytes):", "reference"]
    assert labels[-1] == "known difference:"
    files = render_all(root, None, None, "2026-03-04")
    page = files["report.html"]
    html_sec = page[page.index(f'id="sig-{sec.entry.sig_id}"'):]
    html_sec = html_sec[:html_sec.index("</ul>")]
    _order(html_sec, [f"<li>{safe.html(lb)} " for lb in labels])
    assert "<li>input (4 bytes): <code>41 C0 80 42</code></li>" in html_sec
    assert "known difference: planted &lt;on purpose&gt;</li>" in html_sec
    md = files["report.md"]
    md_sec = md[md.index("### K1. "):]
    md_sec = md_sec[:md_sec.index("**Clause:**")]
    _order(md_sec, [f"- {safe.md(lb)} " for lb in labels])
    assert f"- {safe.md('input (4 bytes):')} `41 C0 80 42`" in md_sec
    assert f"- known difference: {safe.md('planted <on purpose>')}\n" in md_sec
