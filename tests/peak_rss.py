"""Not a test: the peak RSS of a command, measured so that it is the command's own.

Linux keeps a process's peak RSS across ``execve`` and takes it, at exec, from the
memory it had before: a child started by pytest (forked or vforked from a process
of a few hundred MB, late in a suite) reports pytest's peak, not its own. So the
command is started by a small interpreter, which forks it from its own small
memory and reads its peak with ``os.wait4``.
"""

from __future__ import annotations

import sys
from pathlib import Path

_SPAWN = """
import os, sys
out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def measured(argv: list[str], peak_file: Path) -> list[str]:
    """``argv`` run so that its peak RSS, in KiB, is written to ``peak_file`` when it
    ends (its exit status passed on; a signal ``N`` as ``128 + N``)."""
    return [sys.executable, "-c", _SPAWN, str(peak_file), *argv]


def peak_kib(peak_file: Path) -> int:
    return int(peak_file.read_text())
