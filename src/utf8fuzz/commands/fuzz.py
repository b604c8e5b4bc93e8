"""``utf8fuzz fuzz``: find inputs on which decoders disagree, and keep them.

Runs the chosen engine(s) (:mod:`utf8fuzz.loop.run`) against the selected decoders
(default: every available decoder; the references are the oracle, never under
test). Each new signature is minimized and saved to the corpus; a decoder that kills
the process running it (a segfault, an abort, ``SystemExit``) is a ``crash`` entry,
and the run goes on. While it runs, a rich status line on a terminal, else a plain
progress line on stderr every :data:`PROGRESS_EVERY` seconds; at the end a summary
table (or, with ``--json``, exactly one JSON object on stdout, interrupted or not)
and the triage report.

Exit status:

* 0 no new finding (new signatures of findings the corpus already had are saved as
  more evidence; divergences that ``CORPUS/known.toml`` accepts are saved, listed
  apart as ``known``, and do not count);
* 1 a new finding (one the corpus held no evidence of, not known) was saved;
* 2 a usage error (checked before fuzzing: options, decoders, output paths, a
  ``known.toml`` that cannot be used);
* 3 the run failed: an engine died, a worker could not start, a write failed (a
  full disk), the report could not be written; one line on stderr says what;
* 130 interrupted (after the summary).

Divergences that a full re-run of their input did not show again are listed as
"unreproduced" (not saved, not counted as new). The default budget (one hour, every
core) suits a nightly job. ``--runs N`` bounds each engine process by a count of
inputs instead (``--time`` stays a limit; the summary's ``ended`` says which came
first): with ``--jobs 1``, one engine and ``--seed``, the same corpus and decoders
give the same inputs, so the same findings, on any machine and under any load.
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

from utf8fuzz import safe
from utf8fuzz.commands._common import add_decoder_arguments, select_decoders
from utf8fuzz.errors import UsageError

if TYPE_CHECKING:
    from utf8fuzz.loop.state import Progress
    from utf8fuzz.triage.known import Known

HELP = "fuzz decoders against the references; save minimized divergences to the corpus"

NIGHTLY_SECONDS = 3600
#: Seconds between two progress lines when stderr is not a terminal (a CI log).
PROGRESS_EVERY = 10.0
EXIT_NEW, EXIT_USAGE, EXIT_FAILED, EXIT_INTERRUPTED = 1, 2, 3, 130


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_decoder_arguments(p)
    p.add_argument("--engine", choices=("atheris", "hypothesis", "both"), default="both",
                   help="input generator (default both)")
    p.add_argument("--time", type=float, default=NIGHTLY_SECONDS, metavar="SECONDS",
                   help=f"time budget, a limit (default {NIGHTLY_SECONDS}, a nightly run)")
    p.add_argument("--runs", type=int, default=None, metavar="N",
                   help="inputs each engine process tries past the seeds (a count: with "
                        "--jobs 1, one engine and a --seed, the same run on any machine); "
                        "with --time, whichever comes first")
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="the engines' random seed (default: a fresh one; with --runs, "
                        "in the summary)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (default: every core)")
    p.add_argument("--corpus", default="corpus", metavar="DIR",
                   help="corpus directory (default corpus)")
    p.add_argument("--work", default=None, metavar="DIR",
                   help="work directory: libFuzzer's corpus and crash files, in-flight "
                        "inputs, caches (default CORPUS/work)")
    p.add_argument("--report", default="reports", metavar="DIR",
                   help="where the triage report is written (default reports)")
    p.add_argument("--no-report", action="store_true", help="do not write the triage report")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.add_argument("--full-every", type=int, default=None, metavar="N",
                   help="decode every decoder in full on one input in N; the others are "
                        "screened by cheap views first (default $UTF8FUZZ_FULL_EVERY or 8; "
                        "1: always in full)")
    p.add_argument("--call-every", type=int, default=None, metavar="N",
                   help="ask each decoder about the call on one input in N: after earlier "
                        "calls, and as a view in a larger buffer (default "
                        "$UTF8FUZZ_CALL_EVERY or 512; 0: off)")


def writable_dir(path: Path, option: str) -> Path:
    """``path`` as a directory this process can write, made if missing; else a
    :class:`UsageError` naming ``option``."""
    shown = safe.text(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {shown} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{option} {shown}: cannot create it: "
                         f"{safe.text(e.strerror or e)}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {shown} is not writable")
    return path


def run(args: argparse.Namespace) -> int:
    """The command; with ``--json``, stdout holds exactly one JSON document on every
    exit path: the summary, or on a usage error (2), an interruption before the
    engines started (130) or a bug (3) ``{"error": MESSAGE, "exit": STATUS}``; the
    one line on stderr (or the traceback) is cli's, as for any command."""
    if not args.json:
        return _run(args)
    try:
        return _run(args)
    except (UsageError, ValueError, TypeError, LookupError, OSError) as e:
        msg = str(e) or type(e).__name__
        if isinstance(e, OSError) and e.filename:
            msg = f"{e.strerror or 'cannot read'}: {e.filename}"
        _json_error(msg, EXIT_USAGE)
        raise
    except KeyboardInterrupt:
        _json_error("interrupted", EXIT_INTERRUPTED)
        raise
    except Exception as e:
        _json_error(f"unexpected error: {type(e).__name__}", 3)
        raise


