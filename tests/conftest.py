"""The test tiers (tests/README.md, "Tiers").

``make test`` runs everything. ``make check`` runs ``-m "not processes"``: a test is
marked ``processes`` automatically, before it runs, when its module imports what
starts processes (``subprocess``, ``multiprocessing``, the CLI runner of
tests/cli/hostile.py, the fuzz loop, the peers' builder, the short fuzz runs of
tests/engine/fuzz_runs.py), itself or through the ``tests.*`` helpers it imports;
and when a test that was not marked starts one anyway (an isolated plug-in's
worker, node, a fork) under ``make check``, from its fixtures' setup on, it is
skipped at that moment, saying so: the tier holds whatever a new test does.
"""

from __future__ import annotations

import ast
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
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


#: The checkout's root: ``tests.x.y`` is the file ``ROOT/tests/x/y.py``.
ROOT = Path(__file__).resolve().parent.parent


def _helper(name: str) -> Path | None:
    """The file of ``tests.*`` module ``name``, if it is one (a helper a test imports)."""
    if not name.startswith("tests."):
        return None
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _starts_processes(path: Path, _seen: frozenset[Path] = frozenset()) -> bool:
    """Whether ``path`` imports what starts processes, itself or through the
    ``tests.*`` helpers it imports (a module fixture of a helper's runs would
    start them before the guard below is in place)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    seen = _seen | {path}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        if any(n == p or n.startswith(p + ".") for n in names for p in STARTS_PROCESSES):
            return True
        for n in names:
            helper = _helper(n)
            if helper is not None and helper not in seen and _starts_processes(helper, seen):
                return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("installed_package") or _starts_processes(item.path):
            item.add_marker(pytest.mark.processes)


def _refuse(*args: Any, **kwargs: Any) -> Any:
    pytest.skip("starts a process: make test runs it (the processes tier)")


@contextmanager
def _guarded(item: pytest.Item) -> Iterator[None]:
    """Under ``make check``, starting a process skips an unmarked test: from its
    setup on (module and session fixtures too, which run before any function
    fixture) to the end of its call."""
    if os.environ.get(GUARD_ENV) != "1" or item.get_closest_marker("processes"):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        for obj, name in ((subprocess.Popen, "__init__"), (os, "fork"), (os, "posix_spawn"),
                          (os, "posix_spawnp"), (os, "forkpty")):
            if hasattr(obj, name):
                mp.setattr(obj, name, _refuse)
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _guarded(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _guarded(item):
        return (yield)
