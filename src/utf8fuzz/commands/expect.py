"""``utf8fuzz expect HEX [--profile P]``: what a conforming decoder must produce.

Prints the ICU-style expectation (:mod:`utf8fuzz.engine.expect`): for the
substitute, skip and stop callback modes, the output code points, the source offset
of each, and each error with its bytes and reason. ``--json`` prints the object a
user can paste into their own decoder's tests (and that corpus sidecars embed).
Both are written from the reference's walk as they go, so a megabyte of input
takes about a second and a hundred MB (:mod:`utf8fuzz.engine.expect`).
"""

from __future__ import annotations

import argparse
import sys

from utf8fuzz.commands._common import add_input_arguments, read_input

HELP = "print what a conforming decoder must produce for one input (ICU-style)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    p.add_argument("--profile", default="unicode", metavar="P",
                   help="the profile to judge by (default unicode)")
    p.add_argument("--policy", default="maximal-subpart",
                   help="how errors are cut (default maximal-subpart)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object, every token of it (the text lists the first "
                        "1000 code points and 100 errors of each mode, and counts the rest)")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.engine.expect import summary_text, write_json
    from utf8fuzz.policies import POLICIES
    from utf8fuzz.profiles import get_profile

    data = read_input(args)
    get_profile(args.profile)
    if args.policy not in POLICIES:
        raise ValueError(f"unknown policy {args.policy!r}; policies are {', '.join(POLICIES)}")
    if args.json:
        write_json(data, sys.stdout.write, args.profile, args.policy)
        print()
    else:
        print(summary_text(data, args.profile, args.policy))
    return 0
