"""The fuzz loop behind ``utf8fuzz fuzz``: engines, workers, crashes, progress, summary.

Engines.

``hypothesis``  :mod:`utf8fuzz.strategies` drive a :class:`~.finder.Finder` in each of
                ``jobs`` forked worker processes (one at least: a decoder that kills
                its process kills a worker, never the harness), on one shared corpus,
                until the deadline, a quarter of their time on long inputs
                (:mod:`.long`). Whatever a worker prints goes to stderr.
``atheris``     libFuzzer, through the packaged target
                ``utf8fuzz.loop.targets.differential`` run as a subprocess (its
                own session) with ``-max_total_time``, ``-max_len=65600``
                and ``-len_control=0`` (the mutator's long mode: short mutations
                stay within 64 bytes), the packaged ``-dict``, the seeds and the
                corpus inputs; ``jobs > 1``
                adds ``-fork=N`` and ``-ignore_crashes/timeouts/ooms=1``. New entries
                are saved by the target itself and reported through a JSON-lines log,
                with its counts; executions come from libFuzzer's log.
``both``        the two at once, the jobs split between them.

Both first replay the seeds (``corpus/seeds`` and ``corpus/inputs``, less the inputs
of entries that end a process, :func:`~.recover.kills_process`), so a bug the seeds
show is found in the first second of any run. A corpus whose ``seeds/`` holds none (one
``utf8fuzz init`` did not make) is given the packaged boundary seeds instead
(:func:`utf8fuzz.engine.boundaries.seed_files`, what ``init`` writes there). Both
screen (:mod:`.finder`): ``full_every`` (None: ``$UTF8FUZZ_FULL_EVERY`` or 8) inputs
in one are decoded in full.
On those, both count which error-cutting policy each decoder follows
(:mod:`.policy_tally`), merged into ``<corpus>/fingerprints.json`` by each worker
and target as it goes and when it ends.

Work directory (:class:`Work`, default ``<corpus>/work``): libFuzzer's own corpus,
its artifacts and the targets' in-flight files, the workers' in-flight files and
Hypothesis's cache directory, and a ``TMPDIR`` for the subprocesses, emptied when the
run ends. Nothing is written to the current directory or the system's temporary
directory.

Crashes. A process that ends while comparing a round of inputs (a worker or a
libFuzzer target: a segfault, an abort, ``SystemExit`` or ``KeyboardInterrupt``
raised by a decoder, or a round stuck for longer than the decoder timeout, which is
killed) leaves the round in its in-flight file; libFuzzer adds its crash file. Those
inputs are re-run one by one (:func:`~.recover.recover`), the one that ends a forked
process is saved as a ``crash`` (or ``timeout``) entry named by its signal or
exception, and the engine is started again for the rest of the time. A process that
ends with nothing to blame, or whose inputs end nothing when re-run, is a failure.

Time. ``seconds`` is a limit: at the deadline the engines stop by themselves; what
still runs one decoder timeout plus :data:`GRACE` seconds later is killed.

Counts. ``runs`` bounds each engine process by a count instead: a Hypothesis worker
draws that many examples past the seeds (a worker a decoder ended starts again on
the same draws, less the inputs that end a process), libFuzzer is run with
``-runs`` (its seeds added); ``seconds`` stays a limit, whichever comes first.
``seed`` seeds both (Hypothesis per worker and batch, libFuzzer's ``-seed`` per
start). A counted run's finder consults no clock (:attr:`.finder.Finder.counted`),
so with one engine process the same seed, corpus and decoders give the same
inputs in the same order, the same findings, on any machine and under any load.

The summary is the ``--json`` object: ``decoders``, ``executions``, ``execs_per_sec``,
``divergent_inputs`` (both engines), ``new`` (one object per new signature:
signature, decoders, class, feature, and the input the corpus holds for it, in hex;
only those ``CORPUS/known.toml`` does not accept), ``known`` (the same for those it
accepts, each with its ``reason``; saved all the same), ``unreproduced`` (the same
for signatures met once that a full run of the same input did not show again - a
stateful or flaky decoder; reported, not saved, not counted as new), ``crashes``
(findings that are a crash, a hang or a bad outcome), ``processes_ended`` (processes
a decoder ended, recovered), ``failures`` (one line each: why the run
cannot be trusted; ``utf8fuzz fuzz`` exits 3), ``notes``, ``runs`` and ``seed``
(None unless given; with ``runs``, the seed drawn), ``ended`` (``"runs"`` when every
engine process met its count, ``"time"`` when one met the deadline first,
``"interrupted"``, ``"failed"``) and a few more keys
(engines, seconds, corpus size, work directory, interrupted).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, NoReturn

from utf8fuzz import safe
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import boundaries
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.calls import plan as calls_plan
from utf8fuzz.engine.long import MAX_LONG, SHORT_MAX, long_share
from utf8fuzz.engine.signature import FAILURES
from utf8fuzz.loop import targets
from utf8fuzz.loop.finder import Finder, InFlight, full_every_default
from utf8fuzz.loop.recover import kills_process, read_candidates, recover
from utf8fuzz.triage.explain import Explanation, explain
from utf8fuzz.triage.group import entry_findings, group, stale
from utf8fuzz.triage.known import Known

ENGINES = ("atheris", "hypothesis", "both")
#: Seconds past the deadline and one decoder timeout before what still runs is
#: stopped (SIGTERM, then SIGKILL :data:`KILL_AFTER` seconds later).
GRACE = 3.0
KILL_AFTER = 2.0
#: Exit status of a worker that a BaseException (or its own failure) ended.
_WORKER_DIED = 3


def decoder_timeout() -> float:
    """The per-call limit of an isolated plug-in (``$UTF8FUZZ_DECODER_TIMEOUT``,
    default 10 s); also how long a round may take before its process is held hung."""
    from utf8fuzz.decoders.plugin import DEFAULT_TIMEOUT

    return DEFAULT_TIMEOUT


@dataclass
class Progress:
    """Live counters, shared by the engines and shown by the command."""

    executions: dict[str, int] = field(default_factory=dict)
    divergent: dict[str, int] = field(default_factory=dict)
    #: checks of the call made (engine/calls.py), by engine process, then by check
    calls: dict[str, dict[str, int]] = field(default_factory=dict)
    new: list[dict[str, Any]] = field(default_factory=list)
    #: signatures met once that a full run of the same input did not show again
    unreproduced: list[dict[str, Any]] = field(default_factory=list)
    #: why the run cannot be trusted (an engine died, a write failed): exit 3
    failures: list[str] = field(default_factory=list)
    #: what the summary must say besides (an engine killed at the deadline, ...)
    notes: list[str] = field(default_factory=list)
    #: processes a decoder ended, whose culprit was found
    crashes: int = 0
    #: how each engine process that ended by itself ended: ``"runs"`` (it met its
    #: count) or ``"time"`` (the deadline came first)
    ends: list[str] = field(default_factory=list)
    #: the findings the corpus held evidence of when the run began (a finding not
    #: among them is new)
    before: frozenset[str] = frozenset()
    started: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def total(self) -> int:
        return sum(self.executions.values())

    def add_new(self, items: Sequence[dict[str, Any]]) -> None:
        """Entries found (each signature once), and unreproduced signatures, which
        the same stream carries with ``"reproduced": false``."""
        with self.lock:
            seen = {x["signature"] for x in [*self.new, *self.unreproduced]}
            for x in items:
                if x["signature"] not in seen:
                    seen.add(x["signature"])
                    (self.new if x.get("reproduced", True) else self.unreproduced).append(x)

    def fail(self, message: str) -> None:
        with self.lock:
            self.failures.append(safe.text(message, limit=500))

    def note(self, message: str) -> None:
        with self.lock:
            self.notes.append(safe.text(message, limit=500))

    def end(self, how: str) -> None:
        with self.lock:
            self.ends.append(how)


@dataclass(frozen=True)
class Work:
    """The run's work directory (module docstring): what is not the corpus."""

    root: Path

    @property
    def libfuzzer(self) -> Path:
        """libFuzzer's ``-artifact_prefix``: crash files, the targets' in-flight files."""
        return self.root / "libfuzzer"

    @property
    def libfuzzer_corpus(self) -> Path:
        """libFuzzer's own corpus (its first directory): inputs that found coverage."""
        return self.root / "libfuzzer-corpus"

    @property
    def libfuzzer_seeds(self) -> Path:
        """The seeds less the inputs that end a process, when there are such."""
        return self.root / "libfuzzer-seeds"

    @property
    def boundary_seeds(self) -> Path:
        """The packaged boundary seeds, for a corpus whose ``seeds/`` holds none."""
        return self.root / "boundary-seeds"

    @property
    def hypothesis(self) -> Path:
        """Hypothesis's directory (a cache), and the workers' in-flight files."""
        return self.root / "hypothesis"

    @property
    def tmp(self) -> Path:
        """``TMPDIR`` of the subprocesses; removed when the run ends."""
        return self.root / "tmp"

    def make(self) -> None:
        for d in (self.libfuzzer, self.libfuzzer_corpus, self.hypothesis, self.tmp):
            d.mkdir(parents=True, exist_ok=True)

    def clean(self) -> None:
        for d in (self.tmp, self.libfuzzer_seeds, self.boundary_seeds):
            shutil.rmtree(d, ignore_errors=True)


