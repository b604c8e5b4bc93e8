"""``utf8fuzz peers build``: compile the Go, Java and Rust peers from the installed
package, without make.

Builds each peer whose toolchain is on this machine into the user's cache
(:func:`utf8fuzz.decoders.peers.user_root`: ``$UTF8FUZZ_PEERS_DIR``, else
``$XDG_CACHE_HOME/utf8fuzz/peers``), where ``utf8fuzz decoders`` and every command
find it. One line per language: built, up to date (wherever it was built), or the
toolchain that is missing and the package that provides it. Exit status 0 when
every language is built or only lacks its toolchain, 1 when a compiler failed,
2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from utf8fuzz import safe

HELP = "build the Go, Java and Rust peer decoders into your cache (no make needed)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from utf8fuzz.decoders.peers import SOURCES

    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    b = sub.add_parser("build", help="compile each peer whose toolchain is installed",
                       description="Compile each peer whose toolchain is installed into "
                                   "the user's cache.")
    b.add_argument("langs", nargs="*", metavar="LANG",
                   help=f"any of {', '.join(SOURCES)} (default: all)")
    b.add_argument("--force", action="store_true", help="rebuild what exists")
    b.add_argument("--json", action="store_true",
                   help="one JSON object: each language's status and message")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.decoders import peers
    from utf8fuzz.decoders.peers import build
    from utf8fuzz.errors import UsageError

    bad = [lang for lang in args.langs if lang not in peers.SOURCES]
    if bad:
        raise UsageError(f"no peer in {bad[0]!r}; peers are {', '.join(peers.SOURCES)}")
    under = peers.user_root()
    status = 0
    out: dict[str, dict[str, object]] = {}
    for lang in dict.fromkeys(args.langs or peers.SOURCES):
        t0 = time.monotonic()
        what, msg = build.build(lang, force=args.force, under=under)
        took = round(time.monotonic() - t0, 1)
        out[lang] = {"status": what, "message": msg, "seconds": took}
        if what == "failed":
            status = 1
        if args.json:
            continue
        line = f"peers: {lang}: {what}"
        line += f" in {took} s: {msg}" if what in ("built", "failed") else f": {msg}"
        print("\n".join(safe.text(ln, None) for ln in line.splitlines()),
              file=sys.stderr if what == "failed" else sys.stdout)
    if args.json:
        print(json.dumps({"into": str(under), "peers": out}, indent=2, ensure_ascii=True))
    return status
