"""One persistent worker process, spoken to in length-prefixed frames.

Used by every adapter whose decoder runs out of process (Node, isolated
plug-ins), so that a decoder that kills its process or hangs costs one outcome,
never the harness. A frame is a 4-byte little-endian length and that many bytes,
both ways. The worker answers each request with one frame, in order, and
starts with one ``ready`` frame (its description, or why it cannot run).

Requests are pipelined: :meth:`Worker.request_many` writes while it reads
(non-blocking pipes and a selector), so a batch of thousands costs a few system
calls and neither side can block the other on a full pipe. :meth:`Worker.send_many`
splits that in two: it writes what the pipe takes now and returns, and its answers
are read when the caller asks for them (or first thing in any other exchange), so
the worker works while the caller does something else. Each answer must
arrive within ``timeout`` seconds of the previous one (or of the start): a
worker that misses that is killed and the request gets a ``timeout``; one that
exits gets a ``crash`` carrying its exit status and the tail of its stderr.
Either way the worker is restarted. A worker that writes its answers in batches
(``answers_each=False``, as exec clients may) can fail with several requests
outstanding: they are then sent again one at a time, each alone to a fresh or
answering process, until one fails alone, so a failure is only ever pinned on
the request that causes it (at the cost of one more timeout for a hang). After a
``timeout`` the rest of the batch is not sent: :meth:`Worker.request_many` then
returns fewer answers than requests (each further hang would cost a timeout or
two, and the run learns nothing new from it).

Batches. :meth:`Worker.request_batch` sends many items (inputs) in one request
and takes one answer for them all, which a worker that pays per message (a Python
one: a read, a JSON encoding, a write each) answers at a share of the cost. A
batch that fails (a crash, a hang, an answer past its bound or not one answer per
item) is sent again one item at a time, each alone, until one fails alone: the
failure is pinned on that item, never another, at the cost of one more timeout for
a hang; the items after it go on in a batch again, except after a ``timeout``.

Bounded answers. ``answer_limit(payload)`` is the longest frame that may answer
``payload``: a length prefix past it is a ``bad-outcome`` (``oversized-output``)
pinned on that request, read no further (the process is restarted), so a worker
that writes gigabytes costs at most the limit and one read buffer.

Bounded resources. A worker's stderr is a pipe drained in the same loop into a
buffer that keeps its last :data:`STDERR_KEEP` bytes, whatever it writes. Each
worker runs under ``RLIMIT_AS`` (:func:`memory_limit_mib`: ``memory`` MiB, default
``$UTF8FUZZ_WORKER_MEMORY`` or :data:`DEFAULT_MEMORY_MIB`; 0 is none; none either
for a worker that preloads AddressSanitizer, which cannot start under it); one that
runs out of it gives a crash whose detail begins ``oom:`` (so its signature's
feature is ``oom``): it said ``MemoryError`` or "out of memory" on stderr, or it
died with a peak RSS near the limit. On Linux each worker gets ``PR_SET_PDEATHSIG``
(SIGKILL), so it dies with the harness even when the harness is SIGKILLed
mid-request. The signal follows the *thread* that forked the worker, so every worker
is forked by one thread that lives as long as the harness process (:func:`_spawn`):
a worker started from a thread that then ends lives on.

No leaked processes. Each worker is started in a session of its own, with
``$UTF8FUZZ_DECODER_PROCESS`` set to a tag of its own in its environment, which
its children inherit. When the harness is done with a worker (a restart, a
close, the end of the harness process) it kills, on Linux, every process that
carries the worker's tag in its initial environment (``/proc/PID/environ``) or
descends from the worker (``/proc/PID/stat``), each stopped (SIGSTOP) before any
is killed so that none forks past the scan: children that outlive it and
grandchildren that called ``setsid`` go too; then, everywhere, the worker's
process group, whether or not the worker itself is still alive. The harness is a child
subreaper (``PR_SET_CHILD_SUBREAPER``), so such orphans are adopted by it rather
than by init, and it reaps those it kills; at exit it kills whatever still carries
a tag of this run or of a run it started (:data:`RUN_ENV`). What escapes: a
descendant that both leaves the worker's tree and starts a program with an
environment stripped of the tag, and anything still running when the harness is
SIGKILLed (only the worker itself gets ``PR_SET_PDEATHSIG``). Off Linux only the
process group is killed.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import itertools
import os
import re
import resource
import secrets
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from utf8fuzz import safe
from utf8fuzz.outcome import Outcome

_LEN = struct.Struct("<I")

#: How much of a worker's stderr is kept: its tail. (It went to a temporary file
#: read whole on a crash; a chatty plug-in wrote 4.5 GB there in 27 s.)
STDERR_KEEP = 64 << 10
#: A worker's address-space limit unless ``$UTF8FUZZ_WORKER_MEMORY`` says otherwise.
DEFAULT_MEMORY_MIB = 2048
MEMORY_ENV = "UTF8FUZZ_WORKER_MEMORY"
#: What a process that ran out of memory writes last: CPython, glibc's strerror,
#: C++ (``std::bad_alloc``), V8 ("JavaScript heap out of memory").
_OOM_WORDS = re.compile(rb"MemoryError|out of memory|Cannot allocate memory|bad_alloc",
                        re.IGNORECASE)
#: A dead worker whose peak RSS reached this share of its limit ran out of memory
#: (C code that aborts or dereferences NULL when malloc fails says nothing).
_OOM_RSS_SHARE = 0.9
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: The environment variable that tags every process a worker starts (module docstring).
TAG_ENV = "UTF8FUZZ_DECODER_PROCESS"
#: This run's part of every tag (a forked process keeps it and adds its own pid),
#: under the run of the harness that started this one, if any: ``RUN_ENV`` is
#: passed down, so a harness at exit also ends what the harnesses it started (an
#: atheris target, a ``utf8fuzz`` run by a test) left behind, and never a sibling's.
RUN_ENV = "UTF8FUZZ_DECODER_RUN"
_RUN = f"{os.environ.get(RUN_ENV, '')[:400]}/{secrets.token_hex(6)}"
os.environ[RUN_ENV] = _RUN
_MAIN_PID = os.getpid()
_TAGS = itertools.count()
#: Room in an answer's bound for what is not output (a message, provenance).
FRAME_SLACK = 64 << 10
#: The longest ready frame: it says what the worker offers, in a few lines.
READY_MAX = 1 << 20


@dataclass(frozen=True)
class Failure:
    """Why a request got no answer. ``pinned``: read from the request's own answer
    (an oversized or garbage frame), so it needs no re-run to be pinned on it."""

    status: Literal["crash", "timeout", "bad-outcome"]
    detail: str
    pinned: bool = False


#: ``pack(items)``: the request that carries a batch of items (:meth:`Worker.send_batch`).
Pack = Callable[[Sequence[bytes]], bytes]
#: ``unpack(answer, items)``: the answer of each item, or why ``answer`` is garbage.
Unpack = Callable[[bytes, Sequence[bytes]], list[Any] | str]


@dataclass
class _Sent:
    """Requests :meth:`Worker.send_many` wrote (``written`` bytes of their frames so
    far), and their answers once read."""

    payloads: tuple[bytes, ...]
    written: int = 0
    answers: list[bytes | Failure] | None = None


class WorkerUnavailable(RuntimeError):
    """The worker could not start, or said in its ready frame that it cannot run."""


A = TypeVar("A")


def send_outcomes(inputs: Sequence[bytes], send: Callable[[], Callable[[], Sequence[A]]],
                  read: Callable[[Sequence[A]], list[Outcome]], *, name: str,
                  provenance: Callable[[], dict[str, str]]) -> Callable[[], list[Outcome]]:
    """The ``send_many`` of a decoder whose worker answers ``inputs``: ``send()``
    writes the requests now and returns the call that reads the answers; the call
    returned here gives ``read(answers)``. A worker that cannot run (WorkerUnavailable
    from either half) makes every input a ``crash`` whose detail, ``NAME cannot run:
    why``, is escaped: the why may quote the worker's stderr."""
    def unavailable(e: WorkerUnavailable) -> list[Outcome]:
        detail = safe.text(f"{name} cannot run: {e}", 300)
        prov = provenance()
        return [Outcome.failure(len(d), "crash", detail, prov) for d in inputs]

    try:
        answers = send()
    except WorkerUnavailable as e:
        outs = unavailable(e)
        return lambda: outs

    def outcomes() -> list[Outcome]:
        try:
            got = answers()
        except WorkerUnavailable as e:
            return unavailable(e)
        return read(got)

    return outcomes


