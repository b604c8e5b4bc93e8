"""decode(encode(cps)) == cps for every profile over its whole domain."""

from hypothesis import given
from hypothesis import strategies as st

import utf8fuzz

DOMAINS = {
    "unicode": st.one_of(st.integers(0, 0xD7FF), st.integers(0xE000, 0x10FFFF)),
    "rfc2279": st.integers(0, 0x7FFFFFFF),
    "kuhn": st.integers(0, 0x7FFFFFFF).filter(
        lambda c: not (0xD800 <= c <= 0xDFFF or c in (0xFFFE, 0xFFFF))),
    "legacy": st.integers(0, 0x7FFFFFFF),
    "corrected": st.one_of(st.integers(0, 0x7F), st.integers(0xA0, 0xD7FF),
                           st.integers(0xE000, 0x8421109F)),
}


def _check(profile: str, cps: list[int]) -> None:
    data = utf8fuzz.encode(cps, profile)
    out = utf8fuzz.decode(data, profile)
    assert out.codepoints() == cps
    assert out.first_error is None


@given(st.lists(DOMAINS["unicode"], max_size=20))
def test_unicode(cps: list[int]) -> None:
    _check("unicode", cps)
    assert utf8fuzz.encode(cps) == "".join(map(chr, cps)).encode("utf-8")


@given(st.lists(DOMAINS["rfc2279"], max_size=20))
def test_rfc2279(cps: list[int]) -> None:
    _check("rfc2279", cps)


@given(st.lists(DOMAINS["kuhn"], max_size=20))
def test_kuhn(cps: list[int]) -> None:
    _check("kuhn", cps)


@given(st.lists(DOMAINS["legacy"], max_size=20))
def test_legacy(cps: list[int]) -> None:
    _check("legacy", cps)


@given(st.lists(DOMAINS["corrected"], max_size=20))
def test_corrected(cps: list[int]) -> None:
    _check("corrected", cps)