def _json_error(message: str, status: int) -> None:
    from utf8fuzz.loop.run import sigint_ignored

    with sigint_ignored():
        print(json.dumps({"error": safe.text(message), "exit": status}), flush=True)


def _run(args: argparse.Namespace) -> int:
    from utf8fuzz.engine.corpus import entries_dir, inputs_dir
    from utf8fuzz.loop.libfuzzer import atheris_available
    from utf8fuzz.loop.run import fuzz, sigint_ignored
    from utf8fuzz.loop.state import Progress
    from utf8fuzz.loop.summary import summary
    from utf8fuzz.triage import known as known_mod

    if args.time <= 0:
        raise UsageError("--time must be positive")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.runs is not None and args.runs < 1:
        raise UsageError("--runs must be at least 1")
    if args.seed is not None and not 0 <= args.seed < 2**31:
        raise UsageError(f"--seed must be from 0 to {2**31 - 1}")
    if args.full_every is not None and args.full_every < 1:
        raise UsageError("--full-every must be at least 1")
    from utf8fuzz.engine.calls import CHECK_EVERY_ENV, check_every_default

    if args.call_every is not None:
        if args.call_every < 0:
            raise UsageError("--call-every must be at least 0 (0: no checks of the call)")
        os.environ[CHECK_EVERY_ENV] = str(args.call_every)  # the engines' processes too
    try:
        check_every_default()
    except ValueError as e:
        raise UsageError(str(e)) from None
    corpus = writable_dir(Path(args.corpus), "--corpus")
    for sub in (entries_dir(corpus), inputs_dir(corpus)):
        if sub.exists():
            writable_dir(sub, "--corpus")
    known = known_mod.load(corpus)  # a bad file: exit 2 now, not after an hour
    work = writable_dir(Path(args.work) if args.work else corpus / "work", "--work")
    if not args.no_report:
        writable_dir(Path(args.report), "--report")
    decs = select_decoders(args)
    if args.engine != "hypothesis" and (why := atheris_available()) is not None:
        if args.engine == "atheris":
            raise UsageError(why)
        print(f"utf8fuzz fuzz: {safe.text(why)}: Hypothesis runs alone", file=sys.stderr)
    under_test = [d for d in decs if not d.name.startswith("ref:")]
    err = sys.stderr
    if not under_test:
        print("utf8fuzz fuzz: no decoder under test (only references, which are the oracle); "
              "nothing to compare", file=err)
    progress = Progress()
    stop = threading.Event()
    live = _start_live(progress, corpus, stop, known) if not args.json and err.isatty() \
        else _start_log(progress, stop, known)
    try:
        try:
            result = fuzz(decs, engine=args.engine, seconds=args.time, jobs=args.jobs,
                          corpus=corpus, specs=args.decoder, profiles=args.profile,
                          progress=progress, full_every=args.full_every, work=work,
                          known=known, runs=args.runs, seed=args.seed)
        except KeyboardInterrupt:  # before the engines started, or as they ended
            result = summary(decs, progress, corpus, [], {
                "interrupted": True, "runs": args.runs, "seed": args.seed,
                "ended": "interrupted"}, known)
    finally:
        stop.set()
        live.join()
    result["report"] = None
    if not args.no_report and not result.get("interrupted"):
        try:
            result["report"] = _report(corpus, Path(args.report), result)
        except KeyboardInterrupt:
            result["interrupted"] = True
    with sigint_ignored():  # one whole JSON document, whatever is pressed
        for line in result["failures"]:
            print(f"utf8fuzz fuzz: {safe.text(line)}", file=err)
        if args.json:
            print(json.dumps(result, indent=2), flush=True)
        else:
            _print_summary(result)
    if result["failures"]:
        return EXIT_FAILED
    if result.get("interrupted"):
        return EXIT_INTERRUPTED
    return EXIT_NEW if result["new_findings"] else 0


