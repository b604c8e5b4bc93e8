"""glibc's ``iconv``, through ctypes, from UTF-8 to four targets.

=================  ===========  ====================================================
name               to           why it is a separate peer
=================  ===========  ====================================================
``iconv:utf32le``  UTF-32LE     UTF-32 has no surrogates and nothing above U+10FFFF
``iconv:ucs4``     UCS-4LE      glibc's internal form: 31 bits, so it lets F4 90 80 80
                                and 6-byte forms through
``iconv:wchar_t``  WCHAR_T      what ``mbstowcs``-style code gets
``iconv:utf8``     UTF-8        "validation" by converting to itself
=================  ===========  ====================================================

All claim the unicode profile (they are asked to read UTF-8).

What iconv reports. ``iconv()`` stops at the first problem and says only where it
stopped (how much input it consumed) and why: ``EILSEQ`` (an invalid sequence
starts here: reason ``illegal``) or ``EINVAL`` (an incomplete sequence ends the
input: ``truncated``, span to the end). It never says where an invalid sequence
ends, so for ``EILSEQ`` at ``p`` the end is *searched* with iconv itself: the
longest ``data[p:p+t]`` that iconv calls incomplete (``EINVAL``) is the invalid
sequence's maximal subpart, as far as glibc can tell, and a byte that begins none
is an error alone. The outcome shows ``strict`` and ``reason`` (and, on input
iconv accepts, the converted text as every substitution view).

Native glue. The calls, the span search included, are made from C
(:mod:`utf8fuzz.decoders._iconv`, through ``<iconv.h>``: glibc's iconv is
libc); through ctypes, the up to six calls per ill-formed input cost tens of
microseconds. The descriptor is still opened here (ctypes), C gets it as an
integer. tests/decoders/test_iconv.py keeps the old pure-ctypes path as the
oracle the C glue is checked against.

The screen (the fuzz loop's cheap tier) is the same calls, span search included,
as the outcome's views: ``strict`` and ``reason``, and on valid input the text as
every text view - whole (``screen_is_whole``). It is C
(``_iconv.iconv_screen``, held equal to :meth:`Iconv.screen`), which reads the
descriptor from the decoder at each call, so a closed one is never used.
"""

from __future__ import annotations

import ctypes
import errno
import weakref
from functools import cache, partial
from typing import Any

from utf8fuzz.decoders import _iconv
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome
from utf8fuzz.policies import decode_tokens
from utf8fuzz.profiles import get_profile

TARGETS = (("utf32le", "UTF-32LE"), ("ucs4", "UCS-4LE"), ("wchar_t", "WCHAR_T"),
           ("utf8", "UTF-8"))
# How the C glue reads a target's output (its ``kind`` argument; _iconv.c's OUT_*):
# 32-bit little-endian, 32-bit in the host's order, or UTF-8 with RFC 2279's bit layout.
OUT_UTF32LE, OUT_HOST32, OUT_UTF8 = 0, 1, 2
_KIND = {"UTF-32LE": OUT_UTF32LE, "UCS-4LE": OUT_UTF32LE, "WCHAR_T": OUT_HOST32,
         "UTF-8": OUT_UTF8}
_FAIL = ctypes.c_size_t(-1).value


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.iconv_open.restype = ctypes.c_void_p
    libc.iconv_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.iconv_close.argtypes = [ctypes.c_void_p]
    return libc


@cache
def libc_version() -> str:
    try:
        f = _libc().gnu_get_libc_version
    except AttributeError:
        return "not glibc"
    f.restype = ctypes.c_char_p
    return f"glibc {f().decode()}"


def _check(err: int) -> str | None:
    """iconv's errno as the adapter names it; any other than EILSEQ/EINVAL raises."""
    if err == 0:
        return None
    if err not in (errno.EILSEQ, errno.EINVAL):
        raise OSError(err, f"iconv: {errno.errorcode.get(err, err)}")
    return errno.errorcode[err]


