"""Crash recovery: which input killed a fuzzing process, and which decoder did it.

An in-process decoder can end the process that runs it: a segfault in C code it
calls, ``os.abort()``, ``os._exit()``, or a hang
(:meth:`~utf8fuzz.decoders.base.Decoder.decode` turns whatever it raises into a
crash outcome, ``SystemExit`` and a decoder's own ``KeyboardInterrupt`` too; where
SIGINT is ignored, as in the fuzz loop's processes, no KeyboardInterrupt is the
user's). The fuzz loop compares inputs in rounds, so when that happens the inputs
of the round in flight are in a file (:class:`~.finder.InFlight`) and libFuzzer's
crash file holds the last input it handed over.

:func:`recover` runs each of those inputs again, alone, through a :class:`Finder`
whose in-process decoders run in a forked child process (:class:`ForkServer`), one
request at a time. A child that dies, raises a ``BaseException`` or does not answer
within the timeout gives the decoder a ``crash`` (or ``timeout``) outcome whose
feature names what happened: the signal (``SIGSEGV``, ``SIGABRT``), the exception
type (``SystemExit``), ``exit-N`` for a process that exited without answering. That
is a divergence like any other: minimized, saved and reported by the finder; a
fresh child serves the next request. Out-of-process decoders (node, isolated
plug-ins) cannot kill the fuzzing process and are left out.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz.decoders.base import Decoder, describe
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.loop.finder import Finder
from utf8fuzz.loop.state import Control, Progress
from utf8fuzz.outcome import Outcome

_HEAD = struct.Struct("<II")  # decoder index, input length
_LEN = struct.Struct("<I")
_HUNG, _GONE = object(), object()

#: Features of a crash that ends the process running the decoder (see
#: :func:`kills_process`); ``timeout`` too, since a hang stops the fuzz loop.
PROCESS_ENDING_EXCEPTIONS = frozenset({"SystemExit", "KeyboardInterrupt", "GeneratorExit"})


def kills_process(klass: str, feature: str) -> bool:
    """Whether a corpus entry of this class and feature stops an in-process fuzz
    loop that meets its input (a signal, a ``BaseException``, an exit, a hang)."""
    if klass == "timeout":
        return True
    return klass == "crash" and (feature.startswith(("SIG", "exit-"))
                                 or feature in PROCESS_ENDING_EXCEPTIONS)


def _death(status: int) -> str:
    """The crash detail of a child that ended with wait status ``status``: its
    first word is the feature (:func:`~.signature.failure_feature`)."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal-{-code}"
        return f"{name}: the decoder's process was killed by signal {-code}"
    return f"exit-{code}: the decoder's process exited with status {code}"


