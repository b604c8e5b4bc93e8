"""An in-process decoder that raises what is not an Exception, spins, or writes
into its input: ``diff`` and ``fuzz`` end honestly. Each probe is the real command,
as a user runs it, on a decoder of :mod:`.hostile_decoders` that misbehaves on
inputs holding FE: the failure is shown escaped, ``fuzz`` files one finding of the
right class and exits 1, nothing ends with a traceback, exit 0 unseen, or exit 3."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.hostile import SAID, SAID_ESCAPED, assert_no_raw, run
from tests.engine.fuzz_runs import ROOT, start_runs

HOSTILE = "tests.hostile.hostile_decoders"

#: decoder spec -> (status shown by diff, what its detail starts with)
DIFF_PROBES = {
    "exits_zero": ("crash", "SystemExit: 0"),
    "raises_base_exception": ("crash", "Hostile" + SAID[:-1]),
    "raises_unprintable": ("crash", "_Unprintable: <its message raised RuntimeError>"),
    "raises_keyboard_interrupt": ("crash", "KeyboardInterrupt"),
    "mutates": ("bad-outcome", "mutated-input: "),
    "spins+timeout=1": ("timeout", "no answer within 1 s"),
    "huge_text+text": ("bad-outcome", "oversized-output: "),
    "spans_outside+outcome": ("bad-outcome", "span-outside-input: "),
}


@pytest.mark.parametrize("probe", list(DIFF_PROBES))
def test_diff_shows_what_the_decoder_did(probe: str) -> None:
    head, _, opts = probe.partition("+")
    spec = f"{HOSTILE}:{head}+inprocess" + (f"+{opts}" if opts else "")
    status, detail = DIFF_PROBES[probe]
    p = run("diff", "--json", "--decoder", spec, "41fe42")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and not p.stderr.strip(), p.stderr
    got = json.loads(p.stdout)["decoders"]
    (mine,) = [v for k, v in got.items() if head in k]
    assert mine["status"] == status and mine["detail"].startswith(detail), mine
    shown = run("diff", "--decoder", spec, "41fe42")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert_no_raw(shown)
    if head == "raises_base_exception":
        assert SAID_ESCAPED in shown.stdout.replace("\n", "")


def _interrupt_when_spinning(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    marker = tmp_path / "spinning"
    p = subprocess.Popen(
        [sys.executable, "-m", "utf8fuzz", *args], cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOSTILE_SPINNING": str(marker)},
        # as a terminal's Ctrl-C reaches it (test_run_honesty says why)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the decoder never ran"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
        p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_a_real_ctrl_c_still_stops_diff_with_130(tmp_path: Path) -> None:
    p = _interrupt_when_spinning(
        tmp_path, "diff", "--decoder", f"{HOSTILE}:spins_after_saying+inprocess", "41fe42")
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr


#: fuzz run -> (decoder spec, class and feature of its one finding)
FUZZ_PROBES: dict[str, tuple[str, str, str]] = {
    "exits": ("exits_zero+inprocess", "crash", "SystemExit"),
    "unprintable": ("raises_unprintable+inprocess", "crash", "_Unprintable"),
    "base": ("raises_base_exception+inprocess", "crash", "Hostile-2J"),
    "huge": ("huge_text+text+inprocess", "bad-outcome", "oversized-output"),
    "spans": ("spans_outside+outcome+inprocess", "bad-outcome", "span-outside-input"),
    "mutates": ("mutates+inprocess", "bad-outcome", "mutated-input"),
    "spins": ("spins+inprocess+timeout=1", "timeout", "timeout"),
}


@pytest.fixture(scope="module")
def fuzz_runs(tmp_path_factory: Any) -> dict[str, tuple[int, Any, str, Path]]:
    return start_runs(tmp_path_factory,
                      {k: ([f"{HOSTILE}:{spec}"], 50) for k, (spec, _, _) in FUZZ_PROBES.items()},
                      {"fe": b"A\xfeB"})


@pytest.mark.parametrize("probe", list(FUZZ_PROBES))
def test_fuzz_files_one_finding_and_exits_1(fuzz_runs: dict[str, Any], probe: str) -> None:
    rc, summary, err, _ = fuzz_runs[probe]
    _, klass, feature = FUZZ_PROBES[probe]
    assert rc == 1, err
    assert "Traceback" not in err and not summary["failures"], err
    assert [(x["class"], x["feature"]) for x in summary["new"]] == [(klass, feature)]
    assert not summary["unreproduced"]
    (x,) = summary["new"]
    assert b"\xfe" in bytes.fromhex(x["input"])


def test_the_report_shows_a_bad_outcome_as_what_it_is(fuzz_runs: dict[str, Any],
                                                      tmp_path: Path) -> None:
    corpus = fuzz_runs["huge"][3]
    p = run("report", "--corpus", str(corpus), "--out", str(tmp_path))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert_no_raw(p)
    (day,) = tmp_path.iterdir()
    summary = json.loads((day / "summary.json").read_text())
    assert summary["by_class"] == {"bad-outcome": 1}
    md = (day / "report.md").read_text()
    assert "what it answered is not an outcome of this input" in md
    assert "oversized-output" in (day / "report.html").read_text()
    assert os.path.getsize(day / "report.html") < 2_000_000  # no 10 MB answer in it


@pytest.mark.parametrize("where", ["+inprocess", ""])
def test_a_plugin_that_exits_as_it_is_imported_is_one_line_and_exit_2(where: str) -> None:
    p = run("diff", "--decoder", f"tests.hostile.hostile_exits_at_import:decode{where}", "41")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1 and "SystemExit: 0" in p.stderr, p.stderr