#: Unreadable corpus entries a run names in its notes; the rest it counts.
BAD_ENTRIES_NAMED = 10


class Control:
    """What the engines share: the deadlines, the stop signal, the processes to stop,
    and one lock that lets one recovery run at a time (each forks)."""

    def __init__(self, seconds: float, timeout: float, runs: int | None = None,
                 seed: int | None = None) -> None:
        self.timeout = timeout
        #: examples per engine process (None: until the deadline), and the seed
        #: each draws them from (None: a fresh one each time)
        self.runs, self.seed = runs, seed
        self.deadline = time.monotonic() + seconds
        #: when what still runs is stopped
        self.hard = self.deadline + timeout + GRACE
        self.stop = threading.Event()
        self.recovering = threading.Lock()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def recovery_seconds(self, minimize_seconds: float, hang: bool) -> float | None:
        """How long a recovery may minimize now so that it ends by :attr:`hard`;
        None if it cannot (or the run is stopped). Re-running a hang costs a
        decoder timeout each time: three (the round, the minimizer's last try, the
        minimized input); anything else a few forks."""
        room = self.hard - time.monotonic() - (3 * self.timeout if hang else 2.0)
        if self.stop.is_set() or room < 0.2:
            return None
        return min(minimize_seconds, room)


def killers(corpus: Path | None) -> set[bytes]:
    """The inputs of the corpus entries that end a process (a signal, an exit, a
    hang): left out of the seeds, or every start would end on them."""
    out: set[bytes] = set()
    entries = corpus_mod.entries_dir(corpus) if corpus is not None else None
    if entries is None or not entries.is_dir():
        return out
    for p in entries.glob("*.json"):
        try:
            side = corpus_mod.read_sidecar(p)
            if kills_process(str(side.get("class")), str(side.get("feature"))):
                out.add(bytes.fromhex(str(side["input"])))
        except (corpus_mod.CorpusError, OSError, ValueError, KeyError):
            continue
    return out


def _recover(decoders: Sequence[Decoder], files: Sequence[Path], corpus: Path | None,
             engine: str, control: Control, progress: Progress,
             minimize_seconds: float, hang: bool) -> list[bytes] | None:
    """Re-run the inputs in ``files`` (:func:`.recover.recover`); the culprits, or
    None when there was no time left to try."""
    inputs = read_candidates(files)
    if not inputs:
        return []
    with control.recovering:
        ms = control.recovery_seconds(minimize_seconds, hang)
        if ms is None:
            return None
        rec = recover(decoders, inputs, corpus, engine, minimize_seconds=ms,
                      timeout=control.timeout, deadline=control.hard - control.timeout)
    progress.add_new(rec.found)
    with progress.lock:
        progress.divergent["recovered"] = progress.divergent.get("recovered", 0) + rec.divergent
        progress.crashes += bool(rec.culprits)
    return rec.culprits


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _ended(code: int | None) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        return f"was killed by {_signal_name(code)}"
    return f"exited with status {code}"


def _seed_paths(d: Path) -> list[Path]:
    """The seed files of directory ``d`` (none when it is missing), by name."""
    return [p for p in (sorted(d.iterdir()) if d.is_dir() else [])
            if not p.name.startswith(".") and p.suffix != ".md" and p.is_file()]


def seeds(corpus: Path) -> list[bytes]:
    """The files of ``seeds/`` (where it holds none, the packaged boundary seeds, by
    name) and ``inputs/``. One over ``corpus.MAX_INPUT_BYTES``, or not readable, is
    skipped with a note on stderr, never read whole."""
    out = []
    if not _seed_paths(Path(corpus) / "seeds"):
        out = [data for _, data in sorted(boundaries.seed_files().items())]
    for d in (Path(corpus) / "seeds", corpus_mod.inputs_dir(corpus)):
        for p in _seed_paths(d):
            try:
                out.append(corpus_mod.read_seed(p))
            except corpus_mod.CorpusError as e:
                print(f"utf8fuzz: note: seed {safe.text(p)} skipped: {safe.text(e)}",
                      file=sys.stderr)
    return out


# -- hypothesis -----------------------------------------------------------------------