class ForkServer:
    """A forked copy of this process that runs ``decoders[i].decode(data)`` on
    request, one at a time; forked again after it dies. The child ignores SIGINT
    (an interrupt is the parent's to handle) and never returns into the caller."""

    def __init__(self, decoders: Sequence[Decoder], timeout: float) -> None:
        self.decoders, self.timeout = list(decoders), timeout
        self._pid: int | None = None
        self._w = self._r = -1

    def _start(self) -> None:
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; its results are checked by tests
            try:
                os.close(req_w)
                os.close(resp_r)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                self._serve(req_r, resp_w)
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(resp_w)
        self._pid, self._w, self._r = pid, req_w, resp_r

    def _serve(self, r: int, w: int) -> None:
        while True:
            head = _read_exact(r, _HEAD.size)
            if head is None:
                return
            index, n = _HEAD.unpack(head)
            data = _read_exact(r, n) if n else b""
            if data is None:
                return
            try:
                reply = b"o" + pickle.dumps(self.decoders[index].decode(data))
            except BaseException as e:  # the point: what would end the fuzz loop
                reply = b"x" + describe(e).encode("utf-8", "backslashreplace")
            os.write(w, _LEN.pack(len(reply)))
            _write_all(w, reply)
            if reply[:1] == b"x":
                return  # its state after a BaseException is not to be trusted

    def run(self, index: int, data: bytes) -> tuple[Outcome | None, str | None, bool]:
        """``(outcome, None, False)``, or ``(None, detail, timed_out)`` when the
        decoder ended, stopped or hung the child."""
        if self._pid is None:
            self._start()
        try:
            _write_all(self._w, _HEAD.pack(index, len(data)) + data)
        except OSError:
            return None, self._reap(), False
        head = self._read(_LEN.size)
        body = self._read(_LEN.unpack(head)[0]) if isinstance(head, bytes) else head
        if body is _HUNG:
            self.close()
            return None, None, True
        if isinstance(body, bytes) and body[:1] == b"o":
            out = pickle.loads(body[1:])
            assert isinstance(out, Outcome)
            return out, None, False
        said = body[1:].decode("utf-8", "replace") if isinstance(body, bytes) else ""
        died = self._reap()
        return None, said or died, False

    def _read(self, n: int) -> bytes | object:
        """``n`` bytes from the child; :data:`_HUNG` when they do not come within
        the timeout, :data:`_GONE` when the child closed its end first."""
        buf = b""
        deadline = time.monotonic() + self.timeout
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                return _HUNG
            chunk = os.read(self._r, n - len(buf))
            if not chunk:
                return _GONE
            buf += chunk
        return buf

    def _reap(self) -> str:
        """Wait for the dead child; its death as a crash detail."""
        pid, self._pid = self._pid, None
        self._close_fds()
        if pid is None:
            return "exit-unknown: the decoder's process was gone"
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return "exit-unknown: the decoder's process was gone"
        return _death(status)

    def _close_fds(self) -> None:
        for fd in (self._w, self._r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._w = self._r = -1

    def close(self) -> None:
        pid, self._pid = self._pid, None
        self._close_fds()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _read_exact(fd: int, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Forked(Decoder):
    """``inner`` as seen through a :class:`ForkServer`: the same name, claims and
    views; a process-ending failure becomes a ``crash`` or ``timeout`` outcome,
    and the input is noted in :attr:`kills`."""

    def __init__(self, inner: Decoder, server: ForkServer, index: int,
                 kills: set[bytes]) -> None:
        self.inner, self.server, self.index, self.kills = inner, server, index, kills
        self.name, self.profile, self.policy = inner.name, inner.profile, inner.policy
        self.shows, self.own, self.incremental = inner.shows, inner.own, inner.incremental
        self.spec, self.family = inner.spec, inner.family

    def versions(self) -> dict[str, str]:
        return self.inner.versions()

    def run(self, data: bytes) -> Outcome:
        out, detail, timed_out = self.server.run(self.index, data)
        if out is not None:
            return out
        self.kills.add(bytes(data))
        if timed_out:
            return Outcome.failure(len(data), "timeout",
                                   f"no answer within {self.server.timeout:g} s",
                                   self.versions())
        return Outcome.failure(len(data), "crash", detail or "crash", self.versions())


@dataclass
class Recovery:
    """What :func:`recover` found: the inputs that ended a process, and the new
    signatures (``NewSignature.to_json()``, unreproduced ones included)."""

    culprits: list[bytes] = field(default_factory=list)
    found: list[dict[str, Any]] = field(default_factory=list)
    divergent: int = 0  # inputs on which a decoder diverged, culprits included


def recover(decoders: Iterable[Decoder], inputs: Iterable[bytes], corpus: Path | None,
            engine: str, *, minimize_seconds: float, timeout: float,
            deadline: float | None = None) -> Recovery:
    """Run ``inputs`` again, each alone and in full, with every in-process decoder
    of ``decoders`` in a forked process (module docstring); new signatures are
    minimized and saved to ``corpus`` as the fuzz loop would.

    It stops at the first culprit, and at ``deadline`` (``time.monotonic()``):
    each input that hangs costs a timeout, and a round may hold many; the others
    that end a process will end the restarted engine again, and be re-run then."""
    inproc = [d for d in decoders
              if not isinstance(d, Reference) and not getattr(d, "out_of_process", False)]
    todo = list(dict.fromkeys(bytes(x) for x in inputs))
    out = Recovery()
    if not inproc or not todo:
        return out
    server = ForkServer(inproc, timeout)
    kills: set[bytes] = set()
    try:
        finder = Finder([Forked(d, server, i, kills) for i, d in enumerate(inproc)], corpus,
                        engine, minimize_seconds=minimize_seconds, full_every=1, round_size=1,
                        tally=False)  # inputs that ended a process: not the run's sample
        for data in todo:
            if deadline is not None and time.monotonic() > deadline:
                break
            finder.consider(data)
            if data in kills:
                out.culprits.append(data)
                break
        finder.flush()
        out.found = [x.to_json() for x in [*finder.found, *finder.unreproduced]]
        out.divergent = finder.divergent_inputs
    finally:
        server.close()
    return out


def read_candidates(paths: Iterable[Path]) -> list[bytes]:
    """The inputs in in-flight files (``*.hex``, one hex line each) and libFuzzer
    artifacts (libFuzzer's input: a structured one is read as the input it draws,
    :func:`~.structured.input_of`); unreadable files and lines are skipped."""
    from utf8fuzz.loop.structured import input_of

    out: list[bytes] = []
    for p in paths:
        try:
            raw = Path(p).read_bytes()
        except OSError:
            continue
        if Path(p).suffix == ".hex":
            for line in raw.split(b"\n"):
                with contextlib.suppress(ValueError):
                    if line.strip():
                        out.append(bytes.fromhex(line.strip().decode("ascii")))
        elif (data := input_of(raw)) is not None:
            out.append(data)
    return out


# -- what the engines call: a dead process's inputs re-run; how a process ended ------


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


def rerun(decoders: Sequence[Decoder], files: Sequence[Path], corpus: Path | None,
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


def ended(code: int | None) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        return f"was killed by {_signal_name(code)}"
    return f"exited with status {code}"


def stuck(inflight: Path | None, timeout: float) -> bool:
    """Whether a round has been in flight (the file not empty, not rewritten) for
    longer than ``timeout`` seconds plus one: a decoder hangs in process."""
    try:
        st = inflight.stat() if inflight is not None else None
    except OSError:
        return False
    return st is not None and st.st_size > 0 and time.time() - st.st_mtime > timeout + 1