def frame(payload: bytes) -> bytes:
    return _LEN.pack(len(payload)) + payload


def memory_limit_mib(option: str | None = None) -> int:
    """A worker's memory limit in MiB (0: none): ``option`` (a plug-in's ``+memory=``
    value), else ``$UTF8FUZZ_WORKER_MEMORY``, else :data:`DEFAULT_MEMORY_MIB`.
    ValueError, in one line, for anything but a whole number of MiB >= 0."""
    value = option if option is not None else os.environ.get(MEMORY_ENV)
    if value is None or (option is None and not value.strip()):
        return DEFAULT_MEMORY_MIB
    mib = int(value) if value.strip().isdigit() else -1
    if mib < 0:
        where = "+memory=" if option is not None else f"${MEMORY_ENV}="
        raise ValueError(f"bad {where}{value[:40]!r}: a whole number of MiB (0: no limit)")
    return mib


def _under_asan(env: Mapping[str, str]) -> bool:
    """Will a process with this environment load AddressSanitizer (``make
    asan-test``, ``make fuzz-instrumented`` preload it)? ASan reserves terabytes of
    address space for its shadow at start: under RLIMIT_AS it cannot start."""
    return "asan" in env.get("LD_PRELOAD", "")


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up in the parent (the forked child loads nothing);
    None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return fn


