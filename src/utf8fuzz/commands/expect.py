"""``utf8fuzz expect HEX [--profile P]``: what a conforming decoder must produce.

Prints the ICU-style expectation (:mod:`utf8fuzz.engine.expect`): for the
substitute, skip and stop callback modes, the output code points, the source offset
of each, and each error with its bytes and reason. ``--json`` prints the object a
user can paste into their own decoder's tests (and that corpus sidecars embed).
"""

from __future__ import annotations

import argparse
import json

from utf8fuzz.commands._common import add_input_arguments, read_input

HELP = "print what a conforming decoder must produce for one input (ICU-style)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    p.add_argument("--profile", default="unicode", metavar="P",
                   help="the profile to judge by (default unicode)")
    p.add_argument("--policy", default="maximal-subpart",
                   help="how errors are cut (default maximal-subpart)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.engine.expect import expectation, format_text
    from utf8fuzz.policies import POLICIES
    from utf8fuzz.profiles import get_profile

    data = read_input(args)
    get_profile(args.profile)
    if args.policy not in POLICIES:
        raise ValueError(f"unknown policy {args.policy!r}; policies are {', '.join(POLICIES)}")
    exp = expectation(data, args.profile, args.policy)
    if args.json:
        print(json.dumps(exp, indent=2))
    else:
        print(format_text(exp))
    return 0
