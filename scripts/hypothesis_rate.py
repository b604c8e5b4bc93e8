"""The Hypothesis engine's inputs per CPU-second on the in-process decoder set, in
this tree and others, in interleaved runs (issue 27, item 2; docs/performance.md).

Each run is a fresh process with ``PYTHONPATH`` the tree under test: its
``hypothesis_worker`` (wherever the tree keeps it) draws ``--runs`` inputs from
``--seed`` into a Finder holding every decoder ``atheris_target.select`` chooses less
the out-of-process ones (as the loop benchmark does), on a temporary copy of
``corpus/entries`` primed by one run first (so the measured runs, as a nightly run on
a settled corpus, meet only known signatures). The figure is the finder's executions
(inputs compared) per CPU-second of the process, the worker's own set-up included.

    .venv/bin/python scripts/hypothesis_rate.py --tree src --tree /tmp/base/src --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
from pathlib import Path
corpus, runs, seed, long_share = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
import os
os.environ["UTF8FUZZ_LONG_SHARE"] = long_share
try:
    from utf8fuzz.loop.hypothesis_worker import hypothesis_worker
except ImportError:
    from utf8fuzz.engine.run import hypothesis_worker
try:
    from utf8fuzz.loop.atheris_target import select
except ImportError:
    from utf8fuzz.engine.atheris_target import select
decs = [d for d in select(None, None) if not getattr(d, "out_of_process", False)]
import inspect
# no seeds replayed: the drawn inputs alone (an older worker replayed them by default)
params = inspect.signature(hypothesis_worker).parameters
kw = {"replay_seeds": False} if "replay_seeds" in params else {}
t0 = time.process_time()
f = hypothesis_worker(decs, corpus, time.monotonic() + 3600, lambda *a: None, 5.0,
                      runs=runs, seed=seed, **kw)
cpu = time.process_time() - t0
print(json.dumps({"executions": f.executions, "cpu": cpu, "found": len(f.found),
                  "decoders": len(decs)}))
"""


def one(tree: Path, corpus: Path, runs: int, seed: int, share: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    p = subprocess.run([sys.executable, "-c", CHILD, str(corpus), str(runs), str(seed), share],
                       capture_output=True, text=True, env=env, check=True)
    out: dict[str, float] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="a src/ directory")
    ap.add_argument("--inputs", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--long-share", default="0.25", help="$UTF8FUZZ_LONG_SHARE (0: short only)")
    args = ap.parse_args()
    trees = [Path(t).resolve() for t in args.tree]
    with tempfile.TemporaryDirectory(prefix="hyprate-") as tmp:
        corpora = []
        for i, tree in enumerate(trees):
            c = Path(tmp) / f"corpus{i}"
            shutil.copytree(ROOT / "corpus" / "entries", c / "entries")
            shutil.copytree(ROOT / "corpus" / "inputs", c / "inputs")
            prime = one(tree, c, args.inputs, args.seed, args.long_share)
            print(f"{tree}: primed, {prime['found']} entries added", flush=True)
            corpora.append(c)
        rates: dict[Path, list[float]] = {t: [] for t in trees}
        for r in range(args.runs):
            order = list(zip(trees, corpora, strict=True))
            if r % 2:
                order.reverse()
            for tree, c in order:
                x = one(tree, c, args.inputs, args.seed, args.long_share)
                rate = x["executions"] / x["cpu"]
                rates[tree].append(rate)
                print(f"{tree}: {x['executions']:.0f} inputs, {x['cpu']:.2f} CPU s, "
                      f"{rate:,.0f}/s, {x['found']:.0f} added, {x['decoders']:.0f} decoders",
                      flush=True)
        for tree in trees:
            print(f"{tree}: median {statistics.median(rates[tree]):,.0f} inputs/s "
                  f"({', '.join(f'{x:,.0f}' for x in rates[tree])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
