"""The finding ids triage gives the planted set (tests/triage/planted), one JSON line
per decoder and shape, for comparing machines and loads (issue 25: the same input
gives the same finding id on any machine, under any load).

    .venv/bin/python scripts/triage_ids.py > idle.jsonl
    .venv/bin/python scripts/triage_ids.py --load 2 > loaded.jsonl   # both cores busy
    diff idle.jsonl loaded.jsonl                                     # nothing

Each line is ``{"spec": ..., "findings": {id: [rule, signatures]}}``: what the engine
saves for that spec on the fixed inputs of tests/triage/planted/inprocess.py
(in-process, through the Finder both engines feed). ``--load N`` keeps N CPU-bound
processes spinning meanwhile and stops them at the end.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.triage.planted import PLANTED  # noqa: E402
from tests.triage.planted.inprocess import findings  # noqa: E402


def _spin() -> None:  # the load: terminated from outside
    n = 0
    while True:
        n = (n * 1103515245 + 12345) & 0x7FFFFFFF


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--load", type=int, default=0, help="CPU-bound processes kept busy")
    ap.add_argument("--only", default="", help="planted decoders whose name contains this")
    args = ap.parse_args(argv)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for s in spinners:
        s.start()
    try:
        for p in PLANTED:
            if args.only not in p.attr:
                continue
            for shape in p.shapes:
                spec = p.spec(shape)
                got = {k: list(v) for k, v in sorted(findings(spec).items())}
                print(json.dumps({"spec": spec, "findings": got}, sort_keys=True), flush=True)
    finally:
        for s in spinners:
            s.terminate()
        for s in spinners:
            s.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
