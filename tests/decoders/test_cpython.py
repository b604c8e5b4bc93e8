"""CPython's codec through its adapters: Unicode's example, the boundary inputs,
offsets made absolute, and agreement with the reference on random bytes."""

from __future__ import annotations

import codecs
from functools import partial

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE, EXAMPLE_SPANS
from utf8fuzz.decoders import cpython
from utf8fuzz.decoders.reference import reference
from utf8fuzz.outcome import VIEWS

UNICODE = [d for d in cpython.discover() if d.profile == "unicode"]
REF = reference("unicode")
REF_SP = reference("surrogatepass")


def views(out, names):
    return {v: out.view(v) for v in names}


def test_discover_names_are_stable():
    assert [d.name for d in cpython.discover()] == [
        "cpython:strict", "cpython:replace", "cpython:ignore", "cpython:surrogateescape",
        "cpython:surrogatepass", "cpython:spans", "cpython:incremental", "cpython:utf-8-sig",
    ]


@pytest.mark.parametrize("dec", cpython.discover(), ids=lambda d: d.name)
def test_unicode_example_maximal_subparts(dec):
    out = dec.decode(EXAMPLE)
    assert out.ok, out.detail
    assert out.shows >= dec.shows
    if "replace" in out.shows:
        assert out.view("replace") == EXAMPLE_REPLACE
    if "spans" in out.shows:
        assert out.view("spans") == EXAMPLE_SPANS
    if "strict" in out.shows:
        assert out.view("strict") == (1, 4)
        assert out.view("reason") == "illegal"
    if "ignore" in out.shows:
        assert out.view("ignore") == (0x61, 0x62, 0x63, 0x64)
    if "escape" in out.shows:
        assert out.view("escape") == tuple(
            b if b < 0x80 else 0xDC00 + b for b in EXAMPLE
        )


@pytest.mark.parametrize("hexin", BOUNDARY.values(), ids=BOUNDARY.keys())
@pytest.mark.parametrize("dec", UNICODE, ids=lambda d: d.name)
def test_boundary_inputs_agree_with_the_unicode_reference(dec, hexin):
    data = bytes.fromhex(hexin)
    out, ref = dec.decode(data), REF.decode(data)
    assert out.ok, out.detail
    assert views(out, out.shows) == views(ref, out.shows)


def test_strict_shows_text_views_only_when_valid():
    ok = cpython.Strict().decode("é".encode())
    assert ok.shows == {"strict", "reason", "spans", "replace", "ignore", "escape"}
    assert ok.view("replace") == (0xE9,)
    bad = cpython.Strict().decode(b"\x41\xe2\x82")
    assert bad.shows == {"strict", "reason"}
    assert (bad.view("strict"), bad.view("reason")) == ((1, 3), "truncated")


def test_surrogatepass_decodes_surrogates_and_claims_its_profile():
    dec = cpython.SurrogatePass()
    assert dec.profile == "surrogatepass"
    out = dec.decode(bytes.fromhex("ED A0 80 ED B0 80 41"))
    assert out.view("replace") == (0xD800, 0xDC00, 0x41)
    assert out.view("tokens") == REF_SP.decode(bytes.fromhex("ED A0 80 ED B0 80 41")).tokens


def test_surrogatepass_cuts_a_truncated_surrogate_as_cpython_does():
    # A real, documented difference from the surrogatepass reference: CPython's
    # decoder reports ED A0 as "invalid continuation byte" at [0,1) before the
    # handler looks, so the maximal subpart ED A0 (truncated) is two errors.
    data = bytes.fromhex("ED A0")
    assert cpython.SurrogatePass().decode(data).view("spans") == ((0, 1), (1, 2))
    assert REF_SP.decode(data).view("spans") == ((0, 2),)


def test_incremental_offsets_are_made_absolute():
    # Chunks "abc" | E1 80 | "A": the codec holds E1 80 back, then raises on
    # its buffer E1 80 41 with offsets (0, 2) - the library's raw value.
    data = b"abc\xe1\x80A"
    dec = cpython.Incremental(splits=lambda d: [3, 5])
    out = dec.decode(data)
    assert dec.last_raw == [(0, 2)]
    assert out.view("spans") == ((3, 5),)
    # the raw value straight from the library, without the adapter
    d = codecs.getincrementaldecoder("utf-8")("strict")
    d.decode(b"abc"), d.decode(b"\xe1\x80")
    with pytest.raises(UnicodeDecodeError) as e:
        d.decode(b"A")
    assert (e.value.start, e.value.end) == (0, 2)