_PRCTL = _prctl()
_PDEATHSIG_ARGS = (ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL),
                   ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def _child_setup(memory_mib: int) -> Callable[[], None]:
    """What the forked child does before exec: ask to die with the harness, and
    take the memory limit (never above a hard limit already set). Everything is
    resolved here, in the parent: the child of a threaded parent must take no lock
    (no imports, no allocation-heavy work) before exec."""
    parent, prctl = os.getpid(), _PRCTL
    limit = memory_mib << 20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if limit and hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    setrlimit, rlimit_as = resource.setrlimit, resource.RLIMIT_AS

    def setup() -> None:
        if prctl is not None:
            prctl(*_PDEATHSIG_ARGS)
            if os.getppid() != parent:  # the harness died before prctl: no signal comes
                os._exit(1)
        if limit:
            setrlimit(rlimit_as, (limit, limit))

    return setup


_spawner: tuple[int, Any] | None = None  # (pid, executor): forks do not inherit its thread
_spawner_lock = threading.Lock()


def _spawn(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """``start()`` (a Popen) run on this process's spawner thread, which lives until
    the process exits: ``PR_SET_PDEATHSIG`` fires when the forking *thread* ends, and
    a caller's thread (a test's, a pool's) may end long before its worker should."""
    global _spawner
    from concurrent.futures import ThreadPoolExecutor

    with _spawner_lock:
        if _spawner is None or _spawner[0] != os.getpid():
            _spawner = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="utf8fuzz-spawn"))
        pool = _spawner[1]
    return pool.submit(start).result()


_subreaper_pid = 0  # the process that made itself a subreaper (forks do not inherit it)


