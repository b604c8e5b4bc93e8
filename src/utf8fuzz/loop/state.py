"""What the engines of one ``utf8fuzz fuzz`` run share (:mod:`.run`): the live
counts the command shows and the summary reads (:class:`Progress`), the work
directory (:class:`Work`), the deadlines, count and seed (:class:`Control`)."""

from __future__ import annotations

import hashlib
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz import safe

#: Seconds past the deadline and one decoder timeout before what still runs is
#: stopped (SIGTERM, then SIGKILL :data:`KILL_AFTER` seconds later).
GRACE = 3.0


KILL_AFTER = 2.0

#: Set by the harness for the libFuzzer target it runs: when the run ends, in
#: seconds since the epoch (:func:`deadline_of`).
DEADLINE_ENV = "UTF8FUZZ_DEADLINE"


def deadline_of(text: str | None) -> float | None:
    """``$UTF8FUZZ_DEADLINE`` (seconds since the epoch) as a ``time.monotonic()``
    time of this process, or None when unset. ValueError unless a number."""
    if text is None or not text.strip():
        return None
    try:
        at = float(text)
    except ValueError:
        at = float("nan")
    if at != at or at in (float("inf"), float("-inf")):
        raise ValueError(f"${DEADLINE_ENV}={safe.text(text, limit=40)!r}: expected seconds "
                         "since the epoch")
    return time.monotonic() + (at - time.time())


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
    #: the bytes of the inputs each engine compared
    bytes: dict[str, int] = field(default_factory=dict)
    #: per engine, how many inputs each decoder was compared on (the out-of-process
    #: ones get a share: engine/screening.py, SlowShare)
    seen: dict[str, dict[str, int]] = field(default_factory=dict)
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
        """Entries found (each once: two workers may save one), and unreproduced
        signatures, which the same stream carries with ``"reproduced": false``. One
        signature may have several entries, one per cause (:func:`.corpus.entry_path`):
        an entry is its signature and its path, or without a corpus its finding."""
        with self.lock:
            seen = {_entry_key(x) for x in [*self.new, *self.unreproduced]}
            for x in items:
                key = _entry_key(x)
                if key not in seen:
                    seen.add(key)
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


def _entry_key(x: dict[str, Any]) -> tuple[str, str]:
    """Which entry a found item is (:meth:`Progress.add_new`)."""
    rec = x.get("finding")
    return (str(x["signature"]), str(x.get("path") or (
        rec.get("id") if isinstance(rec, dict) else None)))


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


class Control:
    """What the engines share: the deadlines, the stop signal, the processes to stop,
    and one lock that lets one recovery run at a time (each forks)."""

    def __init__(self, seconds: float, timeout: float, runs: int | None = None,
                 seed: int | None = None) -> None:
        self.timeout = timeout
        #: inputs per engine process (None: until the deadline), and the seed
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


def derived_seed(seed: int, *parts: object) -> int:
    """A seed made from ``seed`` and ``parts`` (a worker's number, a batch's): the
    same on every machine and Python (not ``hash()``, which is salted)."""
    text = ":".join(map(str, (seed, *parts)))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
