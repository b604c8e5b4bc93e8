"""The atheris engine's driver: libFuzzer, through the packaged target, as a
subprocess (:mod:`.run`'s docstring says how it is run); its log read as it
grows (the executions), the target's JSON-lines log (new entries, each process's
counts), its dead and hung processes found and their inputs re-run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.long import MAX_LONG, SHORT_MAX
from utf8fuzz.loop import targets
from utf8fuzz.loop.recover import ended, rerun, stuck
from utf8fuzz.loop.seeds import seed_dirs
from utf8fuzz.loop.state import KILL_AFTER, Control, Progress, Work, derived_seed


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
        self.bytes: dict[int, int] = {}
        self.seen: dict[int, dict[str, int]] = {}
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
                pid = int(st.get("pid", 0))
                self.divergent[pid] = int(st.get("divergent_inputs", 0))
                self.bytes[pid] = int(st.get("bytes", 0))
                per = st.get("inputs_seen")
                if isinstance(per, dict):  # the summary keeps only the names it ran
                    with contextlib.suppress(ValueError, TypeError):
                        self.seen[pid] = {str(k): int(v) for k, v in per.items()}
            elif isinstance(x, dict) and "signature" in x:
                items.append(x)
        progress.add_new(items)
        total: dict[str, int] = {}
        for each in self.seen.values():
            for k, v in each.items():
                total[k] = total.get(k, 0) + v
        with progress.lock:
            progress.divergent["atheris"] = sum(self.divergent.values())
            progress.bytes["atheris"] = sum(self.bytes.values())
            progress.seen["atheris"] = total


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
        if m and stuck(p, timeout) and _pid_alive(int(m.group(1))):
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
        culprits = rerun(decoders, files, corpus, "atheris", control, progress,
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
            dirs = [work.libfuzzer_corpus, *seed_dirs(corpus, work, exclude)]
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
                progress.note(f"the atheris engine {ended(code)}; too little time was "
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
                progress.fail(f"the atheris engine {ended(code)}" + (f": {why}" if why else ""))
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
