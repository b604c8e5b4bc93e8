"""Compile the real peers: ``python -m utf8fuzz.decoders.peers.build [LANG ...]``.

For each language (default: all) whose toolchain is installed, compile its client
into :func:`utf8fuzz.decoders.peers.build_dir` unless that build already exists.
Atomic: everything is built in a temporary directory beside it, ``peer.json``
written last, and the directory renamed into place, so an interrupted build
leaves nothing a peer would run; builds of older sources of the same language
are then removed. A language whose toolchain is missing is skipped with the
reason (exit 0: ``utf8fuzz decoders`` says it too); a compiler that fails
prints the end of its output and makes the exit status 1.

``--force`` rebuilds what exists; ``--quiet`` prints only failures. Each line
printed says how long the build took.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from utf8fuzz.decoders import peers

#: Longest wait for one compiler run (a first Go build compiles its runtime).
COMPILE_TIMEOUT = 600


class BuildError(Exception):
    pass


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run a compiler; its output, or BuildError with its tail."""
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, errors="replace",
                           timeout=COMPILE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildError(f"{argv[0]}: {e}") from None
    if p.returncode != 0:
        tail = (p.stdout + p.stderr).strip().splitlines()[-15:]
        raise BuildError(f"{' '.join(argv)} exited with status {p.returncode}:\n  "
                         + "\n  ".join(tail))
    return (p.stdout + p.stderr).strip()


def _version(argv: list[str], cwd: Path) -> str:
    return _run(argv, cwd).splitlines()[0][:200] if argv else ""


def _build_go(go: str, out: Path) -> tuple[list[str], str]:
    src = peers.HERE / "go" / "main.go"
    env = dict(os.environ)
    # No network and no toolchain switching: the client uses the standard library only.
    # (No -trimpath: it makes go rebuild the whole standard library, 35 s instead of
    # 1 s with Debian's precompiled one.)
    env.update(GOPROXY="off", GOTOOLCHAIN="local", GOFLAGS="-mod=mod", CGO_ENABLED="0",
               GO111MODULE="on")
    if not (env.get("GOCACHE") or env.get("XDG_CACHE_HOME") or env.get("HOME")):
        env["GOCACHE"] = str(out / ".gocache")  # go refuses to build without a cache
    _run([go, "build", "-o", str(out / "go-peer"), str(src)], out, env)
    shutil.rmtree(out / ".gocache", ignore_errors=True)
    return ["./go-peer"], _version([go, "version"], out)


def _build_rust(rustc: str, out: Path) -> tuple[list[str], str]:
    src = peers.HERE / "rust" / "main.rs"
    version = _version([rustc, "--version"], out)
    env = dict(os.environ, UTF8FUZZ_RUSTC_VERSION=version)
    _run([rustc, "--edition", "2021", "-C", "opt-level=3", "-C", "debuginfo=0",
          "-o", str(out / "rust-peer"), str(src)], out, env)
    return ["./rust-peer"], version


def _build_java(javac: str, out: Path) -> tuple[list[str], str]:
    java = peers.find_java_runtime()
    if java is None:
        raise BuildError("javac is installed but no java runs its classes")
    src = peers.HERE / "java" / "Peer.java"
    _run([javac, "-encoding", "UTF-8", "-d", str(out), str(src)], out)
    # the class path is the build directory itself: -cp ./ is resolved by Built.argv
    return [java, *peers.JVM_OPTIONS, "-cp", "./", "Peer"], _version([javac, "-version"], out)


BUILDERS = {"go": _build_go, "java": _build_java, "rust": _build_rust}


def build(lang: str, *, force: bool = False, under: Path | None = None) -> tuple[str, str]:
    """Build ``lang``'s peer under ``under`` (default :func:`peers.root`);
    (status, message) with status ``built``, ``up-to-date`` (a build in any of
    :func:`peers.roots` or ``under``), ``skipped`` (no toolchain) or ``failed``."""
    if not force:
        found = peers.find_in(lang, under) if under is not None else None
        found = found or peers.find(lang)
        if found is not None:
            return "up-to-date", str(found.path)
    tool = peers.compiler(lang)
    if tool is None:
        return "skipped", peers.not_installed(lang)
    final = peers.build_dir(lang, under)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    except OSError as e:
        return "failed", f"cannot write {final.parent}: {e.strerror or e}"
    try:
        command, toolchain = BUILDERS[lang](tool, tmp)
        (tmp / peers.MARKER).write_text(json.dumps(
            {"lang": lang, "hash": peers.source_hash(lang), "command": command,
             "toolchain": toolchain, "recipe": peers.RECIPE}, indent=1) + "\n")
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide the build from other users
        if final.exists():  # --force, or another build finished first
            old = final.with_name(f".{final.name}-old-{os.getpid()}")
            final.rename(old)
            shutil.rmtree(old, ignore_errors=True)
        tmp.rename(final)
    except BuildError as e:
        return "failed", str(e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for stale in final.parent.glob(f"{lang}-*"):
        if stale != final and stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
    return "built", str(final)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m utf8fuzz.decoders.peers.build",
                                 description="Compile the Go, Java and Rust peers.")
    ap.add_argument("langs", nargs="*", choices=[[], *peers.SOURCES], metavar="LANG",
                    help=f"any of {', '.join(peers.SOURCES)} (default: all)")
    ap.add_argument("--force", action="store_true", help="rebuild what exists")
    ap.add_argument("--quiet", action="store_true", help="print only failures")
    args = ap.parse_args(argv)
    status = 0
    for lang in args.langs or list(peers.SOURCES):
        t0 = time.monotonic()
        what, msg = build(lang, force=args.force)
        took = time.monotonic() - t0
        if what == "failed":
            status = 1
            print(f"peers: {lang}: build failed after {took:.1f} s: {msg}", file=sys.stderr)
        elif not args.quiet:
            print(f"peers: {lang}: {what} in {took:.1f} s: {msg}")
    return status


if __name__ == "__main__":
    sys.exit(main())