def hypothesis_worker(decoders: Sequence[Decoder], corpus: Path | None, deadline: float,
                      report: Callable[[int, int, list[dict[str, Any]]], None],
                      minimize_seconds: float, replay_seeds: bool = True,
                      full_every: int | None = None, *, inflight: InFlight | None = None,
                      exclude: Iterable[bytes] = (),
                      died: Callable[[BaseException], NoReturn] | None = None,
                      runs: int | None = None, seed: int | None = None) -> Finder:
    """Feed Hypothesis's examples to a finder until ``deadline``, in rounds held in
    ``inflight``; ``report`` after each batch. ``died`` is called with anything an
    example raises, before Hypothesis could catch it and shrink (for a worker, an
    exception here is either the harness failing or a decoder ending the process).

    ``runs``: stop after that many examples (the seeds not counted), whichever of it
    and ``deadline`` comes first; short and long batches then alternate by a count
    (:func:`_cost`), not by the time each took. ``seed``: each batch draws from
    Hypothesis seeded by it and the batch's number, so that the same seed gives the
    same examples in the same order (with ``runs``: the same run). ``exclude``:
    inputs never compared again (they end the process), seeds or examples."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    from utf8fuzz import strategies as u8

    finder = Finder(decoders, corpus, "hypothesis", minimize_seconds=minimize_seconds,
                    full_every=full_every, inflight=inflight, counted=runs is not None)
    profiles = sorted({d.profile for d in finder.differ.decoders})
    if not profiles:
        finder.examples = runs or 0  # nothing to draw from: a count met at once
        return finder
    sent = gone = 0

    def tell() -> None:
        nonlocal sent, gone
        report(finder.executions, finder.divergent_inputs,
               [f.to_json() for f in [*finder.found[sent:], *finder.unreproduced[gone:]]])
        sent, gone = len(finder.found), len(finder.unreproduced)

    def flush() -> None:
        finder.flush()
        tell()

    def end(e: BaseException) -> NoReturn:
        if died is None:
            raise e
        with contextlib.suppress(BaseException):
            tell()  # what was found and saved before this still counts
        with contextlib.suppress(BaseException):
            finder.save_tally()  # and so do the policy counts
        died(e)

    strategy = st.one_of(*[u8.inputs(p) for p in profiles])
    long_strategy = st.one_of(*[u8.long_inputs(p) for p in profiles])
    queue = finder.queue
    told = time.monotonic()
    skip = frozenset(exclude)
    drawn = drawn_bytes = 0  # examples met (past the deadline too), and their bytes

    def example(data: bytes) -> None:
        nonlocal told, drawn, drawn_bytes
        drawn += 1
        drawn_bytes += len(data)
        now = time.monotonic()
        if now < deadline and (runs is None or drawn <= runs) and not (skip and data in skip):
            try:
                queue(data)  # compared in rounds; flush() ends the last
                # A decoder that kills the process takes the unsent counts with it:
                # tell every second, not only at the end of a batch.
                if now - told > 1.0:
                    told = now
                    tell()
            except BaseException as e:
                end(e)

    def batch(of: st.SearchStrategy[bytes], n: int, number: int) -> Callable[[], None]:
        # derandomize=False: Hypothesis's "ci" profile, loaded wherever $CI is set
        # (GitHub Actions, most CI), derandomizes, and every batch would then draw the
        # same inputs: a nightly job in CI would fuzz one batch's worth, over and over
        @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), derandomize=False)
        @given(of)
        def examples(data: bytes) -> None:
            example(data)

        if seed is not None:  # each batch its own draws, the same on every run
            examples = seeded(derived_seed(seed, number))(examples)
        return examples

    # Short and long batches alternate so that the long ones take their share of
    # the time (utf8fuzz.engine.long.long_share; each batch's own time, whatever
    # its inputs cost, less what minimizing its findings took; with runs, its
    # cost counted). Short ones first, as before; a long batch is small, so the
    # short loop is never held up long.
    sizes = (300, 50)
    spent = [0.0, 0.0]
    share = long_share()
    number = 0

    try:
        if replay_seeds and corpus is not None:
            for s in seeds(corpus):
                if s not in skip:
                    queue(s)  # in rounds, so that a seed that kills is in flight
            flush()
        while time.monotonic() < deadline and (runs is None or drawn < runs):
            which = int(share == 1.0 or spent[1] < share * sum(spent))
            n = sizes[which] if runs is None else min(sizes[which], runs - drawn)
            t0, found, before, before_bytes = time.monotonic(), len(finder.found), drawn, \
                drawn_bytes
            batch((strategy, long_strategy)[which], n, number)()
            number += 1
            flush()
            if runs is None:
                spent[which] += time.monotonic() - t0 - _minimizing(finder.found[found:])
            else:
                if drawn == before:
                    break  # the strategy draws nothing more: never loop on it
                spent[which] += _cost(drawn - before, drawn_bytes - before_bytes)
        finder.examples = min(drawn, runs) if runs is not None else drawn
        finder.save_tally()
    except BaseException as e:
        end(e)
    return finder


#: The count a batch costs in a counted run (:func:`_cost`): an example, plus one
#: for every this many of its bytes (a short input's cost is mostly per call, a
#: long one's per byte; measured in process, CPU time, on two planted decoders and
#: CPython's strict and replace: 0.12 ms a short input of 24 bytes on average,
#: 1.0 ms a long one of 4,100: one short input's cost per 570 bytes).
COST_BYTES = 512


def _cost(examples: int, nbytes: int) -> float:
    """What a batch of ``examples`` inputs of ``nbytes`` in all costs, as a count: how
    a counted run shares its examples between short and long batches (the same on
    every machine, unlike the time each took)."""
    return examples + nbytes / COST_BYTES


def derived_seed(seed: int, *parts: object) -> int:
    """A seed made from ``seed`` and ``parts`` (a worker's number, a batch's): the
    same on every machine and Python (not ``hash()``, which is salted)."""
    text = ":".join(map(str, (seed, *parts)))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def _minimizing(found: Sequence[Any]) -> float:
    """Seconds the finder spent minimizing and explaining ``found`` (new signatures):
    not charged to the batch that met them, or one finding would hold its path back."""
    total = 0.0
    for x in found:
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
            total += float(x.sidecar["found"]["minimizer"]["seconds"])
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
            total += float(x.sidecar["found"]["explain_seconds"])
    return total


def _worker_main(conn: Connection, decoders: Sequence[Decoder], corpus: Path | None,
                 deadline: float, minimize_seconds: float, full_every: int | None,
                 inflight: Path, home: Path, replay_seeds: bool,
                 exclude: frozenset[bytes], runs: int | None = None,
                 seed: int | None = None) -> None:
    """A forked Hypothesis worker. It tells the parent ``("progress", executions,
    divergent inputs, new)``, then ``("done", ended)`` (``"runs"``: it met its
    ``runs`` examples; ``"time"``: the deadline came first); or ``("died", kind, message)``
    and exits with :data:`_WORKER_DIED`, leaving its in-flight file for the parent
    to re-run. ``kind`` is ``"error"`` for an ``Exception`` (the harness failed:
    decoders' exceptions are outcomes), ``"killed"`` for anything else (a decoder
    raised SystemExit, KeyboardInterrupt, ...)."""
    # An interrupt is the parent's to handle: it stops the workers. So a
    # KeyboardInterrupt in here was raised by a decoder.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # stdout is the parent's (--json: one JSON document): what a decoder or
    # Hypothesis prints here (its "@seed" and reproduce messages) goes to stderr.
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from hypothesis import configuration

    configuration.set_hypothesis_home_dir(str(home))

    def died(e: BaseException) -> NoReturn:
        kind = "error" if isinstance(e, Exception) else "killed"
        with contextlib.suppress(BaseException):
            conn.send(("died", kind, f"{type(e).__name__}: {e}"))
        os._exit(_WORKER_DIED)

    def report(execs: int, div: int, new: list[dict[str, Any]]) -> None:
        conn.send(("progress", execs, div, new))

    try:
        held = InFlight(inflight)
        f = hypothesis_worker(decoders, corpus, deadline, report, minimize_seconds,
                              replay_seeds=replay_seeds, full_every=full_every, inflight=held,
                              exclude=exclude, died=died, runs=runs, seed=seed)
        held.close()
        conn.send(("calls", dict(f.calls.asked) if f.calls is not None else {}))
        conn.send(("done", "runs" if runs is not None and f.examples >= runs else "time"))
    except BaseException as e:
        died(e)


@dataclass
class _Slot:
    """One worker place: its process, generation (restarts) and end."""

    index: int
    generation: int = 0
    proc: Any = None
    conn: Connection | None = None
    inflight: Path | None = None
    said: tuple[Any, ...] | None = None  # ("done", ended) or ("died", kind, message)
    hung: bool = False

    @property
    def key(self) -> str:
        return f"hypothesis.{self.index}.{self.generation}"


def run_hypothesis(decoders: Sequence[Decoder], corpus: Path | None, control: Control,
                   jobs: int, progress: Progress, minimize_seconds: float,
                   full_every: int | None, work: Work, exclude: set[bytes]) -> None:
    """``jobs`` forked workers until the deadline (module docstring): their
    progress, their deaths re-run and restarted, the hung ones killed."""
    ctx = mp.get_context("fork")
    live: list[_Slot] = []

    def start(slot: _Slot) -> None:
        reader, writer = ctx.Pipe(duplex=False)
        slot.inflight = work.hypothesis / f"inflight-{slot.index}-{slot.generation}.hex"
        slot.said, slot.hung = None, False
        # a worker started again (a decoder ended it) draws the same examples as
        # before, less those that end a process: a counted run stays the same run
        args = (writer, decoders, corpus, control.deadline, minimize_seconds, full_every,
                slot.inflight, work.hypothesis, slot.index == 0 and slot.generation == 0,
                frozenset(exclude), control.runs,
                None if control.seed is None else derived_seed(control.seed, slot.index))
        slot.proc = ctx.Process(target=_worker_main, args=args, daemon=True)
        try:
            slot.proc.start()
        except OSError as e:
            progress.fail(f"hypothesis worker {slot.index} could not start: "
                          f"{e.strerror or e}")
            reader.close()
            return
        finally:
            writer.close()
        slot.conn = reader
        live.append(slot)

    def take(slot: _Slot) -> None:
        """Everything the worker has said so far."""
        assert slot.conn is not None
        try:
            while slot.conn.poll():
                msg = slot.conn.recv()
                if msg[0] == "progress":
                    _, execs, div, new = msg
                    with progress.lock:
                        progress.executions[slot.key] = execs
                        progress.divergent[slot.key] = div
                    progress.add_new(new)
                elif msg[0] == "calls":
                    with progress.lock:
                        progress.calls[slot.key] = msg[1]
                else:
                    slot.said = msg
        except (EOFError, OSError):
            pass  # it died mid-message: what it said before counts

    def ended(slot: _Slot) -> None:
        take(slot)
        assert slot.conn is not None and slot.inflight is not None
        slot.conn.close()
        live.remove(slot)
        code = slot.proc.exitcode
        what = f"hypothesis worker {slot.index}"
        if slot.said is not None and slot.said[0] == "done" and code == 0:
            slot.inflight.unlink(missing_ok=True)
            progress.end(str(slot.said[1]))
            return
        if control.stop.is_set():
            slot.inflight.unlink(missing_ok=True)
            return
        if slot.said is not None and slot.said[0] == "died" and slot.said[1] == "error":
            progress.fail(f"{what} failed: {slot.said[2]}")
            return
        if slot.hung:
            how = f"was stuck in one round of inputs for over {control.timeout:g} s: killed"
        elif slot.said is not None and slot.said[0] == "died":
            how = f"was ended by {slot.said[2]}"
        else:
            how = _ended(code)
        if not (slot.inflight.exists() and slot.inflight.stat().st_size):
            progress.fail(f"{what} {how}, outside a round of inputs: nothing to re-run")
            return
        culprits = _recover(decoders, [slot.inflight], corpus, "hypothesis", control,
                            progress, minimize_seconds, slot.hung)
        if culprits is None:
            # Too little time is left to re-run it (a hang costs a decoder timeout
            # per try); the file stays as evidence, and fuzzing goes on meanwhile.
            kept = slot.inflight.with_name(f"not-rerun-{slot.inflight.name}")
            slot.inflight.replace(kept)
            progress.note(f"{what} {how}; too little time was left to re-run its last "
                          f"round, kept in {kept}")
        else:
            slot.inflight.unlink(missing_ok=True)
            if not culprits:
                progress.fail(f"{what} {how}, and none of its last round's inputs did "
                              "that again when re-run alone")
                return
            exclude.update(culprits)
        if control.left() > 1 and not control.stop.is_set():
            slot.generation += 1
            start(slot)
        elif not control.stop.is_set():
            progress.end("time")

    for i in range(jobs):
        start(_Slot(i))
    try:
        while live:
            ready = wait([s.conn for s in live if s.conn is not None]
                         + [s.proc.sentinel for s in live], timeout=1.0)
            for s in list(live):
                if s.conn in ready:
                    take(s)
                if s.proc.sentinel in ready or not s.proc.is_alive():
                    s.proc.join()
                    ended(s)
            now = time.monotonic()
            if control.stop.is_set() or now > control.hard:
                if live and not control.stop.is_set():
                    progress.note("hypothesis: workers still running "
                                  f"{now - control.deadline:.0f} s after the deadline: "
                                  "stopped")
                break
            for s in live:
                if _stuck(s.inflight, control.timeout):
                    s.hung = True
                    s.proc.kill()
    finally:
        for s in live:
            _stop_process(s.proc)
            if s.conn is not None:
                s.conn.close()


def _stuck(inflight: Path | None, timeout: float) -> bool:
    """Whether a round has been in flight (the file not empty, not rewritten) for
    longer than ``timeout`` seconds plus one: a decoder hangs in process."""
    try:
        st = inflight.stat() if inflight is not None else None
    except OSError:
        return False
    return st is not None and st.st_size > 0 and time.time() - st.st_mtime > timeout + 1


def _stop_process(proc: Any) -> None:
    """SIGTERM, then SIGKILL if it has not gone :data:`KILL_AFTER` seconds later."""
    if proc.is_alive():
        proc.terminate()
        proc.join(KILL_AFTER)
        if proc.is_alive():
            proc.kill()
            proc.join()


# -- atheris ----------------------------------------------------------------------------


def atheris_available() -> str | None:
    """None when Atheris can run here, else the reason it cannot."""
    try:
        import atheris  # noqa: F401
    except ImportError as e:
        # a dependency wherever a wheel of it exists (pyproject.toml): elsewhere, say so
        return (f"atheris is not installed ({e}); utf8fuzz depends on it where PyPI has "
                f"its wheel (CPython on Linux x86_64), elsewhere pip install atheris "
                f"builds it from source (clang)")
    if not targets.path("differential").is_file():
        return f"the fuzz target {targets.path('differential')} is missing (a broken install)"
    return None


_STAT = re.compile(r"stat::(number_of_executed_units|average_exec_per_sec):\s*(\d+)")
_LINE = re.compile(r"^#(\d+)[:\s]")  # "#123 pulse ..." or, with -fork, "#123: cov: ..."
_INITED = re.compile(r"^#\d+\s+INITED\b")  # the seeds are run: its own inputs follow
_DONE = re.compile(r"^Done (\d+) runs in ")  # its end, at -runs or -max_total_time
_ARTIFACT = re.compile(r"^(crash|timeout|oom|leak)-[0-9a-f]+$")
_INFLIGHT = re.compile(r"^inflight-(\d+)\.hex$")


class _FoundLog:
    """The target's JSON-lines log, read as it grows: new entries, and each
    process's counts (``{"stats": {"pid", "executions", "divergent_inputs"}}``)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0
        self.divergent: dict[int, int] = {}
        self.calls: dict[int, dict[str, int]] = {}
        path.write_bytes(b"")

    def read(self, progress: Progress) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return
        end = chunk.rfind(b"\n") + 1  # a line being written waits for the next read
        self.offset += end
        items = []
        for line in chunk[:end].splitlines():
            try:
                x = json.loads(line)
            except ValueError:
                continue
            if isinstance(x, dict) and isinstance(x.get("stats"), dict):
                st = x["stats"]
                self.divergent[int(st.get("pid", 0))] = int(st.get("divergent_inputs", 0))
                asked = st.get("calls")
                if isinstance(asked, dict):
                    self.calls[int(st.get("pid", 0))] = {
                        str(k): v for k, v in asked.items() if type(v) is int}
            elif isinstance(x, dict) and "signature" in x:
                items.append(x)
        progress.add_new(items)
        with progress.lock:
            progress.divergent["atheris"] = sum(self.divergent.values())
            if self.calls:
                progress.calls["atheris"] = dict(sum(map(Counter, self.calls.values()),
                                                     Counter()))


