"""The report opened in a real headless browser (Debian's chromium, driven by
Playwright): no console errors or warnings, no exceptions, no request beyond the
file itself, and the parts a person looks at are there. Screenshots are written
next to the report for a human look.

Playwright runs the system chromium (``executable_path``): its own browser
download is never used. Skipped when chromium is absent (``UTF8FUZZ_WITH_CHROMIUM=1
bash scripts/system-deps.sh`` installs it; CI does)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, Request, sync_playwright

from tests.report.builder import (
    BLOCK_INPUT,
    HOSTILE_INPUT,
    STANDARD_INPUTS,
    hostile_decoders,
    standard_decoders,
    write_corpus,
)
from utf8fuzz.report import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# processes: Playwright starts its driver and the browser from module fixtures,
# before the check tier's per-test guard could refuse them.
pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (UTF8FUZZ_WITH_CHROMIUM=1 bash scripts/system-deps.sh)"),
]

# --no-sandbox: chromium refuses to start as root without it. The rest keep the
# browser from calling out on its own (this machine's network is closed, and the
# request check must see the page's requests only).
FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync"]
WIDTH = 1280

# Console types that fail the page. Playwright reports the browser's log entries
# (CSP violations, failed loads) as console messages of their level, so these
# cover them too.
BAD_CONSOLE = ("error", "warning", "assert")


@dataclass
class Recorded:
    """What a page did while it loaded: console messages (type, text), uncaught
    exceptions and the URL of every request."""

    console: list[tuple[str, str]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def bad_console(self) -> list[tuple[str, str]]:
        return [c for c in self.console if c[0] in BAD_CONSOLE]


def open_page(browser: Browser, url: str) -> tuple[Page, Recorded]:
    """``url`` in a fresh 1,280-px-wide page, recorded from before the navigation
    until the network has been idle (Playwright's ``networkidle``), so late
    messages and requests are in."""
    rec = Recorded()
    page = browser.new_page(viewport={"width": WIDTH, "height": 900}, device_scale_factor=1)

    def on_console(m: ConsoleMessage) -> None:
        rec.console.append((m.type, m.text))

    def on_request(r: Request) -> None:
        rec.requests.append(r.url)

    def on_error(e: Error) -> None:
        rec.exceptions.append(str(e))

    page.on("console", on_console)
    page.on("pageerror", on_error)
    # The page's context: requests from its workers too, not only its frames.
    page.context.on("request", on_request)
    page.goto(url, wait_until="networkidle")
    return page, rec


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    decs = {d.name: d for d in [*standard_decoders(), *hostile_decoders()]}
    write_corpus(root / "corpus", inputs=[*STANDARD_INPUTS, HOSTILE_INPUT],
                 decoders=list(decs.values()), position_dependent=(BLOCK_INPUT,))
    build_report(root / "corpus", root / "reports", date="2026-05-01")
    return build_report(root / "corpus", root / "reports", date="2026-05-02") / "report.html"


@pytest.fixture(scope="module")
def opened(browser: Browser, report: Path) -> Iterator[tuple[Page, Recorded]]:
    page, rec = open_page(browser, report.as_uri())
    try:
        yield page, rec
    finally:
        page.close()


def test_no_console_errors_or_exceptions(opened: tuple[Page, Recorded]) -> None:
    _, rec = opened
    assert rec.bad_console() == []
    assert rec.exceptions == []


def test_no_network(opened: tuple[Page, Recorded], report: Path) -> None:
    _, rec = opened
    assert rec.requests == [report.as_uri()]


def screenshot(page: Page, path: Path, element_id: str | None = None,
               height: int = 1400) -> None:
    """``height`` px of the page at full width, from the top or from an element."""
    top = 0.0
    if element_id:
        top = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top"
                            " + window.scrollY", element_id)
    page.screenshot(path=path, full_page=True,
                    clip={"x": 0, "y": top, "width": WIDTH, "height": height})


def test_what_a_person_sees(opened: tuple[Page, Recorded], report: Path) -> None:
    page, _ = opened
    assert page.title() == "utf8fuzz report 2026-05-02"
    assert page.evaluate("document.scripts.length") == 0
    n_sections = page.evaluate("document.querySelectorAll('section').length")
    assert n_sections >= 4
    # Every section has a clause, a verdict and an aligned grid.
    assert page.evaluate("document.querySelectorAll('section .clause').length") == n_sections
    assert page.evaluate("document.querySelectorAll('section table.grid').length") >= n_sections
    # Both figures render with a size.
    sizes = page.evaluate("[...document.querySelectorAll('figure svg')]"
                          ".map(s => s.getBoundingClientRect().width)")
    assert len(sizes) == 2 and all(w > 100 for w in sizes)
    # Nothing makes the page scroll sideways (the matrix fits a 1,280-px window).
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # The trend has the earlier report's point too.
    assert page.evaluate("document.querySelectorAll('#trend ~ figure circle').length") == 4
    # The hostile name is shown escaped, as text.
    text = page.evaluate("document.body.innerText")
    assert "plugin:\\u202eevil\\x1b[2J<b>&" in text
    assert "\u202e" not in text and "\x1b" not in text
    out = report.parent
    screenshot(page, out / "top.png")
    screenshot(page, out / "matrix.png", "matrix")
    assert (out / "top.png").stat().st_size > 10_000
    assert (out / "matrix.png").stat().st_size > 10_000


def test_the_recorder_sees_errors_and_requests(browser: Browser, tmp_path: Path) -> None:
    # The checks above can fail: a page with a console error, an uncaught exception
    # and an outside request, and a load blocked by the report's own CSP (a log
    # entry, and the attempted request), are caught by the same recorder.
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>t</title><img src='http://127.0.0.1:9/x.png'>"
                   "<script>console.error('boom'); undefined_fn();</script>")
    csp = tmp_path / "csp.html"
    csp.write_text("<!DOCTYPE html><meta http-equiv='Content-Security-Policy'"
                   " content=\"default-src 'none'\"><title>t</title>"
                   "<img src='http://127.0.0.1:9/y.png'>")
    page, rec = open_page(browser, bad.as_uri())
    page.close()
    assert ("error", "boom") in rec.console
    assert any("undefined_fn" in e for e in rec.exceptions)
    assert "http://127.0.0.1:9/x.png" in rec.requests
    page, rec = open_page(browser, csp.as_uri())
    page.close()
    assert any(t == "error" and "Content Security Policy" in m for t, m in rec.console)
    assert rec.requests == [csp.as_uri(), "http://127.0.0.1:9/y.png"]
