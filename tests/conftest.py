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
                    "utf8fuzz.loop.run", "utf8fuzz.decoders.peers.build", "utf8fuzz.cli",
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


#: Helpers whose importers share what one process makes once (the short fuzz runs of
#: tests/hostile/processes_common.py): their tests form one xdist group.
SHARED_BY_IMPORTERS = {"tests.hostile.processes_common": "hostile-fuzz-runs"}


@cache
def _xdist_group(path: Path) -> str | None:
    """The group of the tests in ``path`` that one xdist worker runs together (``make
    test``: two workers, ``--dist loadgroup``): a module with a fixture wider than a
    test (made once, kept by the worker that made it, such as short fuzz runs started
    together) is one group, as are the importers of a helper of
    :data:`SHARED_BY_IMPORTERS`; None: its tests are sent one by one."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    wide = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in SHARED_BY_IMPORTERS:
            return SHARED_BY_IMPORTERS[node.module]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "fixture"
                and any(k.arg == "scope" and not (isinstance(k.value, ast.Constant)
                                                  and k.value.value == "function")
                        for k in node.keywords)):
            wide = True
    return path.relative_to(ROOT).as_posix() if wide else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with the groups of :func:`_xdist_group`, read off each
    test's file by the controller. (xdist's own reads ``xdist_group`` marks through a
    node id it rewrites, which pytest 9.2 no longer lets it do.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            group = _xdist_group(ROOT / nodeid.split("::", 1)[0])
            return nodeid if group is None else group

    return GroupScheduling(config, log)


#: What tests/nomemory.py offers to make a process's allocations fail.
FAILS_ALLOCATIONS = frozenset({"nomemory", "check_every_allocation", "starved"})


def _fails_allocations(item: pytest.Item) -> bool:
    """Whether ``item`` calls tests/nomemory.py's fault injection, which fails the
    next allocations of any thread: an xdist worker's channel thread met them
    (``make check`` ran on two workers, one crashed), so it is marked ``alone``."""
    code = getattr(getattr(item, "obj", None), "__code__", None)
    return code is not None and not FAILS_ALLOCATIONS.isdisjoint(code.co_names)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("installed_package") or _starts_processes(item.path):
            item.add_marker(pytest.mark.processes)
        if _fails_allocations(item):
            item.add_marker(pytest.mark.alone)


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