def _report(corpus: Path, out: Path, result: dict[str, Any]) -> str | None:
    """The triage report's path; a failure to write it is one of the run's failures
    (the findings are saved already, but the job's output is missing)."""
    from utf8fuzz.report import build_report

    try:
        return str(build_report(corpus, out, result))
    except Exception as e:
        result["failures"].append(safe.text(
            f"the triage report could not be written to {out}: {type(e).__name__}: {e}",
            limit=500))
        return None


def _progress_line(progress: Progress, known: Known | None = None) -> str:
    """The live line; signatures ``known`` accepts are counted apart from new ones."""
    from utf8fuzz.loop.summary import as_saved, split_known

    el = max(1e-9, time.monotonic() - progress.started)
    n = progress.total
    with progress.lock:
        div = sum(progress.divergent.values())
        found, crashes = list(progress.new), progress.crashes
    # as the corpus holds them: a finding explained on the shorter input a worker kept
    new, accepted = split_known([as_saved(x) for x in found], known)
    fresh = {str((x.get("finding") or {}).get("id", x["signature"])) for x in new} - set(
        progress.before)
    return (f"fuzzing {el:6.0f}s  execs {n:>9,}  ({n / el:,.0f}/s)  divergent inputs {div:,}  "
            f"new findings {len(fresh)} (signatures {len({x['signature'] for x in new})})"
            + (f"  known {len(accepted)}" if accepted else "")
            + (f"  processes ended {crashes}" if crashes else ""))


