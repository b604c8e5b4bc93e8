"""A corpus is data, never code (issue 24): a decoder a sidecar or ``known.toml``
names, however it is named, runs only when the user gives it, and no command that
reads a corpus, nor the pytest plugin, loads or runs what a corpus names
(:func:`utf8fuzz.decoders.trusted`, docs/corpus.md "What is trusted").

Every kind of name that would run code is planted (an ``exec:`` command, ``os:system``,
a module that leaves a marker when imported, on the path so that an import *would*
succeed, a plug-in spec with a claim and shape, globs), as a signature's decoder, as
a recorded outcome's name, as its ``spec``, and in ``known.toml``; each would leave
its own marker file. Then every command that reads a corpus runs, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.engine import handmade
from tests.test_pytest_plugin import ROOT, counts
from utf8fuzz import decoders
from utf8fuzz.engine import corpus as corpus_mod

EVIL_MODULE = """\
from pathlib import Path
Path({marker!r}).write_text("imported")


def decode(data):
    return data.decode("utf-8")
"""

# Runs each command through the CLI's main, in one process (one start-up, not ten),
# and says after each which markers exist.
DRIVER = """\
import json, os, sys
from utf8fuzz.cli import main
markers, corpus, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
for cmd in json.loads(sys.argv[4]):
    try:
        rc = main([a.replace("CORPUS", corpus).replace("OUT", out) for a in cmd])
    except SystemExit as e:
        rc = e.code
    ran = sorted(k for k, m in markers.items() if os.path.exists(m))
    print("@@" + json.dumps({"cmd": " ".join(cmd[:2]), "rc": rc, "ran": ran}), flush=True)
"""

COMMANDS = [
    ["corpus", "check", "CORPUS"], ["corpus", "list", "CORPUS"],
    ["report", "--corpus", "CORPUS", "--out", "OUT"],
    ["corpus", "prune", "--dry-run", "CORPUS"], ["corpus", "refresh", "--dry-run", "CORPUS"],
    ["corpus", "migrate", "--dry-run", "CORPUS"], ["corpus", "refresh", "CORPUS"],
    ["corpus", "prune", "CORPUS"],
    ["fuzz", "--corpus", "CORPUS", "--decoder", "cpython:replace", "--engine", "hypothesis",
     "--runs", "50", "--seed", "1", "--time", "120", "--jobs", "1", "--no-report"],
    ["corpus", "migrate", "CORPUS"], ["corpus", "check", "CORPUS"],
]


def plant(tmp: Path) -> tuple[Path, dict[str, Path], dict[str, str]]:
    """A corpus naming code that would leave markers; the markers; the environment
    whose path holds the marker-writing module."""
    markers = {k: tmp / f"ran-{k}" for k in ("exec-name", "exec-spec", "os-system", "import",
                                             "exec-known")}
    lib = tmp / "lib"
    lib.mkdir()
    (lib / "evilmod.py").write_text(EVIL_MODULE.format(marker=str(markers["import"])))

    def sh(k: str) -> str:
        return f"exec:sh -c 'touch {markers[k]}'"

    # (decoder the signature names, its recorded spec or None, more recorded names)
    planted: list[tuple[str, str | None, list[str]]] = [
        (sh("exec-name"), None, [sh("exec-name") + "+validate"]),
        ("os:system", None, []),
        ("evilmod:decode", None, ["evilmod:decode@unicode/per-byte+text",
                                  "evilmod:decode+inprocess", "plugin:evilmod:decode"]),
        ("plugin:evil", "evilmod:decode@unicode/per-byte+inprocess", []),
        ("plugin:evil2", sh("exec-spec"), []),
        ("cpython:*", None, ["*", "exec:*", "*:*"]),
    ]
    root = tmp / "corpus"
    for n, (name, spec, more) in enumerate(planted):
        # os:system is handed the input: make that a command, as an attacker would
        data = f"touch {markers['os-system']}".encode() if name == "os:system" else \
            bytes([0xC0, 0x80 + n])
        side = handmade.sidecar(f"F{n}", data, decoder=name)
        ref = side["outcomes"][handmade.REFERENCE]
        rec: dict[str, Any] = {"profile": "unicode", "policy": "maximal-subpart",
                               "own": False, "outcome": ref["outcome"]}
        for m in [name, *more]:
            side["outcomes"][m] = {**rec, **({"spec": spec} if spec else {})}
        corpus_mod.save(root, side, data)
    (root / "known.toml").write_text(
        f'[[known]]\ndecoder = "{sh("exec-known")}"\nreason = "r"\n'
        '[[known]]\ndecoder = "evilmod:decode"\nreason = "r"\n'
        '[[known]]\ndecoder = "*"\nclass = "crash"\nreason = "r"\n')
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join((str(lib), str(ROOT), os.environ.get("PYTHONPATH", "")))}
    return root, markers, env


def test_no_command_runs_what_a_corpus_names(tmp_path: Path) -> None:
    root, markers, env = plant(tmp_path)
    assert len(corpus_mod.load(root)[0]) == 6  # every planted entry is a good entry
    r = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps({k: str(m) for k, m in markers.items()}),
         str(root), str(tmp_path / "reports"), json.dumps(COMMANDS)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    steps = [json.loads(ln[2:]) for ln in r.stdout.splitlines() if ln.startswith("@@")]
    assert len(steps) == len(COMMANDS), r.stdout[-3000:] + r.stderr[-3000:]
    assert [s for s in steps if s["ran"]] == []
    assert all(s["rc"] in (0, 1) for s in steps), (steps, r.stderr[-3000:])
    assert "Traceback" not in r.stderr


def test_the_pytest_plugin_runs_nothing_a_corpus_names(tmp_path: Path) -> None:
    root, markers, env = plant(tmp_path)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
                        f"--utf8fuzz-corpus={root}"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert sorted(k for k, m in markers.items() if m.exists()) == []
    # each planted name is shown as recorded and skipped; the references pass
    assert counts(r).get("failed", 0) == 0 and counts(r)["passed"] == 6, r.stdout[-3000:]
    assert "not given here" in r.stdout


def test_a_recorded_name_is_trusted_only_exactly_as_given_or_built_in() -> None:
    given = decoders.resolve("cpython:replace")
    assert decoders.trusted("cpython:replace", given) is given[0]
    assert not isinstance(decoders.trusted("ref:unicode:maximal-subpart"), str)
    for name in ("cpython:*", "*", "os:system", "exec:true", "tests.engine.planted:accepts_c080",
                 "plugin:tests.engine.planted:accepts_c080"):
        assert isinstance(decoders.trusted(name), str), name
