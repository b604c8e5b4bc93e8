"""A fuzz target packed as OSS-Fuzz and ClusterFuzzLite pack it (scripts/oss-fuzz-build.sh
runs .clusterfuzzlite/build.sh with the real PyInstaller), with a planted buggy decoder
packed in, stops at the bug as a libFuzzer crash: the artifact is the minimized input,
the crash line names the finding, and the crash reproduces from the artifact alone.

One build (about a minute and a half), shared by every test here."""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from utf8fuzz.loop.run import atheris_available

ROOT = Path(__file__).resolve().parents[2]
TARGET = "differential"
PLANTED_MODULE = "tests.engine.planted_packed"
#: in-process: an isolated plug-in's worker is started as ``sys.executable -c ...``,
#: which in a packed target is the target itself
PLANTED = f"{PLANTED_MODULE}:passes_surrogates+inprocess"
SIGNATURE = f"unicode/accepts-ill-formed/surrogate/plugin:{PLANTED_MODULE}:passes_surrogates"
# its finding: the family (the plug-in) and the explanation (no other rule reproduces
# a decoder that passes encoded surrogates and nothing else: the class and feature)
FINDING = f"plugin:{PLANTED_MODULE}:passes_surrogates/accepts:surrogate:3-byte"
#: the seed shows the bug only with its padding, so the crash's input (the minimized
#: one) is not an input libFuzzer was given
SEED = b"ab\xed\xa0\x80cd"
MINIMIZED = b"\xed\xa0\x80"
ARTIFACT = f"crash-{hashlib.sha1(MINIMIZED).hexdigest()}"
CRASH_LINE = (f"utf8fuzz: new divergence {SIGNATURE}: minimized input ED A0 80 "
              f"(from {len(SEED)} bytes), saved as ")

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None,
                       reason="PyInstaller is not installed (the test or ossfuzz extra): "
                              "no fuzz target can be packed"),
    pytest.mark.skipif(atheris_available() is not None, reason=str(atheris_available())),
]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """``scripts/oss-fuzz-build.sh DIR differential``, the planted decoder packed in;
    DIR/out, as ClusterFuzzLite's $OUT. The timeout only stops a hung build."""
    build = tmp_path_factory.mktemp("oss-fuzz")
    # PYTHONPATH: PyInstaller finds the planted module in the checkout; the packed
    # target runs without it
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT),
           "EXTRA_PYINSTALLER_ARGS": f"--hidden-import {PLANTED_MODULE}"}
    p = subprocess.run(["bash", str(ROOT / "scripts" / "oss-fuzz-build.sh"), str(build), TARGET],
                       env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, (p.stdout[-3000:], p.stderr[-3000:])
    return build / "out"


def run_packed(out, cwd, *args):
    """``$OUT/differential ARGS`` in ``cwd`` on the planted decoder alone, as
    ClusterFuzzLite runs it: no checkout on the path, no corpus named (the packed
    one), artifacts under ``cwd/art/``. The timeout only stops a hung run."""
    (cwd / "art").mkdir(exist_ok=True)
    (cwd / "tmp").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("UTF8FUZZ_") and k != "PYTHONPATH"}
    # UTF8FUZZ_ROUND=1: each input is compared as libFuzzer runs it, so the seed is
    # the first divergent input whatever libFuzzer's mutations; TMPDIR: where the
    # packed target unpacks itself
    env |= {"UTF8FUZZ_DECODERS": json.dumps([PLANTED]), "UTF8FUZZ_ROUND": "1",
            "TMPDIR": str(cwd / "tmp")}
    return subprocess.run([str(out / TARGET), f"-artifact_prefix={cwd}/art/", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def fuzzed(out, tmp_path_factory):
    """The packed target fuzzing from one seed until it stops (or 300 s pass)."""
    cwd = tmp_path_factory.mktemp("fuzz")
    (cwd / "seeds").mkdir()
    (cwd / "seeds" / "padded").write_bytes(SEED)
    p = run_packed(out, cwd, "-seed=1", "-max_total_time=300", str(cwd / "seeds"))
    return cwd, p


def crashes(cwd):
    return sorted((cwd / "art").glob("crash-*"))


def test_the_build_holds_what_clusterfuzzlite_runs(out):
    assert sorted(f.name for f in out.iterdir()) == [
        TARGET, f"{TARGET}.dict", f"{TARGET}.pkg", f"{TARGET}_seed_corpus.zip"]
    assert os.access(out / TARGET, os.X_OK)
    assert (out / f"{TARGET}.dict").read_bytes() == (ROOT / "fuzz" / "utf8.dict").read_bytes()
    with zipfile.ZipFile(out / f"{TARGET}_seed_corpus.zip") as z:
        assert sorted(z.namelist()) == sorted(f.name for f in (ROOT / "corpus" / "seeds").iterdir())


def test_the_packed_target_stops_at_the_planted_bug_as_a_crash(fuzzed):
    cwd, p = fuzzed
    assert p.returncode != 0, p.stderr[-3000:]
    assert [f.name for f in crashes(cwd)] == [ARTIFACT], p.stderr[-3000:]
    assert crashes(cwd)[0].read_bytes() == MINIMIZED
    assert CRASH_LINE in p.stderr, p.stderr[-3000:]
    assert f"Test unit written to {cwd}/art/{ARTIFACT}" in p.stderr
    # Atheris prints the traceback on stdout; ClusterFuzz names the crash by its frames,
    # the innermost named after the finding (decoder family and explanation)
    assert f", in {FINDING}\n" in p.stdout, p.stdout[-3000:]


def test_the_crash_reproduces_from_its_artifact_alone(out, fuzzed):
    # ClusterFuzzLite runs the target on the artifact before it reports the crash;
    # the first run's entry went to the corpus packed in its unpack directory, gone
    # since, so the finding is new again
    cwd, _ = fuzzed
    (crash,) = crashes(cwd)
    again = run_packed(out, cwd, str(crash))
    assert again.returncode != 0, again.stderr[-3000:]
    assert CRASH_LINE.replace(f"from {len(SEED)}", "from 3") in again.stderr, again.stderr[-3000:]
    assert not (cwd / "corpus").exists()
