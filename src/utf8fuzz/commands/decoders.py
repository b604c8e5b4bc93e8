"""``utf8fuzz decoders``: what can decode on this machine, with versions."""

from __future__ import annotations

import argparse
import json

from utf8fuzz import safe

HELP = "list the decoders available here (with versions) and, for each missing one, why"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text

    from utf8fuzz import decoders
    from utf8fuzz.commands._console import console as make_console
    from utf8fuzz.engine.calls import offered
    from utf8fuzz.outcome import VIEWS

    found, missing = decoders.discover_all()
    if args.json:
        print(json.dumps({
            "available": [{**d.describe(), "checks": sorted(c for c, on in offered(d).items()
                                                            if on)}
                          for d in found],
            "unavailable": [{"name": u.name, "reason": u.reason} for u in missing],
        }, indent=2, sort_keys=True, ensure_ascii=True))  # ASCII: a plug-in's words are hostile
        return 0
    table = Table(title="decoders available here")
    table.add_column("decoder", overflow="fold", no_wrap=False, min_width=18)
    table.add_column("profile", overflow="fold")
    table.add_column("policy", overflow="fold")
    table.add_column("shows", overflow="fold")
    # the checks of the call each decoder gets in the fuzz loop (engine/calls.py)
    table.add_column("checks", overflow="fold")
    table.add_column("versions", overflow="fold")
    # The references differ only by policy: one row per profile keeps the table short.
    refs: dict[str, list[str]] = {}
    for d in found:
        if d.name.startswith("ref:"):
            refs.setdefault(d.profile, []).append(d.policy)
    for profile, policies in refs.items():
        table.add_row(Text(safe.text(f"ref:{profile}:*")), Text(safe.text(profile)),
                      Text(safe.text(", ".join(policies))),
                      Text("every view"), Text("-"), Text("utf8fuzz (spec transcription)"))
    every = frozenset(VIEWS)
    for d in found:
        if d.name.startswith("ref:"):
            continue
        vers = ", ".join(f"{k} {v}" for k, v in d.versions().items() if k != "spec")
        shows = "every view" if d.shows >= every else " ".join(v for v in VIEWS if v in d.shows)
        checks = " ".join(c for c, on in offered(d).items() if on) or "-"
        # a plug-in names itself and states its own versions: anything may be in them
        table.add_row(*(Text(safe.text(x)) for x in (d.name, d.profile, d.policy, shows,
                                                      checks, vers)))
    console = make_console()
    console.print(table)
    for u in missing:
        console.print(Text(f"unavailable: {safe.text(u.name)}: {safe.text(u.reason)}"))
    return 0