def _become_subreaper() -> None:
    """Make this process the child subreaper of what it starts (once per process):
    the orphans of a worker are then adopted here, not by init, and
    :func:`end_processes` reaps those it kills. At exit, whatever still carries
    a tag of this run is killed."""
    global _subreaper_pid
    if _PRCTL is None or _subreaper_pid == os.getpid():
        return
    _subreaper_pid = os.getpid()
    _PRCTL(ctypes.c_int(_PR_SET_CHILD_SUBREAPER), ctypes.c_ulong(1), ctypes.c_ulong(0),
           ctypes.c_ulong(0), ctypes.c_ulong(0))


def end_run() -> None:
    """Kill every process still carrying a tag of this run or of a run it started
    (:func:`end_processes`): at exit (:mod:`atexit`, or a C exit handler where the
    interpreter is never finalized, as under libFuzzer). Not in a fork of the
    process that imported this module: its runs are its parent's."""
    if os.getpid() == _MAIN_PID:
        end_processes(_RUN)


atexit.register(end_run)


def new_tag() -> str:
    """A fresh tag for one worker process (and whatever it starts)."""
    return f"{_RUN}.{os.getpid()}.{next(_TAGS)}"


def _scan(tag: str, root: int | None) -> set[int]:
    """The processes (on Linux) whose initial environment has ``TAG_ENV`` equal to
    ``tag`` (or starting with it, when ``tag`` is a run: :data:`_RUN`, no ``.``
    after its last ``/``), and those descending from ``root``; never this process."""
    me = os.getpid()
    whole = "." in tag.rpartition("/")[2]  # one worker's tag: exactly it
    needle = f"\0{TAG_ENV}={tag}".encode() + (b"\0" if whole else b"")
    found: set[int] = set()
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in b"\0" + f.read() + b"\0":
                    found.add(pid)
            if root is not None:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
                # "pid (comm) state ppid ...": comm may hold anything but ends at the last ")"
                parents[pid] = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    if root is not None:
        tree, grew = {root}, True
        while grew:
            more = {p for p, pp in parents.items() if pp in tree and p not in tree}
            tree |= more
            grew = bool(more)
        found |= tree - {me}
    return found


def end_processes(tag: str, root: int | None = None) -> int:
    """Kill every process :func:`_scan` finds for ``tag`` and ``root``: each is
    stopped first, and the scan repeated until it finds no new one, so none forks
    out of reach; then all are killed, and those that are this process's children
    (adopted orphans) reaped, except ``root`` (its Popen reaps it). Off Linux:
    nothing. The number killed. ``root`` must not have been reaped yet (its pid
    could name another process by now)."""
    if not sys.platform.startswith("linux"):
        return 0
    seen: set[int] = set()
    for _ in range(16):  # a bound: each pass stops every process it finds
        new = _scan(tag, root) - seen
        if not new:
            break
        for pid in new:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        seen |= new
    for pid in seen:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    # until each is gone: reaped if it is this process's child, else dead (a zombie
    # its own parent or init reaps), so none runs once this returns
    deadline = time.monotonic() + 2.0
    waiting = seen - {root}
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    waiting.discard(pid)
            except ChildProcessError:
                if _dead(pid):
                    waiting.discard(pid)
        if waiting:
            time.sleep(0.005)
    return len(seen)


