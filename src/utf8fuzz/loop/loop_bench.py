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
           prefix: Sequence[str] = ()) -> dict[str, Any]:
    """One run in a fresh process on ``tree``: ``files`` is (stream, corpus)."""
    cmd = [*prefix, sys.executable, "-P", str(Path(__file__).resolve()), "--child",
           *map(str, files), str(warmup), str(limit)]
    p = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0"),
                       capture_output=True, text=True, check=False)
    lines = [x for x in p.stdout.splitlines() if x.startswith(MARK)]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"the loop failed in {tree} (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return dict(json.loads(lines[-1][len(MARK):]))


def _callgrind(tree: Path, files: tuple[Path, Path], warmup: int, total: int) -> float:
    """Instructions per input: callgrind's totals with and without the inputs, subtracted."""
    def ir(limit: int) -> int:
        out = files[1].with_name(f"{files[1].name}.callgrind.{limit}")
        _child(tree, files, warmup, limit, ["valgrind", "--tool=callgrind",
                                            f"--callgrind-out-file={out}"])
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
          long_warmup: int | None = None) -> dict[str, Any]:
    """The whole benchmark, each tree in its own processes; a JSON-able dict. The long
    stream's sizes default to 3 inputs per 50 of the short stream's and a 20th of its
    warm-up (300 after 100 for the defaults), so that a short run stays short."""
    if long_inputs is None:
        long_inputs = max(1, inputs * 3 // 50)
    if long_warmup is None:
        long_warmup = warmup // 20
    if inputs < 1 or warmup < 0 or runs < 1 or long_inputs < 0 or long_warmup < 0:
        raise ValueError("--inputs and --runs must be at least 1, --warmup, --long-inputs "
                         "and --long-warmup at least 0")
    root = root or SRC.parent
    stream = make_stream(warmup + inputs, seed, root)
    longs = make_long_stream(long_warmup + long_inputs, seed) if long_inputs else []
    trees = {"current": _tree(tree or SRC)}
    if compare:
        trees["baseline"] = _tree(compare)
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
            r = _child(t, files[label], len(stream), len(stream))  # priming
            results[label] = {k: r[k] for k in ("tree", "decoders", "references", "fast_path")}
            results[label].update(primed_entries=r["new_entries"], new_entries=0, runs=[],
                                  bytes_per_s_runs=[])
            if longs:
                r = _child(t, lfiles[label], len(longs), len(longs))  # priming, long
                results[label]["long"] = {
                    "primed_entries": r["new_entries"], "new_entries": 0, "runs": [],
                    "bytes_per_s_runs": [], "peak_rss_growth_kib": [], "rss_kib": []}
        for i in range(runs):  # interleaved, the order swapped every pair
            for label in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
                r = _child(trees[label], files[label], warmup, len(stream))
                results[label]["runs"].append(r["exec_per_s"])
                results[label]["bytes_per_s_runs"].append(
                    r["bytes"] / r["cpu_s"] if r.get("cpu_s") else 0.0)
                results[label]["new_entries"] += r["new_entries"]
                if longs:
                    r = _child(trees[label], lfiles[label], long_warmup, len(longs))
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
                                                         len(stream))
        if callgrind and not shutil.which("valgrind"):
            out["callgrind"] = "valgrind is not installed: no instruction counts"
        out["trees"] = results
        if compare:
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


def run_args(args: argparse.Namespace) -> int:
    result = bench(inputs=args.inputs, warmup=args.warmup, seed=args.seed, runs=args.runs,
                   tree=args.tree, compare=args.compare, callgrind=args.callgrind,
                   long_inputs=args.long_inputs, long_warmup=args.long_warmup)
    print(json.dumps(result, indent=2) if args.json else format_text(result))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
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
