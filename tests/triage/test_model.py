"""The explanation model (issue 25, item 3): a decoder described along the specs'
axes (its well-formed set, its cut into errors, its replace view's cut), each
finding one axis moved. In-process, on fixed inputs: the stand-ins of
tests/triage/planted/real.py for three real npm libraries, and hand-made outcomes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.triage.planted.inprocess import findings
from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import finding_of
from utf8fuzz.outcome import REPLACEMENT, Outcome
from utf8fuzz.triage.explain import accepting_table, explain, rule_of

R = "tests.triage.planted.real"
ROOT = Path(__file__).resolve().parents[2]


def _rules(spec: str) -> set[str]:
    return {rule for rule, _ in findings(spec).values()}


def test_a_decoder_without_utf8_is_one_point_of_the_model() -> None:
    # every byte its Latin-1 character: one table (each byte a well-formed sequence of
    # one byte), one finding, not one per feature where Latin-1 and UTF-8 differ
    assert _rules(f"{R}:latin1+text") == {"profile:latin1"}


def test_two_deviations_are_two_findings_each_named_by_its_axis() -> None:
    # surrogates accepted (two in a row one character, as a JS string holds them) and
    # errors cut per byte: each input is named by the axis that makes its first
    # difference, never one finding (profile:surrogatepass/per-byte) for the pair
    assert _rules(f"{R}:fastest+text") == {"accepts:surrogate:3-byte", "policy:per-byte"}


def test_a_feature_accepted_at_every_length_is_one_move() -> None:
    # modified UTF-8 without a shortest-form check: C1 9F, E0 80 80 and the prefix
    # E0 80 at the end are one move of the well-formed set (all its lengths), not one
    # finding a length
    assert _rules(f"{R}:mutf8@mutf8+text") == {"accepts:non-shortest-form", "policy:per-byte"}


def test_a_table_with_a_feature_added_keeps_the_profiles_own_rows() -> None:
    t = accepting_table("mutf8", "non-shortest-form", None)
    assert t is not None and t.row_of(b"\xc0\x80") is not None  # U+0000, its own row
    assert t.row_of(b"\xc1\x9f") is not None and t.row_of(b"\xe0\x80\x80") is not None
    assert t.row_of(b"\xf0\x80\x80\x80") is None  # modified UTF-8 has no 4-byte lead


def _partial(data: bytes, **views):  # type: ignore[no-untyped-def]
    return Outcome.partial(len(data), **views)


def test_errors_cut_by_the_leads_count_checked_when_complete() -> None:
    # E0 41 42: the lead announces 3 bytes, taken unchecked; the sequence, complete,
    # is rejected over all its bytes but the last (mutf-8's stream, as the exec client
    # asks it for spans)
    data = bytes.fromhex("E0 41 42")
    x = explain(data, _partial(data, strict=(0, 2), reason="illegal",
                               spans=((0, 2),)), "mutf8", "maximal-subpart",
                "different-error-offset", "incomplete-3-byte-sequence")
    assert x.rule == "checked-when-complete+continuations-unchecked"


def test_a_replace_view_cut_per_byte_under_spans_cut_as_claimed() -> None:
    # ED A0 at the end: one truncated error [0,2), as claimed, but two U+FFFD
    data = bytes.fromhex("ED A0")
    x = explain(data, _partial(data, strict=(0, 2), reason="truncated", spans=((0, 2),),
                               replace=(REPLACEMENT, REPLACEMENT)), "mutf8", "maximal-subpart",
                "different-replacement", "surrogate")
    assert x.rule == "renders-errors-as:U+FFFD-per-byte"


def test_the_rule_of_a_name_is_the_point_that_reproduces_the_input() -> None:
    # accepts:surrogate:3-byte is two points, the second reading a pair as UTF-16:
    # the one given back for the name reproduces what the decoder did
    data = bytes.fromhex("ED A0 80 ED B0 80")
    out = _partial(data, replace=(0x10000,))
    x = explain(data, out, "unicode", "maximal-subpart", "accepts-ill-formed", "surrogate")
    assert x.rule == "accepts:surrogate:3-byte"
    rule = rule_of(data, "unicode", "maximal-subpart", "accepts-ill-formed", "surrogate",
                   x.rule, out)
    assert rule is not None and rule.holds(data, out)


def test_another_causes_input_is_left_to_it_past_its_first_difference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's decoder reads C0 AF as RFC 2279's legacy decoder does, and passes a
    # stray 80 through as a character (another cause). The fresh input 80 C0 AF shows
    # that other cause first: the legacy reading is not refuted by what follows it, so
    # the cause is named (it was the signature's class alone, the legacy cause unseen)
    block = re.search(r"```python\n(# mydecoder\.py.*?)```", (ROOT / "README.md").read_text(),
                      re.S)
    assert block is not None
    (tmp_path / "mydecoder.py").write_text(block.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    (d,) = load_all("mydecoder:decode+inprocess")
    for hexed in ("C0 AF", "ED A0 80"):
        data = bytes.fromhex(hexed)
        (div,) = Differ([d]).run(data, full=True).divergences
        assert finding_of(data, div.signature, d.decode(data), d)["rule"] == \
            "profile:legacy/maximal-subpart", hexed
