"""Temporary files of writers killed mid-write are removed: by ``corpus check`` and
by a process's first ``save``, once their writer is gone and they are older than
``STALE_TEMP_SECONDS``; any other temporary file is left alone (docs/corpus.md,
"Leftovers")."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.engine import handmade
from utf8fuzz.engine import corpus


def no_such_pid() -> int:
    # Above the kernel's largest pid: no process has it, now or later.
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def leftover(directory: Path, name: str, pid: int, age: float) -> Path:
    """What ``atomic_write`` leaves when its process dies between write and rename."""
    directory.mkdir(parents=True, exist_ok=True)
    p = directory / f".{name}.{pid}.0.tmp"
    p.write_bytes(b'{"half')
    t = time.time() - age
    os.utime(p, (t, t))
    return p


OLD = corpus.STALE_TEMP_SECONDS * 6


def test_check_removes_the_leftovers_of_dead_writers_only(tmp_path: Path) -> None:
    handmade.save(tmp_path, "A", b"\xc0\x80")
    dead = [leftover(tmp_path / "entries", "0123456789abcdef.json", no_such_pid(), OLD),
            leftover(tmp_path / "inputs", "0123456789abcdef.bin", no_such_pid(), OLD),
            leftover(tmp_path, "fingerprints.json", no_such_pid(), OLD)]
    live = leftover(tmp_path / "entries", "fedcba9876543210.json", os.getpid(), OLD)
    young = leftover(tmp_path / "inputs", "fedcba9876543210.bin", no_such_pid(), 1)
    entries, problems, notes = corpus.check(tmp_path)
    assert len(entries) == 1 and not problems
    assert not any(p.exists() for p in dead)
    assert live.exists() and young.exists()  # a write may be in progress
    said = {n.path: n.message for n in notes}
    assert all(said[p].startswith("removed") for p in dead)
    assert "in progress" in said[live] and "in progress" in said[young]


def test_the_first_save_of_a_process_removes_them_too(tmp_path: Path) -> None:
    dead = leftover(tmp_path / "entries", "0123456789abcdef.json", no_such_pid(), OLD)
    handmade.save(tmp_path, "B", b"\xc0\x80")
    assert not dead.exists()
