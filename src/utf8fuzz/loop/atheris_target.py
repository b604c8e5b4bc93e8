"""The Atheris (libFuzzer) differential target, shared by the target modules of
:mod:`utf8fuzz.loop.targets` (and the ``fuzz/`` shims over them in a checkout).

Each target calls :func:`main` with its profile and mode; everything else is
libFuzzer's command line (``-max_total_time``, ``-max_len``, ``-dict``, ``-jobs``,
``-fork``, corpus dirs); a target that is the only process on its corpus adds ``-reload=0``
(:func:`single_process_flags`).

Each *new* signature is minimized and saved to the corpus right away, atomically, so
``-jobs``/``-fork`` workers share one corpus safely. A one-line JSON record of each
new entry is appended to ``$UTF8FUZZ_FOUND_LOG`` when set (``utf8fuzz fuzz`` reads it).
Then a target run directly (by hand, by OSS-Fuzz or ClusterFuzzLite) ends the run as a
crash on the finding's minimized input, which libFuzzer writes as its
``crash-<sha1>`` artifact (:class:`StopAtFinding`). ``utf8fuzz fuzz``, which wants
every finding of a night, sets ``UTF8FUZZ_KEEP_GOING=1``: the run goes on.

Coverage. libFuzzer is told which rows of each profile's table, which error
shapes and which neighbours the references met (:mod:`utf8fuzz.loop.coverage`);
the references themselves run uninstrumented, which doubles the executions per
second. ``UTF8FUZZ_INSTRUMENT=1`` instruments their bytecode as well.

Environment:

``UTF8FUZZ_DECODERS``  JSON list of decoder specs (names, globs, module:attr[@profile]),
                       each given every input; unset: every available decoder, the
                       out-of-process ones a share (:mod:`.finder`)
``UTF8FUZZ_CORPUS``    corpus directory (default ``corpus``; in a target packed by
                       PyInstaller, the corpus packed with it: :func:`packed_corpus`)
``UTF8FUZZ_KEEP_GOING`` ``1``: save each new finding and go on; unset: stop at the
                       first, as a crash
``UTF8FUZZ_FOUND_LOG`` optional JSON-lines file of new entries
``UTF8FUZZ_MINIMIZE_SECONDS`` per new signature (default 10)
``UTF8FUZZ_INSTRUMENT``  ``1``: instrument the references' bytecode too
``UTF8FUZZ_ROUND``     inputs compared together (default 32; ``1``: each at once)
``UTF8FUZZ_STRUCTURED_SHARE``  the share of the work given to inputs Hypothesis's
                       strategies draw from libFuzzer's bytes (default 0.25; ``0``: none)
``UTF8FUZZ_DEADLINE``  when the run ends, in seconds since the epoch (``utf8fuzz fuzz``
                       sets it): libFuzzer's loop is told to end by then
                       (:func:`until_deadline`), inputs it runs later are not compared,
                       and no minimization goes past it

Structured inputs. An input that starts with ``FF 48 59 50`` is a Hypothesis buffer:
what is compared, and saved, is the input :mod:`utf8fuzz.strategies` draw from it
(:mod:`utf8fuzz.loop.structured`; the tag twice: the rest, as it is).

Inputs are compared in rounds, decoder-major (:mod:`.finder`, "Rounds"): each
input's walks - its coverage - are taken at once, the decoders run when the round
is full. If a decoder crashes the process mid-round, libFuzzer saves the round's
last input, which may not be the culprit; every input of the round is in
``<artifact prefix>inflight-<pid>.hex`` (one hex line each; removed at a clean
exit). Each can be run alone: ``python -m utf8fuzz.loop.targets.differential FILE``
(an input that starts with the structured tag below goes in with the tag twice:
:func:`~utf8fuzz.loop.structured.escape`).
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import shlex
import shutil
import sys
import tempfile
import time
import types
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from utf8fuzz import safe

if TYPE_CHECKING:
    from utf8fuzz.decoders.base import Decoder
    from utf8fuzz.loop.finder import NewSignature

#: The views each mode compares (see utf8fuzz.outcome).
MODES: dict[str, frozenset[str] | None] = {
    "all": None,
    "strict": frozenset({"strict", "spans", "reason"}),
    "replace": frozenset({"replace", "ignore", "escape"}),
}


def _seconds(text: str | None) -> float | None:
    """``$UTF8FUZZ_MINIMIZE_SECONDS``: when a minimization must stop (the run is
    ending); unset, it stops only at its counts (engine/minimize.py)."""
    return float(text) if text else None


def select(specs: Sequence[str] | None, profiles: Sequence[str] | None) -> list[Decoder]:
    from utf8fuzz import decoders as registry

    chosen: list[Decoder] = []
    if specs:
        for s in specs:
            chosen += [d for d in registry.resolve(s) if d not in chosen]
    else:
        chosen = registry.available()
    if profiles:
        chosen = [d for d in chosen if d.profile in profiles]
    return chosen


def instrument_references() -> None:
    """With ``UTF8FUZZ_INSTRUMENT=1``, instrument the reference decoders' bytecode
    for coverage (as Atheris instruments Python), on top of the table coverage.
    The references then walk in Python (``UTF8FUZZ_PURE_REFERENCE=1``, set by
    :func:`main` before they are made): the C walk has no bytecode to instrument."""
    if os.environ.get("UTF8FUZZ_INSTRUMENT") != "1":
        return
    import atheris

    from utf8fuzz import policies
    from utf8fuzz.profiles import table

    for fn in (policies.decode_tokens, table.Profile.is_prefix, table.Row.value,
               table.bits_value):
        atheris.instrument_func(fn)


def relaunchable(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``argv[0]`` runnable by libFuzzer itself.

    With ``-fork``, ``-jobs`` or ``-workers`` libFuzzer starts its workers by running
    ``argv[0]`` through the shell. For an Atheris target that is a ``.py`` file: not
    executable, and not tied to the interpreter (and virtual environment) running
    now. So ``argv[0]`` becomes a small script, made once, that runs this
    interpreter on the target; without those flags ``argv`` is returned unchanged."""
    argv = list(argv)
    if not argv or not any(a.startswith(("-fork=", "-jobs=", "-workers=")) for a in argv[1:]):
        return argv
    script = os.path.abspath(argv[0])
    name = os.path.basename(script).removesuffix(".py")
    path = os.path.join(tempfile.mkdtemp(prefix="utf8fuzz-target-"), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(script)} "$@"\n')
    os.chmod(path, 0o755)
    return [path, *argv[1:]]


