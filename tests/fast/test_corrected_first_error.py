"""fast.corrected_first_error: what strict fast.decode_corrected raises, returned
instead: (start, end, reason), against the corrected reference's first error."""

from __future__ import annotations

import pytest

from tests.fast._fastcases import forced, path_suite
from tests.fast.test_decode_corrected import INVALID, VALID, expected, inputs, structured_corrected
from utf8fuzz import fast

REASONS = {"unexpected end of data": "truncated", "reserved sequence (FE/FF)": "reserved",
           "invalid start byte": "illegal", "invalid continuation byte": "illegal"}


def _check(data_list: tuple[bytes, ...], path: str) -> None:
    with forced(path):
        for d in data_list:
            got = fast.corrected_first_error(d)
            want = expected(d)
            if got is None:
                assert want["strict"] is None, (path, d.hex())
            else:
                assert (got[:2], REASONS[got[2]]) == (want["strict"], want["reason"]), (
                    path, d.hex())
            try:
                fast.decode_corrected(d)
                raised = None
            except UnicodeDecodeError as e:
                raised = (e.start, e.end, e.reason)
            assert raised == got, (path, d.hex())


(test_boundaries_and_every_length_0_to_200,
 test_structured_inputs) = path_suite(
    _check, families=(inputs,), strategy=structured_corrected, examples=200)


def test_examples() -> None:
    assert fast.corrected_first_error(b"") is None
    assert fast.corrected_first_error(b"\xc0\x80") is None  # U+00A0
    assert fast.corrected_first_error(b"a\xfe\x80\xffb") == (1, 4, "reserved sequence (FE/FF)")
    assert fast.corrected_first_error(b"a\x80") == (1, 2, "invalid start byte")
    assert fast.corrected_first_error(b"\xe0\x80a") == (0, 2, "invalid continuation byte")
    assert fast.corrected_first_error(bytearray(b"\xe0\x80")) == (0, 2, "unexpected end of data")
    assert VALID and INVALID


def test_non_buffer_is_typeerror() -> None:
    with pytest.raises(TypeError):
        fast.corrected_first_error("text")  # type: ignore[arg-type]
