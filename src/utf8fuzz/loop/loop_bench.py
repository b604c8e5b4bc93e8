"""The fuzz loop on a fixed input stream: ``utf8fuzz bench --loop``, ``make bench-loop``.

It feeds ``Finder.queue`` (the Atheris target's per-input call) on a ``Finder`` built as
:mod:`.atheris_target` builds it - ``select``'s decoders less the out-of-process ones,
every view, ``full_every`` 8, collector frozen and off - and reports measured inputs
per CPU-second; ``--callgrind``, instructions per input: valgrind's totals with and
without the measured inputs, subtracted (start-up and warm-up cancel; valgrind's CPU
has no AVX-512, so ``fast`` runs avx2 there). The stream: SplitMix64 from ``seed``
mutates ``corpus/seeds`` with ``utf8_mutate`` and ``fuzz/utf8.dict`` (see
:func:`make_stream`), made once here and handed to every tree as a file; its sha256
names it. Each tree first runs it once into a temporary copy of ``corpus/entries``
(priming), so the measured runs, as the nightly loop, know every signature they meet.

Beside it, the long stream (``long_inputs`` after ``long_warmup``: by default 3 per 50
short inputs after a 20th of their warm-up, 300 after 100; 0 for none):
:func:`utf8fuzz.engine.long.long_input` from a SplitMix64 seeded by ``seed``, 65 bytes
to 64 KiB each, primed and timed the same way in processes of its own. For it the
result also has bytes per CPU-second, and the process's peak RSS growth over the
measured inputs (``ru_maxrss`` at the end less after the warm-up: long inputs must
not make the loop's memory grow), with the RSS after each quarter. Made here, with
this tree's generator, and handed to every tree as a file like the short one.

Every run is a fresh process (``PYTHONPATH`` the tree, ``PYTHONHASHSEED=0``); this file
runs standalone against any tree, one without it included::

    python -P src/utf8fuzz/loop/loop_bench.py --compare /work/base/src --callgrind

See docs/performance.md, "How to measure".
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

MAX_LEN = 64
COLLECT_EVERY = 20_000  # the Atheris loop's (atheris_target.collect)
SRC = Path(__file__).resolve().parents[2]  # the tree this file is in
MARK = "utf8fuzz-loop-bench "


def load_material(root: Path) -> tuple[list[bytes], list[bytes]]:
    """``corpus/seeds`` (by name, each cut to 64 bytes) and the ``fuzz/utf8.dict`` tokens
    of the tree ``root``; where it has none (an installed package), the same seeds and
    dictionary made by :mod:`.boundaries`, which writes those files."""
    from utf8fuzz.engine import boundaries

    seed_dir, dict_file = root / "corpus" / "seeds", root / "fuzz" / "utf8.dict"
    if seed_dir.is_dir():
        seeds = [p.read_bytes()[:MAX_LEN] for p in sorted(seed_dir.iterdir()) if p.is_file()]
    else:
        seeds = [data[:MAX_LEN] for _, data in sorted(boundaries.seed_files().items())]
    text = dict_file.read_text("ascii") if dict_file.is_file() else boundaries.libfuzzer_dict()
    tokens = [line.split("=", 1)[1].strip()[1:-1].encode("latin-1").decode("unicode_escape")
              .encode("latin-1")
              for line in text.splitlines() if "=" in line and not line.startswith("#")]
    return seeds, tokens


def make_stream(count: int, seed: int, root: Path | None = None) -> list[bytes]:
    """``count`` inputs, each from a seed file (or, half the time, an earlier input) and
    1-4 mutations: ``utf8_mutate`` (the custom mutator) or, standing in for libFuzzer's,
    a dict token inserted or written over, a byte set, bytes erased. Same ``seed``,
    seeds, dict and mutator: the same bytes."""
    from utf8fuzz.loop.mutator import SplitMix64, utf8_mutate

    seeds, tokens = load_material(root or SRC.parent)
    rng = SplitMix64(seed)
    out: list[bytes] = []
    for _ in range(count):
        data = rng.choice(out) if out and rng.random() < 0.5 else rng.choice(seeds)
        for _ in range(1 + rng.randrange(4)):
            if rng.random() < 0.5:
                data = utf8_mutate(data, MAX_LEN, rng)
                continue
            buf, op = bytearray(data), rng.randrange(4)
            i = rng.randint(0, len(buf))
            if op < 2:
                t = rng.choice(tokens)
                buf[i : i + (len(t) if op else 0)] = t
            elif op == 2 and buf:
                buf[min(i, len(buf) - 1)] = rng.randrange(256)
            else:
                del buf[i : i + rng.randint(1, 4)]
            data = bytes(buf[:MAX_LEN])
        out.append(data)
    return out


def make_long_stream(count: int, seed: int) -> list[bytes]:
    """``count`` long inputs of the ``unicode`` profile, one after another from one
    SplitMix64 seeded by ``seed`` (:func:`utf8fuzz.engine.long.long_input`: 65 bytes
    to 64 KiB, realistic text with one edge at a 64-byte-to-64-KiB boundary). Same
    ``seed`` and generator: the same bytes."""
    from utf8fuzz.engine.long import SplitMix64, long_input

    rng = SplitMix64(seed)
    return [long_input(rng, "unicode") for _ in range(count)]


def digest(stream: Sequence[bytes]) -> str:
    # each input's length in full (one byte up to 254: the short stream's digest as it was;
    # FF and four bytes past it), then its bytes
    return hashlib.sha256(b"".join(
        (bytes([len(x)]) if len(x) < 255 else b"\xff" + len(x).to_bytes(4, "big")) + x
        for x in stream)).hexdigest()[:16]


def _cpu() -> str:
    info = Path("/proc/cpuinfo")
    lines = info.read_text().splitlines() if info.exists() else []
    return next((x.split(":", 1)[1].strip() for x in lines if x.startswith("model name")), "?")


def _entries(corpus: Path | None) -> int:
    return len(list((corpus / "entries").glob("*.json"))) if corpus else 0


def _rss_kib() -> tuple[int, int]:
    """This process's resident set now and at its peak so far, in KiB (Linux:
    ``/proc/self/statm`` and ``ru_maxrss``; the current one is 0 where there is no
    /proc)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0, peak
    return pages * (os.sysconf("SC_PAGE_SIZE") // 1024), peak


def run_loop(stream: Sequence[bytes], warmup: int, corpus: Path | None, *,
             full_every: int = 8, minimize_seconds: float = 1.0) -> dict[str, Any]:
    """Feed ``stream`` to ``Finder.queue`` in this process; time all but ``warmup``.
    Also the measured inputs' bytes, the resident set (KiB) after the warm-up, after
    each quarter of the measured inputs and at the end (``rss_kib``: a leak climbs,
    the high-water mark of the largest inputs in flight levels off), and its peak
    after the warm-up and at the end (``peak_rss_kib``)."""
    import utf8fuzz
    from utf8fuzz.loop.atheris_target import select
    from utf8fuzz.loop.finder import Finder

    decs = [d for d in select(None, None)  # "batched" was renamed "out_of_process"
            if not (getattr(d, "batched", False) or getattr(d, "out_of_process", False))]
    before = _entries(corpus)
    finder = Finder(decs, corpus, "atheris", minimize_seconds=minimize_seconds,
                    full_every=full_every)
    queue, done = finder.queue, 0
    n = len(stream) - warmup
    quarters = {warmup + n * k // 4 for k in (1, 2, 3)} if n >= 4 else set()
    rss: list[int] = []

    def feed(inputs: Sequence[bytes]) -> None:
        nonlocal done
        for data in inputs:
            queue(data)
            done += 1
            if done % COLLECT_EVERY == 0:
                gc.collect()
                gc.freeze()
            if done in quarters:
                rss.append(_rss_kib()[0])
        finder.flush()

    enabled = gc.isenabled()
    gc.freeze()  # as the Atheris target does before atheris.Fuzz()
    gc.disable()
    try:
        feed(stream[:warmup])
        rss0 = _rss_kib()
        rss.append(rss0[0])
        t0 = time.process_time()
        feed(stream[warmup:])
        cpu = time.process_time() - t0
        rss1 = _rss_kib()
        rss.append(rss1[0])
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
    from utf8fuzz import fast

    return {"tree": str(Path(utf8fuzz.__file__).resolve().parents[1]), "inputs": n,
            "warmup": warmup, "decoders": sum(not d.name.startswith("ref:") for d in decs),
            "references": sum(d.name.startswith("ref:") for d in decs), "cpu_s": cpu,
            "exec_per_s": n / cpu if cpu > 0 else 0.0, "new_entries": _entries(corpus) - before,
            "fast_path": str(fast.info()["selected"]),
            "bytes": sum(map(len, stream[warmup:])), "rss_kib": rss,
            "peak_rss_kib": [rss0[1], rss1[1]]}


def _child(tree: Path, files: tuple[Path, Path], warmup: int, limit: int,
           prefix: Sequence[str] = (), env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run in a fresh process on ``tree``: ``files`` is (stream, corpus); ``env``
    added to its environment."""
    cmd = [*prefix, sys.executable, "-P", str(Path(__file__).resolve()), "--child",
           *map(str, files), str(warmup), str(limit)]
    p = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0",
                                     **(env or {})),
                       capture_output=True, text=True, check=False)
    lines = [x for x in p.stdout.splitlines() if x.startswith(MARK)]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"the loop failed in {tree} (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return dict(json.loads(lines[-1][len(MARK):]))


def _callgrind(tree: Path, files: tuple[Path, Path], warmup: int, total: int,
               env: dict[str, str] | None = None) -> float:
    """Instructions per input: callgrind's totals with and without the inputs, subtracted."""
    def ir(limit: int) -> int:
        out = files[1].with_name(f"{files[1].name}.callgrind.{limit}")
        _child(tree, files, warmup, limit, ["valgrind", "--tool=callgrind",
                                            f"--callgrind-out-file={out}"], env)
        return next(int(x.split()[1]) for x in out.read_text().splitlines()
                    if x.startswith(("summary:", "totals:")))
    with ThreadPoolExecutor(2) as pool:
        short, full = pool.map(ir, (warmup, total))
    return (full - short) / (total - warmup)


def _tree(path: str | Path) -> Path:
    p = Path(path).resolve()
    return p / "src" if (p / "src" / "utf8fuzz").is_dir() else p


def _median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def bench(*, inputs: int = 5000, warmup: int = 2000, seed: int = 1, runs: int = 5,
          tree: str | Path | None = None, compare: str | Path | None = None,
          callgrind: bool = False, root: Path | None = None, long_inputs: int | None = None,
          long_warmup: int | None = None,
          baseline_env: dict[str, str] | None = None, parts: Sequence[str] = (),
          part_runs: int = 3, hypothesis_inputs: int = 3000, structured_inputs: int = 2000,
          planted_runs: int = 4000, planted_seeds: int = 3) -> dict[str, Any]:
    """The whole benchmark, each tree in its own processes; a JSON-able dict. The long
    stream's sizes default to 3 inputs per 50 of the short stream's and a 20th of its
    warm-up (300 after 100 for the defaults), so that a short run stays short.
    ``baseline_env`` (without ``compare``): the baseline is this tree with these
    environment variables (``UTF8FUZZ_CALL_EVERY=0``: the loop without the checks
    of the call), measured in the same interleaved pairs. ``parts``: issue 27's
    figures besides (of :data:`PARTS`, after "short" and "long"; :func:`run_parts`),
    each ``part_runs`` times per tree; ``summary`` then holds one row per figure."""
    if long_inputs is None:
        long_inputs = max(1, inputs * 3 // 50)
    if long_warmup is None:
        long_warmup = warmup // 20
    if inputs < 1 or warmup < 0 or runs < 1 or long_inputs < 0 or long_warmup < 0:
        raise ValueError("--inputs and --runs must be at least 1, --warmup, --long-inputs "
                         "and --long-warmup at least 0")
    if bad_parts := [p for p in parts if p not in PARTS[2:]]:
        raise ValueError(f"unknown part {', '.join(bad_parts)}; parts are "
                         f"{', '.join(PARTS[2:])}")
    if min(part_runs, hypothesis_inputs, structured_inputs, planted_runs, planted_seeds) < 1:
        raise ValueError("--part-runs, --hypothesis-inputs, --structured-inputs, "
                         "--planted-runs and --planted-seeds must be at least 1")
    began = time.perf_counter()
    root = root or SRC.parent
    stream = make_stream(warmup + inputs, seed, root)
    longs = make_long_stream(long_warmup + long_inputs, seed) if long_inputs else []
    trees = {"current": _tree(tree or SRC)}
    envs: dict[str, dict[str, str]] = {}
    if compare:
        trees["baseline"] = _tree(compare)
    elif baseline_env:
        trees["baseline"], envs["baseline"] = trees["current"], dict(baseline_env)
    if bad := [str(t) for t in trees.values() if not (t / "utf8fuzz").is_dir()]:
        raise ValueError(f"no utf8fuzz package in {', '.join(bad)} (give a tree's src)")
    out: dict[str, Any] = {"stream": {"seed": seed, "inputs": inputs, "warmup": warmup,
                                      "max_len": MAX_LEN, "sha256": digest(stream)},
                           "machine": f"{_cpu()}, {os.cpu_count()} cores, Python "
                                      f"{sys.version.split()[0]}"}
    if longs:
        measured = longs[long_warmup:]
        out["long_stream"] = {
            "seed": seed, "inputs": long_inputs, "warmup": long_warmup,
            "generator": "utf8fuzz.engine.long.long_input(SplitMix64(seed), 'unicode')",
            "min_len": min(map(len, measured)), "max_len": max(map(len, measured)),
            "mean_len": sum(map(len, measured)) / len(measured), "sha256": digest(longs)}
    tmp = Path(tempfile.mkdtemp(prefix="utf8fuzz-loop-bench-"))
    try:
        (tmp / "stream.hex").write_text("".join(x.hex() + "\n" for x in stream))
        (tmp / "long.hex").write_text("".join(x.hex() + "\n" for x in longs))
        files, results = {k: (tmp / "stream.hex", tmp / k) for k in trees}, {}
        lfiles = {k: (tmp / "long.hex", tmp / f"{k}-long") for k in trees}
        for label, t in trees.items():
            for corpus in (files[label][1], lfiles[label][1]) if longs else (files[label][1],):
                if (root / "corpus" / "entries").is_dir():
                    shutil.copytree(root / "corpus" / "entries", corpus / "entries")
            r = _child(t, files[label], len(stream), len(stream),
                       env=envs.get(label))  # priming
            results[label] = {k: r[k] for k in ("tree", "decoders", "references", "fast_path")}
            results[label].update(primed_entries=r["new_entries"], new_entries=0, runs=[],
                                  bytes_per_s_runs=[])
            if longs:
                r = _child(t, lfiles[label], len(longs), len(longs),
                           env=envs.get(label))  # priming, long
                results[label]["long"] = {
                    "primed_entries": r["new_entries"], "new_entries": 0, "runs": [],
                    "bytes_per_s_runs": [], "peak_rss_growth_kib": [], "rss_kib": []}
        for i in range(runs):  # interleaved, the order swapped every pair
            for label in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
                r = _child(trees[label], files[label], warmup, len(stream),
                           env=envs.get(label))
                results[label]["runs"].append(r["exec_per_s"])
                results[label]["bytes_per_s_runs"].append(
                    r["bytes"] / r["cpu_s"] if r.get("cpu_s") else 0.0)
                results[label]["new_entries"] += r["new_entries"]
                if longs:
                    r = _child(trees[label], lfiles[label], long_warmup, len(longs),
                               env=envs.get(label))
                    lr = results[label]["long"]
                    lr["runs"].append(r["exec_per_s"])
                    lr["bytes_per_s_runs"].append(r["bytes"] / r["cpu_s"] if r["cpu_s"] else 0.0)
                    lr["peak_rss_growth_kib"].append(r["peak_rss_kib"][1] - r["peak_rss_kib"][0])
                    lr["rss_kib"].append(r["rss_kib"])
                    lr["new_entries"] += r["new_entries"]
        for label, r in results.items():
            r["exec_per_s"] = statistics.median(r["runs"])
            r["bytes_per_s"] = _median(r["bytes_per_s_runs"])
            if "long" in r:
                lr = r["long"]
                lr["exec_per_s"] = _median(lr["runs"])
                lr["bytes_per_s"] = _median(lr["bytes_per_s_runs"])
            if callgrind and shutil.which("valgrind"):
                r["instructions_per_input"] = _callgrind(trees[label], files[label], warmup,
                                                         len(stream), envs.get(label))
        if callgrind and not shutil.which("valgrind"):
            out["callgrind"] = "valgrind is not installed: no instruction counts"
        out["trees"] = results
        if parts:
            out["parts"] = run_parts(
                trees, envs, parts, tmp, root, tmp / "stream.hex", warmup=warmup,
                total=len(stream), seed=seed, part_runs=part_runs,
                hypothesis_inputs=hypothesis_inputs, structured_inputs=structured_inputs,
                planted_runs=planted_runs, planted_seeds=planted_seeds)
            if "structured_stream" in out["parts"]:
                out["structured_stream"] = out["parts"].pop("structured_stream")
            out["part_seconds"] = out["parts"].pop("seconds")
            out["part_settings"] = {
                "part_runs": part_runs, "hypothesis_inputs": hypothesis_inputs,
                "structured_inputs": structured_inputs, "planted_runs": planted_runs,
                "planted_seeds": planted_seeds, "plugin": PLUGIN, "planted": list(PLANTED)}
        out["summary"] = summary(out)
        out["seconds"] = time.perf_counter() - began
        if envs:
            out["baseline_env"] = envs["baseline"]
        if compare or envs:
            cur, base = results["current"], results["baseline"]
            out["ratios"] = [a / b for a, b in zip(cur["runs"], base["runs"], strict=True)]
            if longs:
                out["long_ratios"] = [a / b for a, b in zip(cur["long"]["runs"],
                                                            base["long"]["runs"], strict=True)]
            if "instructions_per_input" in cur:
                out["instructions_ratio"] = (cur["instructions_per_input"]
                                             / base["instructions_per_input"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# -- issue 27's figures: every decoder, Hypothesis, a plug-in, the planted bugs -------
#
# Each part runs in fresh processes of each tree as the short stream does (primed
# first where the part can meet new signatures, then ``part_runs`` interleaved runs),
# and reports one figure per run; see PARTS and docs/performance.md, "How to measure".

#: The parts of the benchmark, in the order they run and print: the short and long
#: streams above (in-process decoders), then issue 27's figures (a)-(d).
PARTS = ("short", "long", "all-decoders", "hypothesis", "structured", "plugin", "planted")
#: The pure-Python plug-in of part "plugin", in its worker process.
PLUGIN = "utf8fuzz.bench:pure_python_utf8"
#: Part "planted": the planted bugs of tests/engine/planted.py, each a decoder of its
#: own with one deviation from CPython's codec (the module of the tree this file is
#: in, the same for every tree measured).
PLANTED = ("tests.engine.planted:PLANTED_C080+inprocess",
           "tests.engine.planted:PLANTED_TRUNCATED4+inprocess",
           "tests.engine.planted:block_boundary_bug+text+inprocess")
#: Issue 27's targets (its "Done when"), by figure.
TARGETS = {"all-decoders": 5000.0, "hypothesis": 2000.0, "plugin": 3000.0}


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user and system) of the processes descended from ``pid`` that are
    alive now, with the children they waited for (Linux ``/proc``; 0.0 elsewhere):
    the out-of-process decoders' share of a run."""
    proc, tick = Path("/proc"), os.sysconf("SC_CLK_TCK")
    kids: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for d in proc.iterdir() if proc.is_dir() else ():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            kids.setdefault(int(fields[1]), []).append(int(d.name))
            cpu[int(d.name)] = sum(int(x) for x in fields[11:15]) / tick
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    total, todo = 0.0, list(kids.get(pid, ()))
    while todo:
        c = todo.pop()
        total += cpu.get(c, 0.0)
        todo += kids.get(c, ())
    return total


class _ShareWatch:
    """Stands in for a Finder's share of the out-of-process decoders (``finder.slow``,
    :class:`~utf8fuzz.engine.screening.SlowShare`) and counts, independently of it,
    the inputs of issue 27's interesting classes - one that brought new coverage, one
    on which the decoders in the process diverged with a set of signatures not met
    before in the run - and how many of those the share did not give them."""

    def __init__(self, share: Any) -> None:
        self.share = share
        self.met: set[frozenset[Any]] = set()
        self.interesting = self.missed = self.taken = self.total = 0

    def wants(self, novel: bool, divergences: Any = ()) -> bool:
        divergences = tuple(divergences)
        key = frozenset(divergences) if divergences else None
        interesting = novel or (key is not None and key not in self.met)
        if key is not None:
            self.met.add(key)
        take = bool(self.share.wants(novel, divergences))
        self.total += 1
        self.taken += take
        self.interesting += interesting
        self.missed += interesting and not take
        return take

    def __getattr__(self, name: str) -> Any:
        return getattr(self.share, name)


def _finder_kwargs(finder_cls: Any, **wanted: Any) -> dict[str, Any]:
    """Those of ``wanted`` the tree's ``Finder`` takes (an older tree lacks some)."""
    import inspect

    params = inspect.signature(finder_cls).parameters
    return {k: v for k, v in wanted.items() if k in params}


def run_decoders(stream: Sequence[bytes], warmup: int, corpus: Path | None,
                 specs: Sequence[str] | None, *, coverage: bool = False,
                 every_input: bool = False, minimize_seconds: float = 1.0) -> dict[str, Any]:
    """Parts "all-decoders" and "plugin": ``stream`` through ``Finder.queue`` with the
    decoders ``atheris_target.select(specs)`` chooses, out-of-process ones included;
    all but ``warmup`` timed, wall clock and CPU, this process's and that of the
    processes it started (the decoders' workers and peers). ``coverage``: each input's
    walks also fed to a table coverage, as the Atheris target does (so some inputs
    are novel); ``every_input``: the out-of-process decoders get every input, not a
    share. Also what each decoder saw (``Finder.inputs_seen``) and the share's
    interesting inputs (:class:`_ShareWatch`), over the whole stream."""
    from utf8fuzz.loop.atheris_target import select
    from utf8fuzz.loop.finder import Finder

    decs = select(list(specs) if specs else None, None)
    finder = Finder(decs, corpus, "atheris", minimize_seconds=minimize_seconds, full_every=8,
                    **_finder_kwargs(Finder, **({"slow_every": 1} if every_input else {})))
    # the decoders on the slow share: out of process, and (since issue 27 (a)'s
    # change) the in-process ones that declare themselves slow
    oop = list(getattr(finder.differ, "deferred", None)
               or getattr(finder.differ, "out_of_process", None) or ())
    watch = _ShareWatch(finder.slow) if hasattr(finder, "slow") else None
    if watch is not None:
        finder.slow = watch  # type: ignore[assignment]  # it answers as the share does
    if coverage:
        from utf8fuzz.loop.coverage import TableCoverage

        cov, keys = TableCoverage(bytearray(TableCoverage.POOL)), finder.differ.walk_keys

        def cover(walks: tuple[Any, ...]) -> bool:  # as atheris_target.main's
            new = False
            for (profile, _), walk in zip(keys, walks, strict=True):
                new = cov.feed_walk(profile, walk) or new
            return new

        finder.cover = cover
    queue, done, me = finder.queue, 0, os.getpid()

    def feed(inputs: Sequence[bytes]) -> None:
        nonlocal done
        for data in inputs:
            queue(data)
            done += 1
            if done % COLLECT_EVERY == 0:
                gc.collect()
                gc.freeze()
        finder.flush()

    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        feed(stream[:warmup])
        seen0 = finder.inputs_seen() if hasattr(finder, "inputs_seen") else {}
        others0 = _tree_cpu(me)
        t0, c0 = time.perf_counter(), time.process_time()
        feed(stream[warmup:])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        others = _tree_cpu(me) - others0
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
    seen = finder.inputs_seen() if hasattr(finder, "inputs_seen") else {}
    n = len(stream) - warmup
    names = [d.name for d in oop]
    return {"inputs": n, "warmup": warmup, "wall_s": wall, "cpu_s": cpu, "others_cpu_s": others,
            "exec_per_s": n / wall if wall > 0 else 0.0,
            "exec_per_cpu_s": n / (cpu + others) if cpu + others > 0 else 0.0,
            "decoders": sum(not d.name.startswith("ref:") for d in decs),
            "out_of_process": len(getattr(finder.differ, "out_of_process", ())),
            "deferred": len(oop), "new_entries": len(finder.found),
            # measured inputs each out-of-process decoder decoded
            "seen_measured": {k: seen.get(k, 0) - seen0.get(k, 0) for k in names},
            "seen_total": {k: seen.get(k, 0) for k in names},
            "share": None if watch is None else {
                "inputs": watch.total, "given": watch.taken,
                "interesting": watch.interesting, "missed": watch.missed}}


def run_structured(buffers: Sequence[bytes], warmup: int, corpus: Path | None, *,
                   minimize_seconds: float = 1.0) -> dict[str, Any]:
    """Part "structured": Hypothesis buffers (:data:`utf8fuzz.loop.structured.TAG`
    and random bytes) as the Atheris target takes them - the input Hypothesis's
    strategies draw from each (``structured.input_of``), then ``Finder.queue`` - with
    the in-process decoders; all but ``warmup`` timed, per CPU-second."""
    from utf8fuzz.loop.atheris_target import select
    from utf8fuzz.loop.finder import Finder
    from utf8fuzz.loop.structured import input_of

    decs = [d for d in select(None, None) if not getattr(d, "out_of_process", False)]
    finder = Finder(decs, corpus, "atheris", minimize_seconds=minimize_seconds, full_every=8)
    queue, drawn, empty = finder.queue, set(), 0

    def feed(inputs: Sequence[bytes]) -> None:
        nonlocal empty
        for buf in inputs:
            data = input_of(buf)
            if data is None:
                empty += 1
                continue
            drawn.add(data)
            queue(data)
        finder.flush()

    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        feed(buffers[:warmup])
        n0, empty0, t0 = finder.executions, empty, time.process_time()
        feed(buffers[warmup:])
        cpu = time.process_time() - t0
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
    n = finder.executions - n0
    return {"inputs": n, "buffers": len(buffers) - warmup, "drew_nothing": empty - empty0,
            "distinct": len(drawn), "cpu_s": cpu, "exec_per_s": n / cpu if cpu > 0 else 0.0,
            "new_entries": len(finder.found)}


def run_hypothesis(runs: int, seed: int, corpus: Path | None,
                   specs: Sequence[str] | None = None) -> dict[str, Any]:
    """Part "hypothesis" (and part "planted" on that engine, with ``specs``): the
    Hypothesis engine's worker in this process, no seeds replayed, ``runs`` inputs
    drawn from ``seed``, with the in-process decoders ``select(specs)`` chooses; the
    inputs compared per CPU-second of the process, its set-up included."""
    import inspect

    from utf8fuzz.loop.atheris_target import select
    from utf8fuzz.loop.hypothesis_worker import hypothesis_worker

    decs = [d for d in select(list(specs) if specs else None, None)
            if not getattr(d, "out_of_process", False)]
    params = inspect.signature(hypothesis_worker).parameters
    kw: dict[str, Any] = {"replay_seeds": False} if "replay_seeds" in params else {}
    t0 = time.process_time()
    f = hypothesis_worker(decs, corpus, time.monotonic() + 3600, lambda *a: None, 5.0,
                          runs=runs, seed=seed, **kw)
    cpu = time.process_time() - t0
    return {"inputs": f.executions, "cpu_s": cpu,
            "exec_per_s": f.executions / cpu if cpu > 0 else 0.0,
            "decoders": sum(not d.name.startswith("ref:") for d in decs),
            "new_entries": len(f.found)}


class _Found(list):  # type: ignore[type-arg]
    """A Finder's ``found``, noting when each entry came: the finder's count of
    inputs compared then, and the seconds since the process began the part."""

    def __init__(self, finder: Any, start: float, log: list[dict[str, Any]]) -> None:
        super().__init__()
        self.finder, self.start, self.log = finder, start, log

    def append(self, new: Any) -> None:
        self.log.append({"decoders": list(new.decoders), "signature": str(new.signature),
                         "executions": int(self.finder.executions),
                         "seconds": time.monotonic() - self.start})
        super().append(new)


def _count_findings(log: list[dict[str, Any]], start: float) -> None:
    """Make every Finder of the tree (made from now on) note its entries in ``log``."""
    import utf8fuzz.loop.finder as finder_mod

    base = finder_mod.Finder

    class Counting(base):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.found = _Found(self, start, log)

    finder_mod.Finder = Counting  # type: ignore[misc]
    try:
        import utf8fuzz.loop.hypothesis_worker as hw

        hw.Finder = Counting  # type: ignore[attr-defined]
    except ImportError:
        pass


def _first_finds(log: list[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """Per decoder of ``names``: its first entry's count and seconds, None if none."""
    return {n: next(({"executions": e["executions"], "seconds": e["seconds"]}
                     for e in log if n in e["decoders"]), None) for n in names}


def run_planted_atheris(runs: int, seed: int, corpus: Path, work: Path) -> None:
    """Part "planted", Atheris engine: the Atheris target on :data:`PLANTED` as
    ``utf8fuzz fuzz`` runs it (its ``-max_len``, ``-len_control``, ``-dict``), from
    no seeds and an empty corpus, ``-runs`` and ``-seed`` given, keeping going past
    each finding; prints (at libFuzzer's exit) when each planted decoder's first
    entry came, in inputs compared and seconds."""
    start = time.monotonic()
    from utf8fuzz.loop import atheris_target
    from utf8fuzz.loop.targets import dictionary

    log: list[dict[str, Any]] = []
    _count_findings(log, start)
    names = [d.name for d in atheris_target.select(list(PLANTED), None)]
    executions: list[int] = []

    def report() -> None:
        print(MARK + json.dumps({"found": _first_finds(log, names), "decoders": names,
                                 "entries": len(log), "seconds": time.monotonic() - start,
                                 "executions": executions[-1] if executions else None}),
              flush=True)

    import utf8fuzz.loop.finder as finder_mod

    counting = finder_mod.Finder

    class Last(counting):  # type: ignore[misc,valid-type]
        def flush(self) -> None:
            super().flush()
            executions.append(int(self.executions))

    finder_mod.Finder = Last  # type: ignore[misc]
    os.environ.update({"UTF8FUZZ_DECODERS": json.dumps(list(PLANTED)),
                       "UTF8FUZZ_CORPUS": str(corpus), atheris_target.KEEP_GOING_ENV: "1"})
    atheris_target.at_process_exit(report)  # after the target's own last round
    atheris_target.main([str(Path(__file__).resolve()), "-max_len=65600", "-len_control=0",
                         f"-dict={dictionary()}", f"-runs={runs}", f"-seed={seed}",
                         f"-artifact_prefix={work}{os.sep}", str(work)])


def make_buffers(count: int, seed: int) -> list[bytes]:
    """``count`` structured inputs for part "structured": the tag, then 0-64 bytes of
    a SplitMix64 seeded by ``seed`` (what the Atheris target's mutator starts new ones
    from: random bytes). Same ``seed``: the same buffers."""
    from utf8fuzz.engine.long import SplitMix64
    from utf8fuzz.loop.structured import TAG

    rng = SplitMix64(seed)
    return [TAG + bytes(rng.randrange(256) for _ in range(rng.randint(0, MAX_LEN)))
            for _ in range(count)]


def _part_child(tree: Path, part: str, params: dict[str, Any],
                env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run of ``part`` in a fresh process on ``tree``. The planted decoders import
    from this file's repository (``tests.engine.planted``): the same bugs for every
    tree."""
    path = str(tree) + (os.pathsep + str(SRC.parent) if part.startswith("planted") else "")
    cmd = [sys.executable, "-P", str(Path(__file__).resolve()), "--child-part", part,
           json.dumps(params)]
    p = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=path, PYTHONHASHSEED="0",
                                     **(env or {})),
                       capture_output=True, text=True, check=False)
    lines = [x for x in p.stdout.splitlines() if x.startswith(MARK)]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"part {part} failed in {tree} (exit {p.returncode}):\n"
                           f"{p.stderr[-3000:]}")
    return dict(json.loads(lines[-1][len(MARK):]))


def child_part(part: str, params: dict[str, Any]) -> int:
    """``--child-part PART PARAMS``: one run of an issue-27 part in this process."""
    corpus = Path(params["corpus"]) if params.get("corpus") else None
    if part in ("all-decoders", "plugin"):
        stream = [bytes.fromhex(x) for x in Path(params["stream"]).read_text().splitlines()]
        r = run_decoders(stream[: params["limit"]], params["warmup"], corpus,
                         [PLUGIN] if part == "plugin" else None,
                         coverage=part == "all-decoders", every_input=part == "plugin")
    elif part == "structured":
        buffers = [bytes.fromhex(x) for x in Path(params["stream"]).read_text().splitlines()]
        r = run_structured(buffers, params["warmup"], corpus)
    elif part == "hypothesis":
        r = run_hypothesis(params["runs"], params["seed"], corpus)
    elif part == "planted-hypothesis":
        log: list[dict[str, Any]] = []
        _count_findings(log, time.monotonic())
        r = run_hypothesis(params["runs"], params["seed"], corpus, PLANTED)
        from utf8fuzz.loop.atheris_target import select

        names = [d.name for d in select(list(PLANTED), None)]
        r.update(found=_first_finds(log, names), decoders=names, entries=len(log),
                 executions=r["inputs"])
    elif part == "planted-atheris":
        run_planted_atheris(params["runs"], params["seed"], Path(params["corpus"]),
                            Path(params["work"]))
        return 0  # libFuzzer exits before this; the report is printed at its exit
    else:
        raise SystemExit(f"loop_bench: unknown part {part!r}")
    print(MARK + json.dumps(r), flush=True)
    return 0


def _copy_corpus(root: Path, to: Path) -> Path:
    if (root / "corpus" / "entries").is_dir():
        shutil.copytree(root / "corpus" / "entries", to / "entries")
    to.mkdir(parents=True, exist_ok=True)
    return to


def run_parts(trees: dict[str, Path], envs: dict[str, dict[str, str]], parts: Sequence[str],
              tmp: Path, root: Path, stream_file: Path, *, warmup: int, total: int, seed: int,
              part_runs: int, hypothesis_inputs: int, structured_inputs: int,
              planted_runs: int, planted_seeds: int) -> dict[str, Any]:
    """Issue 27's parts, each tree in its own processes: per part and tree, the runs'
    results (``runs``; a part's priming run first, on a copy of ``corpus/entries``
    the measured runs then reuse) or its ``error``."""
    out: dict[str, Any] = {}
    timed: dict[str, tuple[dict[str, Any], bool]] = {}
    if "all-decoders" in parts or "plugin" in parts:
        for part in ("all-decoders", "plugin"):
            if part in parts:
                timed[part] = ({"stream": str(stream_file), "warmup": warmup, "limit": total},
                               part == "all-decoders")
    if "structured" in parts:
        buffers = make_buffers(structured_inputs + structured_inputs // 10, seed)
        (tmp / "structured.hex").write_text("".join(x.hex() + "\n" for x in buffers))
        timed["structured"] = ({"stream": str(tmp / "structured.hex"),
                                "warmup": structured_inputs // 10}, True)
        out["structured_stream"] = {"seed": seed, "inputs": structured_inputs,
                                    "warmup": structured_inputs // 10, "sha256": digest(buffers)}
    if "hypothesis" in parts:
        timed["hypothesis"] = ({"runs": hypothesis_inputs, "seed": seed}, True)
    hyp_env = {"UTF8FUZZ_LONG_SHARE": "0"}  # short inputs: issue 27's figure
    seconds: dict[str, float] = {}  # each part's wall clock, both trees: what a run costs
    for part, (params, prime) in timed.items():
        began = time.perf_counter()
        res: dict[str, Any] = {label: {"runs": []} for label in trees}
        corpora = {label: _copy_corpus(root, tmp / f"{part}-{label}") for label in trees}

        def env(label: str, part: str = part) -> dict[str, str]:
            return {**envs.get(label, {}), **(hyp_env if part == "hypothesis" else {})}

        try:
            for label, t in trees.items():
                if prime:
                    r = _part_child(t, part, {**params, "corpus": str(corpora[label])},
                                    env(label))
                    res[label]["primed_entries"] = r["new_entries"]
            for i in range(part_runs):
                for label in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
                    res[label]["runs"].append(_part_child(
                        trees[label], part, {**params, "corpus": str(corpora[label])},
                        env(label)))
        except RuntimeError as e:
            res = {"error": str(e)}
        out[part] = res
        seconds[part] = time.perf_counter() - began
    if "planted" in parts:
        began = time.perf_counter()
        res = {label: {} for label in trees}
        try:
            for engine, runs in (("atheris", planted_runs), ("hypothesis", planted_runs)):
                for s in range(1, planted_seeds + 1):
                    for label, t in trees.items():
                        work = tmp / f"planted-{engine}-{label}-{s}"
                        params = {"runs": runs, "seed": s, "corpus": str(work / "corpus"),
                                  "work": str(work / "libfuzzer")}
                        (work / "corpus").mkdir(parents=True)
                        (work / "libfuzzer").mkdir()
                        res[label].setdefault(engine, []).append(_part_child(
                            t, f"planted-{engine}", params, {
                                **envs.get(label, {}),
                                **(hyp_env if engine == "hypothesis" else {})}))
        except RuntimeError as e:
            res = {"error": str(e)}
        out["planted"] = res
        seconds["planted"] = time.perf_counter() - began
    out["seconds"] = seconds
    return out


def _ratio(cur: Sequence[float], base: Sequence[float]) -> float | None:
    """The median of the pairs' ratios (runs i of both trees ran back to back)."""
    pairs = [a / b for a, b in zip(cur, base, strict=False) if b]
    return statistics.median(pairs) if pairs else None


def summary(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure: what it is, its input, the current tree's median, the
    baseline's, their ratio (median of the pairs'), issue 27's target and whether the
    current tree meets it. A figure's runs are in ``result``; this only reads them."""
    trees, parts = result["trees"], result.get("parts", {})
    has_base = "baseline" in trees
    rows: list[dict[str, Any]] = []

    def row(figure: str, unit: str, cur: Sequence[float], base: Sequence[float] | None,
            target: float | None = None, note: str = "") -> None:
        value = _median(cur)
        rows.append({"figure": figure, "unit": unit, "current": value,
                     "baseline": _median(base) if base else None,
                     "ratio": _ratio(cur, base) if base else None, "target": target,
                     "met": None if target is None else value >= target, "note": note})

    cur, base = trees["current"], trees.get("baseline")
    row("in-process decoders, short stream", "exec/s (CPU)", cur["runs"],
        base["runs"] if base else None)
    if "long" in cur:
        row("in-process decoders, long stream", "MB/s (CPU)",
            [x / 1e6 for x in cur["long"]["bytes_per_s_runs"]],
            [x / 1e6 for x in base["long"]["bytes_per_s_runs"]] if base else None)

    def runs(part: str, label: str, key: str) -> list[float] | None:
        r = parts.get(part, {}).get(label)
        return [float(x[key]) for x in r["runs"]] if r and r.get("runs") else None

    for part, figure, key, unit, target in (
            ("all-decoders", "(a) all decoders, one core", "exec_per_s", "exec/s (wall)",
             TARGETS["all-decoders"]),
            ("all-decoders", "(a) all decoders, one core", "exec_per_cpu_s",
             "exec per CPU-s (all processes)", None),
            ("hypothesis", "(b) Hypothesis engine, in-process decoders", "exec_per_s",
             "inputs/s (CPU)", TARGETS["hypothesis"]),
            ("structured", "(b) structured inputs in the Atheris loop", "exec_per_s",
             "inputs/s (CPU)", None),
            ("plugin", "(c) pure-Python plug-in in its worker", "exec_per_s",
             "inputs/s (wall)", TARGETS["plugin"])):
        if part not in parts:
            continue
        if "error" in parts[part]:
            rows.append({"figure": figure, "unit": unit, "error": parts[part]["error"]})
            continue
        row(figure, unit, runs(part, "current", key) or [],
            runs(part, "baseline", key) if has_base else None, target,
            _share_note(parts[part]["current"]["runs"][-1])
            if part == "all-decoders" and target is not None else "")
    planted = parts.get("planted")
    if planted and "error" in planted:
        rows.append({"figure": "(d) planted bugs", "unit": "", "error": planted["error"]})
    elif planted:
        for engine in ("atheris", "hypothesis"):
            cur_runs = planted["current"].get(engine, [])
            names = cur_runs[0]["decoders"] if cur_runs else []
            for name in names:
                def finds(label: str, name: str = name, engine: str = engine) -> list[Any]:
                    return [r["found"].get(name) for r in planted[label].get(engine, [])]
                c, b = finds("current"), finds("baseline") if has_base else None
                rows.append(_planted_row(engine, name, c, b, cur_runs[0]["executions"]))
    return rows


def _share_note(last: dict[str, Any]) -> str:
    """What the out-of-process decoders saw in a run of part "all-decoders"."""
    share, seen = last.get("share") or {}, last["seen_total"]
    return (f"{last.get('deferred', last['out_of_process'])} decoders on the share "
            f"({last['out_of_process']} out of process); each decoded "
            f"{min(seen.values(), default=0):,}-{max(seen.values(), default=0):,} of the "
            f"{share.get('given', 0):,} inputs given them of {share.get('inputs', 0):,}; "
            f"of {share.get('interesting', 0):,} interesting inputs (new coverage or a new "
            f"set of divergences), {share.get('missed', 0):,} not given")


def _planted_row(engine: str, name: str, cur: list[Any], base: list[Any] | None,
                 limit: int | None) -> dict[str, Any]:
    """A planted bug's row: the inputs compared until its first entry, per seed (None:
    not found in the run), their sum (a run that missed it counted as its whole
    length) and the seconds until then; with a baseline, the ratio of the sums, and
    "met" when the current tree needs no more than the baseline."""
    def total(finds: list[Any]) -> tuple[int, float]:
        return (sum(f["executions"] if f else (limit or 0) for f in finds),
                sum(f["seconds"] for f in finds if f))
    c_n, c_s = total(cur)
    row: dict[str, Any] = {
        "figure": f"(d) {engine}: {name}", "unit": "inputs to find (per seed)",
        "current": c_n, "current_runs": [f["executions"] if f else None for f in cur],
        "current_seconds": c_s, "baseline": None, "ratio": None, "target": None,
        "met": None, "note": ""}
    if base is not None:
        b_n, b_s = total(base)
        row.update(baseline=b_n, baseline_runs=[f["executions"] if f else None for f in base],
                   baseline_seconds=b_s, ratio=c_n / b_n if b_n else None,
                   met=c_n <= b_n and sum(f is None for f in cur) <= sum(f is None for f in base))
    return row


def format_table(rows: Sequence[dict[str, Any]], has_base: bool) -> list[str]:
    """The summary rows as text lines: one per figure."""
    def num(x: Any) -> str:
        # cut, not rounded: a figure shown as the target is one that meets it
        return "-" if x is None else f"{x:,.2f}" if isinstance(x, float) and x < 100 \
            else f"{int(x):,}"

    def seeds(xs: Sequence[int | None]) -> str:
        return "/".join("none" if x is None else f"{x:,}" for x in xs)

    lines = ["", "issue 27's figures (medians of the runs; ratio: median of the pairs'):"]
    for r in rows:
        if "error" in r:
            said = [x for x in r["error"].splitlines() if x.strip()]
            lines.append(f"  {r['figure']}: FAILED: {said[0]} ... {said[-1]}")
            continue
        if "current_runs" in r:  # a planted bug
            text = (f"  {r['figure']}: {r['unit']} {seeds(r['current_runs'])} "
                    f"(sum {r['current']:,}, {r['current_seconds']:.1f} s)")
            if "baseline_runs" in r:
                text += (f"; baseline {seeds(r['baseline_runs'])} (sum {r['baseline']:,}, "
                         f"{r['baseline_seconds']:.1f} s); ratio {num(r['ratio'])}: "
                         + ("no worse" if r["met"] else "WORSE"))
            lines.append(text)
            continue
        text = f"  {r['figure']}: {num(r['current'])} {r['unit']}"
        if has_base:
            text += f"; baseline {num(r['baseline'])}; ratio {num(r['ratio'])}"
        if r["target"] is not None:
            text += f"; target >= {r['target']:,.0f}: " + ("met" if r["met"] else "MISSED")
        lines.append(text)
        if r.get("note"):
            lines.append(f"      {r['note']}")
    return lines


def format_text(result: dict[str, Any]) -> str:
    s = result["stream"]
    lines = [f"fuzz loop (Finder.queue), stream seed {s['seed']}: {s['inputs']:,} inputs after "
             f"{s['warmup']:,} to warm up, <= {s['max_len']} bytes, sha256 {s['sha256']}"]
    if "long_stream" in result:
        ls = result["long_stream"]
        lines.append(f"long stream seed {ls['seed']} (engine.long): {ls['inputs']:,} inputs "
                     f"after {ls['warmup']:,} to warm up, {ls['min_len']:,}-{ls['max_len']:,} "
                     f"bytes ({ls['mean_len']:,.0f} on average), sha256 {ls['sha256']}")
    lines.append(result["machine"])
    for label, r in result["trees"].items():
        runs = "  ".join(f"{x:,.0f}" for x in r["runs"])
        lines += [f"{label}: {r['tree']}",
                  f"  {r['decoders']} decoders + {r['references']} references, fast path "
                  f"{r['fast_path']}; entries added: {r['primed_entries']} priming, "
                  f"{r['new_entries']} measured",
                  f"  exec/s (CPU): {runs}  (median {r['exec_per_s']:,.0f}); MB/s (CPU): "
                  f"{'  '.join(f'{x / 1e6:,.2f}' for x in r['bytes_per_s_runs'])}  "
                  f"(median {r['bytes_per_s'] / 1e6:,.2f})"]
        if "long" in r:
            lr = r["long"]
            lines += [
                f"  long: exec/s (CPU): {'  '.join(f'{x:,.0f}' for x in lr['runs'])}  "
                f"(median {lr['exec_per_s']:,.0f}); MB/s (CPU): "
                f"{'  '.join(f'{x / 1e6:,.2f}' for x in lr['bytes_per_s_runs'])}  "
                f"(median {lr['bytes_per_s'] / 1e6:,.2f})",
                f"  long: peak RSS growth over the measured inputs (KiB): "
                f"{'  '.join(f'{x:+,}' for x in lr['peak_rss_growth_kib'])}",
                "  long: RSS after the warm-up, each quarter, the end (MiB): "
                + "  ".join("/".join(f"{x / 1024:,.0f}" for x in run) for run in lr["rss_kib"])
                + f"; entries added: {lr['primed_entries']} priming, "
                f"{lr['new_entries']} measured"]
        if "instructions_per_input" in r:
            lines.append(f"  instructions per input (callgrind): "
                         f"{r['instructions_per_input']:,.0f}")
    lines += [result["callgrind"]] if "callgrind" in result else []
    if "ratios" in result:
        ratios = "  ".join(f"{x:.3f}" for x in result["ratios"])
        lines.append(f"current/baseline exec/s per pair: {ratios}  "
                     f"(median {statistics.median(result['ratios']):.3f})")
    if result.get("long_ratios"):
        ratios = "  ".join(f"{x:.3f}" for x in result["long_ratios"])
        lines.append(f"current/baseline long exec/s per pair: {ratios}  "
                     f"(median {statistics.median(result['long_ratios']):.3f})")
    if "instructions_ratio" in result:
        lines.append(f"current/baseline instructions per input: "
                     f"{result['instructions_ratio']:.3f}")
    if "part_settings" in result:
        ps, names = result["part_settings"], list(result["parts"])
        said = [f"issue 27's parts: {', '.join(names)}; {ps['part_runs']} timed runs per tree "
                "(after a priming one where the part can meet new signatures)"]
        if {"all-decoders", "plugin"} & set(names):
            said.append("(a) and (c) on the short stream above")
        if "hypothesis" in names:
            said.append(f"(b) {ps['hypothesis_inputs']:,} Hypothesis inputs from seed "
                        f"{s['seed']} (short only)")
        if "structured_stream" in result:
            said.append(f"{ps['structured_inputs']:,} structured buffers (sha256 "
                        f"{result['structured_stream']['sha256']})")
        if "plugin" in names:
            said.append(f"(c) {ps['plugin']}")
        if "planted" in names:
            said.append(f"(d) {len(ps['planted'])} planted decoders, {ps['planted_runs']:,} "
                        f"inputs, seeds 1-{ps['planted_seeds']}, from no seeds")
        said.append("wall clock of each part (every tree): " + ", ".join(
            f"{k} {v:,.0f} s" for k, v in result.get("part_seconds", {}).items()))
        lines.append("; ".join(said))
    if "summary" in result:
        lines += format_table(result["summary"], "baseline" in result["trees"])
    if "seconds" in result:
        lines.append(f"(the whole run: {result['seconds']:,.0f} s of wall clock)")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the fuzz loop (--loop; see docs/performance.md)")
    g.add_argument("--inputs", type=int, default=5000, help="measured inputs (default 5000)")
    g.add_argument("--warmup", type=int, default=2000, help="inputs before them (default 2000)")
    g.add_argument("--seed", type=int, default=1, help="the stream's seed (default 1)")
    g.add_argument("--runs", type=int, default=5, help="timed runs per tree (default 5)")
    g.add_argument("--long-inputs", type=int, default=None,
                   help="measured inputs of the long stream (default: 3 per 50 of --inputs, "
                   "300; 0: none)")
    g.add_argument("--long-warmup", type=int, default=None,
                   help="long inputs before them (default: a 20th of --warmup, 100)")
    g.add_argument("--callgrind", action="store_true",
                   help="also instructions per input (the short stream)")
    g.add_argument("--tree", metavar="SRC", help="the tree to measure (default: this one)")
    g.add_argument("--compare", metavar="SRC", help="another tree, in interleaved pairs")
    g.add_argument("--parts", metavar="LIST", default="none",
                   help="issue 27's figures besides the short and long streams, comma-"
                   f"separated ({','.join(PARTS[2:])}), or all (make bench-loop's), or "
                   "none (the default)")
    g.add_argument("--part-runs", type=int, default=3,
                   help="timed runs per tree of each part (default 3)")
    g.add_argument("--hypothesis-inputs", type=int, default=3000,
                   help="inputs the Hypothesis engine draws per run (default 3000)")
    g.add_argument("--structured-inputs", type=int, default=2000,
                   help="structured buffers per run (default 2000)")
    g.add_argument("--planted-runs", type=int, default=4000,
                   help="inputs per run of the planted bugs' part (default 4000)")
    g.add_argument("--planted-seeds", type=int, default=3,
                   help="runs (seeds 1..N) per engine and tree of that part (default 3)")
    g.add_argument("--baseline-env", metavar="VAR=VALUE", action="append", default=None,
                   help="without --compare: the baseline is this tree with VAR=VALUE in its "
                        "environment (repeatable; UTF8FUZZ_CALL_EVERY=0: without the checks "
                        "of the call)")


def baseline_env(pairs: Sequence[str] | None) -> dict[str, str] | None:
    """``--baseline-env``'s ``VAR=VALUE`` pairs (ValueError on one without ``=``)."""
    if not pairs:
        return None
    out = {}
    for p in pairs:
        var, eq, value = p.partition("=")
        if not eq or not var:
            raise ValueError(f"--baseline-env {p!r}: expected VAR=VALUE")
        out[var] = value
    return out


def parts_of(text: str) -> tuple[str, ...]:
    """``--parts``: the names, in :data:`PARTS`'s order; ``all``: every one of
    issue 27's; ``none``: none."""
    names = {x.strip() for x in text.split(",") if x.strip()} - {"none"}
    if "all" in names:
        names = (names - {"all"}) | set(PARTS[2:])
    if bad := sorted(names - set(PARTS[2:])):
        raise ValueError(f"--parts: unknown part {', '.join(bad)}; parts are "
                         f"{', '.join(PARTS[2:])}")
    if "planted" in names and not (SRC.parent / "tests" / "engine" / "planted.py").is_file():
        raise ValueError("--parts planted: the planted bugs are the checkout's "
                         "tests/engine/planted.py, which an installed package does not have")
    return tuple(p for p in PARTS if p in names)


def bench_args(args: argparse.Namespace) -> dict[str, Any]:
    """:func:`bench`'s keywords from :func:`add_arguments`' options."""
    return {"inputs": args.inputs, "warmup": args.warmup, "seed": args.seed,
            "runs": args.runs, "tree": args.tree, "compare": args.compare,
            "callgrind": args.callgrind, "long_inputs": args.long_inputs,
            "long_warmup": args.long_warmup, "baseline_env": baseline_env(args.baseline_env),
            "parts": parts_of(args.parts), "part_runs": args.part_runs,
            "hypothesis_inputs": args.hypothesis_inputs,
            "structured_inputs": args.structured_inputs, "planted_runs": args.planted_runs,
            "planted_seeds": args.planted_seeds}


def run_args(args: argparse.Namespace) -> int:
    result = bench(**bench_args(args))
    print(json.dumps(result, indent=2) if args.json else format_text(result))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child-part"]:
        return child_part(argv[1], json.loads(argv[2]))
    if argv[:1] == ["--child"]:
        stream_file, corpus, warmup, limit = argv[1:5]
        stream = [bytes.fromhex(x) for x in Path(stream_file).read_text().splitlines()]
        r = run_loop(stream[: int(limit)], int(warmup), Path(corpus))
        print(MARK + json.dumps(r), flush=True)
        return 0
    p = argparse.ArgumentParser(prog="loop_bench", description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_arguments(p)
    return run_args(p.parse_args(argv))


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # without -P: this directory's modules must not shadow others
    sys.exit(main())
