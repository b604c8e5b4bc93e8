"""``utf8fuzz decoders``: what can decode on this machine, with versions."""

from __future__ import annotations

import argparse
import json

HELP = "list the decoders available here (with versions) and, for each missing one, why"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from utf8fuzz import decoders

    found, missing = decoders.discover_all()
    if args.json:
        print(json.dumps({
            "available": [d.describe() for d in found],
            "unavailable": [{"name": u.name, "reason": u.reason} for u in missing],
        }, indent=2, sort_keys=True))
        return 0
    table = Table(title="decoders available here")
    for col in ("decoder", "profile", "policy", "shows", "versions"):
        table.add_column(col)
    for d in found:
        vers = ", ".join(f"{k} {v}" for k, v in d.versions().items() if k != "spec")
        table.add_row(*(Text(x) for x in (d.name, d.profile, d.policy, " ".join(sorted(d.shows)),
                                         vers)))
    console = Console()
    console.print(table)
    for u in missing:
        console.print(Text(f"unavailable: {u.name}: {u.reason}"))
    return 0
