"""Not a test: short `utf8fuzz fuzz` runs as a user starts them (a subprocess each,
started together, each on its own corpus with seeds), for module fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


#: Every run's seed: a run draws the same inputs on every machine, under any load.
SEED = 1
#: Every run's --time: a limit only (a run ends at its --runs long before, unless
#: the machine is starved), within the wait below.
LIMIT = 600


def start_runs(tmp_path_factory: Any, runs: Mapping[str, tuple[Sequence[str], int]],
               seeds: Mapping[str, bytes]) -> dict[str, tuple[int, Any, str, Path]]:
    """Each run ``name -> (--decoder specs, --runs count)`` on a fresh corpus holding
    ``seeds`` (file name -> bytes), all at once, with :data:`SEED`; ``name -> (exit
    status, the --json summary or None, stderr, corpus)``. Each run's summary says it
    ended at its count, or failed (``ended``), never at the clock."""
    exe = Path(sys.executable).parent / "utf8fuzz"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "utf8fuzz"]
    started = {}
    for name, (specs, count) in runs.items():
        corpus = tmp_path_factory.mktemp(name)
        (corpus / "seeds").mkdir()
        for seed, data in seeds.items():
            (corpus / "seeds" / seed).write_bytes(data)
        args = [*cmd, "fuzz", "--engine", "hypothesis", "--jobs", "1", "--runs", str(count),
                "--seed", str(SEED), "--time", str(LIMIT), "--corpus", str(corpus),
                "--no-report", "--json"]
        for s in specs:
            args += ["--decoder", s]
        started[name] = (corpus, subprocess.Popen(
            args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}))
    done = {}
    for name, (corpus, p) in started.items():
        out, err = p.communicate(timeout=LIMIT + 300)
        summary = json.loads(out) if out.strip() else None
        assert summary is None or summary["ended"] != "time", (name, summary, err)
        done[name] = (p.returncode, summary, err, corpus)
    return done
