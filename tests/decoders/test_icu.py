"""ICU's C converter API (system libicuuc and icu4py's bundled copy)."""

from __future__ import annotations

import ctypes
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE, EXAMPLE_SPANS
from utf8fuzz.decoders import _icu, icu
from utf8fuzz.decoders._tiling import TilingError, tile, utf8_bytes, utf16_codepoints
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference
from utf8fuzz.outcome import Outcome, unpack_tokens
from utf8fuzz.profiles._pairs import pair_encode

FOUND = [d for d in icu.discover() if isinstance(d, Decoder)]
pytestmark = pytest.mark.skipif(
    not FOUND, reason="; ".join(u.reason for u in icu.discover() if not isinstance(u, Decoder))
)
UTF8 = [d for d in FOUND if d.profile == "unicode"]
CESU = [d for d in FOUND if d.profile == "cesu8"]
ids = lambda d: d.name  # noqa: E731


def test_versions_are_recorded():
    for d in FOUND:
        v = d.versions()
        assert v["icu"].split(".")[0].isdigit() and v["unicode"].count(".") >= 1
        assert v["library"].startswith("libicuuc")
        assert d.decode(b"a").provenance["icu"] == v["icu"]


@pytest.mark.parametrize("dec", FOUND, ids=ids)
def test_unicode_example_maximal_subparts(dec):
    out = dec.decode(EXAMPLE)
    assert out.ok, out.detail
    assert out.view("replace") == EXAMPLE_REPLACE
    assert out.view("spans") == EXAMPLE_SPANS


@pytest.mark.parametrize("hexin", BOUNDARY.values(), ids=BOUNDARY.keys())
@pytest.mark.parametrize("dec", UTF8, ids=ids)
def test_utf8_converter_matches_the_reference_on_boundary_inputs(dec, hexin):
    data = bytes.fromhex(hexin)
    out = dec.decode(data)
    assert out.ok, out.detail
    assert out.tokens == reference("unicode").decode(data).tokens


def test_truncation_reason_comes_from_u_truncated_char_found():
    out = UTF8[0].decode(bytes.fromhex("41 F0 9F 98"))
    assert [(t.start, t.end, t.reason) for t in out.tokens[1:]] == [(1, 4, "truncated")]
    out = UTF8[0].decode(bytes.fromhex("41 F0 9F 98 42"))
    assert [(t.start, t.end, t.reason) for t in out.tokens[1:2]] == [(1, 4, "illegal")]


@pytest.mark.skipif(not CESU, reason="no ICU CESU-8 converter")
@pytest.mark.parametrize("dec", CESU, ids=ids)
def test_cesu8_converter_pairs_and_its_documented_differences(dec):
    ref = reference("cesu8")
    pair = bytes.fromhex("41 ED A0 BD ED B8 80")
    assert dec.decode(pair).tokens == ref.decode(pair).tokens  # U+1F600 as a pair
    # ICU's CESU-8 converter lets a lone surrogate through (UTR #26 does not):
    lone = bytes.fromhex("ED A0 80")
    assert [t.as_list() for t in dec.decode(lone).tokens] == [["char", 0xD800, 0, 3]]
    assert ref.decode(lone).valid is False
    # ...and cuts a four-byte UTF-8 form as one error, where maximal subparts are four.
    four = bytes.fromhex("F0 9F 98 80")
    assert dec.decode(four).view("spans") == ((0, 4),)
    assert ref.decode(four).view("spans") == ((0, 1), (1, 2), (2, 3), (3, 4))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=32))
def test_utf8_converters_agree_with_the_reference_on_random_bytes(data):
    ref = reference("unicode").decode(data)
    for dec in UTF8:
        out = dec.decode(data)
        assert out.ok, out.detail
        assert out.tokens == ref.tokens, dec.name


def test_long_input_and_empty_input():
    data = ("é€😀" * 2000).encode() + b"\xff"
    out = UTF8[0].decode(data)
    assert out.view("spans") == ((len(data) - 1, len(data)),)
    assert UTF8[0].decode(b"").view("tokens") == ()


@pytest.mark.parametrize(
    "hexin", ["ED A0 BF BF ED B0 80", "ED A0 BD 41 ED B8 80", "ED A0 BD ED B8 80"])
def test_cesu8_surrogates_are_not_paired_across_an_error(hexin):
    # ICU's CESU-8 converter passes a lone surrogate through. The adapter skips
    # errors, so the UTF-16 it reads has no U+FFFD between two lone surrogates;
    # they must still not be paired. PyICU's replace mode, a second surface of
    # the same ICU, is the witness.
    icu_py = pytest.importorskip("icu")
    data = bytes.fromhex(hexin)
    witness = [ord(c) for c in str(icu_py.UnicodeString(data, "CESU-8", "replace"))]
    for dec in [d for d in FOUND if d.name.endswith("cesu8")]:
        out = dec.decode(data)
        assert out.ok, out.detail
        if dec.versions()["icu"].split(".")[0] == icu_py.ICU_VERSION.split(".")[0]:
            assert out.codepoints() == witness
        else:  # the bundled ICU: not the one PyICU links, so only the shape
            assert len(out.codepoints()) == len(witness)


