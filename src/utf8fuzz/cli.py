"""The ``utf8fuzz`` command: a dispatcher over :mod:`utf8fuzz.commands`.

Each command is one module with ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code). To add one, write the module and name it in
``COMMANDS``. Modules keep heavy imports inside ``run`` so that ``--help`` is fast.

Errors a user can cause (bad hex, a missing file, an unknown profile or decoder,
a bad option) are raised as :class:`UsageError` - or ValueError/OSError from the
API - and printed as one line on stderr with exit status 2, never a traceback.
Anything else is a bug: its traceback is printed and the exit status is 3, what
``utf8fuzz fuzz`` says when a run failed (``make fuzz`` fails on it).

Every message goes through :func:`utf8fuzz.safe.text`: it quotes what the user typed
(a file name, an argument), a plug-in's name or what its code raised, and any of
those may hold terminal escapes, bidi overrides or NULs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from utf8fuzz import safe
from utf8fuzz.decoders.base import install_interrupt_handler
from utf8fuzz.errors import UsageError

#: Exit status of an unexpected exception: "the command failed", as for a fuzz run
#: that failed; not 1, which ``utf8fuzz fuzz`` uses for "new divergences saved", nor
#: 2, a usage error.
EXIT_BUG = 3

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
    ("peers", "utf8fuzz.commands.peers"),
    ("init", "utf8fuzz.commands.init"),
)


class _Parser(argparse.ArgumentParser):
    """argparse with its error as one escaped line: it quotes what was typed
    (``unrecognized arguments`` verbatim), and a user can type ESC. Subparsers
    are made by the parent's class, so they inherit this."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{safe.text(self.prog)}: {safe.text(message)} "
                     f"(see {safe.text(self.prog)} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
        p.set_defaults(func=mod.run, command_parser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command's parser, which names the command and its --help
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    install_interrupt_handler()  # a decoder's own KeyboardInterrupt is not a Ctrl-C
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (``utf8fuzz expect ... | head``): nothing to say to it,
        # and the interpreter's flush at exit must not fail on stdout again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except (UsageError, ValueError, TypeError, LookupError, OSError) as e:
        msg = str(e) or type(e).__name__
        if isinstance(e, OSError) and e.filename:
            msg = f"{e.strerror or 'cannot read'}: {e.filename}"
        print(f"utf8fuzz {args.command}: {safe.text(msg)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"utf8fuzz {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception:
        # A bug (ours or a plug-in's): the traceback is what a report of it needs, but
        # Python would print its messages raw, so it is escaped line by line.
        lines = traceback.format_exc().splitlines()
        sys.stderr.write("".join(safe.text(ln, None) + "\n" for ln in lines))
        print(f"utf8fuzz {args.command}: unexpected error (traceback above)", file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
