"""The test tiers (tests/README.md, "Tiers").

``make test`` runs everything. ``make check`` runs ``-m "not processes"``: a test is
marked ``processes`` automatically, before it runs, when its module imports what
starts processes (``subprocess``, ``multiprocessing``, the CLI runner of
tests/cli/hostile.py, the fuzz loop, the peers' builder, the short fuzz runs of
tests/engine/fuzz_runs.py); and when a test that was not marked starts one anyway
(an isolated plug-in's worker, node, a fork) under ``make check``, it is skipped at
that moment, saying so: the tier holds whatever a new test does.
"""

from __future__ import annotations

import ast
import os
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

#: Imports (module names, or their prefixes) that mark a test module ``processes``.
STARTS_PROCESSES = ("subprocess", "multiprocessing", "tests.cli.hostile", "tests.engine.fuzz_runs",
                    "utf8fuzz.engine.run", "utf8fuzz.decoders.peers.build", "utf8fuzz.cli",
                    "utf8fuzz.decoders._subprocess")

#: Set by ``make check``: a test that starts a process anyway is skipped.
GUARD_ENV = "UTF8FUZZ_CHECK_TIER"


@cache
def _starts_processes(path: Path) -> bool:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        if any(n == p or n.startswith(p + ".") for n in names for p in STARTS_PROCESSES):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("installed_package") or _starts_processes(item.path):
            item.add_marker(pytest.mark.processes)


@pytest.fixture(autouse=True)
def _check_tier_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    if os.environ.get(GUARD_ENV) != "1" or request.node.get_closest_marker("processes"):
        yield
        return
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        pytest.skip("starts a process: make test runs it (the processes tier)")

    for obj, name in ((subprocess.Popen, "__init__"), (os, "fork"), (os, "posix_spawn"),
                      (os, "posix_spawnp"), (os, "forkpty")):
        if hasattr(obj, name):
            monkeypatch.setattr(obj, name, refuse)
    yield
