"""Findings per planted cause (issue 25): on decoders nobody tuned the explanation
rules to (tests/triage/planted), a right triage reports one finding per planted bug
that the shape can show, and none for a correct decoder.

A small subset of the table, in-process: each decoder (``+inprocess``) meets one
fixed list of inputs through the engine's :class:`~utf8fuzz.loop.finder.Finder`
(tests/triage/planted/inprocess.py), and its findings are the distinct finding ids of
what it saved, as ``utf8fuzz fuzz`` counts them. The inputs are a seeded draw of
pieces that show every planted bug, the same on every run: no fuzzer's luck. The
cases that triage gets wrong today are ``xfail(strict=True)`` with today's count, so
each flips to a failure (to be unmarked) when triage improves. The whole table, on
both engines, is ``scripts/triage_measure.py`` (docs/triage.md).
"""

from __future__ import annotations

import itertools

import pytest

from tests.triage.planted import CODEC, INCREMENTAL, PLANTED, TEXT, VALIDATOR, Planted, single
from tests.triage.planted.inprocess import findings
from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.differ import Differ
from utf8fuzz.loop.finder import runner
from utf8fuzz.triage.explain import explain


def _planted(attr: str) -> Planted:
    (p,) = [p for p in PLANTED if p.attr == attr]
    return p


def _case(attr: str, shape: str, today: str | None = None):  # type: ignore[no-untyped-def]
    marks = [pytest.mark.xfail(strict=True, reason=today)] if today else []
    return pytest.param(_planted(attr), shape, marks=marks, id=f"{attr}+{shape}")


CASES = [
    _case("correct", CODEC),
    _case("correct", TEXT),
    _case("correct", VALIDATOR),
    _case("Correct", INCREMENTAL),
    _case("accepts_surrogates", TEXT),
    _case("accepts_overlong2", VALIDATOR),
    _case("cuts_per_byte", CODEC),
    _case("cuts_per_sequence", TEXT),
    _case("rejects_fffd", CODEC),
    _case("rejects_fffd", TEXT),  # U+FFFD for U+FFFD: nothing to see
    _case("accepts_overlong2", CODEC),
    _case("rejects_fffe_ffff", TEXT),
    _case("two_fffd_per_error", TEXT),
    _case("strict_end_off_by_one", CODEC),
    _case("replace_drops_errors", TEXT),
    _case("replace_with_question_mark", CODEC),
    _case("surrogates_from_offset_16", CODEC),
    _case("LosesSplitSequence", INCREMENTAL),
    _case("ErrorForSplitSequence", INCREMENTAL),
    _case("overlong2_and_per_byte", CODEC),
    _case("surrogates_and_two_fffd", CODEC),
    _case("overlong2_and_strict_end", CODEC),
    _case("cesu8_like_trio", CODEC),
]


@pytest.mark.parametrize(("planted", "shape"), CASES)
def test_one_finding_per_planted_bug(planted: Planted, shape: str) -> None:
    assert len(findings(planted.spec(shape))) == planted.expected(shape)


@pytest.mark.parametrize(("attr", "shape", "rule"), [
    ("accepts_overlong2", CODEC, "accepts:non-shortest-form:2-byte"),
    ("accepts_surrogates", TEXT, "accepts:surrogate:3-byte"),
    ("rejects_fffe_ffff", TEXT, "rejects:noncharacter:3-byte"),
    ("replace_with_question_mark", TEXT, "renders-errors-as:U+003F"),
    ("LosesSplitSequence", INCREMENTAL, "stream:drops-held-bytes"),
    # moves narrower than a spec feature: boxes of the byte classes
    ("rejects_nul", CODEC, "rejects:00"),
    ("rejects_f090", TEXT, "rejects:F0_90_80..BF_80..BF"),
    ("accepts_continuation_as_latin1", TEXT, "accepts:80..BF"),
    ("accepts_cesu8_pairs", TEXT, "accepts:ED_A0..AF_80..BF_ED_B0..BF_80..BF"),
    ("accepts_above_10ffff", CODEC, "accepts:above-10ffff:4-byte:as-U+FFFD"),
    ("drops_lead_at_last_byte", CODEC, "end-unchecked:1-byte"),
])
def test_a_planted_bug_is_named_by_the_model_axis_it_moves(attr: str, shape: str,
                                                           rule: str) -> None:
    # the finding says what changed, in the spec's terms, not where it first showed
    assert [r for r, _ in findings(_planted(attr).spec(shape)).values()] == [rule]