def _seed_dirs(corpus: Path, work: Work, exclude: set[bytes]) -> list[Path]:
    """The seed directories libFuzzer reads (``seeds/``, or where it holds none the
    packaged boundary seeds written into ``work``; ``inputs/``); with inputs to leave
    out, a copy of them without those (hard links where possible) in ``work``."""
    given = corpus / "seeds"
    if not _seed_paths(given):
        given = work.boundary_seeds
        packaged = boundaries.seed_files()
        if {p.name for p in _seed_paths(given)} != set(packaged):
            given.mkdir(parents=True, exist_ok=True)
            for name, data in packaged.items():  # a scratch copy: no fsync, still whole
                tmp = given / f".{name}.{os.getpid()}.tmp"
                tmp.write_bytes(data)
                os.replace(tmp, given / name)
    dirs = [d for d in (given, corpus_mod.inputs_dir(corpus)) if d.is_dir()]
    for name in {hashlib.sha1(x).hexdigest() for x in exclude}:  # libFuzzer's file names
        (work.libfuzzer_corpus / name).unlink(missing_ok=True)
    if not exclude:
        return dirs
    longest = max(len(x) for x in exclude)
    out = work.libfuzzer_seeds
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for d in dirs:
        for p in d.iterdir():
            try:
                st = p.stat()
                if not p.is_file() or p.name.startswith(".") or p.suffix == ".md" or (
                        st.st_size <= longest and p.read_bytes() in exclude):
                    continue
                dest = out / f"{d.name}-{p.name}"
                try:
                    os.link(p, dest)
                except OSError:
                    shutil.copyfile(p, dest)
            except OSError:
                continue
    return [out]


