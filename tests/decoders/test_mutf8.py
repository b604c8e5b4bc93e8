"""The PyPI mutf8 package (C and pure Python), against the mutf8 profile it claims."""

from __future__ import annotations

import pytest

from tests.decoders.decoder_inputs import BOUNDARY, EXAMPLE
from utf8fuzz.decoders import mutf8
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import reference

FOUND = {d.name: d for d in mutf8.discover() if isinstance(d, Decoder)}
pytestmark = pytest.mark.skipif(len(FOUND) < 2, reason="the mutf8 package (with its C "
                                "extension) is not installed")
REF = reference("mutf8")


def test_claims_mutf8_with_version():
    for d in FOUND.values():
        assert d.profile == "mutf8" and d.versions()["mutf8"]


@pytest.mark.parametrize("name", ["mutf8", "mutf8:py"])
@pytest.mark.parametrize("h,cps", [
    ("C0 80", (0,)),                    # JVM 4.4.7: U+0000 as two bytes
    ("ED A0 BD ED B8 80", (0x1F600,)),  # a supplementary character as its pair
    ("ED A0 80", (0xD800,)),            # a lone surrogate code unit
    ("41 C3 A9 E2 82 AC", (0x41, 0xE9, 0x20AC)),
])
def test_well_formed_mutf8_agrees_with_the_profile(name, h, cps):
    data = bytes.fromhex(h)
    assert FOUND[name].decode(data).view("replace") == cps == REF.decode(data).view("replace")


@pytest.mark.parametrize("name", ["mutf8", "mutf8:py"])
def test_byte_00_is_refused(name):
    out = FOUND[name].decode(b"a\x00")
    assert out.view("strict") == (1, 2) == REF.decode(b"a\x00").view("strict")


def test_c_extension_passes_ill_formed_bytes_through_as_latin1():
    # The C implementation's real behaviour on Unicode's example: F1, 80, BF ...
    # come out as U+00F1, U+0080, U+00BF (JVM 4.4.7 has no such forms).
    out = FOUND["mutf8"].decode(EXAMPLE)
    assert out.view("strict") is None
    assert out.view("replace")[:4] == (0x61, 0xF1, 0x80, 0x80)
    assert REF.decode(EXAMPLE).view("strict") == (1, 2)


def test_pure_python_raises_runtime_error_which_is_a_crash():
    out = FOUND["mutf8:py"].decode(bytes.fromhex(BOUNDARY["ff"]))
    assert out.status == "crash" and out.detail.startswith("RuntimeError")


def test_truncated_three_byte_form_reports_one_byte():
    # "41 E2 82": the package says [1,2); maximal subpart is [1,3).
    data = bytes.fromhex(BOUNDARY["truncated-3"])
    assert FOUND["mutf8"].decode(data).view("strict") == (1, 2)
    assert REF.decode(data).view("strict") == (1, 3)


def test_the_adapter_is_run_alone():
    # the shape a new adapter copies: run() and versions(), none of the fuzz loop's
    # optional speed-ups (utf8fuzz.engine.screening), so decoded in full every time
    for d in FOUND.values():
        assert type(d).__mro__[1] is Decoder
        for optional in ("screen", "screen_is_whole", "whole_views", "out_of_process",
                         "decode_many"):
            assert not hasattr(d, optional), (d.name, optional)


def test_a_buffer_is_decoded_as_it_is_at_the_call():
    d = FOUND["mutf8"]
    buf = bytearray(b"A\xc0\x80")
    assert d.decode(buf).view("replace") == (0x41, 0)
    buf[1:] = b"\x00"
    assert d.decode(buf).view("strict") == (1, 2)
