"""glibc iconv from UTF-8, to four targets whose behaviour differs."""

from __future__ import annotations

import ctypes
import errno
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE
from utf8fuzz.decoders import iconv
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference
from utf8fuzz.outcome import Outcome
from utf8fuzz.policies import decode_tokens
from utf8fuzz.profiles import get_profile

FOUND = {d.name: d for d in iconv.discover() if isinstance(d, Decoder)}
pytestmark = pytest.mark.skipif(
    len(FOUND) < 4 or not iconv.libc_version().startswith("glibc"),
    reason="glibc iconv with UTF-32LE, UCS-4LE, WCHAR_T and UTF-8 is needed",
)
REF = reference("unicode")
VALID = ["bom", "max-scalar", "noncharacter", "valid-mix", "empty", "overlong-nul"]


def test_version_is_recorded():
    for d in FOUND.values():
        assert d.decode(b"a").provenance["libc"].startswith("glibc 2.")


@pytest.mark.parametrize("name", sorted(FOUND))
def test_unicode_example_first_error(name):
    out = FOUND[name].decode(EXAMPLE)
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "illegal")
    assert out.shows == {"strict", "reason"}


def test_raw_position_and_searched_end():
    # iconv reports only where it stopped (1, EILSEQ); the end, 4, is searched:
    # F1 80 80 is the longest piece iconv itself calls incomplete (EINVAL).
    d = FOUND["iconv:utf32le"]
    assert d.convert(EXAMPLE)[:2] == (1, "EILSEQ")
    assert [d.convert(EXAMPLE[1:1 + t])[1] for t in (1, 2, 3, 4)] == [
        "EINVAL", "EINVAL", "EINVAL", "EILSEQ"]
    d.decode(EXAMPLE)
    assert d.last_raw == (1, "EILSEQ")


@pytest.mark.parametrize("name", sorted(FOUND))
@pytest.mark.parametrize("key", VALID)
def test_valid_input_matches_the_reference(name, key):
    data = bytes.fromhex(BOUNDARY[key])
    out, ref = FOUND[name].decode(data), REF.decode(data)
    if key == "overlong-nul":
        assert out.view("strict") == ref.view("strict") == (1, 2)
    else:
        assert out.view("strict") is None and out.view("replace") == ref.view("replace")


@pytest.mark.parametrize("name", sorted(FOUND))
def test_truncation_is_einval_to_the_end(name):
    out = FOUND[name].decode(bytes.fromhex(BOUNDARY["truncated-4"]))
    assert (out.view("strict"), out.view("reason")) == ((1, 4), "truncated")


def test_utf32_refuses_what_the_internal_31_bit_form_accepts():
    # glibc's UCS-4 / WCHAR_T / UTF-8 paths read values above U+10FFFF and 5- and
    # 6-byte forms (RFC 2279's range); only UTF-32 applies Unicode's limit.
    for key, value in (("above-10ffff", 0x110000), ("five-byte", 0x200000),
                       ("six-byte", 0x4000000)):
        data = bytes.fromhex(BOUNDARY[key])
        assert FOUND["iconv:utf32le"].decode(data).view("strict")[0] == 0
        for name in ("iconv:ucs4", "iconv:wchar_t", "iconv:utf8"):
            assert FOUND[name].decode(data).view("replace") == (value,), (name, key)


def test_glibc_calls_an_impossible_prefix_incomplete():
    # E0 80 and ED A0 can never be completed (Corrigendum #1 Table 3.1B), but glibc
    # reports EINVAL for them at the end of the input: reason truncated where the
    # reference says illegal - a real difference the reason view shows.
    d = FOUND["iconv:utf32le"]
    for h in ("E0 80", "ED A0"):
        out = d.decode(bytes.fromhex(h))
        assert (out.view("strict"), out.view("reason")) == ((0, 2), "truncated")
        assert REF.decode(bytes.fromhex(h)).view("reason") == "illegal"


@pytest.mark.parametrize("key", ["surrogate-high", "overlong-2", "fe", "ff", "lone-continuation"])
def test_ill_formed_inputs_start_where_the_reference_says(key):
    data = bytes.fromhex(BOUNDARY[key])
    ref = REF.decode(data).view("strict")
    for d in FOUND.values():
        out = d.decode(data)
        assert out.view("strict")[0] == ref[0] and out.view("reason") == "illegal"


# -- the C glue against the pure-ctypes path it replaced ---------------------------
#
# The adapter's calls (span search included) are C (utf8fuzz.decoders._iconv).
# This is the ctypes path it replaced, kept as the oracle: glibc's iconv() through
# ctypes, the span search in Python. Every outcome and screen of the C glue must
# equal it.

_FAIL = ctypes.c_size_t(-1).value