def _files_in(dirs: Sequence[Path]) -> int:
    """The files libFuzzer reads from ``dirs`` (recursively, each once)."""
    n = 0
    for d in dirs:
        for _, _, files in os.walk(d):
            n += len(files)
    return n


def _target_decoders(specs: Sequence[str], profiles: Sequence[str]) -> list[Decoder]:
    """The decoders the target chooses from the same specs and profiles (as
    ``atheris_target.select`` does: a sibling module, not imported)."""
    from utf8fuzz import decoders as registry

    chosen: list[Decoder] = []
    for s in specs:
        chosen += [d for d in registry.resolve(s) if d not in chosen]
    if not specs:
        chosen = registry.available()
    return [d for d in chosen if not profiles or d.profile in profiles]


def _dead_evidence(work: Work, settled: float) -> list[Path]:
    """In-flight files of processes that are gone, and libFuzzer artifacts older
    than ``settled`` seconds (a dying process may still be writing one)."""
    out = []
    now = time.time()
    for p in work.libfuzzer.iterdir():
        m = _INFLIGHT.match(p.name)
        try:
            if m is not None:
                take = not _pid_alive(int(m.group(1)))
            else:
                take = bool(_ARTIFACT.match(p.name)) and now - p.stat().st_mtime >= settled
            if take:
                out.append(p)
        except OSError:
            continue
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (libFuzzer's dead -fork child not reaped yet) holds no round any more
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return True


def _hung_targets(work: Work, timeout: float) -> list[int]:
    """Processes whose in-flight file shows a round stuck for over the timeout."""
    out = []
    for p in work.libfuzzer.glob("inflight-*.hex"):
        m = _INFLIGHT.match(p.name)
        if m and _stuck(p, timeout) and _pid_alive(int(m.group(1))):
            out.append(int(m.group(1)))
    return out


@dataclass
class _Atheris:
    """One libFuzzer process, and what its log said."""

    proc: subprocess.Popen[str]
    executions: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    tail: list[str] = field(default_factory=list)
    hung: list[int] = field(default_factory=list)
    culprits: int = 0  # inputs found to have ended one of its processes
    inited: int = 0  # inputs it ran before its own (the empty one and its directories')
    finished: int | None = None  # the runs its last line counts ("Done N runs in ...")

    def read(self, progress: Progress, base: int) -> None:
        assert self.proc.stdout is not None  # libFuzzer's log, and Atheris's tracebacks
        for line in self.proc.stdout:
            self.tail = [*self.tail[-19:], line.rstrip()]
            m = _LINE.match(line)
            if m:
                self.executions = int(m.group(1))
                if _INITED.match(line):
                    self.inited = self.executions
                with progress.lock:
                    progress.executions["atheris"] = base + self.executions
            for name, val in _STAT.findall(line):
                self.stats[name] = int(val)
            if (done := _DONE.match(line)) is not None:
                self.finished = int(done.group(1))

    def why(self) -> str:
        """The last words of a dead target: its Python exception or libFuzzer's error."""
        # the Python exception says more than libFuzzer's "fuzz target exited"
        for line in reversed(self.tail):
            if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", line):
                return line.strip()
        for line in reversed(self.tail):
            if line.startswith("==") and "ERROR" in line:
                return line.strip()
        return ""


def run_atheris(specs: Sequence[str], profiles: Sequence[str], corpus: Path,
                control: Control, jobs: int, progress: Progress, minimize_seconds: float,
                work: Work, exclude: set[bytes], max_len: int = MAX_LONG,
                full_every: int | None = None) -> dict[str, Any]:
    """libFuzzer until the deadline, started again after a decoder ended it
    (module docstring); returns its final stats. ``max_len`` above 64 turns on
    the custom mutator's long mode (:mod:`.long`), with ``-len_control=0`` so that
    libFuzzer offers it the whole length from the start (the mutator holds its
    short mutations to 64 bytes itself)."""
    log = _FoundLog(work.root / f"found-{os.getpid()}.jsonl")
    env = dict(os.environ)
    env.update({
        "UTF8FUZZ_CORPUS": str(corpus),
        "UTF8FUZZ_FOUND_LOG": str(log.path),
        "UTF8FUZZ_MINIMIZE_SECONDS": str(minimize_seconds),
        "UTF8FUZZ_KEEP_GOING": "1",  # every finding of the run is saved; none ends it
        "TMPDIR": str(work.tmp),  # -fork's directory, the relaunch script
        # a user's module:attr decoder is importable from the directory fuzz runs in
        "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH")])),
    })
    if full_every is not None:
        env["UTF8FUZZ_FULL_EVERY"] = str(full_every)
    if specs:
        env["UTF8FUZZ_DECODERS"] = json.dumps(list(specs))
    if profiles:
        env["UTF8FUZZ_PROFILES"] = ",".join(profiles)
    decoders: list[Decoder] = []  # for recovery: the target's own choice, made on need
    base = 0
    generated = starts = 0  # libFuzzer's own inputs so far (past its seeds); its starts
    stats: dict[str, int] = {}

    def settle(run: _Atheris | None, settled: float) -> list[bytes] | None:
        """Re-run what dead processes left (in-flight files, crash files); the
        culprits, or None when there was no time. A crash file whose input ends
        nothing when re-run, and no culprit beside it, is kept as
        ``unexplained-<name>`` and the run fails."""
        files = _dead_evidence(work, settled)
        if not files:
            return []
        if not decoders:
            decoders.extend(_target_decoders(specs, profiles))
        culprits = _recover(decoders, files, corpus, "atheris", control, progress,
                            minimize_seconds, bool(run is not None and run.hung))
        if culprits is None:  # kept as evidence, out of the way of the next settle
            for p in files:
                with contextlib.suppress(OSError):
                    p.replace(p.with_name(f"not-rerun-{p.name}"))
            return None
        exclude.update(culprits)
        kept = []
        for p in files:
            if _INFLIGHT.match(p.name) or culprits:
                p.unlink(missing_ok=True)
            else:
                kept.append(p.with_name(f"unexplained-{p.name}"))
                p.replace(kept[-1])
        if run is not None:
            run.culprits += len(culprits)
        if kept:
            what = (f"a libFuzzer process crashed, and re-running its inputs alone ended "
                    f"nothing; kept: {', '.join(map(str, kept))}")
            # Under -fork, a child's crash file and its in-flight file may be settled
            # apart: once a culprit explained a death, a lone crash file is most likely
            # that death's (the input libFuzzer was running, not the culprit): a note.
            # With no culprit at all, nothing explains it: the run failed.
            if run is not None and run.culprits:
                progress.note(what)
            else:
                progress.fail(what)
        return culprits

    try:
        while not control.stop.is_set():
            seconds = control.left()
            if seconds < 1:
                progress.end("time")
                break
            dirs = [work.libfuzzer_corpus, *_seed_dirs(corpus, work, exclude)]
            counted, limit = [], None
            if control.runs is not None:
                # libFuzzer's -runs counts the inputs it starts from (the empty one,
                # then each file of its directories, or a second one when there is
                # none) before its own
                limit = control.runs - generated + 1 + max(1, _files_in(dirs))
                counted.append(f"-runs={limit}")
            if control.seed is not None:  # 0 is libFuzzer's "a fresh seed"
                counted.append(f"-seed={derived_seed(control.seed, 'atheris', starts) or 1}")
            starts += 1
            cmd = [sys.executable, str(targets.path("differential")),
                   f"-max_total_time={max(1, int(seconds))}", *counted,
                   f"-max_len={max_len}",
                   *(["-len_control=0"] if max_len > SHORT_MAX else []),
                   f"-dict={targets.dictionary()}", "-print_final_stats=1",
                   f"-artifact_prefix={work.libfuzzer}{os.sep}", *map(str, dirs)]
            if jobs > 1:
                cmd[2:2] = [f"-fork={jobs}", "-ignore_crashes=1", "-ignore_timeouts=1",
                            "-ignore_ooms=1"]
            try:
                # its own session: a terminal's ^C is the harness's to handle, and
                # stopping it stops its -fork children too
                proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, errors="replace",
                                        start_new_session=True)
            except OSError as e:
                progress.fail(f"the atheris engine could not start: {e.strerror or e}")
                break
            run = _Atheris(proc)
            reader = threading.Thread(target=run.read, args=(progress, base), daemon=True)
            reader.start()
            stopped = _watch(run, control, work, progress, log, jobs > 1, settle)
            reader.join(timeout=5)
            log.read(progress)
            done = run.stats.get("number_of_executed_units", run.executions)
            base += done
            generated += max(0, done - run.inited) if run.inited else 0
            if limit is not None and run.finished is not None and run.finished >= limit:
                generated = max(generated, control.runs or 0)  # libFuzzer met its -runs
            with progress.lock:
                progress.executions["atheris"] = base
            stats = run.stats
            if stopped or control.stop.is_set():
                break
            code = proc.returncode
            met = control.runs is not None and generated >= control.runs
            culprits = settle(run, 0.0)
            if culprits is None:
                # too little time to re-run it (the files stay); fuzz for the rest
                progress.note(f"the atheris engine {_ended(code)}; too little time was "
                              f"left to re-run what it was running: see {work.libfuzzer}")
                if not met:
                    continue
            elif culprits:
                if not met:
                    continue  # a decoder ended it: again, for the rest of the time
            elif run.hung:
                progress.fail("the atheris engine was stuck in one round of inputs, and "
                              "none of them hung again when re-run alone")
                break
            elif code != 0 and not (jobs > 1 and run.culprits):
                # with -fork, the status of crashes it was told to ignore (recovered)
                why = run.why()
                progress.fail(f"the atheris engine {_ended(code)}" + (f": {why}" if why else ""))
                break
            progress.end("runs" if met else "time")  # at its -runs, or its -max_total_time
            break
    finally:
        log.path.unlink(missing_ok=True)
    return {"stats": stats}