def _dead(pid: int) -> bool:
    """Whether ``pid`` is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rindex(b")") + 2 :][:1] in (b"Z", b"X")


class Worker:
    def __init__(
        self, argv: Sequence[str], *, timeout: float = 10.0, startup_timeout: float = 30.0,
        env: dict[str, str] | None = None, name: str = "worker",
        on_ready: Callable[[bytes], None] | None = None, answers_each: bool = True,
        memory_mib: int | None = None, answer_limit: Callable[[bytes], int] | None = None,
    ) -> None:
        self.argv, self.timeout, self.startup_timeout = list(argv), timeout, startup_timeout
        self.env, self.name, self.on_ready = env, name, on_ready
        #: The address-space limit of each process, in MiB (0: none).
        self.memory_mib = memory_limit_mib() if memory_mib is None else memory_mib
        # True when the worker writes each answer before it reads the next request,
        # so the first missing answer names the request that failed.
        self.answers_each = answers_each
        #: The longest frame that may answer a payload (module docstring).
        self.answer_limit = answer_limit
        self.tag = ""  # the running process's TAG_ENV
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: bytes = b""
        self.restarts = -1  # the first start is not a restart
        self._buf = bytearray()
        self._err = bytearray()  # the tail of the stderr of the running process
        self._maxrss = 0  # peak RSS of the last process reaped, KiB
        self._limit_mib = self.memory_mib
        # one exchange at a time, whatever the thread (and any exchange first reads
        # the answers send_many left outstanding)
        self._exchanging = threading.Lock()
        self._sent: _Sent | None = None  # requests send_many left outstanding

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> bytes:
        """Start the worker if it is not running; return its ready frame."""
        if self.proc is not None and self.proc.poll() is None:
            return self.ready
        self._stop()
        # the limit this process runs under (none for one that loads ASan)
        self._limit_mib = 0 if _under_asan(self.env or os.environ) else self.memory_mib
        _become_subreaper()
        self.tag = new_tag()
        env = {**(os.environ if self.env is None else self.env), TAG_ENV: self.tag}
        try:
            setup = _child_setup(self._limit_mib)
            self.proc = _spawn(lambda: subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=env, start_new_session=True, preexec_fn=setup,
            ))
        except (OSError, subprocess.SubprocessError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else e
            raise WorkerUnavailable(f"cannot start {self.argv[0]}: {why}") from None
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            os.set_blocking(f.fileno(), False)
        self._buf = bytearray()
        self._err = bytearray()
        self.restarts += 1
        # one answer: the ready frame, or the Failure that ends the exchange (a
        # Failure is only ever the last answer, appended while none has come)
        got = self._exchange([], want=1, timeout=self.startup_timeout)[0]
        if isinstance(got, Failure):
            self._stop()
            raise WorkerUnavailable(f"{self.name} did not start: {got.detail}")
        self.ready = got
        if self.on_ready is not None:
            try:
                self.on_ready(self.ready)
            except WorkerUnavailable:
                self._stop()
                raise
        return self.ready

    def close(self) -> None:
        self._stop()

    def _stop(self) -> None:
        p, self.proc = self.proc, None
        self._sent = None  # what it was sent goes again (send_many)
        if p is None:
            return
        # Its tree first, while the worker still holds its pid (unreaped), then its
        # group whether it is alive or not: a child that keeps its stdout open
        # outlives it there (module docstring, "No leaked processes").
        end_processes(self.tag, p.pid if p.returncode is None else None)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        for f in (p.stdin, p.stdout, p.stderr):
            if f is not None:  # all are pipes (start): never None here
                with contextlib.suppress(OSError):
                    f.close()
        if p.returncode is None:  # not reaped by _reap
            p.wait()

    def __del__(self) -> None:
        try:  # noqa: SIM105 - at interpreter shutdown contextlib may already be gone
            self._stop()
        except Exception:
            pass

    # -- requests ----------------------------------------------------------------

    def request(self, payload: bytes) -> bytes | Failure:
        return self.request_many([payload])[0]

    def request_many(self, payloads: Sequence[bytes]) -> list[bytes | Failure]:
        """One answer (or Failure) per payload, in order, restarting as needed; after
        a ``timeout`` nothing more is sent, and the list ends with it (shorter than
        ``payloads``: module docstring). Safe to call from several threads: one
        exchange runs at a time."""
        with self._exchanging:
            return self._request_many(payloads)

    def send_many(self, payloads: Sequence[bytes]) -> Callable[[], list[bytes | Failure]]:
        """:meth:`request_many` in two halves: the requests are written now, as far
        as the pipe takes them without waiting, and the worker works while the
        caller goes on; the call returned reads the answers (writing the rest first)
        and gives what :meth:`request_many` gives. Its timeout counts from that
        call. Any other exchange with this worker meanwhile reads those answers
        first and keeps them for the call. WorkerUnavailable (from either half): the
        worker cannot start."""
        sent = _Sent(tuple(payloads))
        if not sent.payloads:
            return lambda: []
        with self._exchanging:
            self._settle()
            self.start()
            sent.written = self._write_some(b"".join(frame(p) for p in sent.payloads))
            self._sent = sent

        def answers() -> list[bytes | Failure]:
            with self._exchanging:
                if self._sent is sent:
                    self._settle()
                # none: its process was stopped before it answered, so it goes again
                return self._request_many(sent.payloads, sent.answers)

        return answers

    def _settle(self) -> None:
        """Read the answers of the requests :meth:`send_many` left outstanding, if
        any, and keep them for its call."""
        sent, self._sent = self._sent, None
        if sent is None:
            return
        got = self._exchange(sent.payloads, want=len(sent.payloads), timeout=self.timeout,
                             skip=sent.written)
        if got and isinstance(got[-1], Failure):
            self._stop()
        sent.answers = got

    def _request_many(self, payloads: Sequence[bytes],
                      got: list[bytes | Failure] | None = None) -> list[bytes | Failure]:
        """:meth:`request_many`; ``got``: what its first exchange answered already
        (the worker stopped if that ended with a Failure)."""
        out: list[bytes | Failure] = []
        while len(out) < len(payloads):
            rest = payloads[len(out):]
            if got is None:
                self._settle()
                self.start()
                got = self._exchange(rest, want=len(rest), timeout=self.timeout)
                if got and isinstance(got[-1], Failure):
                    self._stop()
            answered, got = got, None
            if not (answered and isinstance(answered[-1], Failure)):
                out += answered
                continue
            failed = answered[-1]
            out += answered[:-1]
            if failed.pinned or self.answers_each or len(rest) - len(answered) + 1 == 1:
                out.append(failed)  # only one request was outstanding: it did this
            else:
                # The worker batches its answers, so any outstanding request may be the
                # one that killed or stalled it: each goes again alone until one fails.
                out += self._one_by_one(rest[len(answered) - 1 :])
            if isinstance(out[-1], Failure) and out[-1].status == "timeout":
                return out
        return out

    def request_batch(self, items: Sequence[bytes], pack: Pack, unpack: Unpack,
                      ) -> list[Any | Failure]:
        """One answer (or Failure) per item, in order, from requests that each carry
        many items: ``pack(items)`` is the request, ``unpack(answer, items)`` its
        answers, one per item, or why the answer is garbage. A failed batch is
        re-sent one item at a time (module docstring, "Batches"); after a ``timeout``
        nothing more is sent, and the list ends with it."""
        return self.send_batch(items, pack, unpack)()

    def send_batch(self, items: Sequence[bytes], pack: Pack, unpack: Unpack,
                   ) -> Callable[[], list[Any | Failure]]:
        """:meth:`request_batch` in two halves, as :meth:`send_many`."""
        answers = self.send_many([pack(items)])

        def batch_answers() -> list[Any | Failure]:
            (answer,) = answers()
            return self._batch_answers(items, answer, pack, unpack)

        return batch_answers

    def _batch_answers(self, items: Sequence[bytes], answer: bytes | Failure, pack: Pack,
                       unpack: Unpack) -> list[Any | Failure]:
        """The answers of ``items``, from ``answer`` to their batch and, where it
        failed, from the items sent again alone (module docstring, "Batches")."""
        out: list[Any | Failure] = []
        got = self._unpacked(answer, items, unpack)
        while True:
            rest = items[len(out):]
            if not isinstance(got, Failure):
                out += got
            elif len(rest) == 1:
                out.append(got)
            else:
                for x in rest:  # each alone until one fails: the failure is its own
                    alone = self._batch([x], pack, unpack)
                    out.append(alone[0] if isinstance(alone, list) else alone)
                    if isinstance(alone, Failure):
                        break
            if len(out) == len(items) or (isinstance(out[-1], Failure)
                                          and out[-1].status == "timeout"):
                return out
            got = self._batch(items[len(out):], pack, unpack)

    def _batch(self, items: Sequence[bytes], pack: Pack, unpack: Unpack,
               ) -> list[Any] | Failure:
        """One exchange of one batch: its answers, or the Failure of the batch."""
        (answer,) = self.request_many([pack(items)])
        return self._unpacked(answer, items, unpack)

    def _unpacked(self, answer: bytes | Failure, items: Sequence[bytes], unpack: Unpack,
                  ) -> list[Any] | Failure:
        if isinstance(answer, Failure):
            return answer
        got = unpack(answer, items)
        if isinstance(got, str):
            return Failure("crash", f"garbage answer from {self.name}: {got}", pinned=True)
        if len(got) != len(items):
            return Failure("crash", f"garbage answer from {self.name}: {len(got)} answers "
                           f"for {len(items)} inputs", pinned=True)
        return got

    def _write_some(self, data: bytes) -> int:
        """Write what the pipe to the worker takes of ``data`` now; how much."""
        assert self.proc and self.proc.stdin
        done = 0
        with contextlib.suppress(BlockingIOError, BrokenPipeError, ConnectionResetError):
            while done < len(data):
                done += os.write(self.proc.stdin.fileno(), data[done : done + (1 << 16)])
        return done

    def _one_by_one(self, payloads: Sequence[bytes]) -> list[bytes | Failure]:
        """Each payload alone, in order, until one fails (its Failure ends the list)."""
        out: list[bytes | Failure] = []
        for p in payloads:
            self._settle()
            self.start()
            alone = self._exchange([p], want=1, timeout=self.timeout)
            out += alone
            if isinstance(alone[-1], Failure):
                self._stop()
                break
        return out

    def _exchange(
        self, payloads: Sequence[bytes], *, want: int, timeout: float, skip: int = 0,
    ) -> list[bytes | Failure]:
        """Write the frames of ``payloads`` (less their first ``skip`` bytes, written
        already) while reading ``want`` answers; a Failure ends the list."""
        assert self.proc and self.proc.stdin and self.proc.stdout and self.proc.stderr
        wfd, rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        efd = self.proc.stderr.fileno()
        pending = memoryview(b"".join(frame(p) for p in payloads))[skip:]
        answers: list[bytes | Failure] = []
        sel = selectors.DefaultSelector()
        sel.register(rfd, selectors.EVENT_READ)
        if not self.proc.stderr.closed:
            # drained here, so a worker blocked writing stderr never stalls an answer
            with contextlib.suppress(KeyError, ValueError):
                sel.register(efd, selectors.EVENT_READ)
        if pending:
            sel.register(wfd, selectors.EVENT_WRITE)
        deadline = time.monotonic() + timeout
        try:
            while len(answers) < want:
                left = deadline - time.monotonic()
                if left <= 0:
                    answers.append(Failure("timeout", f"no answer within {timeout:g} s"))
                    return answers
                for key, _ in sel.select(left):
                    if key.fd == wfd:
                        try:
                            n = os.write(wfd, pending[:1 << 16])
                        except BlockingIOError:
                            n = 0
                        except (BrokenPipeError, ConnectionResetError):
                            n, pending = 0, memoryview(b"")
                        pending = pending[n:]
                        if not pending:
                            sel.unregister(wfd)
                        continue
                    if key.fd == efd:
                        if not self._drain_stderr(1 << 20):
                            sel.unregister(efd)
                            self.proc.stderr.close()
                        continue
                    try:
                        chunk = os.read(rfd, 1 << 20)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        answers.append(self._death())
                        return answers
                    self._buf += chunk
                    before = len(answers)
                    if self._take(answers, payloads):
                        return answers
                    if len(answers) > before:
                        deadline = time.monotonic() + timeout
        finally:
            sel.close()
        return answers

    def _take(self, answers: list[bytes | Failure], payloads: Sequence[bytes]) -> bool:
        """Move the whole frames of the buffer to ``answers`` (``payloads``: the
        requests they answer); True ends the exchange, the last answer a Failure
        (a subclass that checks frames: a garbage one)."""
        buf = self._buf
        pos = 0
        limit = self.answer_limit
        try:
            while len(buf) - pos >= 4:
                (n,) = _LEN.unpack_from(buf, pos)
                if not payloads and n > READY_MAX:  # (ExecWorker bounds its hello)
                    answers.append(Failure("crash", f"a ready frame of {n} bytes (at most "
                                           f"{READY_MAX}): not read", pinned=True))
                    return True
                if limit is not None and len(answers) < len(payloads):
                    most = limit(payloads[len(answers)])
                    if n > most:
                        answers.append(Failure(
                            "bad-outcome", f"oversized-output: {self.name} began an answer of "
                            f"{n} bytes (at most {most} for this input): not read", pinned=True))
                        return True
                if len(buf) - pos - 4 < n:
                    break
                answers.append(bytes(buf[pos + 4 : pos + 4 + n]))
                pos += 4 + n
            return False
        finally:
            del buf[:pos]

    def _drain_stderr(self, most: int) -> bool:
        """Read what the worker's stderr holds now, up to ``most`` bytes, keeping
        the last :data:`STDERR_KEEP`; False at its end."""
        assert self.proc and self.proc.stderr
        if self.proc.stderr.closed:
            return False
        fd, err = self.proc.stderr.fileno(), self._err
        while most > 0:
            try:
                chunk = os.read(fd, min(most, 1 << 20))
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            most -= len(chunk)
            err += chunk
            if len(err) > STDERR_KEEP:
                del err[:-STDERR_KEEP]  # from the front: O(1) for a bytearray
        return True

    def _reap(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` s for the worker to end; its exit code (negative:
        the signal), or None if it is still running. Records its peak RSS."""
        assert self.proc
        if self.proc.returncode is not None:
            return self.proc.returncode
        deadline = time.monotonic() + timeout
        while True:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: Popen knows the code
                return self.proc.poll()
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self._maxrss = usage.ru_maxrss  # KiB on Linux
                return self.proc.returncode
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)

    def _death(self) -> Failure:
        """The ``crash`` of a worker that closed its output: how it ended, the last
        line of its stderr, and ``oom:`` first if it ran out of memory."""
        assert self.proc
        code = self._reap(2.0)
        # what is still in the pipe, bounded: its children may be writing yet
        self._drain_stderr(4 * STDERR_KEEP)
        if code is None:
            what = "closed its output"
        elif code < 0:
            try:
                what = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                what = f"killed by signal {-code}"
        else:
            what = f"exited with status {code}"
        raw = bytes(self._err)
        tail = raw[-300:].decode("utf-8", "backslashreplace").strip()
        # stderr may echo hostile input: its last line, through the one escaping function
        tail = safe.text(tail.splitlines()[-1], 300) if tail else ""
        if code is not None and self._ran_out_of_memory(raw[-4096:]):
            limit = f"limit {self._limit_mib} MiB" if self._limit_mib else "no limit set"
            what = f"ran out of memory ({limit}): {what}"
            return Failure("crash", f"oom: {self.name} {what}" + (f": {tail}" if tail else ""))
        return Failure("crash", f"{self.name} {what}" + (f": {tail}" if tail else ""))

    def _ran_out_of_memory(self, tail: bytes) -> bool:
        if _OOM_WORDS.search(tail):
            return True
        limit_kib = self._limit_mib << 10
        return bool(limit_kib) and self._maxrss >= _OOM_RSS_SHARE * limit_kib
