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
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

_LEN = struct.Struct("<I")


@dataclass(frozen=True)
class Failure:
    status: Literal["crash", "timeout"]
    detail: str


class WorkerUnavailable(RuntimeError):
    """The worker could not start, or said in its ready frame that it cannot run."""


def frame(payload: bytes) -> bytes:
    return _LEN.pack(len(payload)) + payload


class Worker:
    def __init__(
        self, argv: Sequence[str], *, timeout: float = 10.0, startup_timeout: float = 30.0,
        env: dict[str, str] | None = None, name: str = "worker",
        on_ready: Callable[[bytes], None] | None = None, answers_each: bool = True,
    ) -> None:
        self.argv, self.timeout, self.startup_timeout = list(argv), timeout, startup_timeout
        self.env, self.name, self.on_ready = env, name, on_ready
        # True when the worker writes each answer before it reads the next request,
        # so the first missing answer names the request that failed.
        self.answers_each = answers_each
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: bytes = b""
        self.restarts = -1  # the first start is not a restart
        self._buf = bytearray()

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> bytes:
        """Start the worker if it is not running; return its ready frame."""
        if self.proc is not None and self.proc.poll() is None:
            return self.ready
        self._stop()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                env=self.env, start_new_session=True,
            )
        except OSError as e:
            raise WorkerUnavailable(f"cannot start {self.argv[0]}: {e.strerror or e}") from None
        assert self.proc.stdin and self.proc.stdout
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._buf = bytearray()
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
        for f in (p.stdin, p.stdout):
            if f is not None:  # both are pipes (start): never None here
                with contextlib.suppress(OSError):
                    f.close()
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
        assert self.proc and self.proc.stdin and self.proc.stdout
        wfd, rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        pending = memoryview(b"".join(frame(p) for p in payloads))
        answers: list[bytes | Failure] = []
        sel = selectors.DefaultSelector()
        sel.register(rfd, selectors.EVENT_READ)
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
                    chunk = os.read(rfd, 1 << 20)
                    if not chunk:
                        answers.append(Failure("crash", self._death()))
                        return answers
                    self._buf += chunk
                    before = len(answers)
                    self._take(answers)
                    if len(answers) > before:
                        deadline = time.monotonic() + timeout
        finally:
            sel.close()
        return answers

    def _take(self, answers: list[bytes | Failure]) -> None:
        buf = self._buf
        pos = 0
        while len(buf) - pos >= 4:
            (n,) = _LEN.unpack_from(buf, pos)
            if len(buf) - pos - 4 < n:
                break
            answers.append(bytes(buf[pos + 4 : pos + 4 + n]))
            pos += 4 + n
        del buf[:pos]

    def _death(self) -> str:
        assert self.proc
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            what = "closed its output"
        elif code < 0:
            try:
                what = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                what = f"killed by signal {-code}"
        else:
            what = f"exited with status {code}"
        self._stderr.seek(0)
        tail = self._stderr.read()[-300:].decode("utf-8", "backslashreplace").strip()
        # stderr may echo hostile input: keep it printable and short.
        tail = "".join(c if c.isprintable() else "?" for c in tail.splitlines()[-1:][0]) \
            if tail else ""
        return f"{self.name} {what}" + (f": {tail}" if tail else "")
