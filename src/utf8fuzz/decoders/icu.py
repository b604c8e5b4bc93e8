"""ICU's C converter API, through ctypes: ``ucnv_toUnicode`` with a to-Unicode
callback that records every error span.

This is the API every ICU user's UTF-8 decoding goes through (PyICU, Chromium's
and LibreOffice's converters, ``uconv``). The library is the system's
``libicuuc`` when there is one, and the copy the ``icu4py`` wheel bundles
otherwise; when both exist the bundled one is a second peer (another ICU
version). ICU renames its symbols by version (``ucnv_open_72``), so the suffix
is read from the library's file name.

======================  =========  ===================================
name                    profile    what
======================  =========  ===================================
``icu``                 unicode    the ``UTF-8`` converter
``icu:cesu8``           cesu8      the ``CESU-8`` converter
``icu:bundled``         unicode    ``UTF-8`` in icu4py's ICU (if a system ICU exists too)
``icu:bundled-cesu8``   cesu8      ``CESU-8`` in icu4py's ICU
======================  =========  ===================================

The callback. ICU calls it for each illegal, irregular or truncated sequence
with the bytes (``codeUnits``, ``length``) and ``args->source`` already past them.
The whole input goes in one ``ucnv_toUnicode`` call with ``flush`` set, so the
error's absolute end is ``args->source`` minus the input's address and its start
is ``length`` bytes before; the callback checks that those input bytes are the
``codeUnits`` ICU passed. It writes nothing and clears the error (like
``UCNV_TO_U_CALLBACK_SKIP``), so the output holds only characters, and each
character gets its span by re-encoding it (the walk of
:func:`~utf8fuzz.decoders._tiling.tile`, which raises :class:`TilingError` when
the library's output does not account for its input). ``U_TRUNCATED_CHAR_FOUND``
is reason ``truncated``; the others are ``illegal``. UTF-16 units on either side
of an error are never paired: the callback records where the output stood.

Native glue. The call, the callback and the tiling run in C
(:mod:`utf8fuzz.decoders._icu`): through ctypes they cost tens of
microseconds per fuzz input (a Python callback per error), in C a few. ICU is
still loaded here with ctypes - two different ICUs with version-suffixed symbols
can coexist in one process - and C gets the function addresses and the
converter as integers, so the extension links no ICU. There is no slow path
beside it: that would be a second implementation to keep equal.
tests/decoders/test_icu.py keeps the old pure-ctypes path as the oracle the C
glue is checked against.

The screen (the fuzz loop's cheap tier) is the same conversion, given as its tokens
alone, packed (:func:`utf8fuzz.outcome.pack_tokens`: one bytes object, no Token
object, which the differ compares with the reference's packing at once); every
view follows from them, and where the full path would raise, it says None. So the
screen is whole (``screen_is_whole``): the fuzz loop never converts an input
twice to sample the full outcome, and on a difference (the CESU-8 converters differ
on a third of fuzz inputs) the screen is judged as it is. It once gave the six
other views too, as strs and tuples: made and freed on every input, four
converters over, for a comparison that ends at the tokens.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from utf8fuzz.decoders import _icu
from utf8fuzz.decoders._tiling import TilingError
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import VIEWS, Outcome

U_ZERO_ERROR = 0


class IcuLib:
    """One loaded ``libicuuc``: the functions the adapter calls from Python, and the
    addresses of those the C glue calls."""

    def __init__(self, path: str) -> None:
        self.path = path
        lib = ctypes.CDLL(path)
        m = re.search(r"\.so\.(\d+)", os.path.basename(path))
        suffixes = ([f"_{m.group(1)}"] if m else []) + [""]
        for suffix in suffixes:
            if hasattr(lib, f"ucnv_open{suffix}"):
                break
        else:
            raise OSError(f"{path} has no ucnv_open")

        # A ctypes function: what a call returns follows from restype at run time,
        # so each attribute below declares the signature it was given.
        def fn(name: str, res: object, *args: object) -> Any:
            f = getattr(lib, name + suffix)
            f.restype, f.argtypes = res, list(args)
            return f

        def addr(name: str) -> int:
            return ctypes.cast(getattr(lib, name + suffix), ctypes.c_void_p).value or 0

        vp, ip = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)
        self.open: Callable[[bytes, Any], int | None] = fn(
            "ucnv_open", vp, ctypes.c_char_p, ip)
        self.close: Callable[[int], None] = fn("ucnv_close", None, vp)
        self.error_name: Callable[[int], bytes] = fn("u_errorName", ctypes.c_char_p, ctypes.c_int)
        # What the C glue calls (icu_decode's first three arguments).
        self.glue = (addr("ucnv_toUnicode"), addr("ucnv_reset"), addr("ucnv_setToUCallBack"))
        ver = ctypes.c_uint8 * 4
        get_version, get_uversion = fn("u_getVersion", None, ver), fn(
            "u_getUnicodeVersion", None, ver)
        v, u = ver(), ver()
        get_version(v)
        get_uversion(u)
        self.version = ".".join(str(x) for x in v[:2])
        self.unicode = ".".join(str(x) for x in u[:2 if u[2] == 0 else 3])


class IcuConverter(Decoder):
    shows = frozenset(VIEWS)
    screen_is_whole = True
    # its C glue reads any buffer (Py_buffer): handed a view inside a larger one, a
    # read past the view's end shows (engine/calls.py)
    takes_views = True

    def __init__(self, lib: IcuLib, converter: str, name: str, profile: str) -> None:
        self.lib, self.converter, self.name, self.profile = lib, converter, name, profile
        err = ctypes.c_int(0)
        self._cnv = lib.open(converter.encode(), ctypes.byref(err))
        if err.value > U_ZERO_ERROR or not self._cnv:
            raise OSError(f"ucnv_open({converter}): {lib.error_name(err.value).decode()}")
        # CESU-8 writes a supplementary code point as a six-byte pair, and a lone
        # surrogate (which ICU's converter lets through) in three bytes, as UTF-8 would.
        self._args = (*lib.glue, self._cnv)
        self._cesu8 = profile == "cesu8"

    def versions(self) -> dict[str, str]:
        return {"icu": self.lib.version, "unicode": self.lib.unicode,
                "converter": self.converter, "library": os.path.basename(self.lib.path)}

    def run(self, data: bytes) -> Outcome:
        if not self._cnv:
            raise RuntimeError("the converter is closed")
        r = _icu.icu_decode(*self._args, data, self._cesu8)
        if type(r) is tuple:  # tiled in C, by construction: no second check
            return Outcome.from_tokens(r, len(data), self.provenance(), data=bytes(data),
                                       check=False)
        if type(r) is int:
            raise RuntimeError(f"ucnv_toUnicode: {self.lib.error_name(r).decode()}")
        raise TilingError(r)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        """The same conversion's tokens, packed, alone (every view follows from
        them), or None."""
        if not self._cnv:
            return None
        try:
            return _icu.icu_screen(*self._args, data, self._cesu8)
        except Exception:
            return None

    def close(self) -> None:
        if self._cnv:
            self.lib.close(self._cnv)
            self._cnv = None


def system_library() -> str | None:
    name = ctypes.util.find_library("icuuc")
    return name


def bundled_library() -> str | None:
    """The libicuuc inside the icu4py wheel (``icu4py.libs/libicuuc-<hash>.so.<ver>``)."""
    try:
        import icu4py
    except ImportError:
        return None
    root = os.path.dirname(os.path.dirname(icu4py.__file__))
    hits = sorted(glob.glob(os.path.join(root, "icu4py.libs", "libicuuc*.so*")))
    return hits[0] if hits else None


@cache
def _load(path: str) -> IcuLib:
    return IcuLib(path)


def sources() -> list[tuple[str, str]]:
    """(name prefix, library path) of every ICU this machine has."""
    out = []
    sysl, bundled = system_library(), bundled_library()
    if sysl:
        out.append(("icu", sysl))
    if bundled:
        out.append(("icu" if not sysl else "icu:bundled", bundled))
    return out


def discover() -> list[Decoder | Unavailable]:
    out: list[Decoder | Unavailable] = []
    found = sources()
    if not found:
        return [Unavailable("icu", "no libicuuc on this system and icu4py is not installed "
                                   "(apt-get install libicu-dev, or pip install icu4py)")]
    for prefix, path in found:
        cesu = "icu:cesu8" if prefix == "icu" else f"{prefix}-cesu8"
        for name, conv, profile in ((prefix, "UTF-8", "unicode"), (cesu, "CESU-8", "cesu8")):
            try:
                out.append(IcuConverter(_load(path), conv, name, profile))
            except OSError as e:
                out.append(Unavailable(name, f"cannot use {path}: {e}"))
    return out
