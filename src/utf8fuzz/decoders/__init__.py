"""Decoder adapters, one module each, and the registry that finds them.

Each module in ``ADAPTERS`` exposes ``discover()`` (see :mod:`.base`). The
registry asks each in turn; a module that is missing or fails to import is
reported as unavailable with its reason, never as an error.

Names. ``resolve(spec)`` accepts a decoder name (``cpython:replace``), a glob
(``cpython:*``), or a user's decoder as ``module:attr`` with an optional claim and
shape (``mypkg.codec:decode@corrected/per-byte+codec``), handled by :mod:`.plugin`, or a
program in any language as ``exec:'CMD ARGS'[@profile[/policy]]``, handled by :mod:`.exec`;
both parsed by :mod:`.spec`, the one grammar of decoder specs.

Trust. ``resolve`` is for what a person names (``--decoder``, the pytest plugin's
``--utf8fuzz-decoder``): it imports modules and starts programs. A name read from a
corpus (a sidecar, ``known.toml``) is data, possibly hostile, and becomes a decoder
only through :func:`trusted`, which never imports, runs or globs anything.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Sequence
from functools import cache

from utf8fuzz.decoders.base import Decoder, Unavailable

#: Adapter modules, in the order ``utf8fuzz decoders`` lists them.
ADAPTERS: tuple[str, ...] = (
    "reference",
    "cpython",
    "fast",
    "icu",
    "pyicu",
    "iconv",
    "node",
    "mutf8",
    "go",
    "java",
    "rust",
    "plugin",
)


@cache
def discover_all() -> tuple[tuple[Decoder, ...], tuple[Unavailable, ...]]:
    found: list[Decoder] = []
    missing: list[Unavailable] = []
    for mod in ADAPTERS:
        try:
            m = importlib.import_module(f"utf8fuzz.decoders.{mod}")
        except ModuleNotFoundError as e:
            if e.name == f"utf8fuzz.decoders.{mod}":
                continue  # adapter not written
            missing.append(Unavailable(mod, f"cannot import: {e}"))
            continue
        except Exception as e:  # an adapter's import failing must not stop the rest
            missing.append(Unavailable(mod, f"cannot import: {type(e).__name__}: {e}"))
            continue
        offered: list[Decoder | Unavailable] = m.discover()
        for d in offered:
            if isinstance(d, Unavailable):
                missing.append(d)
            else:
                found.append(d)
    return tuple(found), tuple(missing)


def available() -> list[Decoder]:
    return list(discover_all()[0])


def unavailable() -> list[Unavailable]:
    return list(discover_all()[1])


class UnknownDecoder(ValueError):
    pass


def resolve(spec: str) -> list[Decoder]:
    """Decoders matching ``spec``: a name, a glob, a plug-in
    ``module:attr[@profile[/policy]][+words]`` or ``exec:'CMD ARGS'[@profile[/policy]]``."""
    if spec.startswith("exec:"):
        # a command, never a name or a glob: its own parser (shell quoting, claims)
        from utf8fuzz.decoders import exec as exec_adapter

        return exec_adapter.load(spec)
    found = available()
    hits = [d for d in found if fnmatch.fnmatchcase(d.name, spec)]
    if hits:
        return hits
    for u in unavailable():
        if fnmatch.fnmatchcase(u.name, spec):
            raise UnknownDecoder(f"decoder {u.name} is not available here: {u.reason}")
    if ":" in spec:
        # Not a decoder here: a user's ``module:attr[@profile][+words]``, one decoder
        # or one per codec mode. plugin.load_all raises UnknownDecoder with the
        # reason when it cannot be loaded.
        from utf8fuzz.decoders import plugin

        return plugin.load_all(spec)
    names = ", ".join(sorted({d.name.split(":")[0] + ":*" for d in found}))
    raise UnknownDecoder(f"unknown decoder {spec!r}; families here: {names}")


def trusted(name: str, given: Sequence[Decoder] = ()) -> Decoder | str:
    """The decoder a name read from a corpus stands for, or why there is none here.

    The one rule for corpus data: a recorded name is matched *exactly* against the
    decoders the user gave (``given``: ``--decoder``, ``--utf8fuzz-decoder``), then
    against :func:`available` (this project's adapters and installed entry points).
    Never a glob, never a ``module:attr`` import, never an ``exec:`` command, and a
    recorded ``spec`` is never read: a corpus that names code does not run it. The
    reason completes "NAME is not available here: ..."."""
    for d in given:
        if d.name == name:
            return d
    for d in available():
        if d.name == name:
            return d
    for u in unavailable():
        if u.name == name:
            return u.reason
    return ("recorded in the corpus, not given here (a decoder a corpus names runs only "
            "when given with --decoder)")


__all__ = ["Decoder", "Unavailable", "available", "discover_all", "resolve", "trusted",
           "unavailable"]
