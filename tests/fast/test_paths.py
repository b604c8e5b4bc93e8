"""Code path selection: info(), path(), set_path() and UTF8FUZZ_FAST_PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fast._fastcases import ALL_PATHS, PATHS, path_params
from utf8fuzz import fast


def test_info_describes_paths_and_cpu() -> None:
    info = fast.info()
    assert info["selected"] in info["available"]
    assert set(info["available"]) <= set(info["built"]) <= set(ALL_PATHS)
    assert "scalar" in info["available"]
    assert isinstance(info["cpu"], dict)
    if sys.platform == "linux" and os.uname().machine == "x86_64":
        assert set(info["built"]) == set(ALL_PATHS)
        assert "sse2" in info["available"] and info["cpu"]["sse2"]
        # The kernel's view of the CPU, not the module's: a path joins the tests
        # (PATHS) exactly when this CPU can run it.
        flags = set(Path("/proc/cpuinfo").read_text().split())
        assert ("ssse3" in info["available"]) == ("ssse3" in flags)
        assert ("avx2" in info["available"]) == ({"avx2", "popcnt"} <= flags)
        assert ("avx512" in info["available"]) == ({"avx512f", "avx512bw", "avx2"} <= flags)


def test_auto_prefers_the_widest_path_this_cpu_runs() -> None:
    fast.set_path("auto")
    assert fast.info()["selected"] == [p for p in ALL_PATHS if p in PATHS][-1]


def test_set_path_forces_and_restores() -> None:
    for p in PATHS:
        prev = fast.set_path(p)
        assert fast.info()["selected"] == p and fast.info()["mode"] == "forced"
        fast.set_path(prev)
    fast.set_path("auto")
    assert fast.info()["mode"] == "auto" and fast.info()["selected"] == PATHS[-1]


def test_path_is_infos_selected_and_mode() -> None:
    for p in [*PATHS, "auto"]:
        fast.set_path(p)
        info = fast.info()
        assert fast.path() == (info["selected"], info["mode"])
        assert fast.path() == (PATHS[-1], "auto") if p == "auto" else (p, "forced")


def test_set_path_refuses_unknown_and_unavailable_paths() -> None:
    with pytest.raises(ValueError, match="unknown code path"):
        fast.set_path("neon")
    for p in set(ALL_PATHS) - set(PATHS):
        with pytest.raises(ValueError, match=f"'{p}' needs CPU features this CPU lacks: "):
            fast.set_path(p)


def _run(env_value: str, code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, UTF8FUZZ_FAST_PATH=env_value)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("path", path_params())
def test_environment_variable_forces_a_path(path: str) -> None:
    r = _run(path, "import json; from utf8fuzz import fast; print(json.dumps(fast.info()))")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert (info["selected"], info["mode"]) == (path, "forced")


@pytest.mark.parametrize("value", ["neon", *sorted(set(ALL_PATHS) - set(PATHS))])
def test_environment_variable_naming_an_unusable_path_fails_clearly(value: str) -> None:
    r = _run(value, "from utf8fuzz import fast")
    assert r.returncode != 0
    assert f"UTF8FUZZ_FAST_PATH={value}" in r.stderr and "ImportError" in r.stderr
    # ... and the decoder registry reports it in one line instead of failing.
    r = _run(value, "from utf8fuzz.decoders import fast as a; print(a.discover()[0].reason)")
    assert r.returncode == 0 and f"UTF8FUZZ_FAST_PATH={value}" in r.stdout


@pytest.mark.skipif(not os.environ.get("UTF8FUZZ_EXPECT_SANITIZED"),
                    reason="only under make asan-test")
def test_sanitized_build_is_the_one_under_test() -> None:
    """make asan-test must not silently test the tree's uninstrumented build."""
    from utf8fuzz.fast import _fast

    want = Path(os.environ["UTF8FUZZ_EXPECT_SANITIZED"]).resolve()
    assert want in Path(_fast.__file__).resolve().parents
