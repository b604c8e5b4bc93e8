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
``UCNV_TO_U_CALLBACK_SKIP``), so the output holds only characters and
:func:`~utf8fuzz.decoders._tiling.tile` gives each its span. ``U_TRUNCATED_CHAR_FOUND``
is reason ``truncated``; the others are ``illegal``.

The screen (the fuzz loop's cheap tier, :meth:`IcuConverter.screen`) is one
``ucnv_toUnicode`` call on a second converter that has ICU's own
``UCNV_TO_U_CALLBACK_SUBSTITUTE``: no Python callback, buffers reused, the
``replace`` view straight from ICU's UTF-16 output. A substitution is one U+FFFD
per callback, where the recording callback makes one error, so this is the replace
view of the tokens (tests check it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import itertools
import os
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from utf8fuzz.decoders._tiling import Event, TilingError, tile, utf8_bytes, utf16_codepoints
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import VIEWS, Outcome
from utf8fuzz.profiles._pairs import pair_encode

U_ZERO_ERROR = 0
U_TRUNCATED_CHAR_FOUND = 11
UCNV_IRREGULAR = 2  # reasons above this are reset/close/clone, not errors


class ToUArgs(ctypes.Structure):
    """``UConverterToUnicodeArgs`` (ucnv_err.h)."""

    _fields_ = [
        ("size", ctypes.c_uint16),
        ("flush", ctypes.c_int8),
        ("converter", ctypes.c_void_p),
        ("source", ctypes.c_void_p),
        ("sourceLimit", ctypes.c_void_p),
        ("target", ctypes.c_void_p),
        ("targetLimit", ctypes.c_void_p),
        ("offsets", ctypes.c_void_p),
    ]


ToUCallback = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.POINTER(ToUArgs), ctypes.c_void_p, ctypes.c_int32,
    ctypes.c_int, ctypes.POINTER(ctypes.c_int),
)


class IcuLib:
    """One loaded ``libicuuc`` and the few functions the adapter needs."""

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

        def fn(name: str, res: object, *args: object) -> Callable[..., object]:
            f = getattr(lib, name + suffix)
            f.restype, f.argtypes = res, list(args)
            return f  # type: ignore[no-any-return]

        vp, ip = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)
        self.open = fn("ucnv_open", vp, ctypes.c_char_p, ip)
        self.close = fn("ucnv_close", None, vp)
        self.reset = fn("ucnv_reset", None, vp)
        self.set_cb = fn("ucnv_setToUCallBack", None, vp, ToUCallback, vp, vp, vp, ip)
        self.to_unicode = fn("ucnv_toUnicode", None, vp, ctypes.POINTER(vp), vp,
                             ctypes.POINTER(vp), vp, vp, ctypes.c_int8, ip)
        self.error_name = fn("u_errorName", ctypes.c_char_p, ctypes.c_int)
        # ICU's own substituting callback, called from C: the screen's converter uses it.
        self.substitute = ToUCallback(
            ctypes.cast(getattr(lib, "UCNV_TO_U_CALLBACK_SUBSTITUTE" + suffix),
                        ctypes.c_void_p).value)
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

    def __init__(self, lib: IcuLib, converter: str, name: str, profile: str) -> None:
        self.lib, self.converter, self.name, self.profile = lib, converter, name, profile
        err = ctypes.c_int(0)
        self._cnv = lib.open(converter.encode(), ctypes.byref(err))
        if err.value > U_ZERO_ERROR or not self._cnv:
            raise OSError(f"ucnv_open({converter}): {lib.error_name(err.value).decode()}")
        self._cb = ToUCallback(self._callback)  # kept alive as long as the converter
        lib.set_cb(self._cnv, self._cb, None, None, None, ctypes.byref(err))
        self._screen_cnv: int | None = None
        self._sbuf = ctypes.create_string_buffer(0)
        self._events: list[Event] = []
        self._mismatch: str | None = None
        self._base = 0
        self._data = b""
        # How the converter's charset writes each output code point: CESU-8 writes a
        # supplementary one as a six-byte pair, and a lone surrogate (which ICU's
        # converter lets through) in three bytes, as UTF-8 would.
        self.encode: Callable[[int], bytes] = (
            _cesu8_bytes if profile == "cesu8" else utf8_bytes
        )

    def _callback(self, _ctx, args, code_units, length, reason, perr) -> None:  # type: ignore[no-untyped-def]
        if reason > UCNV_IRREGULAR:
            return
        end = args.contents.source - self._base
        start = end - length
        if self._data[start:end] != ctypes.string_at(code_units, length):
            self._mismatch = f"ICU's error bytes at [{start},{end}) are not the input's"
        code = perr[0]
        self._events.append((start, end, "truncated" if code == U_TRUNCATED_CHAR_FOUND
                             else "illegal"))
        # Where the output stood at this error: UTF-16 units on either side of it
        # must not be paired (a lone D83F, an error, a lone DC00 is not U+1FC00).
        self._cuts.append((args.contents.target or self._dst_base) - self._dst_base)
        perr[0] = U_ZERO_ERROR  # skip: nothing written, go on

    def versions(self) -> dict[str, str]:
        return {"icu": self.lib.version, "unicode": self.lib.unicode,
                "converter": self.converter, "library": os.path.basename(self.lib.path)}

    def run(self, data: bytes) -> Outcome:
        lib, n = self.lib, len(data)
        src = ctypes.create_string_buffer(data, n + 1)
        dst = (ctypes.c_uint16 * (n + 8))()
        self._base, self._data, self._events, self._mismatch = (
            ctypes.addressof(src), data, [], None)
        self._dst_base, self._cuts = ctypes.addressof(dst), []
        s = ctypes.c_void_p(ctypes.addressof(src))
        t = ctypes.c_void_p(ctypes.addressof(dst))
        err = ctypes.c_int(0)
        lib.reset(self._cnv)
        lib.to_unicode(self._cnv, ctypes.byref(t), ctypes.addressof(dst) + 2 * (n + 8),
                       ctypes.byref(s), self._base + n, None, 1, ctypes.byref(err))
        if err.value > U_ZERO_ERROR:
            raise RuntimeError(f"ucnv_toUnicode: {lib.error_name(err.value).decode()}")
        if self._mismatch:
            raise TilingError(self._mismatch)
        units = ctypes.string_at(dst, (t.value or 0) - ctypes.addressof(dst))
        cps: list[int] = []
        for a, b in itertools.pairwise([0, *self._cuts, len(units)]):
            cps += utf16_codepoints(units[a:b])
        toks = tile(data, cps, self._events, encode=self.encode)
        return Outcome.from_tokens(toks, n, self.versions(), data=data)

    def screen(self, data: bytes) -> dict[str, Any] | None:
        """``replace`` from ICU's substituting callback: one C call, buffers reused."""
        try:
            return self._screen(data)
        except Exception:
            return None

    def _screen(self, data: bytes) -> dict[str, Any] | None:
        lib, n = self.lib, len(data)
        if self._screen_cnv is None:
            self._open_screen()
        # Each input byte gives at most one UTF-16 unit (a 4-byte form two).
        if len(self._sdst) < 2 * n + 16:
            self._sdst = ctypes.create_string_buffer(4 * n + 64)
            self._sdst_addr = ctypes.addressof(self._sdst)
        if len(self._sbuf) < n + 1:
            self._sbuf = ctypes.create_string_buffer(2 * n + 64)
            self._sbuf_addr = ctypes.addressof(self._sbuf)
        ctypes.memmove(self._sbuf_addr, data, n)
        s, t, err = self._sptrs
        s.contents.value, t.contents.value, err.contents.value = (
            self._sbuf_addr, self._sdst_addr, U_ZERO_ERROR)
        lib.reset(self._screen_cnv)
        lib.to_unicode(self._screen_cnv, t, self._sdst_addr + len(self._sdst), s,
                           self._sbuf_addr + n, None, 1, err)
        if err.contents.value > U_ZERO_ERROR:
            return None  # let the full path report it
        units = ctypes.string_at(self._sdst_addr, (t.contents.value or 0) - self._sdst_addr)
        return {"replace": tuple(map(ord, units.decode("utf-16-le", "surrogatepass")))}

    def _open_screen(self) -> None:
        lib, err = self.lib, ctypes.c_int(0)
        cnv = lib.open(self.converter.encode(), ctypes.byref(err))
        if err.value > U_ZERO_ERROR or not cnv:
            raise OSError(f"ucnv_open({self.converter}): {lib.error_name(err.value).decode()}")
        lib.set_cb(cnv, lib.substitute, None, None, None, ctypes.byref(err))
        if err.value > U_ZERO_ERROR:
            lib.close(cnv)
            raise OSError(f"ucnv_setToUCallBack: {lib.error_name(err.value).decode()}")
        self._sdst = ctypes.create_string_buffer(256)
        self._sdst_addr = ctypes.addressof(self._sdst)
        self._sbuf = ctypes.create_string_buffer(128)
        self._sbuf_addr = ctypes.addressof(self._sbuf)
        self._sptrs = (ctypes.pointer(ctypes.c_void_p()), ctypes.pointer(ctypes.c_void_p()),
                       ctypes.pointer(ctypes.c_int(0)))
        self._screen_cnv = cnv

    def close(self) -> None:
        if self._cnv:
            self.lib.close(self._cnv)
            self._cnv = None
        if self._screen_cnv:
            self.lib.close(self._screen_cnv)
            self._screen_cnv = None


def _cesu8_bytes(cp: int) -> bytes:
    return pair_encode(cp) if cp > 0xFFFF else utf8_bytes(cp)  # type: ignore[return-value]


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


def discover() -> list[Decoder | Unavailable]:
    out: list[Decoder | Unavailable] = []
    sysl, bundled = system_library(), bundled_library()
    sources = []
    if sysl:
        sources.append(("icu", sysl))
    if bundled:
        sources.append(("icu" if not sysl else "icu:bundled", bundled))
    if not sources:
        return [Unavailable("icu", "no libicuuc on this system and icu4py is not installed "
                                   "(apt-get install libicu-dev, or pip install icu4py)")]
    for prefix, path in sources:
        cesu = "icu:cesu8" if prefix == "icu" else f"{prefix}-cesu8"
        for name, conv, profile in ((prefix, "UTF-8", "unicode"), (cesu, "CESU-8", "cesu8")):
            try:
                out.append(IcuConverter(_load(path), conv, name, profile))
            except OSError as e:
                out.append(Unavailable(name, f"cannot use {path}: {e}"))
    return out