def test_incremental_truncation_at_end_is_flushed_with_absolute_offsets():
    dec = cpython.Incremental(splits=lambda d: list(range(1, len(d))))
    out = dec.decode(b"ab\xf0\x9f\x98")
    assert out.view("spans") == ((2, 5),) and out.view("reason") == "truncated"
    assert dec.last_raw == [(0, 3)]


def test_input_splits_come_from_the_input():
    assert cpython.input_splits(b"") == []
    assert cpython.input_splits(bytes([0xE1, 0x80, 0x80, 0x41])) == [2, 3, 4]
    assert cpython.input_splits(bytes([0x40] * 3)) == [1, 2, 3]


def test_utf8_sig_bom_token_and_offsets_after_the_bom():
    data = bytes.fromhex("EF BB BF 61 80")
    dec = cpython.Utf8Sig()
    out = dec.decode(data)
    assert dec.last_raw == [(1, 2)]  # the codec's offset, after the stripped BOM
    assert [t.as_list() for t in out.tokens] == [
        ["char", 0xFEFF, 0, 3], ["char", 0x61, 3, 4], ["error", None, 4, 5],
    ]
    assert out.provenance["signature"] == "stripped"
    with pytest.raises(UnicodeDecodeError) as e:
        data.decode("utf-8-sig")
    assert (e.value.start, e.value.end) == (1, 2)
    # only the first BOM is a signature; a second one is the character U+FEFF
    two = cpython.Utf8Sig().decode(BOM2 := bytes.fromhex("EF BB BF EF BB BF"))
    assert two.view("tokens") == REF.decode(BOM2).tokens


def test_a_handler_error_left_registered_cannot_leak_between_calls():
    dec = cpython.Recording()
    assert dec.decode(b"\x80").view("spans") == ((0, 1),)
    assert dec.decode(b"ok").view("spans") == ()


utf8ish = st.lists(
    st.one_of(
        st.sampled_from([0x41, 0x80, 0xBF, 0xC2, 0xC0, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4,
                         0xF5, 0xFE, 0xA0, 0x9F, 0x90, 0x8F]),
        st.integers(0, 255),
    ),
    max_size=24,
).map(bytes)


@settings(max_examples=300, deadline=None)
@given(utf8ish)
def test_recording_adapters_agree_with_the_reference_on_every_view(data):
    ref = REF.decode(data)
    for dec in (cpython.Recording(), cpython.Incremental(), cpython.Utf8Sig()):
        out = dec.decode(data)
        assert out.ok, (dec.name, out.detail)
        assert out.tokens == ref.tokens, dec.name
    for dec in UNICODE[:4]:
        out = dec.decode(data)
        assert views(out, out.shows) == views(ref, out.shows), dec.name


def test_every_view_name_is_known():
    for d in cpython.discover():
        assert d.shows <= set(VIEWS)


def test_incremental_screen_writes_out_the_standard_incremental_decoder():
    # what the written-out screen relies on: the stdlib's incremental decoder is
    # BufferedIncrementalDecoder around utf_8_decode, unchanged
    assert cpython._PLAIN_BUFFERED


def _text_views(seen):
    return {v: tuple(map(ord, x)) if v in ("replace", "ignore", "escape") else x
            for v, x in seen.items()}


@settings(max_examples=200, deadline=None)
@given(utf8ish, st.sampled_from(["input", "bytewise", "pairs", "whole"]))
def test_incremental_screen_equals_real_incremental_decoders(data, how):
    splits = {"input": cpython.input_splits,
              "bytewise": lambda d: list(range(1, len(d) + 1)),
              "pairs": lambda d: list(range(2, len(d), 2)),
              "whole": lambda d: []}[how]
    dec = cpython.Incremental(splits=splits)
    seen = dec.screen(data)
    # the written-out loop against real incremental decoders (the fallback)
    slow = cpython._screen_text(dec._feed(data, "replace"), lambda: dec._feed(data, "strict"))
    assert seen == slow
    if how == "input":  # the screen above ran the C loop
        assert dec._screen_buffered(data) == slow
    full = dec.decode(data)
    assert {v: full.view(v) for v in seen} == _text_views(seen)


@settings(max_examples=200, deadline=None)
@given(utf8ish)
def test_incremental_c_loop_equals_real_incremental_decoders(data):
    # input_splits' cuts run the C loop (_cpython.incremental_decode); the same cuts
    # under another function run real incremental decoders, in Python
    fast, slow = cpython.Incremental(), cpython.Incremental(splits=cpython.input_splits.__call__)
    assert fast._written_out(data)
    assert not slow._written_out(data)
    assert fast.decode(data) == slow.decode(data)
    assert fast.last_raw == slow.last_raw