#: The exit callbacks made by at_process_exit, kept alive as long as the process.
_EXIT_CALLBACKS: list[object] = []


def at_process_exit(fn: Callable[[], None]) -> bool:
    """Call ``fn`` when the process ends through C's ``exit()``; False if this libc
    offers no way to ask.

    Why: libFuzzer ends a run (``-max_total_time``, ``-runs``) by calling ``exit()``
    from inside ``atheris.Fuzz()``. The interpreter is never finalized, so Python's
    :mod:`atexit` handlers never run - and the inputs the finder still holds
    for its round and its out-of-process decoders would go unchecked. C's exit
    handlers do run, in the thread that called ``exit()``, the one running Python;
    ``__cxa_atexit`` (glibc and macOS, where ``atexit`` itself is not an exported
    symbol) registers one, and ctypes makes ``fn`` callable from C. A crash
    (libFuzzer's ``_Exit``) runs none, which is right: the process state is not
    to be trusted then."""
    import ctypes

    try:
        register = ctypes.CDLL(None).__cxa_atexit
    except (AttributeError, OSError):
        return False

    def call(_: object) -> None:
        try:
            fn()
        except BaseException as e:  # nothing above this frame to tell
            print(f"utf8fuzz: at exit: {type(e).__name__}: {e}"[:300], file=sys.stderr)

    cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(call)
    _EXIT_CALLBACKS.append(cb)
    register.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    status: int = register(ctypes.cast(cb, ctypes.c_void_p), None, None)
    return status == 0


#: Set in the environment of a target run with -fork, -jobs or -workers, which its
#: workers inherit: they share one corpus directory (see single_process_flags).
SHARED_CORPUS_ENV = "UTF8FUZZ_SHARED_CORPUS"