def test_a_lead_dropped_at_the_end_is_one_move_whichever_mode_shows_it() -> None:
    # E1 alone: the strict mode (the first to diverge) shows one error at most, so the
    # end rules' probes that end the input itself after E2 82 begin with E1's own
    # error and cannot refute end-unchecked there; E2 82 in place of E1 does
    rules = [r for r, _ in findings(_planted("drops_lead_at_last_byte").spec(CODEC),
                                    [bytes.fromhex("E1")]).values()]
    assert rules == ["end-unchecked:1-byte"]


@pytest.mark.parametrize(("attr", "rule"), [("rejects_noncharacters", "rejects:noncharacter"),
                                            ("rejects_fffe_ffff", "rejects:noncharacter:3-byte")])
@pytest.mark.parametrize("shape", [CODEC, TEXT, VALIDATOR])
def test_a_rejected_feature_is_one_move_over_the_lengths_it_is_rejected_at(
        attr: str, rule: str, shape: str) -> None:
    # U+FFFE and U+1FFFE: one move for a decoder that rejects both (each length's move
    # refuted by the other length's sequence), the 3-byte one for one that rejects
    # U+FFFE/U+FFFF alone (U+1FFFE accepted refutes the wider move)
    data = [bytes.fromhex(h) for h in ("EF BF BE", "F0 9F BF BE", "41 F0 9F BF BF 41")]
    assert [r for r, _ in findings(_planted(attr).spec(shape), data).values()] == [rule]


def test_a_validators_no_is_put_on_the_sequence_it_rejects() -> None:
    # F0 90 80 80, ASCII, then EF BF BF: the no could be either's, and every fresh input
    # made around the first bytes keeps EF BF BF (a no); the 4-byte character alone is
    # a yes, which refutes rejecting it (explained as the engine explains an input
    # before minimizing it)
    (d,) = load_all(_planted("rejects_fffe_ffff").spec(VALIDATOR) + "+inprocess")
    one = Differ([d])

    def run(f: bytes):  # type: ignore[no-untyped-def]
        res = one.run(f, full=True)
        return res.outcomes[d.name], frozenset((s.klass, s.feature) for s in res.signature_set())
    data = bytes.fromhex("F0 90 80 80") + b"A" * 12 + bytes.fromhex("EF BF BF")
    why = explain(data, d.decode(data), "unicode", d.policy, "rejects-well-formed",
                  "well-formed-4-byte", run=run)
    assert why.rule == "rejects:noncharacter:3-byte"


def test_a_validators_no_is_checked_on_each_sequence_alone() -> None:
    # met by Hypothesis: 00 the only ASCII, last, past the bytes fresh inputs change;
    # explained whole, 2- and 1-byte rejections held (nothing refuted them); each
    # character alone (C2 A0 alone is a yes) refutes them, and the core is 00
    data = [bytes.fromhex("C2 A0 E3 80 99 E6 AE B1 F3 A1 9C 81 F0 BF BF BF E0 B9 A1 00")]
    rules = [r for r, _ in findings(_planted("rejects_nul").spec(VALIDATOR), data).values()]
    assert rules == ["rejects:00"]


def test_three_bugs_are_three_findings_each_named_by_its_axis() -> None:
    # cesu8_like_trio: (1) "0" and U+FFFD, and no error, for a sequence the end cuts
    # short (C0, E2 82, F0 90 80): one point in its four modes (strict shows no error,
    # the others the text), not a class at each sequence length; (2) C0 80 as U+0000
    # and (3) surrogates, each its own move of the well-formed set, not modified
    # UTF-8's table joined to UTF-8's
    rules = [r for r, _ in findings(_planted("cesu8_like_trio").spec(CODEC)).values()]
    assert sorted(rules) == ["accepts:C0_80", "accepts:surrogate:3-byte",
                             "end-cut-short-as-text"]


def _trio(shape: str, *hexed: str) -> list[str]:
    return sorted(r for r, _ in findings(_planted("cesu8_like_trio").spec(shape),
                                         [bytes.fromhex(h) for h in hexed]).values())


@pytest.mark.parametrize("shape", [CODEC, TEXT, VALIDATOR])
def test_an_unchecked_end_in_a_fresh_input_is_left_to_the_end_handling(shape: str) -> None:
    # ED A0 80 at the input's end: its fresh input ED A0 (the last byte deleted) is
    # "0" U+FFFD and no error, cesu8_like_trio's first bug, at the same signature
    # (accepts-ill-formed/surrogate); the difference is all at a cut-short end, which
    # a table's move leaves to the end handling. A whole other profile
    # (surrogatepass) that explains nothing the move leaves does not displace it.
    assert _trio(shape, "ED A0 80") == ["accepts:surrogate:3-byte"]


