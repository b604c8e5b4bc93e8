"""Arguments shared by several commands: the input, and which decoders."""

from __future__ import annotations

import argparse

from utf8fuzz import safe
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.errors import UsageError

#: The largest input ``--file`` (or HEX) is read up to, unless ``--max-bytes`` says
#: otherwise: every decoder holds its whole outcome of the input in memory (about
#: 50 bytes per input byte with all decoders), and the fuzzer's longest inputs are
#: 64 KiB.
MAX_INPUT_BYTES = 1 << 20


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("hex", nargs="?", help="the input as hex, e.g. 'C0 80' or c080")
    p.add_argument("--file", metavar="PATH",
                   help="read the input from a file instead (a pipe or device too)")
    p.add_argument("--max-bytes", metavar="N", type=byte_count, default=MAX_INPUT_BYTES,
                   help=f"refuse an input longer than N bytes (default {MAX_INPUT_BYTES:,}: "
                        "about 50 bytes of memory per input byte)")


def byte_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of bytes") from None
    if n < 0:
        raise argparse.ArgumentTypeError("expected a number of bytes, not a negative one")
    return n


def read_input(args: argparse.Namespace) -> bytes:
    """The input HEX or ``--file`` names, at most ``--max-bytes`` long: a longer one
    (a file, a pipe, ``/dev/zero``) is refused with one line, having read no more
    than one byte past the limit."""
    limit: int = getattr(args, "max_bytes", MAX_INPUT_BYTES)
    if args.file and args.hex:
        raise UsageError("give either HEX or --file, not both")
    if args.file:
        return read_file(args.file, limit)
    if args.hex is None:
        raise UsageError("no input: give HEX or --file PATH")
    return _within(parse_hex(args.hex), limit)


def read_file(path: str, limit: int) -> bytes:
    """The file at ``path`` (a pipe or a device too), read to at most one byte past
    ``limit``: a longer one is refused with one line, its rest never read."""
    with open(path, "rb") as f:
        return _within(f.read(limit + 1), limit)


def _within(data: bytes, limit: int) -> bytes:
    if len(data) > limit:
        raise UsageError(f"the input is longer than {limit:,} bytes: give --max-bytes N "
                         "to take a longer one")
    return data


def parse_hex(text: str) -> bytes:
    cleaned = "".join(text.split()).replace("\\x", "").removeprefix("0x")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise UsageError(f"bad hex {safe.text(text, 40)}: expected pairs of hex digits") from None


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