# -- the C glue against the pure-ctypes path it replaced ---------------------------
#
# The adapter's per-call glue is C (utf8fuzz.decoders._icu). This is the ctypes
# path it replaced, kept as the oracle: the same ICU functions, a Python to-Unicode
# callback, Python's UTF-16 decoder and _tiling.tile. Slow and obviously the old
# behaviour; every outcome and screen of the C glue must equal it.

class _ToUArgs(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint16), ("flush", ctypes.c_int8),
                ("converter", ctypes.c_void_p), ("source", ctypes.c_void_p),
                ("sourceLimit", ctypes.c_void_p), ("target", ctypes.c_void_p),
                ("targetLimit", ctypes.c_void_p), ("offsets", ctypes.c_void_p)]


_ToUCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(_ToUArgs),
                                ctypes.c_void_p, ctypes.c_int32, ctypes.c_int,
                                ctypes.POINTER(ctypes.c_int))


class CtypesOracle:
    """The ctypes recording converter the adapter used before its glue moved to C."""

    def __init__(self, dec: icu.IcuConverter) -> None:
        self.dec = dec
        lib = ctypes.CDLL(dec.lib.path)
        vp, ip = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)
        to_u, reset, set_cb = dec.lib.glue
        self.to_unicode = ctypes.CFUNCTYPE(None, vp, ctypes.POINTER(vp), vp, ctypes.POINTER(vp),
                                           vp, vp, ctypes.c_int8, ip)(to_u)
        self.reset = ctypes.CFUNCTYPE(None, vp)(reset)
        set_cb_fn = ctypes.CFUNCTYPE(None, vp, _ToUCallback, vp, vp, vp, ip)(set_cb)
        err = ctypes.c_int(0)
        self.cnv = dec.lib.open(dec.converter.encode(), ctypes.byref(err))
        assert err.value <= 0 and self.cnv
        self.cb = _ToUCallback(self.callback)
        set_cb_fn(self.cnv, self.cb, None, None, None, ctypes.byref(err))
        self._lib = lib

    def callback(self, _ctx, args, code_units, length, reason, perr):
        if reason > 2:
            return
        end = args.contents.source - self.base
        start = end - length
        if self.data[start:end] != ctypes.string_at(code_units, length):
            self.mismatch = f"ICU's error bytes at [{start},{end}) are not the input's"
        self.events.append((start, end, "truncated" if perr[0] == 11 else "illegal"))
        self.cuts.append((args.contents.target or self.dst_base) - self.dst_base)
        perr[0] = 0

    def decode(self, data: bytes) -> Outcome:
        try:
            return self.run(data)
        except Exception as e:
            return Outcome.failure(len(data), "crash", f"{type(e).__name__}: {e}"[:500],
                                   self.dec.versions())

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        src = ctypes.create_string_buffer(data, n + 1)
        dst = (ctypes.c_uint16 * (n + 8))()
        self.base, self.data, self.events, self.mismatch = ctypes.addressof(src), data, [], None
        self.dst_base, self.cuts = ctypes.addressof(dst), []
        s, t = ctypes.c_void_p(self.base), ctypes.c_void_p(self.dst_base)
        err = ctypes.c_int(0)
        self.reset(self.cnv)
        self.to_unicode(self.cnv, ctypes.byref(t), self.dst_base + 2 * (n + 8), ctypes.byref(s),
                        self.base + n, None, 1, ctypes.byref(err))
        if err.value > 0:
            raise RuntimeError(f"ucnv_toUnicode: {self.dec.lib.error_name(err.value).decode()}")
        if self.mismatch:
            raise TilingError(self.mismatch)
        units = ctypes.string_at(dst, (t.value or 0) - self.dst_base)
        cps: list[int] = []
        for a, b in itertools.pairwise([0, *self.cuts, len(units)]):
            cps += utf16_codepoints(units[a:b])
        encode = ((lambda c: pair_encode(c) if c > 0xFFFF else utf8_bytes(c))
                  if self.dec.profile == "cesu8" else utf8_bytes)
        toks = tile(data, cps, self.events, encode=encode)
        return Outcome.from_tokens(toks, n, self.dec.versions(), data=data)

    def close(self) -> None:
        self.dec.lib.close(self.cnv)


@pytest.fixture(scope="module")
def oracles():
    made = {d.name: CtypesOracle(d) for d in FOUND}
    yield made
    for o in made.values():
        o.close()


def check_native(dec: icu.IcuConverter, oracle: CtypesOracle, data: bytes) -> None:
    want = oracle.decode(data)
    got = dec.decode(data)
    assert got.to_json() == want.to_json(), (dec.name, data.hex(" "))
    seen = dec.screen(data)
    if not want.ok:
        assert seen is None
        return
    assert seen is not None, (dec.name, data.hex(" "))
    assert set(seen) == {"tokens"}  # every view follows from them
    assert unpack_tokens(seen["tokens"]) == want.tokens, (dec.name, data.hex(" "))


