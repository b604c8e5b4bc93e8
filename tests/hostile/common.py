"""Not a test: what tests/hostile/test_exec_*.py and test_processes_*.py share."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

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
