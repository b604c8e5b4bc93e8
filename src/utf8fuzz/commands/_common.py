"""Arguments shared by several commands: the input, and which decoders."""

from __future__ import annotations

import argparse
from pathlib import Path

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.errors import UsageError


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("hex", nargs="?", help="the input as hex, e.g. 'C0 80' or c080")
    p.add_argument("--file", metavar="PATH", help="read the input from a file instead")


def read_input(args: argparse.Namespace) -> bytes:
    if args.file and args.hex:
        raise UsageError("give either HEX or --file, not both")
    if args.file:
        return Path(args.file).read_bytes()
    if args.hex is None:
        raise UsageError("no input: give HEX or --file PATH")
    return parse_hex(args.hex)


def parse_hex(text: str) -> bytes:
    cleaned = "".join(text.split()).replace("\\x", "").removeprefix("0x")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise UsageError(f"bad hex {text[:40]!r}: expected pairs of hex digits") from None


def add_decoder_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--decoder",
        action="append",
        metavar="NAME",
        default=[],
        help=("a decoder name or glob (cpython:*), your own module:attr[@profile[/policy]]"
              "[+shape...] or exec:'CMD'[@profile[/policy]]; repeatable"),
    )
    p.add_argument(
        "--profile",
        action="append",
        metavar="P",
        default=[],
        help="only decoders (and references) that claim profile P; repeatable",
    )


def select_decoders(args: argparse.Namespace) -> list[Decoder]:
    """The decoders a command should use: those named, else every available one;
    then narrowed to the profiles asked for."""
    from utf8fuzz import decoders
    from utf8fuzz.profiles import get_profile

    for p in args.profile:
        get_profile(p)  # unknown profile -> ValueError listing the names
    chosen: list[Decoder] = []
    if args.decoder:
        for spec in args.decoder:
            try:
                found = decoders.resolve(spec)
            except decoders.UnknownDecoder as e:
                raise UsageError(str(e)) from None
            chosen += [d for d in found if d not in chosen]
    else:
        chosen = decoders.available()
    if args.profile:
        chosen = [d for d in chosen if d.profile in args.profile]
    if not chosen:
        raise UsageError("no decoder matches the selection")
    return chosen
