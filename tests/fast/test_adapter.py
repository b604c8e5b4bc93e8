"""The fast path as decoders (fast:unicode, fast:corrected): tokens equal the references'."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.fast._fastcases import each_path, structured
from utf8fuzz import decoders
from utf8fuzz.decoders import fast as adapter
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.outcome import VIEWS

UNICODE = adapter.FastUnicode(adapter.fast_module())
CORRECTED = adapter.FastCorrected(adapter.fast_module())
REFS = {"unicode": Reference("unicode"), "corrected": Reference("corrected")}


def test_discovered_and_resolvable() -> None:
    names = {d.name for d in decoders.available()}
    assert {"fast:unicode", "fast:corrected"} <= names
    (d,) = decoders.resolve("fast:corrected")
    assert d.profile == "corrected" and d.own and d.shows == frozenset(VIEWS)
    assert "path" in d.versions() and "cpu" in d.versions()


@pytest.mark.parametrize("dec", [UNICODE, CORRECTED], ids=lambda d: d.name)
@pytest.mark.parametrize("hexdata", ["", "61", "61 F1 80 80 E1 80", "FE 80 FF C3", "E0 80 80",
                                     "ED A0 80 F4 90 80 80", "C0 80 F8 88 80 80 80", "FD BF"])
def test_examples_give_reference_tokens(dec: adapter._Fast, hexdata: str) -> None:
    data = bytes.fromhex(hexdata)
    out = dec.decode(data)
    assert out.ok, out.detail
    assert out.tokens == REFS[dec.profile].decode(data).tokens
    assert out.provenance["path"]


@settings(max_examples=150, deadline=None)
@given(structured())
def test_structured_inputs_give_reference_tokens(data: bytes) -> None:
    for path in each_path():
        for dec in (UNICODE, CORRECTED):
            out = dec.decode(data)
            assert out.tokens == REFS[dec.profile].decode(data).tokens, (path, dec.name)
            assert out.view("escape") == REFS[dec.profile].decode(data).view("escape")


def test_inconsistent_fast_path_is_partial_not_hidden() -> None:
    """When the fast path contradicts itself, the direct views are kept as they are."""

    class Lying(adapter.FastUnicode):
        def _spans(self, data: bytes) -> list[tuple[int, int]]:
            return [(0, 1)]

    out = Lying(adapter.fast_module()).decode(b"ab")
    assert "tokens" not in out.shows
    assert out.view("spans") == ((0, 1),) and out.view("replace") == (0x61, 0x62)


def test_screens_give_replace_as_text_where_python_can_hold_it() -> None:
    assert UNICODE.screen(bytes.fromhex("41 C3"))["replace"] == "A\ufffd"
    # corrected: its code points as a str, surrogates passed through
    assert CORRECTED.screen(bytes.fromhex("41 FE"))["replace"] == "A\ufffd"
    assert CORRECTED.screen(bytes.fromhex("ED A0 80"))["replace"] == "".join(
        map(chr, REFS["corrected"].decode(bytes.fromhex("ED A0 80")).view("replace")))
    # above U+10FFFF there is no str: a tuple, equal to the reference's view
    data = bytes.fromhex("FD BF BF BF BF BF")
    assert CORRECTED.screen(data)["replace"] == REFS["corrected"].decode(data).view("replace")
    assert max(CORRECTED.screen(data)["replace"]) > 0x10FFFF


@pytest.mark.parametrize("lie", ["strict", "reason", "ignore", "escape", "replace"])
def test_any_view_that_contradicts_the_tokens_makes_the_outcome_partial(lie: str) -> None:
    data = b"a\x80b"

    class Lying(adapter.FastUnicode):
        def _strict(self, data: bytes) -> tuple[tuple[int, int] | None, str | None]:
            span, reason = super()._strict(data)
            if lie == "strict":
                return (1, 3), reason
            return span, ("truncated" if lie == "reason" else reason)

        def _decode(self, data: bytes, errors: str) -> tuple[int, ...]:
            out = super()._decode(data, errors)
            wrong = {"ignore": "ignore", "escape": "surrogateescape", "replace": "replace"}
            return out[:-1] if wrong.get(lie) == errors else out

    out = Lying(adapter.fast_module()).decode(data)
    assert out.ok and "tokens" not in out.shows
    honest = UNICODE.decode(data)
    for v in ("strict", "reason", "spans", "replace", "ignore", "escape"):
        if v != lie:
            assert out.view(v) == honest.view(v)
    assert out.view(lie) != honest.view(lie)


@pytest.mark.parametrize("lie", ["ignore", "escape", "replace"])
@pytest.mark.parametrize("hexdata", ["61 80 62 FE", "FD BF BF BF BF BF 80 61"],
                         ids=["as-str", "above-10FFFF"])
def test_corrected_views_that_contradict_the_tokens_make_the_outcome_partial(
        lie: str, hexdata: str) -> None:
    # The corrected adapter's text views come as a str, or as a tuple of code points
    # when one is above U+10FFFF: both are compared with the tokens.
    data = bytes.fromhex(hexdata)
    mode = {"ignore": "ignore", "escape": "surrogateescape", "replace": "replace"}[lie]

    class Lying(adapter.FastCorrected):
        def _decode(self, data: bytes, errors: str) -> str | tuple[int, ...]:
            out = super()._decode(data, errors)
            return out[:-1] if errors == mode else out

    out = Lying(adapter.fast_module()).decode(data)
    assert out.ok and "tokens" not in out.shows
    honest = CORRECTED.decode(data)
    assert "tokens" in honest.shows
    for v in ("strict", "reason", "spans", "replace", "ignore", "escape"):
        if v != lie:
            assert out.view(v) == honest.view(v)
    assert out.view(lie) == honest.view(lie)[:-1]


def test_a_screened_outcome_names_the_code_path_it_ran_on():
    from utf8fuzz import fast
    from utf8fuzz.decoders.fast import FastUnicode
    from utf8fuzz.engine.differ import Differ

    d = FastUnicode(fast)
    differ = Differ([d], full_every=1000)
    differ.run(b"")  # the sampled one
    first = differ.run(b"A")  # screened, on the path chosen at run time
    assert not first.outcomes[d.name].provenance["path"].startswith("scalar")
    before = fast.set_path("scalar")
    try:
        res = differ.run(b"A\xc3\xa9")  # screened
        assert res.full is False
        assert res.outcomes[d.name].provenance["path"].startswith("scalar")
    finally:
        fast.set_path(before if before else "auto")


@settings(max_examples=200, deadline=None)
@given(structured())
def test_whole_views_are_the_full_outcomes(data: bytes) -> None:
    # _fast.fast_screen (the sampled inputs' stand-in for run()): every view of
    # the full outcome, tokens packed; under make asan-test with the C sanitized
    from utf8fuzz.outcome import unpack_tokens

    for dec in (UNICODE, CORRECTED):
        out, seen = dec.decode(data), dec.whole_views(data)
        assert seen is not None and out.ok
        assert unpack_tokens(seen.pop("tokens")) == out.tokens
        assert {v: tuple(map(ord, x)) if type(x) is str and v != "reason" else x
                for v, x in seen.items()} == {v: out.view(v) for v in seen}


@pytest.mark.parametrize("hexdata", ["FD BF BF BF BF BF", "41 FD BF BF BF BF BF 41"])
def test_corrected_largest_value_is_an_outcome_not_a_bad_one(hexdata: str) -> None:
    # Corrected UTF-8's 6-byte forms reach U+8421109F; the differ's boundary check
    # (outcome.checked) once capped code points at U+7FFFFFFF and called this
    # conforming outcome a bad-outcome finding of fast:corrected (`make fuzz`)
    from utf8fuzz.engine.differ import Differ
    (d,) = decoders.resolve("fast:corrected")
    res = Differ([d]).run(bytes.fromhex(hexdata), full=True)
    out = res.outcomes[d.name]
    assert out.ok and not res.diverged, (out.status, out.detail)
    assert 0x8421109F in out.view("replace")
