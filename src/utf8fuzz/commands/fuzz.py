"""``utf8fuzz fuzz``: find inputs on which decoders disagree, and keep them.

Runs the chosen engine(s) (:mod:`utf8fuzz.engine.run`) against the selected decoders
(default: every available decoder; the references are the oracle, never under
test). Each new signature is minimized and saved to the corpus. While it runs, a
rich status line shows executions per second, divergences and corpus size; at the
end a summary table (or, with ``--json``, one JSON object) and the triage report.

Exit status: 0 when nothing new was found, 1 when new divergences were saved, 2 on a
usage error. Divergences that a full re-run of their input did not show again are
listed as "unreproduced" (not saved, not counted as new). The default budget (one
hour, every core) suits a nightly job.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from utf8fuzz.commands._common import add_decoder_arguments, select_decoders
from utf8fuzz.errors import UsageError

if TYPE_CHECKING:
    from utf8fuzz.engine.run import Progress

HELP = "fuzz decoders against the references; save minimized divergences to the corpus"

NIGHTLY_SECONDS = 3600


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_decoder_arguments(p)
    p.add_argument("--engine", choices=("atheris", "hypothesis", "both"), default="both",
                   help="input generator (default both)")
    p.add_argument("--time", type=float, default=NIGHTLY_SECONDS, metavar="SECONDS",
                   help=f"time budget (default {NIGHTLY_SECONDS}, a nightly run)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (default: every core)")
    p.add_argument("--corpus", default="corpus", metavar="DIR",
                   help="corpus directory (default corpus)")
    p.add_argument("--report", default="reports", metavar="DIR",
                   help="where the triage report is written (default reports)")
    p.add_argument("--no-report", action="store_true", help="do not write the triage report")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.add_argument("--full-every", type=int, default=None, metavar="N",
                   help="decode every decoder in full on one input in N; the others are "
                        "screened by cheap views first (default $UTF8FUZZ_FULL_EVERY or 8; "
                        "1: always in full)")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.engine.run import Progress, fuzz

    if args.time <= 0:
        raise UsageError("--time must be positive")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.full_every is not None and args.full_every < 1:
        raise UsageError("--full-every must be at least 1")
    decs = select_decoders(args)
    under_test = [d for d in decs if not d.name.startswith("ref:")]
    corpus = Path(args.corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    err = sys.stderr
    if not under_test:
        print("utf8fuzz fuzz: no decoder under test (only references, which are the oracle); "
              "nothing to compare", file=err)
    progress = Progress()
    stop = threading.Event()
    live = None if args.json or not err.isatty() else _start_live(progress, corpus, stop)
    try:
        result = fuzz(decs, engine=args.engine, seconds=args.time, jobs=args.jobs,
                      corpus=corpus, specs=args.decoder, profiles=args.profile,
                      progress=progress, full_every=args.full_every)
    finally:
        stop.set()
        if live is not None:
            live.join()
    result["report"] = None if args.no_report else _report(corpus, Path(args.report), result)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_summary(result)
    return 1 if result["new"] else 0


def _report(corpus: Path, out: Path, result: dict[str, Any]) -> str | None:
    try:
        from utf8fuzz.report import build_report
    except ImportError:
        print("utf8fuzz fuzz: the report module is not available; no triage report written",
              file=sys.stderr)
        return None
    try:
        return str(build_report(corpus, out, result))
    except Exception as e:  # the run's findings are saved; a report failure must not hide them
        print(f"utf8fuzz fuzz: the triage report failed: {type(e).__name__}: {e}",
              file=sys.stderr)
        return None


def _start_live(progress: Progress, corpus: Path, stop: threading.Event) -> threading.Thread:
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from utf8fuzz.engine.corpus import signature_ids

    console = Console(stderr=True)

    def line() -> Text:
        el = max(1e-9, time.monotonic() - progress.started)
        n = progress.total
        return Text(f"fuzzing {el:6.0f}s  execs {n:>9,}  ({n / el:,.0f}/s)  "
                    f"divergent inputs {sum(progress.divergent.values()):,}  "
                    f"new signatures {len(progress.new)}  "
                    f"corpus {len(signature_ids(corpus))}")

    def loop() -> None:
        with Live(line(), console=console, refresh_per_second=2, transient=True) as live:
            while not stop.wait(0.5):
                live.update(line())

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def _print_summary(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    t = Table(title="utf8fuzz fuzz", show_header=False)
    t.add_column("", style="bold")
    t.add_column("")
    t.add_row("engines", ", ".join(result["engines"]) or "none")
    t.add_row("decoders", Text(", ".join(result["decoders"])))
    t.add_row("executions", f"{result['executions']:,} in {result['seconds']} s "
              f"({result['execs_per_sec']:,.0f}/s)")
    t.add_row("divergent inputs", f"{result['divergent_inputs']:,}")
    t.add_row("new signatures", str(len(result["new"])))
    if result.get("unreproduced"):
        t.add_row("unreproduced", f"{len(result['unreproduced'])} (met once, gone on a "
                  "full re-run: a stateful or flaky decoder; not saved)")
    t.add_row("corpus", f"{result['corpus']} ({result['corpus_size']} entries)")
    for k in ("atheris", "atheris_error"):
        if result.get(k):
            t.add_row(k, Text(str(result[k])))
    t.add_row("report", str(result.get("report") or "none"))
    console.print(t)
    if result["new"]:
        n = Table(title="new divergences")
        for col in ("signature", "class", "feature", "input (hex)"):
            n.add_column(col, overflow="fold")
        for x in result["new"]:
            n.add_row(Text(x["signature"]), x["class"], x["feature"], x["input"].upper())
        console.print(n)
    if result.get("unreproduced"):
        u = Table(title="unreproduced (met once; a full re-run of the input did not show it)")
        for col in ("signature", "input (hex)"):
            u.add_column(col, overflow="fold")
        for x in result["unreproduced"]:
            u.add_row(Text(x["signature"]), x["input"].upper())
        console.print(u)
