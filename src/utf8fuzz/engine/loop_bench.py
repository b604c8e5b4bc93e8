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
Every run is a fresh process (``PYTHONPATH`` the tree, ``PYTHONHASHSEED=0``); this file
runs standalone against any tree, one without it included::

    python -P src/utf8fuzz/engine/loop_bench.py --compare /work/base/src --callgrind

See docs/performance.md, "How to measure".
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
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
    """``corpus/seeds`` (by name, each cut to 64 bytes) and the ``fuzz/utf8.dict`` tokens."""
    seeds = [p.read_bytes()[:MAX_LEN] for p in sorted((root / "corpus" / "seeds").iterdir())
             if p.is_file()]
    tokens = [line.split("=", 1)[1].strip()[1:-1].encode("latin-1").decode("unicode_escape")
              .encode("latin-1")
              for line in (root / "fuzz" / "utf8.dict").read_text("ascii").splitlines()
              if "=" in line and not line.startswith("#")]
    return seeds, tokens


def make_stream(count: int, seed: int, root: Path | None = None) -> list[bytes]:
    """``count`` inputs, each from a seed file (or, half the time, an earlier input) and
    1-4 mutations: ``utf8_mutate`` (the custom mutator) or, standing in for libFuzzer's,
    a dict token inserted or written over, a byte set, bytes erased. Same ``seed``,
    seeds, dict and mutator: the same bytes."""
    from utf8fuzz.engine.mutator import SplitMix64, utf8_mutate

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


def digest(stream: Sequence[bytes]) -> str:
    return hashlib.sha256(b"".join(bytes([len(x)]) + x for x in stream)).hexdigest()[:16]


def _cpu() -> str:
    info = Path("/proc/cpuinfo")
    lines = info.read_text().splitlines() if info.exists() else []
    return next((x.split(":", 1)[1].strip() for x in lines if x.startswith("model name")), "?")


def _entries(corpus: Path | None) -> int:
    return len(list((corpus / "entries").glob("*.json"))) if corpus else 0


def run_loop(stream: Sequence[bytes], warmup: int, corpus: Path | None, *,
             full_every: int = 8, minimize_seconds: float = 1.0) -> dict[str, Any]:
    """Feed ``stream`` to ``Finder.queue`` in this process; time all but ``warmup``."""
    import utf8fuzz
    from utf8fuzz.engine.atheris_target import select
    from utf8fuzz.engine.finder import Finder

    decs = [d for d in select(None, None)  # "batched" was renamed "out_of_process"
            if not (getattr(d, "batched", False) or getattr(d, "out_of_process", False))]
    before = _entries(corpus)
    finder = Finder(decs, corpus, "atheris", minimize_seconds=minimize_seconds,
                    full_every=full_every)
    queue, done = finder.queue, 0

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
    gc.freeze()  # as the Atheris target does before atheris.Fuzz()
    gc.disable()
    try:
        feed(stream[:warmup])
        t0 = time.process_time()
        feed(stream[warmup:])
        cpu = time.process_time() - t0
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
    from utf8fuzz import fast

    n = len(stream) - warmup
    return {"tree": str(Path(utf8fuzz.__file__).resolve().parents[1]), "inputs": n,
            "warmup": warmup, "decoders": sum(not d.name.startswith("ref:") for d in decs),
            "references": sum(d.name.startswith("ref:") for d in decs), "cpu_s": cpu,
            "exec_per_s": n / cpu if cpu > 0 else 0.0, "new_entries": _entries(corpus) - before,
            "fast_path": str(fast.info()["selected"])}


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


