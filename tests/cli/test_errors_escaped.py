"""The CLI's own messages - the one-line error for bad input, argparse's complaint, an
unexpected exception's traceback - quote what the user typed or what a plug-in
raised, and show it escaped (utf8fuzz.safe.text), never raw."""

from __future__ import annotations

from pathlib import Path

from tests.cli.hostile import (
    HOSTILE,
    HOSTILE_ESCAPED,
    SAID,
    SAID_ESCAPED,
    assert_no_raw,
    run,
    write_plugin,
)


def test_missing_file_name_is_escaped_in_the_one_line_error(tmp_path: Path) -> None:
    # utf8fuzz diff --file $'/tmp/.../\e[2J\u202e'
    p = run("diff", "--file", str(tmp_path / HOSTILE))
    assert p.returncode == 2
    assert_no_raw(p)
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("utf8fuzz diff: No such file or directory: ")
    assert p.stderr.rstrip().endswith(HOSTILE_ESCAPED)


def test_argparse_error_is_one_escaped_line() -> None:
    # argparse echoes unrecognized arguments verbatim
    p = run("diff", "41", HOSTILE)
    assert p.returncode == 2
    assert_no_raw(p)
    assert p.stderr == (f"utf8fuzz diff: unrecognized arguments: {HOSTILE_ESCAPED} "
                        "(see utf8fuzz diff --help)\n")


def test_unexpected_exception_traceback_is_escaped(tmp_path: Path) -> None:
    # A plug-in whose versions() raises escapes every net the CLI has for usage
    # errors: the traceback must still come out escaped, and the status say "bug".
    write_plugin(tmp_path, "badversions", f"""
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome


class BadVersions(Decoder):
    name = "badversions"

    def run(self, data):
        return Outcome.partial(len(data), strict=None)

    def versions(self):
        raise RuntimeError({SAID!r})
""")
    p = run("diff", "41", "--decoder", "badversions:BadVersions", cwd=tmp_path)
    assert p.returncode == 3, p.stderr
    assert_no_raw(p)
    assert p.stderr.startswith("Traceback (most recent call last):\n")
    assert f"RuntimeError: {SAID_ESCAPED}\n" in p.stderr
    assert p.stderr.endswith("utf8fuzz diff: unexpected error (traceback above)\n")