def _start_log(progress: Progress, stop: threading.Event,
               known: Known | None = None) -> threading.Thread:
    """A progress line on stderr every :data:`PROGRESS_EVERY` seconds, as libFuzzer
    logs, so that a CI log shows the run alive."""

    def loop() -> None:
        while not stop.wait(PROGRESS_EVERY):
            print(f"utf8fuzz fuzz: {_progress_line(progress, known)}", file=sys.stderr,
                  flush=True)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def _start_live(progress: Progress, corpus: Path, stop: threading.Event,
                known: Known | None = None) -> threading.Thread:
    from rich.live import Live
    from rich.text import Text

    from utf8fuzz.commands._console import console as make_console
    from utf8fuzz.engine.corpus import signature_ids

    console = make_console(stderr=True)

    def line() -> Text:
        return Text(f"{_progress_line(progress, known)}  corpus {len(signature_ids(corpus))}")

    def loop() -> None:
        with Live(line(), console=console, refresh_per_second=2, transient=True) as live:
            while not stop.wait(0.5):
                live.update(line())

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _print_summary(result: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    from utf8fuzz.commands._console import console as make_console

    def cell(s: object) -> Text:
        return Text(safe.text(s))  # Text: rich markup in a name is not markup

    console = make_console(highlight=False)  # off a terminal: rows whole, never folded
    t = Table(title="utf8fuzz fuzz", show_header=False)
    t.add_column("", style="bold")
    t.add_column("")
    t.add_row("engines", ", ".join(result["engines"]) or "none")
    t.add_row("decoders", cell(", ".join(result["decoders"])))
    t.add_row("executions", f"{result['executions']:,} in {result['seconds']} s "
              f"({result['execs_per_sec']:,.0f}/s"
              + (f", {result['mb_per_sec']:,.2f} MB/s)" if result.get("mb_per_sec") is not None
                 else ")"))
    seen = result.get("inputs_seen") or {}
    if seen:
        # by count: the decoders in the process saw every input, the slow ones a share
        by: dict[int, list[str]] = {}
        for k, v in sorted(seen.items()):
            by.setdefault(v, []).append(k)
        most = max(by)
        t.add_row("inputs seen", cell("; ".join(
            f"{n:,} by {_count(len(by[n]), 'decoder', 'decoders')}" if n == most
            else f"{n:,} by {', '.join(by[n])}"
            for n in sorted(by, reverse=True))))
    if result.get("runs") is not None:
        t.add_row("runs", f"{result['runs']:,} per engine process, seed {result['seed']}")
    if result.get("ended"):
        t.add_row("ended by", {"runs": "--runs (every engine process tried its count)",
                               "time": "--time", "interrupted": "an interrupt",
                               "failed": "a failure (below)"}.get(
                                   str(result["ended"]), safe.text(result["ended"])))
    t.add_row("divergent inputs", f"{result['divergent_inputs']:,}")
    calls = result.get("call_checks") or {}
    if calls:  # the checks of the call (engine/calls.py)
        asked = calls.get("asked") or {}
        t.add_row("checks of the call", "off ($UTF8FUZZ_CALL_EVERY=0)" if not calls["every"]
                  else f"history {asked.get('history', 0):,}, placed "
                       f"{asked.get('placed', 0):,} (one input in {calls['every']})")
    # ``new`` has an item per new entry; two entries can share a signature
    new_sigs = len({x["signature"] for x in result["new"]})
    t.add_row("new findings", f"{len(result['new_findings'])} (from "
              f"{_count(new_sigs, 'new signature', 'new signatures')}; the others add "
              "evidence to findings already in the corpus)")
    if result.get("known"):
        n_known = sum(1 for f in result["findings"] if f["known"])
        t.add_row("known", f"{_count(n_known, 'finding', 'findings')} from "
                  f"{_count(len(result['known']), 'signature', 'signatures')} (saved; "
                  "accepted in known.toml, not counted as new)")
    if result.get("crashes"):
        t.add_row("crashes", f"{result['crashes']} of the findings (a crash, a hang or a "
                  "bad outcome)")
    if result.get("processes_ended"):
        t.add_row("processes ended", f"{result['processes_ended']} (a decoder ended a fuzzing "
                  "process; re-run, saved, and the engine started again)")
    if result.get("unreproduced"):
        t.add_row("unreproduced", f"{len(result['unreproduced'])} (met once, gone on a "
                  "full re-run: a stateful or flaky decoder; not saved)")
    t.add_row("corpus", cell(f"{result['corpus']} "
                             f"({_count(result.get('corpus_entries', 0), 'entry', 'entries')}, "
                             f"{_count(result['corpus_size'], 'signature', 'signatures')})"))
    t.add_row("work", cell(result.get("work") or "none"))
    for k in ("atheris",):
        if result.get(k):
            t.add_row(k, cell(result[k]))
    for k in ("failures", "notes"):
        for line in result.get(k) or []:
            t.add_row(k.rstrip("s"), cell(line))
    if result.get("interrupted"):
        t.add_row("interrupted", "yes")
    t.add_row("report", cell(result.get("report") or "none"))
    console.print(t)
    fresh = [f for f in result["findings"] if f["new"] and not f["known"]]
    if fresh:
        ft = Table(title="new findings")
        for col in ("severity", "decoders", "explanation", "pattern", "signatures"):
            ft.add_column(col, overflow="fold")
        for f in fresh:
            ft.add_row(cell(f["severity"]), cell(", ".join(f["decoders"])),
                       cell(f["explanation"]), cell(f["pattern"]), str(len(f["signatures"])))
        console.print(ft)
    if result["new"]:
        n = Table(title="new corpus entries (evidence)")
        for col in ("signature", "class", "feature", "input (hex)"):
            n.add_column(col, overflow="fold")
        for x in result["new"]:
            n.add_row(cell(x["signature"]), cell(x["class"]), cell(x["feature"]),
                      cell(x["input"].upper()))
        console.print(n)
    if result.get("known"):
        # one row per finding: its signatures share a cause, and mostly one reason
        reasons = {x["signature"]: x["reason"] for x in result["known"]}
        kt = Table(title="known differences (known.toml; not counted as new)")
        for col in ("decoders", "rule", "pattern", "signatures", "reason"):
            kt.add_column(col, overflow="fold")
        for f in result["findings"]:
            why = list(dict.fromkeys(reasons[s] for s in f["signatures"] if s in reasons))
            if f["known"] and why:
                kt.add_row(cell(", ".join(f["decoders"])), cell(f["rule"]), cell(f["pattern"]),
                           str(len(f["signatures"])), cell("; ".join(why)))
        console.print(kt)
    if result.get("unreproduced"):
        u = Table(title="unreproduced (met once; a full re-run of the input did not show it)")
        for col in ("signature", "input (hex)"):
            u.add_column(col, overflow="fold")
        for x in result["unreproduced"]:
            u.add_row(cell(x["signature"]), cell(x["input"].upper()))
        console.print(u)