# Bytes that ICU's UTF-8 and CESU-8 converters treat in every way they can: lead
# bytes of every length, continuations, surrogate halves, pair halves, ASCII.
_PIECES = st.sampled_from([bytes.fromhex(h) for h in (
    "41", "80", "BF", "C2", "C3 A9", "E2 82", "E2 82 AC", "ED A0", "ED A0 BD", "ED B8 80",
    "ED A0 BF", "ED B0 80", "F0 9F", "F0 9F 98 80", "F4 90 80 80", "F8 88 80 80 80", "FE",
    "EF BF BD", "C0 80")])


@settings(max_examples=400, deadline=None, database=None)
@given(st.one_of(st.binary(max_size=64), st.lists(_PIECES, max_size=24).map(b"".join)))
def test_native_glue_equals_the_ctypes_path(oracles, data):
    for dec in FOUND:
        check_native(dec, oracles[dec.name], data)


@pytest.mark.parametrize("data", [
    b"",
    bytes(range(256)) * 3,                      # > 256 bytes: the glue's heap buffers
    b"\xff" * 300 + "😀".encode() * 70,       # hundreds of errors and pairs
    bytes.fromhex("ED A0 BF BF ED B0 80") * 50,
    ("é€😀" * 500).encode("utf-8") + b"\xf0\x9f",
], ids=["empty", "all-bytes", "many-errors", "cesu-cuts", "long-truncated"])
def test_native_glue_equals_the_ctypes_path_on_long_input(oracles, data):
    for dec in FOUND:
        check_native(dec, oracles[dec.name], data)


def test_a_closed_converter_is_a_crash_not_a_segfault():
    dec = icu.IcuConverter(icu._load(FOUND[0].lib.path), "UTF-8", "icu:probe", "unicode")
    dec.close()
    assert dec.decode(b"a").status == "crash"
    assert dec.screen(b"a") is None


# The C walk that gives each character its span, held equal to _tiling.tile: the
# same tokens, or the same TilingError message, on made-up library reports. A
# report is built from pieces (characters with their encodings, errors with some
# bytes) and then perhaps damaged, so both the agreeing and every disagreeing
# path are taken.

_REASONS = st.sampled_from(["illegal", "truncated"])
_CPS = st.one_of(st.integers(0, 0x7F), st.integers(0x80, 0xFFFF), st.integers(0x10000, 0x10FFFF))


@st.composite
def _reports(draw: st.DrawFn) -> tuple[bytes, list[int], list[tuple[int, int, str]], bool]:
    cesu8 = draw(st.booleans())
    enc = (lambda c: pair_encode(c) if c > 0xFFFF else utf8_bytes(c)) if cesu8 else utf8_bytes
    data, cps, events = b"", [], []
    for kind in draw(st.lists(st.booleans(), max_size=10)):
        if kind:
            cp = draw(_CPS)
            cps.append(cp)
            data += enc(cp)
        else:
            bad = draw(st.binary(min_size=1, max_size=3))
            events.append((len(data), len(data) + len(bad), draw(_REASONS)))
            data += bad
    damage = draw(st.sampled_from(["none", "cp", "drop-cp", "add-cp", "event", "add-event",
                                   "drop-byte", "shuffle"]))
    if damage == "cp" and cps:
        cps[draw(st.integers(0, len(cps) - 1))] = draw(_CPS)
    elif damage == "drop-cp" and cps:
        del cps[draw(st.integers(0, len(cps) - 1))]
    elif damage == "add-cp":
        cps.insert(draw(st.integers(0, len(cps))), draw(_CPS))
    elif damage == "event" and events:
        i = draw(st.integers(0, len(events) - 1))
        events[i] = (draw(st.integers(-2, len(data) + 2)), draw(st.integers(-2, len(data) + 2)),
                     events[i][2])
    elif damage == "add-event" and data:  # perhaps inside a character's bytes
        i = draw(st.integers(0, len(data) - 1))
        events.append((i, i + 1, draw(_REASONS)))
    elif damage == "drop-byte" and data:
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + data[i + 1:]
    elif damage == "shuffle":
        events = draw(st.permutations(events))
    return data, cps, list(events), cesu8


@pytest.mark.exhaustive
@settings(max_examples=500, deadline=None, database=None)
@given(_reports())
def test_the_c_tiling_walk_equals_tile(report):
    data, cps, events, cesu8 = report
    enc = (lambda c: pair_encode(c) if c > 0xFFFF else utf8_bytes(c)) if cesu8 else utf8_bytes
    try:
        want: object = tuple(tile(data, cps, events, encode=enc))
    except TilingError as e:
        want = str(e)
    assert _icu.tile(data, cps, events, cesu8) == want
