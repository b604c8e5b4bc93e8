"""Run pytest node ids again and again, each run fresh, and count the passes per test.

    python scripts/repeat_tests.py -n 50 --load 1 tests/loop/test_fuzz.py tests/x.py::test_y

Each run is a new pytest process of all the node ids given, with nothing carried over
from the last: its own ``--basetemp``, its own Hypothesis database directory, no
pytest cache (``-p no:cacheprovider``), and a PYTHONHASHSEED drawn afresh and
recorded, so a run that fails can be replayed with the hash order it had. Each
test's outcome is read from the run's JUnit XML. ``--load N`` keeps N CPU-bound
processes spinning while the runs go on (a loaded machine), and stops them at the
end. Prints one line per test (``passed/runs``), the seconds per run and, for every
failure, its run, hash seed and message; ``--json FILE`` writes the same as data.
Exit 1 if any test failed in any run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _spin() -> None:  # the load: killed from outside
    n = 0
    while True:
        n = (n * 1103515245 + 12345) & 0x7FFFFFFF


def run_once(nodes: list[str], hashseed: int,
             extra: list[str]) -> tuple[dict[str, tuple[str, str, float]], float, int, str]:
    """One fresh pytest run of ``nodes``: ({test id: (outcome, message, seconds)},
    seconds, exit status, the output's tail)."""
    with tempfile.TemporaryDirectory(prefix="repeat-") as tmp:
        env = {**os.environ, "PYTHONHASHSEED": str(hashseed),
               "HYPOTHESIS_STORAGE_DIRECTORY": str(Path(tmp) / "hypothesis")}
        xml = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--basetemp", str(Path(tmp) / "basetemp"), f"--junitxml={xml}", *extra, *nodes]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
        took = time.monotonic() - t0
        tests: dict[str, tuple[str, str, float]] = {}
        if xml.exists():
            for case in ET.parse(xml).iter("testcase"):
                name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
                outcome, message = "passed", ""
                for child in case:
                    if child.tag in ("failure", "error"):
                        outcome, message = "failed", (child.get("message") or "")[:500]
                    elif child.tag == "skipped":
                        outcome = "xfailed" if "xfail" in (child.get("type") or "") else "skipped"
                tests[name] = outcome, message, float(case.get("time") or 0)
    return tests, took, p.returncode, "\n".join(p.stdout.splitlines()[-30:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("nodes", nargs="+", help="pytest node ids (file or file::test)")
    ap.add_argument("-n", "--runs", type=int, default=50, help="fresh runs")
    ap.add_argument("--load", type=int, default=0, help="CPU-bound processes kept busy")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="start no run after this many seconds (the report says how many ran)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--pytest-arg", action="append", default=[], dest="extra",
                    help="passed to pytest (e.g. -n2 for xdist)")
    args = ap.parse_args(argv)

    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for s in spinners:
        s.start()
    # stopped (Ctrl-C, kill): the runs done so far are still counted and written
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    rng = random.SystemRandom()
    counts: dict[str, Counter[str]] = {}
    spent: dict[str, float] = {}
    failures: list[dict[str, object]] = []
    times: list[float] = []
    t_start = time.monotonic()
    try:
        for i in range(args.runs):
            if args.max_seconds is not None and time.monotonic() - t_start > args.max_seconds:
                break
            seed = rng.randrange(1, 2**32 - 1)
            tests, took, rc, tail = run_once(args.nodes, seed, args.extra)
            times.append(took)
            for name, (outcome, message, secs) in tests.items():
                counts.setdefault(name, Counter())[outcome] += 1
                spent[name] = spent.get(name, 0.0) + secs
                if outcome == "failed":
                    failures.append({"run": i + 1, "hashseed": seed, "test": name,
                                     "message": message})
                    print(f"  FAILED run {i + 1}: {name} (PYTHONHASHSEED={seed}): "
                          f"{message[:200]}", flush=True)
            if rc not in (0, 1) or (rc == 1 and not any(
                    o == "failed" for o, _, _ in tests.values())):
                failures.append({"run": i + 1, "hashseed": seed, "test": "(session)",
                                 "message": tail})
                print(f"  run {i + 1}: pytest exit {rc} (PYTHONHASHSEED={seed})\n{tail}",
                      flush=True)
            print(f"run {i + 1}: {took:.1f} s, exit {rc}", flush=True)
    except KeyboardInterrupt:
        print("stopped: the runs finished so far are counted", flush=True)
    finally:
        for s in spinners:
            s.terminate()
        for s in spinners:
            s.join()
    ran = len(times)
    mean = sum(times) / ran if ran else 0.0
    print(f"{ran} runs, {mean:.1f} s per run (max {max(times, default=0):.1f}), "
          f"load {args.load}, pytest args {args.extra}")
    for name, c in sorted(counts.items()):
        print(f"{name}: {c['passed']}/{sum(c.values())} passed"
              + "".join(f", {c[k]} {k}" for k in ("failed", "skipped", "xfailed") if c[k])
              + f" ({spent[name] / sum(c.values()):.1f} s)")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "runs": ran, "mean_seconds": round(mean, 2), "load": args.load,
            "pytest_args": args.extra, "nodes": args.nodes,
            "tests": {k: {**v, "mean_seconds": round(spent[k] / sum(v.values()), 2)}
                      for k, v in sorted(counts.items())},
            "failures": failures}, indent=1) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
