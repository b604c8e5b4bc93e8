"""The report opened in a real headless browser (Debian's chromium): no console
errors, no exceptions, no request beyond the file itself, and the parts a person
looks at are there. Screenshots are written next to the report for a human look.

Skipped when chromium is absent (``UTF8FUZZ_WITH_CHROMIUM=1 bash
scripts/system-deps.sh`` installs it; CI does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.builder import (
    BLOCK_INPUT,
    HOSTILE_INPUT,
    STANDARD_INPUTS,
    hostile_decoders,
    standard_decoders,
    write_corpus,
)
from tests.report.cdp import Browser, OpenPage, chromium
from utf8fuzz.report import build_report

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium is not installed")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    decs = {d.name: d for d in [*standard_decoders(), *hostile_decoders()]}
    write_corpus(root / "corpus", inputs=[*STANDARD_INPUTS, HOSTILE_INPUT],
                 decoders=list(decs.values()), position_dependent=(BLOCK_INPUT,))
    build_report(root / "corpus", root / "reports", date="2026-05-01")
    return build_report(root / "corpus", root / "reports", date="2026-05-02") / "report.html"


@pytest.fixture(scope="module")
def page(report: Path):  # type: ignore[no-untyped-def]
    b = Browser()
    try:
        yield OpenPage(b, report.as_uri())
    finally:
        b.close()


def test_no_console_errors_or_exceptions(page: OpenPage) -> None:
    rec = page.record()
    assert [c for c in rec.console if c.get("type") in ("error", "warning", "assert")] == []
    assert rec.exceptions == []
    assert [e for e in rec.log if e.get("level") in ("error", "warning")] == []


def test_no_network(page: OpenPage, report: Path) -> None:
    rec = page.record()
    assert rec.requests == [report.as_uri()]


def test_what_a_person_sees(page: OpenPage, report: Path) -> None:
    assert page.eval("document.title") == "utf8fuzz report 2026-05-02"
    assert page.eval("document.scripts.length") == 0
    n_sections = page.eval("document.querySelectorAll('section').length")
    assert n_sections >= 4
    # Every section has a clause, a verdict and an aligned grid.
    assert page.eval("document.querySelectorAll('section .clause').length") == n_sections
    assert page.eval("document.querySelectorAll('section table.grid').length") >= n_sections
    # Both figures render with a size.
    sizes = page.eval("[...document.querySelectorAll('figure svg')]"
                      ".map(s => s.getBoundingClientRect().width)")
    assert len(sizes) == 2 and all(w > 100 for w in sizes)
    # Nothing makes the page scroll sideways (the matrix fits a 1,280-px window).
    assert page.eval("document.documentElement.scrollWidth <= window.innerWidth")
    # The trend has the earlier report's point too.
    assert page.eval("document.querySelectorAll('#trend ~ figure circle').length") == 4
    # The hostile name is shown escaped, as text.
    text = page.eval("document.body.innerText")
    assert "plugin:\\u202eevil\\x1b[2J<b>&" in text
    assert "\u202e" not in text and "\x1b" not in text
    out = report.parent
    page.screenshot(out / "top.png")
    page.screenshot(out / "matrix.png", "matrix")
    assert (out / "top.png").stat().st_size > 10_000


def test_the_recorder_sees_errors_and_requests(tmp_path: Path) -> None:
    # The checks above can fail: a page with a console error, an uncaught exception
    # and an outside request is caught by the same recorder.
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>t</title><img src='http://127.0.0.1:9/x.png'>"
                   "<script>console.error('boom'); undefined_fn();</script>")
    b = Browser()
    try:
        rec = OpenPage(b, bad.as_uri()).record()
    finally:
        b.close()
    assert any(c.get("type") == "error" for c in rec.console)
    assert rec.exceptions
    assert "http://127.0.0.1:9/x.png" in rec.requests
