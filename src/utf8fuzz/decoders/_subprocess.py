"""One persistent worker process, spoken to in length-prefixed frames.

Used by every adapter whose decoder runs out of process (Node, isolated
plug-ins), so that a decoder that kills its process or hangs costs one outcome,
never the harness. A frame is a 4-byte little-endian length and that many bytes,
both ways. The worker answers each request with one frame, in order, and
starts with one ``ready`` frame (its description, or why it cannot run).

Requests are pipelined: :meth:`Worker.request_many` writes while it reads
(non-blocking pipes and a selector), so a batch of thousands costs a few system
calls and neither side can block the other on a full pipe. Each answer must
arrive within ``timeout`` seconds of the previous one (or of the start): a
worker that misses that is killed and the request gets a ``timeout``; one that
exits gets a ``crash`` carrying its exit status and the tail of its stderr.
Either way the worker is restarted and the rest of the batch goes on. A worker
that writes its answers in batches (``answers_each=False``, as node does for
speed) may die with several requests outstanding; the first of them is then
sent again alone, so a failure is only ever pinned on the request that causes it.

Bounded resources. A worker's stderr is a pipe drained in the same loop into a
buffer that keeps its last :data:`STDERR_KEEP` bytes, whatever it writes. Each
worker runs under ``RLIMIT_AS`` (:func:`memory_limit_mib`: ``memory`` MiB, default
``$UTF8FUZZ_WORKER_MEMORY`` or :data:`DEFAULT_MEMORY_MIB`; 0 is none; none either
for a worker that preloads AddressSanitizer, which cannot start under it); one that
runs out of it gives a crash whose detail begins ``oom:`` (so its signature's
feature is ``oom``): it said ``MemoryError`` or "out of memory" on stderr, or it
died with a peak RSS near the limit. On Linux each worker gets ``PR_SET_PDEATHSIG``
(SIGKILL), so it dies with the harness even when the harness is SIGKILLed
mid-request. The signal follows the *thread* that started the worker: a worker
started by a thread that then ends is killed, and simply restarted on next use.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import resource
import selectors
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True)
class Failure:
    status: Literal["crash", "timeout"]
    detail: str


class WorkerUnavailable(RuntimeError):
    """The worker could not start, or said in its ready frame that it cannot run."""


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


class Worker:
    def __init__(
        self, argv: Sequence[str], *, timeout: float = 10.0, startup_timeout: float = 30.0,
        env: dict[str, str] | None = None, name: str = "worker",
        on_ready: Callable[[bytes], None] | None = None, answers_each: bool = True,
        memory_mib: int | None = None,
    ) -> None:
        self.argv, self.timeout, self.startup_timeout = list(argv), timeout, startup_timeout
        self.env, self.name, self.on_ready = env, name, on_ready
        #: The address-space limit of each process, in MiB (0: none).
        self.memory_mib = memory_limit_mib() if memory_mib is None else memory_mib
        # True when the worker writes each answer before it reads the next request,
        # so the first missing answer names the request that failed.
        self.answers_each = answers_each
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: bytes = b""
        self.restarts = -1  # the first start is not a restart
        self._buf = bytearray()
        self._err = bytearray()  # the tail of the stderr of the running process
        self._maxrss = 0  # peak RSS of the last process reaped, KiB
        self._limit_mib = self.memory_mib

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> bytes:
        """Start the worker if it is not running; return its ready frame."""
        if self.proc is not None and self.proc.poll() is None:
            return self.ready
        self._stop()
        # the limit this process runs under (none for one that loads ASan)
        self._limit_mib = 0 if _under_asan(self.env or os.environ) else self.memory_mib
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=self.env, start_new_session=True,
                preexec_fn=_child_setup(self._limit_mib),
            )
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
        if p is None:
            return
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # its own session: children go too
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
        """One answer (or Failure) per payload, in order; restarts as needed."""
        out: list[bytes | Failure] = []
        while len(out) < len(payloads):
            self.start()
            rest = payloads[len(out):]
            got = self._exchange(rest, want=len(rest), timeout=self.timeout)
            if not (got and isinstance(got[-1], Failure)):
                out += got
                continue
            self._stop()
            out += got[:-1]
            if self.answers_each or len(rest) - len(got) + 1 == 1:
                out.append(got[-1])  # only one request was outstanding: it did this
                continue
            # The worker batches its answers, so any outstanding request may be the
            # one that killed or stalled it: the first goes again alone.
            self.start()
            alone = self._exchange(rest[len(got) - 1 : len(got)], want=1, timeout=self.timeout)
            out += alone
            if isinstance(alone[-1], Failure):
                self._stop()
        return out

    def _exchange(
        self, payloads: Sequence[bytes], *, want: int, timeout: float
    ) -> list[bytes | Failure]:
        assert self.proc and self.proc.stdin and self.proc.stdout and self.proc.stderr
        wfd, rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        efd = self.proc.stderr.fileno()
        pending = memoryview(b"".join(frame(p) for p in payloads))
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
        while len(buf) - pos >= 4:
            (n,) = _LEN.unpack_from(buf, pos)
            if len(buf) - pos - 4 < n:
                break
            answers.append(bytes(buf[pos + 4 : pos + 4 + n]))
            pos += 4 + n
        del buf[:pos]
        return False

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
        # stderr may echo hostile input: keep it printable and short.
        tail = "".join(c if c.isprintable() else "?" for c in tail.splitlines()[-1:][0]) \
            if tail else ""
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
