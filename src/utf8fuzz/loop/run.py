"""The fuzz loop behind ``utf8fuzz fuzz``: the engines started, the Hypothesis
workers, crashes, the summary. Each part in a module of its own: the atheris
engine's driver :mod:`.libfuzzer`, the summary :mod:`.summary`, the seeds
:mod:`.seeds`, what the engines share :mod:`.state`, re-running what a dead process
left :mod:`.recover`.

Engines.

``hypothesis``  :mod:`utf8fuzz.strategies` drive a :class:`~.finder.Finder` in each of
                ``jobs`` forked worker processes (one at least: a decoder that kills
                its process kills a worker, never the harness), on one shared corpus,
                until the deadline, a quarter of their time on long inputs
                (:mod:`.long`), each Hypothesis example a batch of inputs
                (:mod:`.hypothesis_worker`). Whatever a worker prints goes to stderr.
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
still runs one decoder timeout plus :data:`GRACE` seconds later is killed. The
libFuzzer target is given the deadline (``$UTF8FUZZ_DEADLINE``): libFuzzer counts its
``-max_total_time`` from the start of its own loop, after the target's start (seconds
with every decoder on a busy machine), and runs its seeds whatever the time, so the
target tells it the time left, compares nothing met past the deadline, and, like a
Hypothesis worker, minimizes nothing past it: a signature met as the run ends is
saved as met (:meth:`.finder.Finder._minimizing`), ``minimizer.complete`` false; the
next run to meet its signature (every run replays the corpus's inputs first) minimizes
it in place (:meth:`.finder.Finder._finish`).

Counts. ``runs`` bounds each engine process by a count instead: a Hypothesis worker
draws that many inputs past the seeds (inputs, not Hypothesis's examples, each a
batch; a worker a decoder ended starts again on the same draws, less the inputs
that end a process), libFuzzer is run with
``-runs`` (its seeds added); ``seconds`` stays a limit, whichever comes first.
``seed`` seeds both (Hypothesis per worker and call, libFuzzer's ``-seed`` per
start). A counted run's finder consults no clock (:attr:`.finder.Finder.counted`),
so with one engine process the same seed, corpus and decoders give the same
inputs in the same order, the same findings, on any machine and under any load.

The summary is the ``--json`` object: ``decoders``, ``executions``, ``execs_per_sec``,
``divergent_inputs`` (both engines), ``bytes`` and ``mb_per_sec`` (the inputs
compared, in bytes), ``inputs_seen`` (per decoder, the inputs it was compared on:
every one, or for an out-of-process decoder its share, :class:`.screening.SlowShare`;
both engines', a Hypothesis worker's when it ends), ``new`` (one object per new signature:
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
import multiprocessing as mp
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, NoReturn

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.screening import SLOW_EVERY
from utf8fuzz.loop.finder import InFlight, full_every_default
from utf8fuzz.loop.hypothesis_worker import hypothesis_worker
from utf8fuzz.loop.libfuzzer import atheris_available as atheris_available
from utf8fuzz.loop.libfuzzer import run_atheris
from utf8fuzz.loop.recover import ended as _ended
from utf8fuzz.loop.recover import killers
from utf8fuzz.loop.recover import rerun as _recover
from utf8fuzz.loop.recover import stuck as _stuck
from utf8fuzz.loop.seeds import seeds
from utf8fuzz.loop.state import GRACE as GRACE
from utf8fuzz.loop.state import KILL_AFTER, Control, Work, decoder_timeout, derived_seed
from utf8fuzz.loop.state import Progress as Progress
from utf8fuzz.loop.summary import as_saved as as_saved
from utf8fuzz.loop.summary import split_known as split_known
from utf8fuzz.loop.summary import summary as summary
from utf8fuzz.triage.group import entry_findings, stale
from utf8fuzz.triage.known import Known

ENGINES = ("atheris", "hypothesis", "both")
#: Exit status of a worker that a BaseException (or its own failure) ended.
_WORKER_DIED = 3


#: Unreadable corpus entries a run names in its notes; the rest it counts.
BAD_ENTRIES_NAMED = 10


# -- hypothesis -----------------------------------------------------------------------


def _worker_main(conn: Connection, decoders: Sequence[Decoder], corpus: Path | None,
                 deadline: float, minimize_seconds: float, full_every: int | None,
                 inflight: Path, home: Path, replay_seeds: bool,
                 exclude: frozenset[bytes], runs: int | None = None,
                 seed: int | None = None, slow_every: int = SLOW_EVERY) -> None:
    """A forked Hypothesis worker. It tells the parent ``("progress", executions,
    divergent inputs, new)``, then ``("done", ended)`` (``"runs"``: it met its
    ``runs`` inputs; ``"time"``: the deadline came first); or ``("died", kind, message)``
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
                              seeds(corpus) if replay_seeds and corpus is not None else (),
                              full_every=full_every, inflight=held, exclude=exclude,
                              died=died, runs=runs, seed=seed, slow_every=slow_every)
        held.close()
        conn.send(("calls", dict(f.calls.asked) if f.calls is not None else {}))
        conn.send(("counts", f.bytes, f.inputs_seen()))
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
                   full_every: int | None, work: Work, exclude: set[bytes],
                   slow_every: int = SLOW_EVERY) -> None:
    """``jobs`` forked workers until the deadline (module docstring): their
    progress, their deaths re-run and restarted, the hung ones killed.
    ``slow_every``: the out-of-process decoders' share (:class:`.finder.Finder`)."""
    ctx = mp.get_context("fork")
    live: list[_Slot] = []

    def start(slot: _Slot) -> None:
        reader, writer = ctx.Pipe(duplex=False)
        slot.inflight = work.hypothesis / f"inflight-{slot.index}-{slot.generation}.hex"
        slot.said, slot.hung = None, False
        # a worker started again (a decoder ended it) draws the same inputs as
        # before, less those that end a process: a counted run stays the same run
        args = (writer, decoders, corpus, control.deadline, minimize_seconds, full_every,
                slot.inflight, work.hypothesis, slot.index == 0 and slot.generation == 0,
                frozenset(exclude), control.runs,
                None if control.seed is None else derived_seed(control.seed, slot.index),
                slow_every)
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
                elif msg[0] == "counts":  # the bytes compared, the inputs each decoder saw
                    with progress.lock:
                        progress.bytes[slot.key], progress.seen[slot.key] = msg[1], msg[2]
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


def _stop_process(proc: Any) -> None:
    """SIGTERM, then SIGKILL if it has not gone :data:`KILL_AFTER` seconds later."""
    if proc.is_alive():
        proc.terminate()
        proc.join(KILL_AFTER)
        if proc.is_alive():
            proc.kill()
            proc.join()


# -- atheris ----------------------------------------------------------------------------


# -- the run ----------------------------------------------------------------------------


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
    receive Python objects); leave empty for "every available decoder". Named
    decoders are the ones under test: each gets every input, out-of-process or not
    (every available decoder: the out-of-process ones a share, :mod:`.finder`).
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
                # decoders the user named are the ones under test: every input each
                run_hypothesis(decoders, corpus, control, h_jobs, progress, ms, full_every,
                               w, exclude, 1 if specs else SLOW_EVERY)
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
