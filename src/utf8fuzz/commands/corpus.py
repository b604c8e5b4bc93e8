"""``utf8fuzz corpus check|list|prune|refresh|migrate [DIR]``: verify, list, prune,
refresh or migrate.

Each bad sidecar is reported by its path with the reason, one per line; the others
are counted as good. Exit 0 when every entry is good, 1 when any is bad; ``check``
also reads ``known.toml`` (:mod:`utf8fuzz.triage.known`), and one it cannot use is
one line and exit 2.
``corpus list`` prints one line per entry (signature, size, engine, date).
``corpus prune`` removes the entries whose signature the current engine no longer
gives on their input (``--dry-run`` only lists them); entries whose decoders are not
available here are kept. Options and DIR come in any order. A DIR that is not a
corpus (no ``entries/`` and no ``inputs/``) or does not exist is one line on stderr
and exit 2. Nothing read from the corpus is printed raw: ids, signatures, paths and
messages pass through :func:`utf8fuzz.safe.text`.

A corpus is data: a decoder it names runs only when it is this project's, an
installed entry point, or given with ``--decoder`` (prune, refresh, migrate); any
other is left unjudged (prune keeps its entry; migrate does not check its finding).

``corpus refresh [--decoder SPEC]`` records in each sidecar, as ``fixed``, every
owned decoder (this project's, recorded own, or given with ``--decoder``) that now
meets the expectation of its open finding (``--dry-run`` only lists them; see
:mod:`utf8fuzz.engine.replay`).

``corpus migrate`` rewrites entries of an older sidecar format in the current one
(:mod:`utf8fuzz.loop.migrate`: format 1's several-decoder signatures become one
entry per decoder, each with its finding), and explains again the entries whose
finding older explanation rules made; ``--dry-run`` only lists them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from utf8fuzz.decoders.base import Decoder

HELP = "verify (check), list, prune or refresh the corpus of saved divergences"


ACTIONS: tuple[tuple[str, str], ...] = (
    ("check", "verify every entry"),
    ("list", "show the entries, one per line"),
    ("prune", "drop the entries whose signature the engine no longer gives"),
    ("refresh", "record as fixed each open finding your decoder now passes"),
    ("migrate", "rewrite entries of an older format, or explained by older rules, "
                "in the current one"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    # One parser per action, each with its own optional DIR, so that options and DIR
    # come in any order: with "action [dir]" on one parser, argparse gives DIR its
    # default before it reads --dry-run, then refuses the DIR that follows.
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_ in ACTIONS:
        a = sub.add_parser(name, help=help_, description=help_)
        a.add_argument("dir", nargs="?", default="corpus",
                       help="corpus directory (default corpus)")
        a.add_argument("--dry-run", action="store_true",
                       help="prune, refresh, migrate: list only")
        a.add_argument("--json", action="store_true", help="print one JSON object")
        if name in ("refresh", "prune", "migrate"):
            # the only way a decoder a corpus names, not this project's, runs here
            a.add_argument("--decoder", action="append", default=[], metavar="SPEC",
                           help="your decoder (a name, module:attr[@profile[/policy]]"
                                "[+shape...] or exec:CMD); repeatable. A decoder the "
                                "corpus names runs only if given here or built in")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz import safe
    from utf8fuzz.engine import corpus, replay
    from utf8fuzz.triage import known

    root = Path(args.dir)
    corpus.require_corpus(root)  # one line and exit 2, from the CLI
    t = safe.text  # everything printed comes from the corpus: hostile until escaped
    if args.action == "refresh":
        return _refresh(root, args)
    if args.action == "migrate":
        return _migrate(root, args)
    if args.action == "prune":
        stale = replay.prune(root, dry_run=args.dry_run, extra=_given(args.decoder))
        verb = "would remove" if args.dry_run else "removed"
        for e in stale:
            print(f"{verb} {t(e.id)}  {t(e.signature)}")
        print(f"{verb} {len(stale)} stale entr{'y' if len(stale) == 1 else 'ies'} "
              f"from {t(root)}")
        return 0
    if args.action == "check":
        # known.toml is part of the corpus: one it cannot use is one line, exit 2
        # (KnownError), as `fuzz` and `report` refuse it.
        known.load(root)
    entries, problems, notes = corpus.check(root)
    if args.json:  # json.dumps writes ASCII only, every control character escaped
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
            print(f"{t(e.id)}  {len(e.data):>4} B  {t(found.get('engine', '?')):<10} "
                  f"{t(found.get('at', '?')):<20}  {t(e.signature)}")
    for p in problems:
        print(f"BAD  {t(p)}")
    for n in notes:
        print(f"note {t(n)}")
    print(f"{len(entries)} good, {len(problems)} bad entr{'y' if len(problems) == 1 else 'ies'} "
          f"in {t(root)}")
    return 1 if problems else 0


def _given(specs: list[str]) -> list[Decoder]:
    """The decoders the user names with ``--decoder``: the only specs resolved (a
    corpus's own names go through :func:`utf8fuzz.decoders.trusted`)."""
    from utf8fuzz import decoders

    return [d for spec in specs for d in decoders.resolve(spec)]


def _refresh(root: Path, args: argparse.Namespace) -> int:
    from utf8fuzz import safe
    from utf8fuzz.engine import replay

    t = safe.text
    done = replay.refresh(root, _given(args.decoder), dry_run=args.dry_run)
    if args.json:
        print(json.dumps({"corpus": str(root), "dry_run": args.dry_run, "fixed": [
            {"id": e.id, "signature": e.signature, "decoders": names} for e, names in done]},
            indent=2))
        return 0
    verb = "would record" if args.dry_run else "recorded"
    for e, names in done:
        for name in names:
            print(f"fixed {t(e.id)}  {t(name)}  {t(e.signature)}")
    n = sum(len(names) for _, names in done)
    print(f"{verb} {n} fix{'' if n == 1 else 'es'} in {len(done)} "
          f"entr{'y' if len(done) == 1 else 'ies'} of {t(root)}")
    return 0


def _migrate(root: Path, args: argparse.Namespace) -> int:
    from utf8fuzz import safe
    from utf8fuzz.loop.migrate import migrate

    t = safe.text
    done = migrate(root, dry_run=args.dry_run, extra=_given(args.decoder))
    if args.json:
        print(json.dumps({"corpus": str(root), "dry_run": args.dry_run,
                          "converted": [{"id": old, "now": new} for old, new in done.converted],
                          "reexplained": [{"id": i, "was": was, "now": now}
                                          for i, was, now in done.reexplained],
                          "current": done.current, "notes": done.notes}, indent=2))
        return 0
    for old, new in done.converted:
        print(f"{t(old)} -> {' '.join(t(n) for n in new)}")
    for i, was, now in done.reexplained:
        print(f"{t(i)} explained again: {t(was)} -> {t(now)}")
    for n in done.notes:
        print(f"note {t(n)}")
    verb = "would convert" if args.dry_run else "converted"
    again = "would explain" if args.dry_run else "explained"
    print(f"{verb} {len(done.converted)} entr{'y' if len(done.converted) == 1 else 'ies'}, "
          f"{again} {len(done.reexplained)} again by the current rules, "
          f"{done.current} already current, in {t(root)}")
    return 0
