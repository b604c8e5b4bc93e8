"""The ``utf8fuzz`` command: a dispatcher over :mod:`utf8fuzz.commands`.

Each command is one module with ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code). To add one, write the module and name it in
``COMMANDS``. Modules keep heavy imports inside ``run`` so that ``--help`` is fast.

Errors a user can cause (bad hex, a missing file, an unknown profile or decoder)
are raised as :class:`UsageError` - or ValueError/OSError from the API - and
printed as one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from utf8fuzz.errors import UsageError

COMMANDS: tuple[tuple[str, str], ...] = (
    ("diff", "utf8fuzz.commands.diff"),
    ("expect", "utf8fuzz.commands.expect"),
    ("decoders", "utf8fuzz.commands.decoders"),
    ("fuzz", "utf8fuzz.commands.fuzz"),
    ("corpus", "utf8fuzz.commands.corpus"),
    ("report", "utf8fuzz.commands.report"),
    ("bench", "utf8fuzz.commands.bench"),
    ("document", "utf8fuzz.commands.document"),
    ("convert", "utf8fuzz.commands.convert"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="utf8fuzz",
        description="Differential fuzzing of UTF-8 decoders against the specs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname in COMMANDS:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue  # command not written yet
            raise
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(func=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError, TypeError, LookupError, OSError) as e:
        msg = str(e) or type(e).__name__
        if isinstance(e, OSError) and e.filename:
            msg = f"{e.strerror or 'cannot read'}: {e.filename}"
        print(f"utf8fuzz {args.command}: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"utf8fuzz {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
