"""``utf8fuzz corpus check|list|prune [DIR]``: verify, list or prune the corpus.

Each bad sidecar is reported by its path with the reason, one per line; the others
are counted as good. Exit 0 when every entry is good, 1 when any is bad.
``corpus list`` prints one line per entry (signature, size, engine, date).
``corpus prune`` removes the entries whose signature the current engine no longer
gives on their input (``--dry-run`` only lists them); entries whose decoders are not
available here are kept.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "verify (check), list or prune the corpus of saved divergences"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("check", "list", "prune"),
                   help="check: verify; list: show entries; prune: drop stale signatures")
    p.add_argument("--dry-run", action="store_true", help="prune: list, remove nothing")
    p.add_argument("dir", nargs="?", default="corpus", help="corpus directory (default corpus)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.engine import corpus, replay

    root = Path(args.dir)
    if not root.is_dir():
        raise FileNotFoundError(2, "no such corpus directory", str(root))
    if args.action == "prune":
        stale = replay.prune(root, dry_run=args.dry_run)
        verb = "would remove" if args.dry_run else "removed"
        for e in stale:
            print(f"{verb} {e.id}  {e.signature}")
        print(f"{verb} {len(stale)} stale entr{'y' if len(stale) == 1 else 'ies'} from {root}")
        return 0
    entries, problems, notes = corpus.check(root)
    if args.json:
        print(json.dumps({
            "corpus": str(root),
            "entries": [{"id": e.id, "signature": e.signature, "input": e.data.hex()}
                        for e in entries],
            "problems": [{"path": str(p.path), "message": p.message} for p in problems],
            "notes": [{"path": str(p.path), "message": p.message} for p in notes],
        }, indent=2))
        return 1 if problems else 0
    if args.action == "list":
        for e in entries:
            found = e.sidecar.get("found") or {}
            print(f"{e.id}  {len(e.data):>4} B  {found.get('engine', '?'):<10} "
                  f"{found.get('at', '?'):<20}  {e.signature}")
    for p in problems:
        print(f"BAD  {p}")
    for n in notes:
        print(f"note {n}")
    print(f"{len(entries)} good, {len(problems)} bad entr{'y' if len(problems) == 1 else 'ies'} "
          f"in {root}")
    return 1 if problems else 0
