"""Every command, as a user first meets it: its --help, and one bad input that names
something hostile. Nothing unprintable comes out; bad input is one escaped line on
stderr and exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.hostile import HOSTILE, HOSTILE_ESCAPED, assert_no_raw, run
from utf8fuzz.cli import COMMANDS

NAMES = [name for name, _ in COMMANDS]


@pytest.mark.parametrize("command", NAMES)
def test_help(command: str) -> None:
    p = run(command, "--help")
    assert p.returncode == 0, p.stderr
    assert_no_raw(p)
    assert p.stdout.startswith(f"usage: utf8fuzz {command}") and p.stderr == ""


def bad_inputs(tmp: Path) -> dict[str, list[str]]:
    """One bad input per command; ``tmp/HOSTILE`` does not exist, ``tmp/file`` is a file."""
    missing, under_file = str(tmp / HOSTILE), str(tmp / "file" / HOSTILE)
    return {
        "diff": ["--file", missing],
        "expect": ["41", "--policy", HOSTILE],
        "decoders": [HOSTILE],
        "fuzz": ["--decoder", "cpython:strict", "--corpus", under_file, "--time", "1",
                 "--no-report"],
        "corpus": ["check", missing],
        "report": ["--corpus", missing],
        "bench": ["--loop", "--tree", missing, "--inputs", "1", "--warmup", "0"],
        "document": ["--file", missing],
        "convert": ["--to", "utf8", missing, str(tmp / "out")],
        "peers": ["build", HOSTILE],
        "init": ["--decoder", "cpython:strict", "--dir", missing],
    }


def test_every_command_has_a_bad_input_here(tmp_path: Path) -> None:
    assert sorted(bad_inputs(tmp_path)) == sorted(NAMES)


@pytest.mark.parametrize("command", NAMES)
def test_bad_input_is_one_escaped_line(command: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    p = run(command, *bad_inputs(tmp_path)[command])
    assert p.returncode == 2, p.stderr
    assert_no_raw(p)
    assert p.stdout == ""
    assert p.stderr.startswith(f"utf8fuzz {command}: ") and p.stderr.count("\n") == 1, p.stderr
    assert HOSTILE_ESCAPED in p.stderr


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    """``utf8fuzz expect ... | head -c 1``: the pipe closes under the command, which
    exits as a command killed by SIGPIPE would (141), saying nothing on stderr."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "utf8fuzz", "expect", "--json", "80" * 20000],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.read(1)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) == 141
    assert err == b""
