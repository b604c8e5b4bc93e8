"""The test tiers of tests/conftest.py (tests/README.md, "Tiers"), on a throwaway
tree of tests run by pytest as ``make check`` runs it: a test module that starts
processes only through a ``tests.*`` helper is marked ``processes`` and deselected,
and a process started by a module fixture of an unmarked test skips that test
before the process starts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

FILES = {
    "pytest.ini": "[pytest]\nmarkers =\n    processes: p\n    exhaustive: e\n",
    "tests/__init__.py": "",
    "tests/helpers/__init__.py": "",
    # a helper that starts processes, and one that only imports it
    "tests/helpers/runner.py": "import subprocess\n\ndef run():\n    subprocess.run(['true'])\n",
    "tests/helpers/shared.py": "from tests.helpers.runner import run\n",
    "tests/test_via_helper.py": ("from tests.helpers.shared import run\n\n"
                                 "def test_runs():\n    run()\n"),
    # no import the conftest can see; the process starts in a module fixture
    "tests/test_module_fixture.py": (
        "import pytest\n\n"
        "@pytest.fixture(scope='module')\n"
        "def started():\n    return __import__('subprocess').run(['true']).returncode\n\n"
        "def test_started(started):\n    assert started == 0\n"),
    "tests/test_plain.py": "def test_plain():\n    assert True\n",
}


def test_check_tier_deselects_helpers_processes_and_skips_fixtures_processes(
        tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    shutil.copy(CONFTEST, tmp_path / "tests" / "conftest.py")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "-m", "not processes and not exhaustive", "tests"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "UTF8FUZZ_CHECK_TIER": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 1 skipped, 1 deselected" in r.stdout, r.stdout
    assert "test_module_fixture.py" in r.stdout and "the processes tier" in r.stdout, r.stdout


GROUPED = {
    "pytest.ini": FILES["pytest.ini"],
    "tests/__init__.py": "",
    # a module fixture, and tests that say which worker ran them
    "tests/test_wide.py": (
        "import os\nimport pytest\n\n"
        "@pytest.fixture(scope='module')\ndef wide():\n    return 1\n\n"
        "@pytest.mark.parametrize('i', range(12))\n"
        "def test_wide(wide, i, tmp_path_factory):\n"
        "    with open(os.environ['WORKERS_SEEN'], 'a') as f:\n"
        "        f.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n"),
    "tests/test_narrow.py": ("import pytest\n\n@pytest.mark.parametrize('i', range(12))\n"
                             "def test_narrow(i):\n    assert i >= 0\n"),
}


def test_a_module_with_a_wide_fixture_runs_on_one_xdist_worker(tmp_path: Path) -> None:
    for name, text in GROUPED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    shutil.copy(CONFTEST, tmp_path / "tests" / "conftest.py")
    seen = tmp_path / "seen"
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "--dist", "loadgroup", "tests"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "WORKERS_SEEN": str(seen)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "24 passed" in r.stdout, r.stdout
    workers = seen.read_text().split()
    assert len(workers) == 12 and len(set(workers)) == 1, workers


def test_tests_that_fail_their_processes_allocations_are_marked_alone() -> None:
    root = CONFTEST.parent.parent
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
         "-m", "alone", "tests/fast/test_out_of_memory.py", "tests/profiles/test_walk.py"],
        cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [line for line in r.stdout.splitlines() if "::" in line]
    # every case of the fault injection's own file; of test_walk, only its own test
    assert any(i.startswith("tests/fast/test_out_of_memory.py::") for i in ids), ids
    walk = {i.split("::")[1].split("[")[0] for i in ids if i.startswith("tests/profiles/")}
    assert walk == {"test_the_c_walk_when_memory_runs_out"}, ids