class CtypesOracle:
    def __init__(self, dec: iconv.Iconv) -> None:
        self.dec = dec
        libc = self.libc = ctypes.CDLL(None, use_errno=True)
        libc.iconv_open.restype = ctypes.c_void_p
        libc.iconv_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.iconv.restype = ctypes.c_size_t
        vpp, szp = ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)
        libc.iconv.argtypes = [ctypes.c_void_p, vpp, szp, vpp, szp]
        libc.iconv_close.argtypes = [ctypes.c_void_p]
        self.cd = libc.iconv_open(dec.target.encode(), b"UTF-8")

    def convert(self, data: bytes) -> tuple[int, str | None, bytes]:
        n = len(data)
        room = 8 * n + 16
        src, dst = ctypes.create_string_buffer(data, n), ctypes.create_string_buffer(room)
        s, d = ctypes.c_void_p(ctypes.addressof(src)), ctypes.c_void_p(ctypes.addressof(dst))
        sl, dl = ctypes.c_size_t(n), ctypes.c_size_t(room)
        self.libc.iconv(self.cd, None, None, None, None)
        r = self.libc.iconv(self.cd, ctypes.byref(s), ctypes.byref(sl), ctypes.byref(d),
                            ctypes.byref(dl))
        err = ctypes.get_errno() if r == _FAIL else 0
        out = ctypes.string_at(dst, (d.value or 0) - ctypes.addressof(dst))
        if r == _FAIL and err not in (errno.EILSEQ, errno.EINVAL):
            raise OSError(err, f"iconv: {errno.errorcode.get(err, err)}")
        consumed = (s.value or ctypes.addressof(src)) - ctypes.addressof(src)
        return consumed, (errno.errorcode[err] if r == _FAIL else None), out

    def decode(self, data: bytes) -> Outcome:
        n = len(data)
        p, err, out = self.convert(data)
        if err is None:
            if self.dec.target == "UTF-8":
                cps = tuple(t.value for t in decode_tokens(out, get_profile("legacy")))
            else:
                order = "little" if self.dec.target.endswith("LE") else sys.byteorder
                cps = tuple(int.from_bytes(out[i:i + 4], order) for i in range(0, len(out), 4))
            return Outcome.partial(n, strict=None, reason=None, spans=(), replace=cps,
                                   ignore=cps, escape=cps, provenance=self.dec.versions())
        if err == "EINVAL":
            return Outcome.partial(n, strict=(p, n), reason="truncated",
                                   provenance=self.dec.versions())
        end = p + 1
        for t in range(2, min(6, n - p) + 1):
            if self.convert(data[p:p + t])[1] == "EINVAL":
                end = p + t
        return Outcome.partial(n, strict=(p, end), reason="illegal",
                               provenance=self.dec.versions())

    def close(self) -> None:
        self.libc.iconv_close(self.cd)


@pytest.fixture(scope="module")
def oracles():
    made = {name: CtypesOracle(d) for name, d in FOUND.items()}
    yield made
    for o in made.values():
        o.close()


def check_native(dec: iconv.Iconv, oracle: CtypesOracle, data: bytes) -> None:
    want, got = oracle.decode(data), dec.decode(data)
    assert got.to_json() == want.to_json(), (dec.name, data.hex(" "))
    assert dec.convert(data) == oracle.convert(data)
    seen = dec.screen(data)
    # the screen is the whole outcome (screen_is_whole), the text too when accepted
    assert seen == {v: want.view(v) for v in want.shows}
    assert seen == iconv.Iconv.screen(dec, data)  # the C screen is the method


_PIECES = st.sampled_from([bytes.fromhex(h) for h in (
    "41", "80", "BF", "C0 80", "C2", "C3 A9", "E0 80", "E2 82", "E2 82 AC", "ED A0 80",
    "F0 9F", "F0 9F 98 80", "F4 90 80 80", "F7 BF BF BF", "F8 88 80 80 80",
    "FC 84 80 80 80 80", "FD BF BF BF BF BF", "FE", "FF")])


@settings(max_examples=300, deadline=None, database=None)
@given(st.one_of(st.binary(max_size=64), st.lists(_PIECES, max_size=20).map(b"".join)))
def test_native_glue_equals_the_ctypes_path(oracles, data):
    for name, dec in FOUND.items():
        check_native(dec, oracles[name], data)


@pytest.mark.parametrize("data", [
    b"", bytes(range(256)) * 3, b"A" * 600, b"A" * 256 + b"\xff", ("é€😀" * 500).encode("utf-8"),
    ("é€😀" * 500).encode("utf-8") + b"\xf0\x9f", "😀".encode() * 70 + b"\xf8\x88\x80\x80\x80",
], ids=["empty", "all-bytes", "ascii-600", "ascii-256-ff", "long-valid", "long-truncated",
        "long-five-byte"])
def test_native_glue_equals_the_ctypes_path_on_long_input(oracles, data):
    for name, dec in FOUND.items():
        check_native(dec, oracles[name], data)


def test_a_closed_descriptor_is_a_crash_not_a_segfault():
    d = iconv.Iconv("probe", "UTF-32LE")
    d.close()
    assert d.decode(b"a").status == "crash"
    assert d.screen(b"a") is None
    assert iconv.Iconv.screen(d, b"a") is None