@pytest.mark.parametrize("shape", [CODEC, TEXT, VALIDATOR])
def test_a_joined_table_is_not_two_features_each_moved_alone(shape: str) -> None:
    # C0 80 as U+0000: modified UTF-8's table joined to UTF-8's also explains the
    # fresh input with a surrogate before it (ED A0 80 41 C0 80 41), but the
    # surrogate's own move predicts that one's first difference (for a yes or no:
    # the two moves together accept it): two one-axis moves, two findings
    assert _trio(shape, "41 C0 80 41") == ["accepts:C0_80"]


@pytest.mark.parametrize(("shape", "rule"), [(TEXT, "end-cut-short-as-text"),
                                             (VALIDATOR, "end-unchecked")])
def test_an_end_rule_leaves_a_difference_before_the_end_to_another_cause(
        shape: str, rule: str) -> None:
    # ED A0 at the end ("0" U+FFFD, a yes): the end rule's fresh input ED A0 80 ED A0
    # shows a surrogate accepted before the end, at the same signature; the end
    # there is as the rule says, so the surrogate is another cause's (explained as
    # the engine explains it before minimizing: a minimized core can hide it)
    (d,) = load_all(_planted("cesu8_like_trio").spec(shape) + "+inprocess")
    data = bytes.fromhex("ED A0")
    (div,) = Differ([d]).run(data, full=True).divergences
    s = div.signature
    assert explain(data, d.decode(data), s.profile, d.policy, s.klass, s.feature,
                   run=runner(d), at=div.offset).rule == rule


def test_text_for_a_cut_short_end_is_not_an_insertion_before_its_errors() -> None:
    # E2 82 -> "0" U+FFFD: as an insertion before the error's U+FFFD too, until a
    # cut-short end the table cuts into two errors (E0 80: "0" U+FFFD, not "0" and
    # two U+FFFD) tells them apart: one name for the first bug in every shape
    assert _trio(TEXT, "E2 82") == ["end-cut-short-as-text"]


def test_a_table_move_before_an_unchecked_end_is_the_tables() -> None:
    # ED A0 80 C0: a surrogate accepted, then "0" U+FFFD for the C0 the end cuts
    # short; no rule predicts both, the surrogate's does but for the end, which is
    # the first difference's
    assert _trio(TEXT, "ED A0 80 C0") == ["accepts:surrogate:3-byte"]


def test_the_base_decoder_is_cpython_codec_on_every_short_input() -> None:
    # the planted decoders' base (tests/triage/planted/spec.py) against CPython's
    # codec, a real conforming decoder: every input of up to two bytes, every mode
    # and the strict error's span
    for n in range(0x10000 + 0x100 + 1):
        data = b"" if n == 0 else bytes([n - 1]) if n <= 0x100 else (n - 0x101).to_bytes(2, "big")
        for mode in ("replace", "ignore", "surrogateescape"):
            assert single.correct(data, mode) == data.decode("utf-8", mode), (data, mode)
        try:
            want: object = data.decode("utf-8")
        except UnicodeDecodeError as e:
            want = (e.start, e.end)
        try:
            got: object = single.correct(data)
        except UnicodeDecodeError as e:
            got = (e.start, e.end)
        assert got == want, data


@pytest.mark.parametrize(("planted", "policy"), [(single.cuts_per_byte, "per-byte"),
                                                 (single.cuts_per_sequence, "per-sequence")])
def test_a_planted_policy_is_that_policy_alone(planted, policy) -> None:  # type: ignore[no-untyped-def]
    # the two planted cutting bugs deviate in their policy and nothing else: their
    # replace mode is the reference of that policy (policies.py, a spec transcription)
    # on every input of up to two bytes and on three-byte inputs of boundary values
    ref = Reference("unicode", policy)
    edges = (0x00, 0x41, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
             0xF8, 0xFC, 0xFE, 0xFF)
    short = [bytes([a, b]) for a in range(256) for b in range(256)]
    for data in [*short, *(bytes(t) for t in itertools.product(edges, repeat=3)),
                 *(bytes([x]) + bytes([0x80] * 6) for x in edges)]:
        want = "".join(map(chr, ref.run(data).view("replace")))
        assert planted(data, "replace") == want, data.hex(" ")
