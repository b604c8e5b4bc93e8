"""Every corpus reader validates what it reads and names a bad file in one line;
the run goes on without it (issue 24; docs/corpus.md "Limits on what is read").

A finding's fields (``severity``, ``rule``, ``id``, counts), an outcome's status and
how deeply a sidecar nests are checked where a sidecar is read
(:func:`utf8fuzz.engine.corpus.read_sidecar`), so ``report``, ``fuzz`` and ``corpus
check`` agree; ``known.toml`` nested past what ``tomllib`` can parse is one line and
exit 2, as any unusable ``known.toml`` is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine import handmade
from tests.test_pytest_plugin import ROOT
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.outcome import Outcome

# Runs each command through the CLI's main in one process (one start-up), and
# reports its exit code and what it wrote to stdout and stderr.
DRIVER = """\
import contextlib, io, json, sys
from utf8fuzz.cli import main
for cmd in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = main(cmd)
        except SystemExit as e:
            rc = e.code
    print("@@" + json.dumps({"cmd": cmd[0], "rc": rc, "err": err.getvalue(),
                             "out": out.getvalue()}), flush=True)
"""


def drive(cwd: Path, *cmds: list[str]) -> list[dict[str, Any]]:
    r = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(cmds)], cwd=cwd,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT),
                            "PYTHONDONTWRITEBYTECODE": "1"})
    steps = [json.loads(ln[2:]) for ln in r.stdout.splitlines() if ln.startswith("@@")]
    assert len(steps) == len(cmds), r.stdout[-3000:] + r.stderr[-3000:]
    return steps


FUZZ = ["fuzz", "--corpus", "c", "--decoder", "cpython:replace", "--engine", "hypothesis",
        "--runs", "50", "--seed", "1", "--time", "120", "--jobs", "1", "--report", "reports"]


def with_finding(root: Path, feature: str, data: bytes, **finding: Any) -> Path:
    """A format-2 entry of decoder ``w`` (recorded: it crashed) with ``finding``."""
    side = handmade.sidecar(feature, data)
    side["format"] = 2
    side["outcomes"]["w"] = {"outcome": Outcome.failure(len(data), "crash", "boom").to_json()}
    side["finding"] = {"id": "0123456789abcdef", "family": "w", "rule": "crash:boom",
                       "explanation": "it crashes", "severity": "non-conformance",
                       "pattern": data.hex(" ").upper(), "checked": 0, "rules": 2, **finding}
    path, _ = corpus_mod.save(root, side, data)
    return path


@pytest.mark.parametrize(("change", "says"), [
    ({"severity": "bogus"}, "finding.severity is not one of non-conformance"),
    ({"rule": ""}, "finding.rule"),
    ({"id": "../../x"}, "finding.id is not 16 lower-case hex digits"),
    ({"checked": -1}, "finding.checked is not a non-negative integer"),
    ({"rules": 0}, "finding.rules is not a positive integer"),
])
def test_a_bad_finding_is_a_bad_sidecar_named_by_its_field(tmp_path: Path,
                                                           change: dict[str, Any],
                                                           says: str) -> None:
    path = with_finding(tmp_path, "A", b"\xc0\x80", **change)
    with pytest.raises(corpus_mod.CorpusError, match=says):
        corpus_mod.read_sidecar(path)


def test_outcome_status_is_one_of_outcome_status_bad_outcome_included(tmp_path: Path) -> None:
    path = with_finding(tmp_path, "A", b"\xc0\x80")
    side = json.loads(path.read_text())
    side["outcomes"]["w"]["outcome"] = Outcome.failure(
        2, "bad-outcome", "oversized-output: 900 code points").to_json()
    path.write_text(json.dumps(side))
    assert corpus_mod.load_entry(path).sidecar["outcomes"]["w"]["outcome"]["status"] == \
        "bad-outcome"
    side["outcomes"]["w"]["outcome"]["status"] = "fine"
    path.write_text(json.dumps(side))
    with pytest.raises(corpus_mod.CorpusError, match="status is not ok, crash, timeout, "
                                                     "bad-outcome"):
        corpus_mod.read_sidecar(path)


@pytest.mark.parametrize("depth", [corpus_mod.MAX_JSON_DEPTH + 1, 900, 20_000])
def test_nesting_is_bounded_whatever_the_stack(tmp_path: Path, depth: int) -> None:
    # 900 parses at the top of a stack and not deep in one (pytest's): a bound of
    # its own makes the answer the same everywhere
    path = handmade.save(tmp_path, "A", b"\xc0\x80")
    text = path.read_text().rstrip().removesuffix("}")
    path.write_text(text + ', "later": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(corpus_mod.CorpusError, match="nested too deeply"):
        corpus_mod.read_sidecar(path)
    assert corpus_mod.json_depth(json.loads(handmade.save(tmp_path, "B", b"A").read_text())) \
        <= corpus_mod.MAX_JSON_DEPTH


def test_a_bad_sidecar_is_one_line_and_every_command_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "c"
    good = with_finding(root, "A", b"\xc0\x80")
    bad = with_finding(root, "B", b"\xc0\x81", severity="bogus\x1b[2J")
    deep = root / "entries" / "0000000000000000.json"
    deep.write_text('{"a":' * 20_000 + "1" + "}" * 20_000)
    (root / "fingerprints.json").write_text("[" * 20_000 + "]" * 20_000)
    report, fuzz, check = drive(tmp_path, ["report", "--corpus", "c", "--out", "r"], FUZZ,
                                ["corpus", "check", "c"])
    assert report["rc"] == 0, report
    lines = report["err"].splitlines()
    assert len(lines) == 2 and all(ln.isascii() and ln.isprintable() for ln in lines), lines
    assert any(bad.name in ln and "finding.severity" in ln for ln in lines)
    assert any(deep.name in ln and "nested too deeply" in ln for ln in lines)
    summary = json.loads(next((tmp_path / "r").glob("*/summary.json")).read_text())
    assert summary["corpus"]["entries"] == 1
    assert fuzz["rc"] in (0, 1), fuzz  # not 3
    assert "Traceback" not in fuzz["err"]
    said = fuzz["out"] + fuzz["err"]  # the run names each entry it skipped
    assert bad.name in said and deep.name in said and "\x1b" not in said, said
    assert check["rc"] == 1 and "Traceback" not in check["err"]
    assert good.exists() and bad.exists()


def test_known_toml_nested_too_deeply_is_one_line_and_exit_2(tmp_path: Path) -> None:
    handmade.save(tmp_path / "c", "A", b"\xc0\x80")
    (tmp_path / "c" / "known.toml").write_text("a = " + "[" * 20_000 + "]" * 20_000 + "\n")
    steps = drive(tmp_path, ["corpus", "check", "c"], ["report", "--corpus", "c", "--out", "r"],
                  FUZZ)
    for s in steps:
        assert s["rc"] == 2, s
        assert s["err"].count("\n") == 1 and "c/known.toml: is nested too deeply" in s["err"], s