def single_process_flags(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``-reload=0`` added when this process is the only one fuzzing
    its corpus directories; unchanged when it says ``-reload`` itself.

    Why: libFuzzer re-reads the corpus every second by default (``-reload=1``), to
    pick up inputs other processes put there: it lists the directory and stats
    every file. With one process nothing new can be there, and the cost grows with
    the corpus (6,478 files here: 2% of the fuzz loop's time, measured with perf).
    Processes that share a directory - libFuzzer's -jobs workers, which run the
    same command without -jobs, and -fork children - inherit
    :data:`SHARED_CORPUS_ENV` from the parent, and keep the default."""
    argv = list(argv)
    flags = argv[1:]
    if any(a.startswith("-reload=") for a in flags) or os.environ.get(SHARED_CORPUS_ENV):
        return argv
    if any(a.startswith(("-fork=", "-jobs=", "-workers=")) for a in flags):
        os.environ[SHARED_CORPUS_ENV] = "1"
        return argv
    return [*argv, "-reload=0"]


def artifact_prefix(argv: Sequence[str]) -> str:
    """libFuzzer's ``-artifact_prefix`` (where it writes crash files), else ``""``:
    the current directory, as libFuzzer's own default."""
    prefix = ""
    for a in argv[1:]:
        if a.startswith("-artifact_prefix="):
            prefix = a.split("=", 1)[1]
    return prefix


def packed_corpus() -> Path | None:
    """In a target packed by PyInstaller (OSS-Fuzz's ``compile_python_fuzzer``), the
    corpus packed with it (``.clusterfuzzlite/build.sh`` packs ``corpus/entries``: the
    divergences known when it was built); else None.

    Why it is the default there: the packed target unpacks into a new temporary
    directory each time it starts, so what one run saves is unknown to the next.
    ClusterFuzzLite runs the target again on a crash's input to see that it
    reproduces; with a corpus that outlived the run, the finding would be known by
    then, and the crash would not reproduce."""
    base = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and base and (Path(base) / "corpus").is_dir():
        return Path(base) / "corpus"
    return None


#: ``1``: each new finding is saved and the run goes on (``utf8fuzz fuzz`` sets it for
#: the target it runs). Unset: the run stops at the first (:class:`StopAtFinding`).
KEEP_GOING_ENV = "UTF8FUZZ_KEEP_GOING"


class NewDivergence(Exception):
    """A divergence not in the corpus: saved there, then raised on its minimized input."""


def _raise_new(message: str) -> None:
    raise NewDivergence(message)


def raise_named(name: str, message: str) -> None:
    """Raise :class:`NewDivergence` (``message``) from a frame whose function is
    named ``name``. Always raises.

    Why: ClusterFuzz (OSS-Fuzz) names a Python crash, and deduplicates crashes, by
    the function names of the innermost frames of its traceback. Raised from one
    fixed function, every new divergence would be one crash, and all but the first
    would be filed as duplicates of it."""
    code = _raise_new.__code__.replace(co_name=name, co_qualname=name)
    types.FunctionType(code, _raise_new.__globals__)(message)


class StopAtFinding:
    """A target run directly stops at its first new finding, as a crash on the
    finding's minimized input: libFuzzer writes that input as its
    ``<artifact prefix>crash-<sha1>``, and ClusterFuzzLite and OSS-Fuzz report it.

    libFuzzer writes the input it was running when the target raised, and a
    finding is made on another one (compared in a round, then minimized). So the
    minimized input is kept (:attr:`pending`), the custom mutator hands it to
    libFuzzer as its next input (:meth:`mutator`), and :meth:`check` raises when
    libFuzzer runs it; no other input is compared until then. When libFuzzer runs
    its inputs one by one, as it does to reproduce a crash (every input named is a
    file), each is compared at once (:attr:`one_by_one`) and a new finding raises
    on it. A finding made as the run ends (the last round, compared at exit) is too
    late for libFuzzer: :meth:`at_exit` writes the artifact itself, says where in
    libFuzzer's words (``Test unit written to PATH``, which ClusterFuzz looks for),
    and exits with libFuzzer's crash status.

    A finding is new when the corpus held no evidence of it when the target started
    (``before``: :func:`utf8fuzz.triage.group.finding_ids`): another signature of a
    known cause is saved as more evidence and the run goes on. The crash's frame is
    named after the finding (family and rule), so ClusterFuzz files one crash per
    finding, not one per signature."""

    def __init__(self, argv: Sequence[str], before: frozenset[str] = frozenset()) -> None:
        self.before = before
        inputs = [a for a in argv[1:] if not a.startswith("-")]
        self.one_by_one = bool(inputs) and all(os.path.isfile(a) for a in inputs)
        self.prefix = artifact_prefix(argv)
        self.exit_status = 77  # libFuzzer's -error_exitcode
        for a in argv[1:]:
            value = a.removeprefix("-error_exitcode=")
            if value != a and value.isdigit():
                self.exit_status = int(value)
        #: The minimized input of the first new finding, until libFuzzer runs it.
        self.pending: bytes | None = None
        self.name = ""
        self.line = ""

    def note(self, new: NewSignature) -> None:
        """Keep ``new`` to crash on, unless a finding is kept already or ``new`` is
        evidence of a finding the corpus had."""
        from utf8fuzz.loop.structured import escape

        fid = new.finding.get("id")
        if self.pending is None and fid not in self.before:
            self.pending = escape(new.input)  # libFuzzer's input for it (structured.py)
            named = (f"{new.finding['family']}/{new.finding['rule']}"
                     if new.finding.get("rule") else new.signature)
            self.name = safe.text(named, limit=300)
            self.line = (f"utf8fuzz: new divergence {safe.text(new.signature, limit=300)}: "
                         "minimized input "
                         f"{safe.hexbytes(new.input)} (from {new.original_size} bytes), "
                         f"saved as {safe.text(new.path)}")

    def found(self, new: NewSignature, data: bytes) -> None:
        """``new`` was found while libFuzzer ran ``data``: kept, and raised at once if
        libFuzzer is running its inputs one by one or ``data`` is the minimized input."""
        self.note(new)
        if self.pending is not None and (self.one_by_one or data == self.pending):
            self.crash()

    def check(self, data: bytes) -> None:
        """Raise if ``data`` is the kept input."""
        if data == self.pending:
            self.crash()

    def crash(self) -> None:
        # Atheris prints the exception on stdout; the crash line goes to stderr too.
        print(self.line, file=sys.stderr, flush=True)
        raise_named(self.name, self.line)

    def mutator(self, mutate: Callable[[bytes, int, int], bytes],
                ) -> Callable[[bytes, int, int], bytes]:
        """``mutate`` (a custom mutator), except that the kept input comes first."""

        def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
            pending = self.pending
            if pending is not None and len(pending) <= max_size:
                return pending
            return mutate(data, max_size, seed)

        return custom_mutator

    def at_exit(self) -> None:
        """As the process exits (C's ``exit()``): if a kept input was never run, write
        it where libFuzzer would have and end with libFuzzer's crash status."""
        if self.pending is None:
            return
        path = f"{self.prefix}crash-{hashlib.sha1(self.pending).hexdigest()}"
        try:
            with open(path, "wb") as f:
                f.write(self.pending)
            where = f"Test unit written to {safe.text(path)}"
        except OSError as e:
            where = f"its input could not be written to {safe.text(path)}: {safe.text(e)}"
        print(f"{self.line}; the run ended before libFuzzer ran it. {where}",
              file=sys.stderr, flush=True)
        os._exit(self.exit_status)


def late(argv: Sequence[str]) -> NoReturn:
    """Be a target that libFuzzer started past the run's deadline: a ``-fork`` job,
    or the merge of a finished job's inputs, begun as the time ran out (the
    ``-fork`` parent looks at its clock only when a job ends, and lets the running
    ones finish). Nothing it would run is compared (:func:`main`), so it builds no
    decoder - their start, the peers' processes among them, is seconds on a loaded
    machine, all of it past ``--time`` - and libFuzzer runs its inputs on an empty
    callback and ends (``-runs=0``: no loop past them)."""
    import atheris

    flags = [a for a in argv[1:] if not a.startswith(("-runs=", "-max_total_time="))]
    atheris.Setup([*argv[:1], "-runs=0", *flags], lambda data: None)
    atheris.Fuzz()
    raise SystemExit(0)  # atheris.Fuzz ends the process itself


def until_deadline(argv: Sequence[str], left: float) -> list[str]:
    """``argv`` with libFuzzer's ``-max_total_time`` lowered (or added) so that its
    loop ends ``left`` seconds from now at the latest.

    Why: libFuzzer counts ``-max_total_time`` from the start of its loop
    (``atheris.Fuzz``), not from the process's: the target's own start (imports, the
    decoders, the peers' processes: seconds on a loaded machine) came on top of the
    time the harness gave it. And it stops at the first check at which more whole
    seconds than the limit have passed, so the limit is one less than the seconds
    left. Seeds it still runs past the deadline are not compared (:func:`main`)."""
    limit = max(1, math.floor(left) - 1)  # 0 would be libFuzzer's "no limit"
    out = [argv[0]] if argv else []
    for a in argv[1:]:
        value = a.removeprefix("-max_total_time=")
        if value != a:
            given = int(value) if value.lstrip("-").isdigit() else 0
            limit = min(limit, given) if given > 0 else limit
            continue
        out.append(a)
    return [*out[:1], f"-max_total_time={limit}", *out[1:]]


#: Inputs between two runs of the cyclic garbage collector in the fuzz loop.
COLLECT_EVERY = 20_000


def collect() -> None:
    """The fuzz loop's cyclic garbage collection: all of it, then everything that
    survived frozen out of the next one's way.

    Why not the collector's own schedule: a differ run leaves no cyclic garbage
    (``tests/engine/test_no_cycles.py``), so every automatic collection found
    nothing, and they cost about a tenth of the instructions of an input
    (callgrind, on 3,000 inputs recorded from the loop): a round's walks and
    screens are alive until it is compared, so the youngest generation was
    walked again and again, and the older ones held the PyICU adapter's memos,
    which grow for the whole run. A collection every :data:`COLLECT_EVERY` inputs
    still frees any cycle a plug-in makes."""
    gc.collect()
    gc.freeze()


def main(argv: Sequence[str] | None = None, *, profile: str | None = None,
         mode: str = "all") -> None:
    import atheris

    from utf8fuzz.engine.screening import SLOW_EVERY
    from utf8fuzz.loop.coverage import TableCoverage, libfuzzer_counters
    from utf8fuzz.loop.finder import Finder, InFlight, round_default
    from utf8fuzz.loop.mutator import make_custom_mutator
    from utf8fuzz.loop.state import DEADLINE_ENV, deadline_of
    from utf8fuzz.loop.structured import input_of
    from utf8fuzz.loop.structured import mutator as structured_mutator
    from utf8fuzz.triage.group import finding_ids

    try:
        deadline = deadline_of(os.environ.get(DEADLINE_ENV))
    except ValueError as e:
        print(f"utf8fuzz: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    if deadline is not None and time.monotonic() >= deadline:
        late(argv if argv is not None else sys.argv)
    if os.environ.get("UTF8FUZZ_INSTRUMENT") == "1":
        os.environ["UTF8FUZZ_PURE_REFERENCE"] = "1"
    specs = json.loads(os.environ["UTF8FUZZ_DECODERS"]) if os.environ.get(
        "UTF8FUZZ_DECODERS") else None
    profiles = [profile] if profile else (
        os.environ["UTF8FUZZ_PROFILES"].split(",") if os.environ.get("UTF8FUZZ_PROFILES")
        else None)
    decs = select(specs, profiles)
    corpus = Path(os.environ.get("UTF8FUZZ_CORPUS") or packed_corpus() or "corpus")
    log = os.environ.get("UTF8FUZZ_FOUND_LOG")
    argv = list(argv if argv is not None else sys.argv)
    stop = None if os.environ.get(KEEP_GOING_ENV) == "1" else StopAtFinding(
        argv, frozenset(finding_ids(corpus)) if corpus.is_dir() else frozenset())
    one_by_one = stop is not None and stop.one_by_one
    round_size = round_default()
    inflight = InFlight(Path(artifact_prefix(argv) + f"inflight-{os.getpid()}.hex")) \
        if round_size > 1 else None
    # a run bounded by -runs is one whatever the clock (Finder.counted)
    counted = any(a.startswith("-runs=") for a in argv[1:])
    # a seeded run's turn of the corpus's signatures is its seed's (Finder.turn)
    turn = next((int(a[6:]) for a in argv[1:] if a.startswith("-seed=") and a[6:].isdigit()),
                None)
    finder = Finder(decs, corpus, "atheris", views=MODES[mode],
                    minimize_seconds=_seconds(os.environ.get("UTF8FUZZ_MINIMIZE_SECONDS")),
                    round_size=round_size, inflight=inflight, counted=counted,
                    deadline=deadline, turn=turn,
                    # named decoders are the ones under test: every input each
                    slow_every=1 if specs else SLOW_EVERY)
    if not finder.differ.decoders:
        print("utf8fuzz: no decoder under test for this target (only references, which are "
              "the oracle); nothing to compare", file=sys.stderr)
    queue = finder.queue
    keys = finder.differ.walk_keys  # the profile of each walk queue() returns
    found = finder.found
    instrument_references()
    covs: list[TableCoverage] = []  # made on the first input: libFuzzer is running then

    unreproduced = finder.unreproduced

    def log_new(n: int, u: int) -> None:
        """Append the entries found since there were ``n`` (and the unreproduced
        signatures since there were ``u``) to the found log."""
        if (len(found) != n or len(unreproduced) != u) and log:
            with open(log, "a", encoding="utf-8") as f:
                for x in [*found[n:], *unreproduced[u:]]:
                    f.write(json.dumps(x.to_json()) + "\n")

    def cover(walks: tuple[Any, ...]) -> bool:
        """The walks of an input as libFuzzer's coverage; whether a feature was new
        (the slow decoders get such an input: finder.cover)."""
        cov, new = covs[0], False
        for (profile, _), walk in zip(keys, walks, strict=True):
            new = cov.feed_walk(profile, walk) or new
        return new

    finder.cover = cover

    def log_stats() -> None:
        """This process's counts, for the harness's summary (``{"stats": ...}``)."""
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"stats": {
                    "pid": os.getpid(), "executions": finder.executions,
                    "bytes": finder.bytes, "inputs_seen": finder.inputs_seen(),
                    "divergent_inputs": finder.divergent_inputs,
                    "structured": structured,
                    "calls": dict(finder.calls.asked) if finder.calls is not None else {},
                }}) + "\n")

    executions = 0
    structured = 0  # inputs drawn by Hypothesis from libFuzzer's bytes

    def test_one_input(fuzzed: bytes) -> None:
        nonlocal executions, structured
        if deadline is not None and time.monotonic() >= deadline:
            # The run's time is over: what libFuzzer still runs (the rest of its
            # seeds; its loop ends by itself within a second, until_deadline) is not
            # compared. In its loop (the mutator has run) each call waits a little,
            # so that it does not count a flood of inputs never compared.
            if mutated:
                time.sleep(0.01)
            return
        if stop is not None and stop.pending is not None:
            stop.check(fuzzed)  # raises on the finding's input; the rest waits for it
            return
        data = input_of(fuzzed)  # a structured input's draw (loop/structured.py)
        if data is None:
            return
        structured += data is not fuzzed
        if not covs:
            covs.append(TableCoverage(libfuzzer_counters()))
        n, u = len(found), len(unreproduced)
        queue(data)  # its walks go to the coverage (cover) before it is compared
        if one_by_one:
            finder.flush()
        log_new(n, u)
        if stop is not None and len(found) > n:
            stop.found(found[n], fuzzed)
        executions += 1
        if executions % COLLECT_EVERY == 0:
            collect()
            log_stats()

    def last_round() -> None:
        if inflight is not None and inflight.held:
            # A decoder is ending the process mid-round (KeyboardInterrupt makes
            # Atheris call exit()): the round stays in the file, for the harness
            # to re-run; comparing more here would run that decoder again.
            return
        n, u = len(found), len(unreproduced)
        if stop is None or stop.pending is None:
            finder.flush()
        finder.save_tally()
        log_new(n, u)
        log_stats()
        if inflight is not None:
            inflight.close()
        if stop is not None:
            if len(found) > n:
                stop.note(found[n])
            stop.at_exit()

    # C runs exit handlers last registered first: this one after last_round, which
    # still needs the decoders' processes (those libFuzzer's exit() leaves running)
    from utf8fuzz.decoders._subprocess import end_run

    at_process_exit(end_run)
    if not at_process_exit(last_round):
        print("utf8fuzz: this libc offers no exit handler: the last round of inputs is "
              "not compared when libFuzzer ends the run", file=sys.stderr)

    # Everything made so far lives as long as the process: out of the collector's
    # way, so that a full collection does not walk the modules and tables again.
    gc.freeze()
    gc.disable()  # see collect()
    # atheris.Setup rebinds atheris.Mutate to libFuzzer's: look it up at call time.
    # With -max_len above 64 (utf8fuzz fuzz), some mutations are long inputs, in the
    # profiles of the decoders under test (utf8fuzz.engine.long).
    # A share of the inputs are Hypothesis buffers, mutated by libFuzzer's own byte
    # mutations (utf8fuzz.loop.structured).
    mutating = structured_mutator(
        make_custom_mutator(lambda d, n: atheris.Mutate(d, n), sorted({d.profile for d in decs})),
        lambda d, n: atheris.Mutate(d, n))
    mutated = False  # libFuzzer is in its loop (past its seeds)

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        nonlocal mutated
        mutated = True
        return mutating(data, max_size, seed)

    run_argv = relaunchable(single_process_flags(argv))
    if deadline is not None:
        run_argv = until_deadline(run_argv, deadline - time.monotonic())
    if run_argv[0] != argv[0]:  # the relaunch script's directory goes with the run
        at_process_exit(partial(shutil.rmtree, os.path.dirname(run_argv[0]), True))
    atheris.Setup(run_argv, test_one_input,
                  custom_mutator=mutator if stop is None else stop.mutator(mutator))
    atheris.Fuzz()
