"""fast.decode_corrected_text: decode_corrected's code points as a str, or None when
one is above U+10FFFF; the same errors and exceptions."""

from __future__ import annotations

import pytest

from tests.fast._fastcases import forced, path_suite
from tests.fast.test_decode_corrected import expected, inputs, structured_corrected
from utf8fuzz import fast

MODES = ("strict", "replace", "ignore", "surrogateescape")


def _as_text(cps: list[int]) -> str | None:
    return None if any(c > 0x10FFFF for c in cps) else "".join(map(chr, cps))


def _check(data_list: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in data_list:
            want = expected(d)
            for mode in MODES:
                if mode == "strict" and want["strict"] is not None:
                    with pytest.raises(UnicodeDecodeError) as e:
                        fast.decode_corrected_text(d)
                    assert (e.value.start, e.value.end) == want["strict"], (path, d.hex())
                    continue
                cps = want["replace" if mode == "strict" else mode]
                got = fast.decode_corrected_text(d, mode)
                assert got == _as_text(cps), (path, mode, d.hex())  # type: ignore[arg-type]
                assert got is None or type(got) is str


(test_boundaries_and_every_length_0_to_200,
 test_structured_inputs) = path_suite(
    _check, families=(inputs,), strategy=structured_corrected, examples=200)


def test_examples() -> None:
    assert fast.decode_corrected_text(b"") == ""
    assert fast.decode_corrected_text(b"\xc0\x80") == "\xa0"
    assert fast.decode_corrected_text(b"a\xfe\x80b", "replace") == "a\ufffdb"
    assert fast.decode_corrected_text(b"a\xfe\x80b", "surrogateescape") == "a\udcfe\udc80b"
    assert fast.decode_corrected_text(b"\xfd\xbf\xbf\xbf\xbf\xbf") is None  # U+8421109F
    with pytest.raises(UnicodeDecodeError) as e:
        fast.decode_corrected_text(b"a\xfe\x80\xffb")
    assert (e.value.start, e.value.end, e.value.reason) == (1, 4, "reserved sequence (FE/FF)")


def test_handlers() -> None:
    with pytest.raises(LookupError):
        fast.decode_corrected_text(b"a", "no-such-handler")
    with pytest.raises(ValueError, match="strict, replace, ignore and surrogateescape"):
        fast.decode_corrected_text(b"a", "backslashreplace")
    with pytest.raises(TypeError):
        fast.decode_corrected_text("text")  # type: ignore[arg-type]