def _watch(run: _Atheris, control: Control, work: Work, progress: Progress,
           log: _FoundLog, forked: bool,
           settle: Callable[[_Atheris | None, float], list[bytes] | None]) -> bool:
    """Wait for the libFuzzer process, reading its log; kill a target stuck in a
    round, re-run what dead -fork children left, stop everything at the hard
    deadline or when the run is stopped. True if it had to be stopped."""
    proc = run.proc
    while True:
        try:
            proc.wait(timeout=1.0)
            return False
        except subprocess.TimeoutExpired:
            pass
        log.read(progress)
        if control.stop.is_set() or time.monotonic() > control.hard:
            if not control.stop.is_set():
                progress.note(f"the atheris engine was still running "
                              f"{time.monotonic() - control.deadline:.0f} s after the "
                              f"deadline: stopped; its in-flight files are in {work.libfuzzer}")
            _stop_group(proc)
            return True
        for pid in _hung_targets(work, control.timeout):
            run.hung.append(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if forked:
            settle(run, 1.0)


def _stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the process's session (libFuzzer and its -fork children), SIGKILL
    :data:`KILL_AFTER` seconds later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=KILL_AFTER)
            return
        except subprocess.TimeoutExpired:
            continue


# -- the run ----------------------------------------------------------------------------


