"""Outcomes: views, partial outcomes, failures, JSON."""

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import utf8fuzz
from utf8fuzz.outcome import Outcome, Token, ViewUnavailable, pack_tokens, unpack_tokens
from utf8fuzz.policies import decode_tokens
from utf8fuzz.profiles import REGISTRY


def test_token_outcome_shows_every_view() -> None:
    data = bytes.fromhex("41 C3 28 E2")
    out = utf8fuzz.decode(data)
    assert out.shows == {"tokens", "spans", "strict", "reason", "accept", "replace", "ignore",
                         "escape"}
    assert out.view("accept") is False
    assert utf8fuzz.decode(b"A\xc3\xa9").view("accept") is True
    assert out.view("escape") == (0x41, 0xDCC3, 0x28, 0xDCE2)
    assert out.view("escape") == tuple(ord(c) for c in data.decode("utf-8", "surrogateescape"))


def test_partial_outcome_shows_only_what_it_was_given() -> None:
    out = Outcome.partial(4, replace=[0x41, 0xFFFD])
    assert out.shows == {"replace"}
    assert out.codepoints() == [0x41, 0xFFFD]
    with pytest.raises(ViewUnavailable):
        _ = out.first_error
    valid = Outcome.partial(1, strict=None)
    assert valid.first_error is None and valid.shows == {"strict"}


def test_accept_view_is_a_bool_given_or_read_off_tokens() -> None:
    assert Outcome.partial(2, accept=False).view("accept") is False
    assert Outcome.partial(2, accept=True).shows == {"accept"}
    with pytest.raises(TypeError):
        Outcome.partial(2, accept=1)  # a validator answering 1 is not saying True
    o = Outcome.partial(2, accept=True)
    assert Outcome.from_json(o.to_json()) == o


def test_failures_show_nothing() -> None:
    out = Outcome.failure(3, "timeout", "took longer than 1s")
    assert not out.ok and out.shows == frozenset()
    with pytest.raises(ViewUnavailable):
        out.view("replace")


def test_tiling_is_checked() -> None:
    with pytest.raises(ValueError, match="tile"):
        Outcome.from_tokens([Token("char", 0x41, 1, 2)], 2)
    with pytest.raises(ValueError, match="end at byte 1"):
        Outcome.from_tokens([Token("char", 0x41, 0, 1)], 2)


@pytest.mark.parametrize(
    "out",
    [
        utf8fuzz.decode(bytes.fromhex("41 E1 80"), "unicode"),
        utf8fuzz.decode(bytes.fromhex("FE 80 41"), "corrected"),
        Outcome.partial(3, strict=(1, 3), replace=[0x41, 0xFFFD], reason="truncated"),
        Outcome.failure(3, "crash", "ValueError: boom"),
    ],
)
def test_json_round_trip(out: Outcome) -> None:
    assert Outcome.from_json(out.to_json()) == out


# -- packed tokens (outcome.pack_tokens): how a screen shows every token at once --


@given(st.binary(max_size=40), st.sampled_from(sorted(REGISTRY)))
@settings(max_examples=100, deadline=None)
def test_packed_tokens_round_trip(data: bytes, profile: str) -> None:
    toks = tuple(decode_tokens(data, REGISTRY[profile], "maximal-subpart"))
    packed = pack_tokens(toks)
    assert len(packed) == 32 * len(toks)
    assert unpack_tokens(packed) == toks


def test_packed_tokens_layout_and_what_is_not_a_packing() -> None:
    toks = (Token("char", 0x20AC, 0, 3), Token("error", None, 3, 4, "truncated"),
            Token("reserved", None, 4, 5))
    words = array("q", pack_tokens(toks)).tolist()
    assert words == [0, 0, 3, 0x20AC, 1 | 2 << 8, 3, 4, -1, 2, 4, 5, -1]
    with pytest.raises(ValueError):
        unpack_tokens(b"\0" * 31)
    with pytest.raises(ValueError):
        unpack_tokens(array("q", [3, 0, 1, -1]).tobytes())  # no such kind


def test_the_constructors_make_what_the_dataclass_makes() -> None:
    """Outcome._make skips the frozen dataclass's __init__: the same fields, equal,
    and still frozen."""
    import dataclasses

    toks = (Token("char", 0x41, 0, 1), Token("error", None, 1, 2, "illegal"))
    made = [Outcome.from_tokens(toks, 2, {"x": "1"}, data=b"A\xff"),
            Outcome.partial(2, strict=(1, 2), replace="A\ufffd"),
            Outcome.failure(2, "crash", "ValueError: no", {"x": "1"})]
    for o in made:
        fields = {f.name: getattr(o, f.name) for f in dataclasses.fields(Outcome)}
        assert set(vars(o)) == set(fields)
        assert o == Outcome(**fields) and repr(o) == repr(Outcome(**fields))
        with pytest.raises(dataclasses.FrozenInstanceError):
            o.length = 3  # type: ignore[misc]
