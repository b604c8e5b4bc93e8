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

The screen (the fuzz loop's cheap tier) is the first ``iconv()`` call alone: on
input iconv accepts it is the views ``shows`` lists, and on a truncated
end (``EINVAL``) the span and reason; only an ``EILSEQ`` needs the span search,
so the screen says None and the full outcome is built.
"""

from __future__ import annotations

import ctypes
import errno
import sys
from functools import cache
from typing import Any

from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome
from utf8fuzz.policies import decode_tokens
from utf8fuzz.profiles import get_profile

TARGETS = (("utf32le", "UTF-32LE"), ("ucs4", "UCS-4LE"), ("wchar_t", "WCHAR_T"),
           ("utf8", "UTF-8"))
_FAIL = ctypes.c_size_t(-1).value


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.iconv_open.restype = ctypes.c_void_p
    libc.iconv_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.iconv.restype = ctypes.c_size_t
    vpp, szp = ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)
    libc.iconv.argtypes = [ctypes.c_void_p, vpp, szp, vpp, szp]
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


class Iconv(Decoder):
    shows = frozenset({"strict", "reason"})

    def __init__(self, short: str, target: str) -> None:
        self.name, self.target = f"iconv:{short}", target
        self._cd = _libc().iconv_open(target.encode(), b"UTF-8")
        if self._cd in (None, _FAIL):
            raise OSError(f"iconv_open({target}, UTF-8) failed")
        self.last_raw: tuple[int, str | None] = (0, None)
        self._dst = ctypes.create_string_buffer(1024)
        self._src = ctypes.create_string_buffer(256)
        # In the fuzz loop this runs several times per input: one set of ctypes
        # objects, reused (iconv reads the source from a reused copy).
        self._s, self._sl = ctypes.c_void_p(), ctypes.c_size_t()
        self._d, self._dl = ctypes.c_void_p(), ctypes.c_size_t()
        self._args = (ctypes.byref(self._s), ctypes.byref(self._sl), ctypes.byref(self._d),
                      ctypes.byref(self._dl))

    def versions(self) -> dict[str, str]:
        return {"libc": libc_version(), "iconv": f"UTF-8 to {self.target}"}

    def convert(self, data: bytes) -> tuple[int, str | None, bytes]:
        """One ``iconv()`` over ``data``: (bytes consumed, errno name or None, output)."""
        libc, n = _libc(), len(data)
        room = 8 * n + 16  # 6-byte forms to UCS-4 still fit: 4 bytes out per byte in
        if len(self._dst) < room:
            self._dst = ctypes.create_string_buffer(max(room, 2 * len(self._dst)))
        if len(self._src) < n:
            self._src = ctypes.create_string_buffer(max(n, 2 * len(self._src)))
        src_addr, dst_addr = ctypes.addressof(self._src), ctypes.addressof(self._dst)
        ctypes.memmove(src_addr, data, n)
        s, d = self._s, self._d
        s.value, self._sl.value, d.value, self._dl.value = src_addr, n, dst_addr, room
        libc.iconv(self._cd, None, None, None, None)  # back to the initial state
        r = libc.iconv(self._cd, *self._args)
        err = ctypes.get_errno() if r == _FAIL else 0
        consumed = (s.value or src_addr) - src_addr
        out = ctypes.string_at(dst_addr, (d.value or 0) - dst_addr)
        if r == _FAIL and err not in (errno.EILSEQ, errno.EINVAL):
            raise OSError(err, f"iconv: {errno.errorcode.get(err, err)}")
        return consumed, (errno.errorcode[err] if r == _FAIL else None), out

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        p, err, out = self.convert(data)
        self.last_raw = (p, err)
        if err is None:
            cps = self._codepoints(out)
            return Outcome.partial(n, strict=None, reason=None, spans=(), replace=cps,
                                   ignore=cps, escape=cps)
        if err == "EINVAL":
            return Outcome.partial(n, strict=(p, n), reason="truncated")
        end = p + 1
        for t in range(2, min(6, n - p) + 1):  # glibc reads at most 6-byte forms
            if self.convert(data[p : p + t])[1] == "EINVAL":
                end = p + t
        return Outcome.partial(n, strict=(p, end), reason="illegal")

    def screen(self, data: bytes) -> dict[str, Any] | None:
        try:
            p, err, _ = self.convert(data)
            if err is None:
                return {"strict": None, "reason": None}
        except Exception:
            return None
        if err == "EINVAL":
            return {"strict": (p, len(data)), "reason": "truncated"}
        return None  # EILSEQ: where the sequence ends takes the span search

    def _codepoints(self, out: bytes) -> tuple[int, ...]:
        if self.target == "UTF-8":
            # glibc writes what it accepted, 6-byte forms included: read it back
            # with the naive RFC 2279 table, which covers all of them.
            return tuple(t.value for t in decode_tokens(out, get_profile("legacy")))  # type: ignore[misc]
        order = "little" if self.target.endswith("LE") else sys.byteorder  # WCHAR_T: host
        if order == sys.byteorder:
            return tuple(memoryview(out).cast("I"))
        return tuple(int.from_bytes(out[i : i + 4], order) for i in range(0, len(out), 4))

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