class Iconv(Decoder):
    shows = frozenset({"strict", "reason"})
    screen_is_whole = True
    # its C glue reads any buffer (Py_buffer): handed a view inside a larger one, a
    # read past the view's end shows (engine/calls.py)
    takes_views = True

    def __init__(self, short: str, target: str) -> None:
        self.name, self.target = f"iconv:{short}", target
        self._cd = _libc().iconv_open(target.encode(), b"UTF-8")
        if self._cd in (None, _FAIL):
            raise OSError(f"iconv_open({target}, UTF-8) failed")
        self._kind = _KIND[target]
        self.last_raw: tuple[int, str | None] = (0, None)
        # The screen below in C, reading the descriptor at each call; not for a
        # subclass (a planted bug), which keeps the method it may override. A proxy:
        # the decoder holding its own screen would be a cycle, freed only by the GC.
        if type(self) is Iconv:
            self.screen = partial(  # type: ignore[method-assign]  # the C screen, per instance
                _iconv.iconv_screen, weakref.proxy(self), self._kind)

    def versions(self) -> dict[str, str]:
        return {"libc": libc_version(), "iconv": f"UTF-8 to {self.target}"}

    def convert(self, data: bytes) -> tuple[int, str | None, bytes]:
        """One ``iconv()`` over ``data``: (bytes consumed, errno name or None, output)."""
        if self._cd in (None, _FAIL):
            raise RuntimeError("the descriptor is closed")
        consumed, err, out = _iconv.iconv_convert(self._cd, data)
        return consumed, _check(err), out

    def run(self, data: bytes) -> Outcome:
        if self._cd in (None, _FAIL):
            raise RuntimeError("the descriptor is closed")
        n = len(data)
        p, e, end, cps = _iconv.iconv_run(self._cd, data, self._kind, True)
        err = _check(e)
        self.last_raw = (p, err)
        if err is None:
            if cps is None:  # UTF-8 output C could not read: the table decides
                cps = self._codepoints(self.convert(data)[2])
            return Outcome.partial(n, strict=None, reason=None, spans=(), replace=cps,
                                   ignore=cps, escape=cps)
        if err == "EINVAL":
            return Outcome.partial(n, strict=(p, n), reason="truncated")
        # EILSEQ: the longest data[p:p+t], t in 2..min(6, n-p) (glibc reads at most
        # 6-byte forms), that iconv calls incomplete (EINVAL), searched in C.
        return Outcome.partial(n, strict=(p, end), reason="illegal")

    def screen(self, data: bytes) -> dict[str, Any] | None:
        if self._cd in (None, _FAIL):
            return None
        try:
            p, e, end, cps = _iconv.iconv_run(self._cd, data, self._kind, True)
        except Exception:
            return None
        if e == 0:
            if cps is None:  # UTF-8 output C could not read: the full path decides
                return None
            # accepted: what it wrote is every text view (a tuple: glibc writes
            # values above U+10FFFF, which no str can hold)
            return {"strict": None, "reason": None, "spans": (), "replace": cps,
                    "ignore": cps, "escape": cps}
        if e == errno.EINVAL:
            return {"strict": (p, len(data)), "reason": "truncated"}
        if e == errno.EILSEQ:
            return {"strict": (p, end), "reason": "illegal"}
        return None  # the full path raises it: a crash outcome

    def _codepoints(self, out: bytes) -> tuple[int, ...]:
        # glibc writes what it accepted, 6-byte forms included: read it back with
        # the naive RFC 2279 table, which covers all of them. A token without a
        # value would be bytes it did not write as a character: no text to show.
        cps: list[int] = []
        for t in decode_tokens(out, get_profile("legacy")):
            if t.value is None:
                raise ValueError(f"iconv wrote {out[t.start:t.end].hex(' ')}, "
                                 "which RFC 2279 does not read as a character")
            cps.append(t.value)
        return tuple(cps)

    def close(self) -> None:
        if self._cd not in (None, _FAIL):
            _libc().iconv_close(self._cd)
            self._cd = None


def discover() -> list[Decoder | Unavailable]:
    out: list[Decoder | Unavailable] = []
    try:
        _libc().iconv_open  # noqa: B018 - probe
    except (OSError, AttributeError) as e:
        return [Unavailable("iconv", f"no iconv in the C library: {e}")]
    for short, target in TARGETS:
        try:
            out.append(Iconv(short, target))
        except OSError as e:
            out.append(Unavailable(f"iconv:{short}", str(e)))
    return out