@settings(max_examples=300, deadline=None)
@given(st.one_of(utf8ish, st.binary(max_size=40)))
@example(bytes.fromhex("EF BF BD 41"))  # a U+FFFD of the input's own, no error
@example(bytes.fromhex("EF BF BD 41 80 E2 82"))  # then errors
def test_c_screens_are_the_python_ones(data):
    # _cpython.codec_screen against the methods it stands in for
    for d in (cpython.Strict(), *map(cpython.Handler, ("replace", "ignore", "surrogateescape")),
              cpython.Recording(), cpython.SurrogatePass()):
        assert isinstance(d.screen, partial), d.name
        assert d.screen(data) == type(d).screen(d, data), d.name


def test_incremental_screen_finds_the_first_error_after_a_literal_replacement_char():
    # the first call with a U+FFFD is the input's own: no error there, go on
    data = bytes.fromhex("EF BF BD 41 42 80")
    seen = cpython.Incremental().screen(data)
    assert (seen["strict"], seen["reason"]) == ((5, 6), "illegal")
    assert seen["replace"] == "\ufffdAB\ufffd"


def test_recording_screens_every_text_view_when_no_error_is_met():
    seen = cpython.Recording().screen("é\ufffd".encode())
    assert seen == {"replace": "é\ufffd", "ignore": "é\ufffd", "escape": "é\ufffd",
                    "spans": (), "strict": None, "reason": None}


class PyRecorder:
    """The recording handlers in Python, as the oracle of the C ones the adapters use
    (``_cpython.record``, ``record_based``, ``record_pass``): the same lists, the same
    returns, the same exceptions."""

    def __init__(self) -> None:
        self.events: list[tuple[int, int, str]] = []
        self.raw: list[tuple[int, int]] = []
        self.base = 0

    def reset(self) -> None:
        self.events.clear()
        self.raw.clear()

    def set_base(self, base: int) -> None:
        self.base = base

    def handle(self, exc: UnicodeError) -> tuple[str, int]:
        if not isinstance(exc, UnicodeDecodeError):
            raise exc
        self.events.append((exc.start, exc.end, cpython.reason_of(exc)))
        return "", exc.end

    def handle_based(self, exc: UnicodeError) -> tuple[str, int]:
        if not isinstance(exc, UnicodeDecodeError):
            raise exc
        start, end, base = exc.start, exc.end, self.base
        self.raw.append((start, end))
        self.events.append((base + start, base + end, cpython.reason_of(exc)))
        return "", end

    def handle_pass(self, exc: UnicodeError) -> tuple[str | bytes, int]:
        # surrogatepass, and what it raises for recorded instead
        try:
            return codecs.lookup_error("surrogatepass")(exc)
        except UnicodeDecodeError:
            return self.handle(exc)


# The Python recording handlers, registered under their own names, against the ones
# the adapters use.
_PY_REC = PyRecorder()
codecs.register_error("test.cpython.record", _PY_REC.handle)
codecs.register_error("test.cpython.record-based", _PY_REC.handle_based)
codecs.register_error("test.cpython.record-pass", _PY_REC.handle_pass)


def _recorded(rec, data, handler, base):
    rec.reset()
    rec.set_base(base)
    text = data.decode("utf-8", handler)
    return text, list(rec.events), list(rec.raw)


@settings(max_examples=300, deadline=None)
@given(utf8ish, st.integers(0, 70))
def test_c_and_python_recording_handlers_record_the_same(data, base):
    rec = cpython._REC
    for mine, theirs in ((cpython.HANDLER, "test.cpython.record"),
                         (cpython.BASED_HANDLER, "test.cpython.record-based"),
                         (cpython.PASS_HANDLER, "test.cpython.record-pass")):
        assert _recorded(rec, data, mine, base) == _recorded(_PY_REC, data, theirs, base)
    rec.set_base(0)


@pytest.mark.parametrize("rec", ["c", "python"])
def test_recording_handlers_raise_what_is_not_a_decode_error(rec):
    r = cpython._REC if rec == "c" else _PY_REC
    exc = UnicodeEncodeError("ascii", "\xe9", 0, 1, "ordinal not in range(128)")
    for handle in (r.handle, r.handle_based):
        with pytest.raises(UnicodeEncodeError):
            handle(exc)
    # surrogatepass encodes a surrogate, and raises for anything else
    assert r.handle_pass(UnicodeEncodeError("utf-8", "\ud800", 0, 1, "x")) == (b"\xed\xa0\x80", 1)
    with pytest.raises(UnicodeEncodeError):
        r.handle_pass(exc)
