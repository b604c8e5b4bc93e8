"""``utf8fuzz convert``: standard UTF-8 <-> Corrected UTF-8, file to file."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from utf8fuzz import safe
from utf8fuzz.commands._common import byte_count, read_file

#: The largest file ``convert`` reads unless ``--max-bytes`` says otherwise: the
#: input and its conversion are both held in memory.
MAX_CONVERT_BYTES = 256 << 20

HELP = "convert a file between standard UTF-8 and Corrected UTF-8"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--to", choices=("corrected", "utf8"), required=True)
    p.add_argument("input", help="the file to read")
    p.add_argument("output", help="the file to write (replaced atomically)")
    p.add_argument("--max-bytes", metavar="N", type=byte_count, default=MAX_CONVERT_BYTES,
                   help=f"refuse an input longer than N bytes (default {MAX_CONVERT_BYTES:,})")


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.profiles import corrected

    data = read_file(args.input, args.max_bytes)
    convert = corrected.from_utf8 if args.to == "corrected" else corrected.to_utf8
    out = convert(data)  # ConversionError (a ValueError): one line, exit 2
    write_atomically(Path(args.output), out)
    print(f"wrote {len(out)} bytes to {safe.text(args.output)}")  # a name may hold ESC
    return 0


def write_atomically(path: Path, data: bytes) -> None:
    """Write beside the target, then rename: a reader sees the old file or the new."""
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
