"""Triage reports: what diverged, which decoder the spec says is right, and the
shape of each decoder's behaviour.

``build_report(corpus_dir, out_dir, run=None, date=None)`` reads the corpus
(``docs/corpus.md``), analyses it and writes ``<out_dir>/<YYYY-MM-DD>/`` with
``report.html``, ``report.md`` and ``summary.json``. The fuzz engine calls it at
the end of every run with its ``--json`` summary as ``run``; ``utf8fuzz report``
calls it without. The signatures the corpus's ``known.toml`` accepts
(:mod:`utf8fuzz.triage.known`) are shown apart, under "Known differences".

Stages, one module each: :mod:`.load` (sidecars, corrupt ones listed by path),
:mod:`.verdict` (clause and verdict per decoder), :mod:`.hexview` (annotated hex
and aligned tokens), :mod:`.fingerprint`, :mod:`.matrix`, :mod:`.trend`,
:mod:`.reproduce`, :mod:`.findings` (signatures grouped by decoder family and
explanation, which the report leads with), :mod:`.analyze` (all of it, once), then
the renderers :mod:`.html` and :mod:`.markdown` with :mod:`.svg` for figures. :mod:`.safe` is
the only place where bytes or strings become displayable text.

Writing. A report for a date that already exists is replaced: the files are
written into a temporary directory inside ``out_dir`` and moved into place
with ``os.replace`` (the whole directory at once when the date is new), so a
reader never sees a half-written report.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from utf8fuzz.report.trend import DATE

FILES = ("report.html", "report.md", "summary.json")


def today() -> str:
    return _dt.datetime.now(_dt.UTC).date().isoformat()


def render_all(corpus_dir: Path, out_dir: Path | None, run: dict[str, Any] | None,
               date: str) -> dict[str, str]:
    """The three files' contents (no writing): name -> text."""
    from utf8fuzz.report import html, markdown
    from utf8fuzz.report.analyze import analyze
    from utf8fuzz.report.load import load_corpus
    from utf8fuzz.triage import known

    # A known.toml that cannot be used stops the report (KnownError, one line, exit
    # 2): a report that silently counted accepted differences as news would mislead.
    accepted = known.load(Path(corpus_dir))
    rep = analyze(load_corpus(Path(corpus_dir)), date, run, out_dir, accepted)
    return {
        "report.html": html.render(rep),
        "report.md": markdown.render(rep),
        "summary.json": json.dumps(rep.summary, indent=2, sort_keys=True) + "\n",
    }


def build_report(corpus_dir: Path, out_dir: Path, run: dict[str, Any] | None = None,
                 date: str | None = None) -> Path:
    """Write the report for ``date`` (default: today, UTC); return its directory."""
    date = date or today()
    if not DATE.match(date):
        raise ValueError(f"bad report date {date!r}: expected YYYY-MM-DD")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = render_all(Path(corpus_dir), out_dir, run, date)
    final = out_dir / date
    tmp = Path(tempfile.mkdtemp(prefix=f".{date}.tmp.", dir=out_dir))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if not final.exists():
            try:
                os.rename(tmp, final)
                return final
            except OSError:
                final.mkdir(exist_ok=True)  # another writer won the race: replace files
        for name in FILES:
            os.replace(tmp / name, final / name)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


__all__ = ["FILES", "build_report", "render_all", "today"]
