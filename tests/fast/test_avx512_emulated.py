"""The avx512 path's validation, executed on a CPU without AVX-512.

This CPU cannot run the avx512 path, so the per-path tests skip it. This test
builds ``avx512.c`` unchanged except for its target attribute (``TGT_AVX512`` is
defined empty, so the compiler emits no AVX-512 instruction) against an
emulation of the intrinsics (SIMDe, see ``emu/immintrin.h``), under ASan and
UBSan, and runs ``emu/harness.c``: ``scan_avx512`` against ``scan_scalar`` (the
definition) on every piece placed around every 16-byte boundary and on random
concatenations. It checks the algorithm and its block, tail and error-restart
handling - not the compiler's AVX-512 code, nor speed, which need the hardware.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

FAST = Path(__file__).resolve().parents[2] / "src" / "utf8fuzz" / "fast"
EMU = Path(__file__).resolve().parent / "emu"
GCC = shutil.which("gcc")
SIMDE = Path("/usr/include/simde/x86/avx512.h")


@pytest.mark.skipif(GCC is None, reason="no gcc")
@pytest.mark.skipif(not SIMDE.exists(), reason="SIMDe headers (Debian libsimde-dev) not installed")
def test_emulated_avx512_validation_equals_scalar(tmp_path: Path) -> None:
    exe = tmp_path / "harness"
    build = subprocess.run(
        [str(GCC), "-O1", "-std=c11", "-fsanitize=address,undefined",
         "-fno-sanitize-recover=undefined", f"-I{EMU}", f"-I{FAST}", "-DTGT_AVX512=",
         str(EMU / "harness.c"), str(FAST / "avx512.c"), str(FAST / "scalar.c"), "-o", str(exe)],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                         env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert "scan_avx512 (emulated) == scan_scalar" in run.stdout
