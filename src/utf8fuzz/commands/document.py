"""``utf8fuzz document``: check a Corrected UTF-8 document against the proposal's rules."""

from __future__ import annotations

import argparse
import json

from utf8fuzz import safe
from utf8fuzz.commands._common import add_input_arguments, read_input

HELP = "check a Corrected UTF-8 document: magic number, U+0000 (MUST NOT), SHOULD rules"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when conforming (warnings allowed), 1 when a MUST rule is broken."""
    from utf8fuzz.profiles.corrected import check_document

    doc = check_document(read_input(args))
    findings = {
        "errors": [vars(f) for f in doc.errors],
        "warnings": [vars(f) for f in doc.warnings],
    }
    if args.json:
        print(json.dumps({"magic": doc.magic, "conforming": doc.conforming, **findings},
                         indent=2, sort_keys=True))
    else:
        print(f"magic number: {'present' if doc.magic else 'absent'}")
        for level in ("errors", "warnings"):
            for f in findings[level]:
                print(f"{level[:-1]}: bytes [{f['start']},{f['end']}): "
                      f"{safe.text(f['message'])} ({safe.text(f['clause'])})")
        print("conforming" if doc.conforming else "not conforming")
    return 0 if doc.conforming else 1
