"""The fuzz loop behind ``utf8fuzz fuzz``: engines, workers, progress, summary.

Engines.

``hypothesis``  :mod:`utf8fuzz.strategies` drive the :class:`~.finder.Finder` in
                batches of generated examples until the deadline; ``--jobs N`` runs N
                forked worker processes on one shared corpus.
``atheris``     libFuzzer, through ``fuzz/differential.py`` run as a subprocess with
                ``-max_total_time``, ``-max_len=64``, ``-dict=fuzz/utf8.dict``, the
                seeds and the corpus inputs; ``--jobs N`` becomes ``-fork=N``. New
                entries are saved by the target itself and reported through a
                JSON-lines log; executions come from libFuzzer's final stats.
``both``        the two at once, the jobs split between them.

Both first replay the seeds (``corpus/seeds``), so a bug the seeds show is found in
the first second of any run. Both screen (:mod:`.finder`): ``full_every`` (None:
``$UTF8FUZZ_FULL_EVERY`` or 8) inputs in one are decoded in full by every decoder.

The summary is the ``--json`` object: ``decoders``, ``executions``, ``execs_per_sec``,
``new`` (one object per new signature: signature, decoders, class, feature, input in
hex), ``unreproduced`` (the same for signatures met once that a full run of the same
input did not show again - a stateful or flaky decoder; reported, not saved, not
counted as new) and a few more keys (engines, seconds, corpus size, divergent inputs).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.finder import Finder, full_every_default

ENGINES = ("atheris", "hypothesis", "both")
ROOT = Path(__file__).resolve().parents[3]  # the source checkout (fuzz/, corpus/)


@dataclass
class Progress:
    """Live counters, shared by the engines and shown by the command."""

    executions: dict[str, int] = field(default_factory=dict)
    divergent: dict[str, int] = field(default_factory=dict)
    new: list[dict[str, Any]] = field(default_factory=list)
    #: signatures met once that a full run of the same input did not show again
    unreproduced: list[dict[str, Any]] = field(default_factory=list)
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


def seeds(corpus: Path) -> list[bytes]:
    out = []
    for d in (Path(corpus) / "seeds", corpus_mod.inputs_dir(corpus)):
        if d.is_dir():
            out += [p.read_bytes() for p in sorted(d.iterdir())
                    if p.is_file() and not p.name.startswith(".") and p.suffix != ".md"]
    return out


# -- hypothesis -----------------------------------------------------------------------


def hypothesis_worker(decoders: Sequence[Decoder], corpus: Path | None, deadline: float,
                      report: Callable[[int, int, list[dict[str, Any]]], None],
                      minimize_seconds: float, replay_seeds: bool = True,
                      full_every: int | None = None) -> Finder:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from utf8fuzz import strategies as u8

    finder = Finder(decoders, corpus, "hypothesis", minimize_seconds=minimize_seconds,
                    full_every=full_every)
    profiles = sorted({d.profile for d in finder.differ.decoders})
    if not profiles:
        return finder
    sent = gone = 0

    def flush() -> None:
        nonlocal sent, gone
        finder.flush()
        report(finder.executions, finder.divergent_inputs,
               [f.to_json() for f in [*finder.found[sent:], *finder.unreproduced[gone:]]])
        sent, gone = len(finder.found), len(finder.unreproduced)

    if replay_seeds and corpus is not None:
        for s in seeds(corpus):
            finder.consider(s)
        flush()
    strategy = st.one_of(*[u8.inputs(p) for p in profiles])

    @settings(max_examples=300, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def examples(data: bytes) -> None:
        if time.monotonic() < deadline:
            finder.queue(data)  # compared in rounds; flush() ends the last

    while time.monotonic() < deadline:
        examples()
        flush()
    return finder


def _worker_main(decoders: Sequence[Decoder], corpus: Path | None, deadline: float,
                 q: Any, index: int, minimize_seconds: float,
                 full_every: int | None = None) -> None:
    def report(execs: int, div: int, new: list[dict[str, Any]]) -> None:
        q.put((index, execs, div, new))

    with contextlib.suppress(KeyboardInterrupt):
        hypothesis_worker(decoders, corpus, deadline, report, minimize_seconds,
                          replay_seeds=index == 0, full_every=full_every)
    q.put((index, None, None, None))


def run_hypothesis(decoders: Sequence[Decoder], corpus: Path | None, deadline: float,
                   jobs: int, progress: Progress, minimize_seconds: float,
                   full_every: int | None = None) -> None:
    key = "hypothesis"
    if jobs <= 1:
        def report(execs: int, div: int, new: list[dict[str, Any]]) -> None:
            with progress.lock:
                progress.executions[key] = execs
                progress.divergent[key] = div
            progress.add_new(new)

        hypothesis_worker(decoders, corpus, deadline, report, minimize_seconds,
                          full_every=full_every)
        return
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker_main,
                         args=(decoders, corpus, deadline, q, i, minimize_seconds, full_every),
                         daemon=True)
             for i in range(jobs)]
    for p in procs:
        p.start()
    live = set(range(jobs))
    try:
        while live:
            try:
                i, execs, div, new = q.get(timeout=max(1.0, deadline - time.monotonic() + 30))
            except Exception:
                break  # a worker died without reporting: stop waiting
            if execs is None:
                live.discard(i)
                continue
            with progress.lock:
                progress.executions[f"{key}.{i}"] = execs
                progress.divergent[f"{key}.{i}"] = div
            progress.add_new(new)
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()


# -- atheris ----------------------------------------------------------------------------


def atheris_available() -> str | None:
    """None when Atheris can run here, else the reason it cannot."""
    try:
        import atheris  # noqa: F401
    except ImportError as e:
        return f"atheris is not installed ({e}); pip install 'utf8fuzz[fuzz]'"
    if not (ROOT / "fuzz" / "differential.py").exists():
        return f"fuzz targets not found under {ROOT / 'fuzz'} (run from a source checkout)"
    return None


_STAT = re.compile(r"stat::(number_of_executed_units|average_exec_per_sec):\s*(\d+)")
_LINE = re.compile(r"^#(\d+)[:\s]")  # "#123 pulse ..." or, with -fork, "#123: cov: ..."


def run_atheris(specs: Sequence[str], profiles: Sequence[str], corpus: Path, seconds: float,
                jobs: int, progress: Progress, minimize_seconds: float,
                max_len: int = 64, full_every: int | None = None) -> dict[str, Any]:
    key = "atheris"
    work = ROOT / "fuzz" / "work" / "differential"
    work.mkdir(parents=True, exist_ok=True)
    fd, log = tempfile.mkstemp(prefix="utf8fuzz-found-", suffix=".jsonl")
    os.close(fd)
    env = dict(os.environ)
    env.update({
        "UTF8FUZZ_CORPUS": str(corpus),
        "UTF8FUZZ_FOUND_LOG": log,
        "UTF8FUZZ_MINIMIZE_SECONDS": str(minimize_seconds),
        # a user's module:attr decoder is importable from the directory fuzz runs in
        "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH")])),
    })
    if full_every is not None:
        env["UTF8FUZZ_FULL_EVERY"] = str(full_every)
    if specs:
        env["UTF8FUZZ_DECODERS"] = json.dumps(list(specs))
    if profiles:
        env["UTF8FUZZ_PROFILES"] = ",".join(profiles)
    dirs = [str(work)] + [str(d) for d in (corpus / "seeds", corpus_mod.inputs_dir(corpus))
                          if d.is_dir()]
    cmd = [sys.executable, str(ROOT / "fuzz" / "differential.py"),
           f"-max_total_time={max(1, int(seconds))}", f"-max_len={max_len}",
           f"-dict={ROOT / 'fuzz' / 'utf8.dict'}", "-print_final_stats=1", *dirs]
    if jobs > 1:
        cmd.insert(2, f"-fork={jobs}")
    stats: dict[str, int] = {}
    tail: list[str] = []
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            tail = ([*tail, line.rstrip()])[-20:]
            m = _LINE.match(line)
            if m:
                with progress.lock:
                    progress.executions[key] = int(m.group(1))
            for name, val in _STAT.findall(line):
                stats[name] = int(val)
            _read_log(log, progress)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
        _read_log(log, progress)
        os.unlink(log)
    if "number_of_executed_units" in stats:
        with progress.lock:
            progress.executions[key] = stats["number_of_executed_units"]
    ok = proc.returncode == 0 or stats
    return {"returncode": proc.returncode, "stats": stats,
            "error": None if ok else "\n".join(tail[-5:])}


def _read_log(log: str, progress: Progress) -> None:
    try:
        with open(log, encoding="utf-8") as f:
            items = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return
    progress.add_new(items)


# -- the run ----------------------------------------------------------------------------


def summary(decoders: Sequence[Decoder], progress: Progress, corpus: Path | None,
            engines: Sequence[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    elapsed = max(1e-9, time.monotonic() - progress.started)
    execs = progress.total
    return {
        "decoders": sorted(d.name for d in decoders),
        "engines": list(engines),
        "executions": execs,
        "execs_per_sec": round(execs / elapsed, 1),
        "seconds": round(elapsed, 1),
        "divergent_inputs": sum(progress.divergent.values()),
        "new": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"],
             "position_dependent": x.get("position_dependent", False)}
            for x in progress.new
        ],
        "unreproduced": [
            {"signature": x["signature"], "decoders": x["decoders"], "class": x["class"],
             "feature": x["feature"], "input": x["input"]}
            for x in progress.unreproduced
        ],
        "corpus": str(corpus) if corpus else None,
        "corpus_size": len(corpus_mod.signature_ids(corpus)) if corpus else 0,
        **(extra or {}),
    }


def fuzz(decoders: Sequence[Decoder], *, engine: str = "hypothesis", seconds: float = 60.0,
         jobs: int = 1, corpus: Path | None = None, specs: Sequence[str] = (),
         profiles: Sequence[str] = (), progress: Progress | None = None,
         minimize_seconds: float | None = None,
         full_every: int | None = None) -> dict[str, Any]:
    """Run the chosen engine(s) for ``seconds`` and return the summary object.

    ``specs`` are the decoder specs the Atheris subprocess resolves again (it cannot
    receive Python objects); leave empty for "every available decoder".
    ``full_every``: see :mod:`.finder` (None: ``$UTF8FUZZ_FULL_EVERY`` or 8).
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
    if full_every is None:
        full_every = full_every_default()
    if full_every < 1:
        raise ValueError(f"full_every must be at least 1, got {full_every}")
    progress = progress or Progress()
    ms = minimize_seconds if minimize_seconds is not None else max(1.0, min(10.0, seconds / 6))
    deadline = time.monotonic() + seconds
    used: list[str] = []
    extra: dict[str, Any] = {"full_every": full_every}
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
    threads: list[threading.Thread] = []
    results: dict[str, Any] = {}
    if want_atheris:
        assert corpus is not None
        used.append("atheris")

        def go() -> None:
            results["atheris"] = run_atheris(specs, profiles, corpus, seconds, a_jobs,
                                             progress, ms, full_every=full_every)

        t = threading.Thread(target=go, daemon=True)
        t.start()
        threads.append(t)
    try:
        if engine in ("hypothesis", "both"):
            used.append("hypothesis")
            run_hypothesis(decoders, corpus, deadline, h_jobs, progress, ms, full_every)
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        extra["interrupted"] = True
    if "atheris" in results and results["atheris"].get("error"):
        extra["atheris_error"] = results["atheris"]["error"]
    if "atheris" in results:
        st = results["atheris"]["stats"]
        if "average_exec_per_sec" in st:
            extra["atheris_execs_per_sec"] = st["average_exec_per_sec"]
    return summary(decoders, progress, corpus, used, extra)