def as_saved(x: dict[str, Any]) -> dict[str, Any]:
    """The new signature ``x`` as the corpus holds it now: with the input and finding
    of what another worker saved, if shorter (the minimized input a finding was
    explained on), never the input this worker met before minimizing."""
    path = x.get("path")
    if path:
        try:
            side = corpus_mod.read_sidecar(Path(path))
            if side.get("signature") == x["signature"] and isinstance(side.get("input"), str):
                rec = side.get("finding")
                return {**x, "input": str(side["input"]),
                        **({"finding": rec} if isinstance(rec, dict) else {})}
        except (corpus_mod.CorpusError, OSError, ValueError):
            pass
    return x


def split_known(found: Sequence[dict[str, Any]],
                known: Known | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``found`` (items with a ``signature``) as (not known, known); each known item
    is a copy carrying its ``reason`` (:meth:`Known.match`)."""
    if known is None:
        return list(found), []
    fresh: list[dict[str, Any]] = []
    accepted: list[dict[str, Any]] = []
    for x in found:
        reason = known.match(str(x["signature"]), (x.get("finding") or {}).get("rule"))
        if reason is None:
            fresh.append(x)
        else:
            accepted.append({**x, "reason": reason})
    return fresh, accepted


def findings_of(saved: Sequence[dict[str, Any]],
                before: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The findings (:func:`~utf8fuzz.triage.group.group`: one per decoder family and
    explanation) of the signatures a run saved (items of ``new`` and ``known``),
    each from the finding its sidecar records (:func:`.finder.finding_of`: checked on
    fresh inputs, generalized); for an item without one, explained from its
    sidecar's outcomes. Each has id, family, rule, explanation, pattern (its first
    evidence's), severity, decoders, signatures, ``known`` when every one of its
    signatures is, and ``new`` when its id is not in ``before`` (the findings the
    corpus held evidence of when the run began)."""
    items: list[tuple[str, Explanation, Hashable, dict[str, Any]]] = []
    for x in saved:
        rec = x.get("finding")
        if isinstance(rec, dict) and rec.get("rule"):
            why = Explanation(str(rec["rule"]), str(rec.get("explanation", "")),
                              str(rec.get("severity", "non-conformance")),
                              int(rec.get("checked", 0)))
            items.append((str(x["decoders"][0]), why, x["signature"], x))
            continue
        try:
            side = corpus_mod.read_sidecar(Path(str(x.get("path"))))
            data = bytes.fromhex(str(side["input"]))
            outs = corpus_mod.outcomes_of(side, len(data))
        except (corpus_mod.CorpusError, OSError, ValueError, KeyError, TypeError):
            continue  # gone or replaced meanwhile: its own entry says what it is
        for name in x["decoders"]:
            r, out = side["outcomes"].get(name), outs.get(name)
            if r is None or out is None:
                continue
            why = explain(data, out, str(r.get("profile", side["profile"])),
                          str(r.get("policy", "maximal-subpart")), str(x["class"]),
                          str(x["feature"]))
            items.append((name, why, x["signature"], x))
    return [{"id": f.id, "family": f.family, "rule": safe.text(f.rule, 200),
             "explanation": safe.text(f.text, 500), "severity": f.severity,
             "pattern": safe.text((f.evidence[0].get("finding") or {}).get("pattern", ""), 500),
             "decoders": f.decoders, "signatures": [x["signature"] for x in f.evidence],
             "known": all("reason" in x for x in f.evidence), "new": f.id not in before}
            for f in group(items)]


def summary(decoders: Sequence[Decoder], progress: Progress, corpus: Path | None,
            engines: Sequence[str], extra: dict[str, Any] | None = None,
            known: Known | None = None) -> dict[str, Any]:
    """The run's summary object (``utf8fuzz fuzz --json``). Signatures saved in
    this run are split by ``known`` (the corpus's ``known.toml``): ``new`` holds
    those it does not accept, the only ones that make the run's exit status 1;
    ``known`` the others, each with its ``reason`` (escaped with :mod:`.safe`).
    Both are saved in the corpus alike. ``findings`` groups them (:func:`findings_of`);
    ``new_findings`` lists the ids of those neither known nor in the corpus when the
    run began (``progress.before``): the run's "new" count and exit status."""
    elapsed = max(1e-9, time.monotonic() - progress.started)
    with progress.lock:
        execs = progress.total
        new, unrep = list(progress.new), list(progress.unreproduced)
        divergent = sum(progress.divergent.values())
        failures, notes, crashes = list(progress.failures), list(progress.notes), \
            progress.crashes
        calls_made = dict(progress.calls)
    new, accepted = split_known([as_saved(x) for x in new], known)
    return {
        "decoders": sorted(d.name for d in decoders),
        "engines": list(engines),
        "executions": execs,
        "execs_per_sec": round(execs / elapsed, 1),
        "seconds": round(elapsed, 1),
        "divergent_inputs": divergent,
        "new": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"],
             "position_dependent": x.get("position_dependent", False)}
            for x in new
        ],
        "known": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"],
             "reason": safe.text(x["reason"], 1000)}
            for x in accepted
        ],
        "unreproduced": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"]}
            for x in unrep
        ],
        "findings": (found := findings_of([*new, *accepted], progress.before)),
        "new_findings": [f["id"] for f in found if f["new"] and not f["known"]],
        # findings that are failures (a crash, a hang, a bad outcome), so the count
        # agrees with the findings beside it; processes_ended: how many of them (or of
        # known ones) ended a fuzzing process, which was recovered
        "crashes": sum(f["rule"].split(":", 1)[0] in FAILURES for f in found),
        "processes_ended": crashes,
        "failures": failures,
        "notes": notes,
        "corpus": str(corpus) if corpus else None,
        "corpus_size": len(corpus_mod.signature_ids(corpus)) if corpus else 0,
        # the checks of the call: which each decoder gets, and how many were made
        "call_checks": {**calls_plan(decoders), "asked": dict(sorted(sum(
            map(Counter, calls_made.values()), Counter()).items()))},
        **(extra or {}),
    }


