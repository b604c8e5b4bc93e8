"""The real peers' client programs (Go, Java, Rust), and where their builds live.

Each language has one small exec-protocol client (docs/protocol.md) in this
package's ``go/``, ``java/`` and ``rust/`` directories, shipped as package data,
taking the variant to run as its one argument. :mod:`.build` compiles each one
whose toolchain this machine has into ``<root>/<lang>-<hash>``, where ``<hash>`` is
the hash of the client's sources and of the build recipe: an edited source is a
different directory, so a stale build is never run. ``<root>`` is
``$UTF8FUZZ_PEERS_DIR`` when set, else ``make setup`` builds inside the venv
(``<sys.prefix>/share/utf8fuzz/peers``) and ``utf8fuzz peers build`` (an installed
package, no make) into the user's cache (``$XDG_CACHE_HOME/utf8fuzz/peers``, default
``~/.cache``); :func:`find` looks in both (:func:`roots`).

The adapters (:mod:`utf8fuzz.decoders.go`, ``java``, ``rust``) only *look*:
:func:`find` reads a build's ``peer.json``, and :func:`why_unavailable` names
the cause in one line. Nothing here starts a process or compiles anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.decoders.exec import peer

#: Bumped whenever build.py changes how a client is compiled or run, so that
#: every existing build becomes stale.
RECIPE = "2"

HERE = Path(__file__).resolve().parent

#: Each language's client sources, relative to this package.
SOURCES: dict[str, tuple[str, ...]] = {
    "go": ("go/main.go",),
    "java": ("java/Peer.java",),
    "rust": ("rust/main.rs",),
}

#: The Debian package that provides each toolchain.
PACKAGES = {"go": "golang-go", "java": "default-jdk-headless", "rust": "rustc"}

#: The JVM's reservations, small enough for the harness's address-space limit
#: (2048 MiB by default, see _subprocess.memory_limit_mib): with its defaults
#: (a quarter of RAM for the heap, 1 GiB of compressed class space, 240 MiB of
#: code cache, a parallel GC) OpenJDK 17 does not start even under 2048 MiB; with
#: these it starts under 512. C2 stays on: at 64-byte inputs it answered 1.5-2.5x
#: faster than C1 alone (TieredStopAtLevel=1), with the same startup.
JVM_OPTIONS = ("-Xmx64m", "-Xss1m", "-XX:ReservedCodeCacheSize=64m",
               "-XX:CompressedClassSpaceSize=64m", "-XX:MaxMetaspaceSize=64m",
               "-XX:+UseSerialGC")

MARKER = "peer.json"


def root() -> Path:
    """Where ``make setup`` builds: ``$UTF8FUZZ_PEERS_DIR``, else inside the venv."""
    env = os.environ.get("UTF8FUZZ_PEERS_DIR")
    return Path(env) if env else Path(sys.prefix) / "share" / "utf8fuzz" / "peers"


def user_root() -> Path:
    """Where ``utf8fuzz peers build`` builds: ``$UTF8FUZZ_PEERS_DIR``, else the
    user's cache (``$XDG_CACHE_HOME``, default ``~/.cache``), which needs no write
    access to the environment the package is installed in."""
    env = os.environ.get("UTF8FUZZ_PEERS_DIR")
    if env:
        return Path(env)
    cache = os.environ.get("XDG_CACHE_HOME")
    # the XDG spec: a relative value is invalid and is ignored
    base = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
    return base / "utf8fuzz" / "peers"


def roots() -> tuple[Path, ...]:
    """Where :func:`find` looks, in order: :func:`root`, then :func:`user_root`."""
    return tuple(dict.fromkeys((root(), user_root())))


def source_hash(lang: str) -> str:
    """12 hex digits naming the sources of ``lang``'s client and the recipe."""
    h = hashlib.sha256(f"utf8fuzz-peer {lang} recipe {RECIPE}\n".encode())
    if lang == "java":  # build.py writes them into the command it records
        h.update(" ".join(JVM_OPTIONS).encode() + b"\n")
    for rel in SOURCES[lang]:
        data = (HERE / rel).read_bytes()
        h.update(f"{rel} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()[:12]


def build_dir(lang: str, under: Path | None = None) -> Path:
    """The directory ``lang``'s current sources build into, under ``under``
    (default :func:`root`)."""
    return (root() if under is None else under) / f"{lang}-{source_hash(lang)}"


def rustc() -> str | None:
    """rustc on PATH, else rustup's ``~/.cargo/bin/rustc``."""
    found = shutil.which("rustc")
    if found:
        return found
    cargo = Path.home() / ".cargo" / "bin" / "rustc"
    return str(cargo) if os.access(cargo, os.X_OK) else None


def compiler(lang: str) -> str | None:
    """The compiler :mod:`.build` uses for ``lang``, or None when absent."""
    if lang == "go":
        return shutil.which("go")
    if lang == "java":
        return shutil.which("javac")
    if lang == "rust":
        return rustc()
    raise ValueError(f"no peer in {lang!r}")


def not_installed(lang: str) -> str:
    """The one line for a missing toolchain."""
    tool = {"go": "go", "java": "javac", "rust": "rustc"}[lang]
    return (f"{tool} is not installed (apt-get install {PACKAGES[lang]}, then "
            "utf8fuzz peers build)")


@dataclass(frozen=True)
class Built:
    """A finished build: its directory and what ``peer.json`` says of it."""

    lang: str
    path: Path
    command: tuple[str, ...]  # argv before the variant; relative names are in path
    toolchain: str  # the compiler's version line

    def argv(self, variant: str) -> list[str]:
        return [str(self.path / c) if c.startswith("./") else c
                for c in self.command] + [variant]


def find(lang: str) -> Built | None:
    """The build of ``lang``'s current sources in the first of :func:`roots` that
    has a complete one whose program (for Java, the ``java`` it records) is still
    there."""
    for r in roots():
        built = find_in(lang, r)
        if built is not None:
            return built
    return None


def find_in(lang: str, under: Path) -> Built | None:
    """:func:`find`, in ``under`` only."""
    d = build_dir(lang, under)
    try:
        info = json.loads((d / MARKER).read_text())
        command = tuple(str(c) for c in info["command"])
        toolchain = str(info.get("toolchain", ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not command:
        return None
    exe = d / command[0] if command[0].startswith("./") else Path(command[0])
    if not os.access(exe, os.X_OK):
        return None
    return Built(lang, d, command, toolchain)


def why_unavailable(lang: str) -> str:
    """Why :func:`find` found nothing: no toolchain, or not (re)built."""
    if compiler(lang) is None:
        return not_installed(lang)
    return "not built: run utf8fuzz peers build"


#: A peer's variant: (the call it makes, mode, policy, reasons, text only).
Variant = tuple[str, str, str, bool, bool]


def discover(lang: str, variants: dict[str, Variant],
             streaming: dict[str, str] | None = None) -> list[Decoder | Unavailable]:
    """``lang``'s decoders, one per variant (``LANG:VARIANT``, its own process,
    started on first use: :func:`utf8fuzz.decoders.exec.peer`), or one line each
    saying why the build is not there. Never runs or compiles anything.

    ``streaming``: streaming variant -> its one-shot sibling variant. A streaming
    variant is sent stream requests (the chunks of :mod:`utf8fuzz.decoders.chunks`)
    and is ``incremental``; it and its sibling are one family (``LANG:SIBLING``)."""
    built = find(lang)
    if built is None:
        why = why_unavailable(lang)
        return [Unavailable(f"{lang}:{v}", why) for v in variants]
    streaming = streaming or {}
    siblings = set(streaming.values())

    def family(v: str) -> str | None:
        sib = streaming.get(v, v if v in siblings else None)
        return f"{lang}:{sib}" if sib is not None else None

    return [peer(built.argv(v), name=f"{lang}:{v}", mode=mode, policy=policy, reasons=reasons,
                 text_only=text_only, versions={"call": call, "built with": built.toolchain},
                 stream=v in streaming, family=family(v))
            for v, (call, mode, policy, reasons, text_only) in variants.items()]


def find_java_runtime() -> str | None:
    """The ``java`` beside ``javac`` (the same JDK, so the class files it wrote
    are ones it runs), else the one on PATH."""
    javac = shutil.which("javac")
    if javac:
        beside = Path(javac).resolve().parent / "java"
        if os.access(beside, os.X_OK):
            return str(beside)
    return shutil.which("java")
