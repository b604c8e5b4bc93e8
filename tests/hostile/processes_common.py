"""Not a test: what tests/hostile/test_exec_*.py and test_processes_*.py share: the
hostile client's spec, the seeds, and the short fuzz runs, all started at once."""

from __future__ import annotations

import os
import shlex
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.engine.fuzz_runs import start_runs

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("exec_client.py")
#: Seeds the loop replays first (in name order, in one bulk batch of
#: ``finder.BULK``), so every run meets the trigger byte FE: 100 plain inputs, then
#: 30 holding FE. A harness that paid a timeout for each input of a batch after a
#: hang (or before it, for a client that holds its replies back) would spend the
#: whole run on this one batch.
SEEDS = {**{f"plain-{i:03}": b"plain %d" % i for i in range(100)},
         **{f"z-trigger-{i:02}": b"ab\xfe%d" % i for i in range(30)}}


def client(*args: str, options: str = "") -> str:
    """The ``exec:`` spec of tests/hostile/exec_client.py with ``args``."""
    return "exec:" + shlex.join([sys.executable, str(CLIENT), *args]) + options


def alive_with(marker: str) -> list[int]:
    """The processes (not zombies) whose argv holds ``marker``."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[stat.rindex(b")") + 2 :][:1] != b"Z":
            pids.append(int(name))
    return pids


#: Long enough for a plain reply on a busy machine; each hang costs one or two.
TIMEOUT = "+timeout=1"
#: Marks the descendants of the client of the "leak" run (tests/hostile/exec_client.py).
LEAK_MARKER = f"utf8fuzz-leak-{uuid.uuid4().hex}"
#: The short ``utf8fuzz fuzz`` runs the probes check, all started at once (a
#: subprocess each): name -> (--decoder specs, --runs: inputs past the seeds).
RUNS: dict[str, tuple[list[str], int]] = {
    "hang": ([client("--do=hang", options=TIMEOUT)], 20),
    # replies held back until every request the pipe holds is decoded: a hang
    # hides which request caused it
    "batched": ([client("--do=hang", "--batched", options=TIMEOUT)], 20),
    "deaf": ([client("--deaf", options=TIMEOUT)], 20),
    "many": ([client("--do=many")], 20),
    "spins": ([f"tests.hostile.worker_plugins:spins{TIMEOUT}"], 20),
    # exits on FE (a restart each time), its child and grandchild left behind
    "leak": ([client("--do=exit", f"--leak={LEAK_MARKER}", options=TIMEOUT)], 20),
}
_done: dict[str, tuple[int, Any, str, Path]] = {}


def fuzz_runs(tmp_path_factory: Any) -> dict[str, tuple[int, Any, str, Path]]:
    """The :data:`RUNS`, run once per session on :data:`SEEDS`: name -> (exit status,
    the --json summary, stderr, corpus)."""
    if not _done:
        with pytest.MonkeyPatch.context() as mp:
            # each run's own decoder timeout is TIMEOUT; this one only sets how long
            # after its --time (a limit, past its --runs) a run is stopped: long, on a
            # machine others load too
            mp.setenv("UTF8FUZZ_DECODER_TIMEOUT", "20")
            _done.update(start_runs(tmp_path_factory, RUNS, SEEDS))
    return _done
