"""Not a test: what the tests of escaped output share. The hostile strings, the CLI
run as a user runs it, and the check that nothing unprintable reached the terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

#: ESC [ 2 J clears a terminal; U+202E (RIGHT-TO-LEFT OVERRIDE) reverses what follows.
#: For names: argv and file names cannot hold NUL.
HOSTILE = "\x1b[2J\u202e"
#: What a plug-in says (an exception message, a version): NUL too.
SAID = HOSTILE + "\x00"
#: How :func:`utf8fuzz.safe.text` shows them.
HOSTILE_ESCAPED = "\\x1b[2J\\u202e"
SAID_ESCAPED = HOSTILE_ESCAPED + "\\x00"

# C0 controls but newline, DEL, C1 controls, the bidi controls, and lone surrogates
# (undecodable output bytes, under surrogateescape).
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
                 "\ud800-\udfff]")


def run(*args: str, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``utf8fuzz ARGS`` in a subprocess; rich told not to colour (its own escapes
    would look like leaks) and given room, so that it does not fold an escape."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    environ.update(COLUMNS="400", **(env or {}))
    return subprocess.run([sys.executable, "-m", "utf8fuzz", *args], capture_output=True,
                          encoding="utf-8", errors="surrogateescape", timeout=300, cwd=cwd,
                          env=environ, check=False)


def assert_no_raw(p: subprocess.CompletedProcess[str]) -> None:
    for stream, out in (("stdout", p.stdout), ("stderr", p.stderr)):
        m = RAW.search(out)
        assert m is None, f"raw {m.group()!r} on {stream}: {out[max(0, m.start() - 80):][:200]!r}"


def write_plugin(where: Path, module: str, source: str) -> None:
    (where / f"{module}.py").write_text(source, encoding="utf-8")
