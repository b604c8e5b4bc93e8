"""``utf8fuzz report``: write the triage report for a corpus.

Writes ``<out>/<YYYY-MM-DD>/report.html``, ``report.md`` and ``summary.json``
(see ``reports/README.md``). A missing corpus directory is an error (exit 2); an
empty corpus gives a valid report that says so; unreadable entries are listed in
the report by path, one line each on stderr too, and the rest are still reported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from utf8fuzz import safe
from utf8fuzz.errors import UsageError

HELP = "write the triage report (HTML, Markdown, summary.json) for a corpus"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", metavar="DIR", default="corpus",
                   help="the corpus directory (default: corpus)")
    p.add_argument("--out", metavar="DIR", default="reports",
                   help="where reports/<date>/ is written (default: reports)")
    p.add_argument("--date", metavar="YYYY-MM-DD", default=None,
                   help="the report's date (default: today, UTC)")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.report import build_report
    from utf8fuzz.report.trend import DATE

    corpus = Path(args.corpus)
    if not corpus.is_dir():
        raise UsageError(f"no corpus directory at {safe.text(corpus)}")
    if args.date is not None and not DATE.match(args.date):
        raise UsageError(f"bad --date {args.date!r}: expected YYYY-MM-DD")
    out = build_report(corpus, Path(args.out), None, args.date)
    summary = out / "summary.json"
    import json

    s = json.loads(summary.read_text(encoding="utf-8"))
    n, bad = s["corpus"]["entries"], len(s["corpus"]["unreadable"])
    for c in s["corpus"]["unreadable"]:  # escaped by the summary; again, to be sure
        print(f"utf8fuzz report: skipped {safe.text(c['path'])}: {safe.text(c['reason'])}",
              file=sys.stderr)
    extra = f", {bad} unreadable (listed in the report)" if bad else ""
    print(f"report for {n} corpus entries{extra}: {safe.text(out / 'report.html')}")
    return 0