def bench(*, inputs: int = 5000, warmup: int = 2000, seed: int = 1, runs: int = 5,
          tree: str | Path | None = None, compare: str | Path | None = None,
          callgrind: bool = False, root: Path | None = None) -> dict[str, Any]:
    """The whole benchmark, each tree in its own processes; a JSON-able dict."""
    if inputs < 1 or warmup < 0 or runs < 1:
        raise ValueError("--inputs and --runs must be at least 1, --warmup at least 0")
    root = root or SRC.parent
    stream = make_stream(warmup + inputs, seed, root)
    trees = {"current": _tree(tree or SRC)}
    if compare:
        trees["baseline"] = _tree(compare)
    if bad := [str(t) for t in trees.values() if not (t / "utf8fuzz").is_dir()]:
        raise ValueError(f"no utf8fuzz package in {', '.join(bad)} (give a tree's src)")
    out: dict[str, Any] = {"stream": {"seed": seed, "inputs": inputs, "warmup": warmup,
                                      "max_len": MAX_LEN, "sha256": digest(stream)},
                           "machine": f"{_cpu()}, {os.cpu_count()} cores, Python "
                                      f"{sys.version.split()[0]}"}
    tmp = Path(tempfile.mkdtemp(prefix="utf8fuzz-loop-bench-"))
    try:
        (tmp / "stream.hex").write_text("".join(x.hex() + "\n" for x in stream))
        files, results = {k: (tmp / "stream.hex", tmp / k) for k in trees}, {}
        for label, t in trees.items():
            if (root / "corpus" / "entries").is_dir():
                shutil.copytree(root / "corpus" / "entries", tmp / label / "entries")
            r = _child(t, files[label], len(stream), len(stream))  # priming
            results[label] = {k: r[k] for k in ("tree", "decoders", "references", "fast_path")}
            results[label].update(primed_entries=r["new_entries"], new_entries=0, runs=[])
        for i in range(runs):  # interleaved, the order swapped every pair
            for label in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
                r = _child(trees[label], files[label], warmup, len(stream))
                results[label]["runs"].append(r["exec_per_s"])
                results[label]["new_entries"] += r["new_entries"]
        for label, r in results.items():
            r["exec_per_s"] = statistics.median(r["runs"])
            if callgrind and shutil.which("valgrind"):
                r["instructions_per_input"] = _callgrind(trees[label], files[label], warmup,
                                                         len(stream))
        if callgrind and not shutil.which("valgrind"):
            out["callgrind"] = "valgrind is not installed: no instruction counts"
        out["trees"] = results
        if compare:
            cur, base = results["current"], results["baseline"]
            out["ratios"] = [a / b for a, b in zip(cur["runs"], base["runs"], strict=True)]
            if "instructions_per_input" in cur:
                out["instructions_ratio"] = (cur["instructions_per_input"]
                                             / base["instructions_per_input"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def format_text(result: dict[str, Any]) -> str:
    s = result["stream"]
    lines = [f"fuzz loop (Finder.queue), stream seed {s['seed']}: {s['inputs']:,} inputs after "
             f"{s['warmup']:,} to warm up, <= {s['max_len']} bytes, sha256 {s['sha256']}",
             result["machine"]]
    for label, r in result["trees"].items():
        runs = "  ".join(f"{x:,.0f}" for x in r["runs"])
        lines += [f"{label}: {r['tree']}",
                  f"  {r['decoders']} decoders + {r['references']} references, fast path "
                  f"{r['fast_path']}; entries added: {r['primed_entries']} priming, "
                  f"{r['new_entries']} measured",
                  f"  exec/s (CPU): {runs}  (median {r['exec_per_s']:,.0f})"]
        if "instructions_per_input" in r:
            lines.append(f"  instructions per input (callgrind): "
                         f"{r['instructions_per_input']:,.0f}")
    lines += [result["callgrind"]] if "callgrind" in result else []
    if "ratios" in result:
        ratios = "  ".join(f"{x:.3f}" for x in result["ratios"])
        lines.append(f"current/baseline exec/s per pair: {ratios}  "
                     f"(median {statistics.median(result['ratios']):.3f})")
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
    g.add_argument("--callgrind", action="store_true", help="also instructions per input")
    g.add_argument("--tree", metavar="SRC", help="the tree to measure (default: this one)")
    g.add_argument("--compare", metavar="SRC", help="another tree, in interleaved pairs")


def run_args(args: argparse.Namespace) -> int:
    result = bench(inputs=args.inputs, warmup=args.warmup, seed=args.seed, runs=args.runs,
                   tree=args.tree, compare=args.compare, callgrind=args.callgrind)
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
