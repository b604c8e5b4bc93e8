"""A worker's bounds (decoders/_subprocess.py): its stderr is kept as a 64 KiB tail,
it runs under a memory limit (running out is an ``oom`` crash, a signature of its
own), and it dies with the harness.

The harness in these tests is a subprocess of its own, so that its peak RSS can be
measured, it can be SIGKILLed, and, run against code without the limits, a plug-in
allocating without bound meets an outer limit instead of the machine's memory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tests.decoders.worker_limit_fixtures import LAST_WORDS
from tests.peak_rss import measured, peak_kib
from utf8fuzz.decoders import UnknownDecoder, plugin
from utf8fuzz.decoders._subprocess import Worker

ROOT = Path(__file__).resolve().parents[2]
M = "tests.decoders.worker_limit_fixtures"
#: The address-space limit of a harness subprocess: a plug-in that allocates
#: without bound is stopped by it even where the worker's own limit is missing.
OUTER_LIMIT = 1536 << 20
MEMORY_ENV = "UTF8FUZZ_WORKER_MEMORY"


def harness(body: str, *, env: dict[str, str] | None = None,
            timeout: float = 120) -> dict[str, object]:
    """Run ``body`` in a fresh interpreter under OUTER_LIMIT; it prints one JSON
    object last, which is returned (with the interpreter's own peak RSS in KiB as
    ``maxrss``, :mod:`tests.peak_rss`)."""
    script = textwrap.dedent(f"""
        import json, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({OUTER_LIMIT}, {OUTER_LIMIT}))
        from utf8fuzz.decoders import plugin
        def done(**kw):
            print(json.dumps(kw), flush=True)
    """) + textwrap.dedent(body)
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        p = subprocess.run(measured([sys.executable, "-c", script], peak), cwd=ROOT,
                           capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **(env or {})})
        assert p.returncode == 0, p.stderr[-2000:]
        result: dict[str, object] = json.loads(p.stdout.strip().splitlines()[-1])
        result["maxrss"] = peak_kib(peak)
    return result


def test_a_chatty_crashing_worker_costs_the_harness_only_its_stderr_tail() -> None:
    # 200 MB on stderr, then a segfault: the harness reads it all and keeps 64 KiB
    got = harness(f"""
        d = plugin.load("{M}:chatty_segfault")
        outs = d.decode_many([b"a", b"die", b"b"])
        done(statuses=[o.status for o in outs], detail=outs[1].detail)
        d.close()
    """)
    assert got["statuses"] == ["ok", "crash", "ok"]
    detail = str(got["detail"])
    assert "killed by SIGSEGV" in detail and detail.endswith(LAST_WORDS)
    # measured: about 19 MiB (the interpreter and the package); 200 MB and more
    # while the whole of stderr was kept and read back
    assert isinstance(got["maxrss"], int) and got["maxrss"] < 150 << 10, got["maxrss"]


def test_the_stderr_tail_is_the_last_64_kib() -> None:
    w = Worker([sys.executable, "-c", textwrap.dedent("""
        import os, sys
        sys.stderr.buffer.write(b"x" * (1 << 20) + b"\\nthe end\\n"); sys.stderr.flush()
        os._exit(3)
    """)], startup_timeout=30)
    with pytest.raises(Exception, match="exited with status 3: the end"):
        w.start()
    assert len(w._err) == 64 << 10 and w._err.endswith(b"the end\n")


@pytest.mark.parametrize("fixture", ["hoards", "hoards_in_c"])
def test_a_plugin_allocating_without_bound_gives_an_oom_crash(fixture: str) -> None:
    got = harness(f"""
        from utf8fuzz.decoders.reference import Reference
        from utf8fuzz.engine.differ import Differ
        from utf8fuzz.engine.signature import failure_feature
        d = plugin.load("{M}:{fixture}")
        outs = d.decode_many([b"a", b"grow", b"b"])
        sigs = sorted(Differ([Reference("unicode"), d]).run(b"grow", full=True).signatures)
        done(statuses=[o.status for o in outs], detail=outs[1].detail,
             feature=failure_feature(outs[1]), signatures=sigs)
        d.close()
    """, env={MEMORY_ENV: "256"})
    assert got["statuses"] == ["ok", "crash", "ok"], got["detail"]
    assert got["feature"] == "oom", got["detail"]
    assert got["signatures"] == [f"unicode/crash/oom/plugin:{M}:{fixture}"]


def test_the_memory_limit_comes_from_the_option_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from utf8fuzz.decoders._subprocess import memory_limit_mib

    monkeypatch.delenv(MEMORY_ENV, raising=False)
    assert memory_limit_mib() == 2048
    monkeypatch.setenv(MEMORY_ENV, "0")
    assert memory_limit_mib() == 0
    assert plugin.load(f"{M}:hoards+memory=300").worker.memory_mib == 300
    assert plugin.load(f"{M}:hoards").worker.memory_mib == 0
    monkeypatch.setenv(MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match=f"bad \\${MEMORY_ENV}="):
        plugin.load(f"{M}:hoards")


@pytest.mark.parametrize("spec,match", [
    (f"{M}:hoards+memory=-1", "whole number of MiB"),
    (f"{M}:hoards+memory=1.5", "whole number of MiB"),
    (f"{M}:hoards+memory", "bad decoder option"),
    (f"{M}:hoards+memory=64+inprocess", "has none"),
])
def test_bad_memory_options_say_why(spec: str, match: str) -> None:
    with pytest.raises(UnknownDecoder, match=match):
        plugin.load(spec)


def test_a_bad_memory_setting_is_one_line_and_exit_2() -> None:
    p = subprocess.run([sys.executable, "-m", "utf8fuzz", "diff", "41", "--decoder",
                        f"{M}:hoards"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       env={**os.environ, MEMORY_ENV: "2GB"})
    assert p.returncode == 2 and MEMORY_ENV in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def _alive(pid: int) -> bool:
    """Running (a zombie nobody has reaped yet is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


NODE = shutil.which("node")
HANGS = {
    # the plug-in hangs in a decode; it writes the flag file once it is hanging
    "plugin": f"""
        from utf8fuzz.decoders import plugin
        d = plugin.load("{M}:hangs+timeout=600")
        d.worker.start()
        print(d.worker.proc.pid, flush=True)
        d.decode(b"hang")
    """,
    # node's client spins forever on its test-only input
    "node": f"""
        import os
        from utf8fuzz.decoders import node
        d = node.decoder({NODE!r}, "buffer", timeout=600,
                         env={{**os.environ, "UTF8FUZZ_NODE_TEST_OPS": "1"}})
        d.proc.start()
        print(d.proc.worker.proc.pid, flush=True)
        d.decode(b"\\xff!hng")
    """,
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("kind", ["plugin", "node"])
def test_workers_die_with_a_killed_harness(kind: str, tmp_path: Path) -> None:
    if kind == "node" and NODE is None:
        pytest.skip("node is not on PATH")
    flag = tmp_path / "hanging"
    env = {**os.environ, "UTF8FUZZ_TEST_HANG_FLAG": str(flag)}
    h = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HANGS[kind])], cwd=ROOT,
                         stdout=subprocess.PIPE, text=True, env=env)
    pid = 0
    try:
        assert h.stdout is not None
        pid = int(h.stdout.readline())
        # busy with a request when the harness dies (an idle worker would see its
        # stdin end and leave on its own)
        deadline = time.monotonic() + 60
        while kind == "plugin" and not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if kind == "node":
            time.sleep(1.0)  # the request is in node's pipe by then; node spins on it
        assert _alive(pid)
        h.send_signal(signal.SIGKILL)
        h.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"worker {pid} outlived its harness"
    finally:
        if h.poll() is None:
            h.kill()
            h.wait()
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_outlives_the_thread_that_started_it() -> None:
    # PR_SET_PDEATHSIG fires when the forking thread ends: a worker a short-lived
    # thread started (a pool's, a test's) must still be the one that answers after.
    import threading

    (dec,) = plugin.load_all("tests.engine.planted:accepts_c080")
    try:
        t = threading.Thread(target=lambda: dec.decode(b"x"))
        t.start()
        t.join()
        assert dec.worker.proc is not None
        pid = dec.worker.proc.pid
        deadline = time.monotonic() + 2  # a killed worker is reaped well within this
        while time.monotonic() < deadline and dec.worker.proc.poll() is None:
            time.sleep(0.05)
        assert dec.worker.proc.poll() is None and _alive(pid)
        assert dec.decode(b"y").ok and dec.worker.restarts == 0 and dec.worker.proc.pid == pid
    finally:
        dec.close()


def _libasan() -> str | None:
    try:
        path = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return path if os.path.isabs(path) and os.path.exists(path) else None


@pytest.mark.skipif(_libasan() is None, reason="gcc's libasan is not installed")
def test_a_worker_that_preloads_asan_runs_without_the_memory_limit() -> None:
    # ASan reserves terabytes of address space for its shadow: under RLIMIT_AS it
    # aborts at start (make asan-test and make fuzz-instrumented preload it)
    env = {**os.environ, "LD_PRELOAD": str(_libasan()), "ASAN_OPTIONS": "detect_leaks=0"}
    d = plugin.IsolatedDecoder(f"{M}:hoards", None, plugin.load(f"{M}:hoards+inprocess"),
                               memory_mib=256)
    d.worker.env = env
    try:
        out = d.decode(b"\x80")
        assert out.ok, out.detail
        assert out.view("strict") == (0, 1)
    finally:
        d.close()
