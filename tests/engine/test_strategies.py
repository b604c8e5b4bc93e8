from hypothesis import given, settings

from utf8fuzz import decode
from utf8fuzz import strategies as u8
from utf8fuzz.engine.boundaries import BLOCKS, bad_snippets


@settings(max_examples=100, deadline=None)
@given(u8.well_formed("unicode"))
def test_well_formed_is_well_formed(data):
    assert decode(data).valid
    data.decode("utf-8")  # and CPython agrees


@settings(max_examples=100, deadline=None)
@given(u8.well_formed("corrected"))
def test_well_formed_per_profile(data):
    assert decode(data, "corrected").valid


@settings(max_examples=100, deadline=None)
@given(u8.block_boundary_inputs())
def test_block_boundary_inputs_put_a_bad_byte_near_a_boundary(data):
    errs = [s for s, _ in decode(data).error_spans]
    assert any(abs(s - b * k) <= 6 for s in errs for b in BLOCKS for k in (1, 2))


@settings(max_examples=50, deadline=None)
@given(u8.near_valid())
def test_near_valid_is_bytes(data):
    assert isinstance(data, bytes)


def test_bad_snippets_are_ill_formed():
    assert all(not decode(s).valid for s in bad_snippets())
