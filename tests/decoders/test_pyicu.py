"""PyICU's UnicodeString(data, "utf-8"[, mode])."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE, EXAMPLE_REPLACE
from utf8fuzz import strategies as u8
from utf8fuzz.decoders import pyicu
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference

FOUND = {d.name: d for d in pyicu.discover() if isinstance(d, Decoder)}
pytestmark = pytest.mark.skipif(not FOUND, reason="PyICU is not installed")
REF = reference("unicode")


def test_versions():
    v = FOUND["pyicu"].versions()
    assert v["pyicu"] and v["icu"][0].isdigit() and v["unicode"][0].isdigit()


def test_unicode_example():
    assert FOUND["pyicu"].decode(EXAMPLE).view("strict") == (1, 4)
    assert FOUND["pyicu:replace"].decode(EXAMPLE).view("replace") == EXAMPLE_REPLACE


def test_end_is_searched_with_replace_mode():
    # F1 80 80 is the longest piece PyICU's replace mode makes one U+FFFD
    assert FOUND["pyicu"].error_end(EXAMPLE, 1) == 4


@pytest.mark.parametrize(
    ("hexin", "raw", "searched"),
    [
        ("61 F1 80 80", 1, 1),  # here the message happens to be right
        ("EF 90 80 80", 2, 3),  # U+F400 then a lone 80: the message says 2
        ("F0 9F 98 80 F0", 0, 4),  # U+1F600 then a cut F0: the message says 0
    ],
)
def test_start_is_searched_not_read_from_the_message(hexin, raw, searched):
    import icu

    data = bytes.fromhex(hexin)
    with pytest.raises(ValueError) as e:
        icu.UnicodeString(data, "utf-8")
    assert not hasattr(e.value, "start")  # not reported as an attribute
    assert pyicu.error_position(str(e.value)) == raw  # the library's raw value
    out = FOUND["pyicu"].decode(data)
    assert out.view("strict")[0] == searched == REF.decode(data).first_error[0]
    assert out.provenance["reported_position"] == str(raw)


@pytest.mark.parametrize("hexin", BOUNDARY.values(), ids=BOUNDARY.keys())
@pytest.mark.parametrize("name", ["pyicu", "pyicu:replace"])
def test_strict_and_replace_agree_with_the_reference(name, hexin):
    data = bytes.fromhex(hexin)
    out, ref = FOUND[name].decode(data), REF.decode(data)
    assert out.ok, out.detail
    assert {v: out.view(v) for v in out.shows} == {v: ref.view(v) for v in out.shows}


def test_ignore_mode_substitutes_instead_of_ignoring():
    # What PyICU's "ignore" mode really does (PyICU 2.17 / ICU 72): U+FFFD per
    # error, the same as replace. The ignore view shows it; the reference drops them.
    out = FOUND["pyicu:ignore"].decode(EXAMPLE)
    assert out.view("ignore") == EXAMPLE_REPLACE
    assert REF.decode(EXAMPLE).view("ignore") == (0x61, 0x62, 0x63, 0x64)


def _accepts(piece: bytes) -> bool:
    import icu

    try:
        icu.UnicodeString(piece, "utf-8")
    except ValueError:
        return False
    return True


def unmemoized_span(data: bytes) -> tuple[int, int]:
    """The searches of the module docstring, one PyICU call per question."""
    import icu

    k, n = 0, len(data)
    while k < n:
        t = next((t for t in range(1, min(4, n - k) + 1) if _accepts(data[k : k + t])), 0)
        if not t:
            break
        k += t
    end = k + 1
    for t in range(2, min(4, n - k) + 1):
        if str(icu.UnicodeString(data[k : k + t], "utf-8", "replace")) == "\ufffd":
            end = k + t
    return k, end


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=24), u8.inputs()))  # inputs(): ASCII runs, stepped over
def test_memoized_searches_give_the_unmemoized_span(data):
    d = pyicu.PyIcu(__import__("icu"), None)
    if _accepts(data):
        assert d.screen(data)["strict"] is None
        return
    want = unmemoized_span(data)
    assert d.screen(data) == {"strict": want}
    assert d.decode(data).view("strict") == want  # the screen's call reused
    assert d.decode(data).view("strict") == want  # and the memo warm


def test_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(pyicu, "_MEMO_LIMIT", 3)
    d = pyicu.PyIcu(__import__("icu"), None)
    memos = (d._accepts, d._one_replacement, d._step, d._error_length)
    for data in (EXAMPLE, b"A\x80", b"\xc3\xa9\xff", EXAMPLE):
        assert d.decode(data).view("strict") == unmemoized_span(data)
        assert max(m.cache_info().currsize for m in memos) <= 3