def fuzz(decoders: Sequence[Decoder], *, engine: str = "hypothesis", seconds: float = 60.0,
         jobs: int = 1, corpus: Path | None = None, specs: Sequence[str] = (),
         profiles: Sequence[str] = (), progress: Progress | None = None,
         minimize_seconds: float | None = None, full_every: int | None = None,
         work: Path | None = None, known: Known | None = None, runs: int | None = None,
         seed: int | None = None) -> dict[str, Any]:
    """Run the chosen engine(s) for ``seconds`` and return the summary object; an
    interrupt (SIGINT) stops the engines and still returns it (``interrupted``).

    ``runs``: each engine process (each Hypothesis worker, each libFuzzer run)
    stops after that many inputs of its own (the seeds not counted), or at
    ``seconds``, whichever comes first; the summary's ``ended`` says which
    (``"runs"``, ``"time"``, or ``"interrupted"``). ``seed``: what the engines draw
    their inputs from (with ``runs`` and none given, a fresh one, in the summary):
    with one engine process (``jobs=1``, one engine), the same seed, corpus and
    decoders give the same inputs in the same order, so the same findings.

    ``specs`` are the decoder specs the Atheris subprocess resolves again (it cannot
    receive Python objects); leave empty for "every available decoder".
    ``full_every``: see :mod:`.finder` (None: ``$UTF8FUZZ_FULL_EVERY`` or 8).
    ``work``: the work directory (module docstring; default ``<corpus>/work``, or a
    temporary directory removed at the end when there is no corpus).
    ``known``: the accepted differences the summary sets apart (:func:`summary`).
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
    if full_every is None:
        full_every = full_every_default()
    if full_every < 1:
        raise ValueError(f"full_every must be at least 1, got {full_every}")
    if runs is not None and runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    if runs is not None and seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)  # told, so it can be run again
    progress = progress or Progress()
    # minimizing is bounded by counts (engine/minimize.py); seconds only stop it
    ms = minimize_seconds if minimize_seconds is not None else seconds
    used: list[str] = []
    extra: dict[str, Any] = {"full_every": full_every, "runs": runs, "seed": seed}
    want_atheris = engine in ("atheris", "both")
    if want_atheris:
        why = atheris_available()
        if why is not None:
            if engine == "atheris":
                raise ValueError(why)
            extra["atheris"] = f"skipped: {why}"
            want_atheris = False
    if want_atheris and corpus is None:
        raise ValueError("the atheris engine needs a corpus directory")
    if want_atheris and engine == "both":
        h_jobs, a_jobs = max(1, jobs // 2), max(1, jobs - jobs // 2)
    else:
        h_jobs = a_jobs = jobs
    scratch = None
    if work is None:
        if corpus is not None:
            work = Path(corpus) / "work"
        else:
            work = scratch = Path(tempfile.mkdtemp(prefix="utf8fuzz-work-"))
    w = Work(Path(work))
    w.make()
    extra["work"] = str(w.root)
    exclude = killers(corpus)
    if corpus is not None:
        entries, problems = corpus_mod.load(corpus)
        # read and skipped, never fatal: each named once (the first few), the rest counted
        for pr in problems[:BAD_ENTRIES_NAMED]:
            progress.note(f"corpus entry {pr} (skipped)")
        if len(problems) > BAD_ENTRIES_NAMED:
            progress.note(f"{len(problems) - BAD_ENTRIES_NAMED} more unreadable corpus entries "
                          "skipped (`utf8fuzz corpus check` lists them all)")
        progress.before = frozenset(f["id"] for e in entries
                                    for f in entry_findings(e))
        old = sum(stale(e) for e in entries)
        if old:
            progress.note(f"{old} corpus entr{'y was' if old == 1 else 'ies were'} explained "
                          "by older rules: `utf8fuzz corpus migrate` explains them again "
                          "(until then, new evidence of their causes may count as new "
                          "findings)")
    control = Control(seconds, decoder_timeout(), runs, seed)
    threads: list[threading.Thread] = []
    if want_atheris:
        assert corpus is not None
        used.append("atheris")

        def go() -> None:
            try:
                run_atheris(specs, profiles, corpus, control, a_jobs, progress, ms, w,
                            exclude, full_every=full_every)
            except Exception as e:  # the run reports it; the thread must not just vanish
                progress.fail(f"the atheris engine failed: {type(e).__name__}: {e}")

        t = threading.Thread(target=go, daemon=True)
        t.start()
        threads.append(t)
    try:
        try:
            if engine in ("hypothesis", "both"):
                used.append("hypothesis")
                run_hypothesis(decoders, corpus, control, h_jobs, progress, ms, full_every,
                               w, exclude)
            for t in threads:
                t.join()
        except KeyboardInterrupt:
            extra["interrupted"] = True
            with sigint_ignored():
                control.stop.set()
                for t in threads:
                    t.join()
    finally:
        control.stop.set()
        w.clean()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    with progress.lock:
        ends = list(progress.ends)
    with progress.lock:
        failed = bool(progress.failures)
    extra["ended"] = ("interrupted" if extra.get("interrupted") else
                      "time" if "time" in ends else
                      "runs" if runs is not None and ends and not failed else
                      "failed" if failed else "time")
    return summary(decoders, progress, corpus, used, extra, known)


@contextlib.contextmanager
def sigint_ignored() -> Any:
    """SIGINT ignored inside (from the main thread only): what must finish - the
    engines' shutdown, one JSON document - is not cut by a second interrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
