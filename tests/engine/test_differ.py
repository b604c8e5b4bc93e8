import functools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.engine.planted import Crashes, planted_block, planted_c080, planted_truncated4
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.result import Difference, DivergenceError, assert_agree
from utf8fuzz.outcome import Outcome, Token


def sigs(decoders, hexin):
    return sorted(Differ(decoders).signatures(bytes.fromhex(hexin)))


def test_agreeing_decoders_give_no_divergence():
    assert sigs([planted_c080()], "41 E2 82 AC F0 9F 98 80") == []
    assert sigs([planted_c080()], "E0 80 ED A0 80") == []


def test_accepting_c080_is_named_by_class_feature_and_decoder():
    assert sigs([planted_c080()], "41 C0 80 42") == [
        "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"]


def test_offset_is_not_part_of_the_signature():
    a = sigs([planted_c080()], "C0 80")
    assert a == sigs([planted_c080()], "41 41 41 C0 80 41")


def test_swallowed_byte_is_a_replacement_difference_on_the_truncated_sequence():
    assert sigs([planted_truncated4()], "F0 9F 98 41") == [
        "unicode/different-replacement/incomplete-4-byte-sequence/"
        "planted:swallows-after-truncated4"]


@pytest.mark.parametrize("hexin", [
    "F0 9F 98 EF BF BD 41",  # a literal U+FFFD after it (once: rejects-well-formed/ascii)
    "F0 9F 98 EF BF BD EF BF BD 41",
    "EF BF BD F0 9F C3 A9 41",
    "F0 9F F0 9F 98 80",  # the swallowed byte is the lead of a 4-byte character
])
def test_a_swallowed_byte_is_blamed_on_the_truncated_sequence_whatever_follows(hexin):
    assert sigs([planted_truncated4()], hexin) == [
        "unicode/different-replacement/incomplete-4-byte-sequence/"
        "planted:swallows-after-truncated4"]


_TEXT = st.text(st.sampled_from("A\u00e9\u4e2d\U0001f600\ufffd"), max_size=4)


@given(_TEXT, st.sampled_from([b"\xf0\x9f", b"\xf0\x9f\x98", b"\xf4\x8f"]), _TEXT)
@settings(max_examples=300, deadline=None)
def test_one_replace_bug_gets_one_signature_whatever_text_surrounds_it(before, cut, after):
    # Well-formed text around one truncated 4-byte sequence, literal U+FFFD included:
    # where the planted decoder differs at all, it is in that one way.
    assume(after)  # the bug needs a byte after the sequence
    data = before.encode() + cut + after.encode()
    assert Differ([planted_truncated4()]).signatures(data) == {
        "unicode/different-replacement/incomplete-4-byte-sequence/"
        "planted:swallows-after-truncated4"}, data.hex(" ")


def test_a_signature_names_one_decoder_whoever_else_differs():
    # Alone or beside another decoder with the same difference, a decoder's signature
    # is the same: which other decoders ran is not part of its name.
    alone = sigs([planted_c080()], "41" * 15 + "C0 80")
    assert alone == ["unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"]
    assert sigs([planted_c080(), planted_block()], "41" * 15 + "C0 80") == [
        *alone, "unicode/accepts-ill-formed/non-shortest-form/planted:block-boundary"]


def test_crash_is_data_not_an_exception():
    assert sigs([Crashes()], "41 FE") == ["unicode/crash/IndexError/planted:crashes-on-fe"]


def test_references_are_the_oracle_and_profiles_decide_expected_differences():
    # rfc2279 accepts a 5-byte form; unicode does not: judged each by its own reference.
    d = Differ([Reference("unicode"), Reference("rfc2279")])
    assert d.decoders == []
    assert d.run(bytes.fromhex("F8 88 80 80 80")).divergences == []


class TokensDecoder(Decoder):
    """Shows tokens; calls E0 80 at the end 'truncated' (an impossible prefix)."""

    name = "t:calls-impossible-truncated"
    shows = frozenset({"tokens", "spans", "strict", "reason", "replace", "ignore"})

    def run(self, data):
        toks = list(Reference("unicode").decode(data).tokens)
        if data.endswith(b"\xe0\x80"):
            toks = [*toks[:-2], Token("error", None, len(data) - 2, len(data), "truncated")]
        return Outcome.from_tokens(toks, len(data))


def test_tokens_view_class_for_wrong_truncation():
    assert sigs([TokensDecoder()], "41 E0 80") == [
        "unicode/different-replacement/non-shortest-form/t:calls-impossible-truncated"]


class StrictOnly(Decoder):
    name = "s:late"
    shows = frozenset({"strict"})

    def run(self, data):
        s = Reference("unicode").decode(data).first_error
        return Outcome.partial(len(data), strict=None if s is None else (s[0], s[1] + 1))


def test_strict_view_reports_a_different_error_offset():
    assert sigs([StrictOnly()], "41 80 41") == [
        "unicode/different-error-offset/lone-continuation/s:late"]


class Incr(Decoder):
    name = "fam:incremental"
    incremental = True
    shows = frozenset({"replace"})

    def run(self, data):
        return Outcome.partial(len(data), replace=[ord(c) for c in data.decode("utf-8", "ignore")])


class OneShot(Decoder):
    name = "fam:oneshot"
    shows = frozenset({"replace"})

    def run(self, data):
        return Outcome.partial(len(data), replace=[ord(c) for c in data.decode("utf-8", "replace")])


def test_incremental_difference_when_the_one_shot_sibling_agrees():
    assert sigs([Incr(), OneShot()], "41 80 41") == [
        "unicode/incremental-differs/lone-continuation/fam:incremental"]
    # Without a one-shot sibling it is an ordinary difference.
    assert "incremental-differs" not in sigs([Incr()], "41 80 41")[0]


def test_assert_agree_raises_one_class_per_signature():
    d = Differ([planted_c080(), Crashes()])
    with pytest.raises(DivergenceError) as a:
        assert_agree(d.run(b"\xc0\x80"))
    with pytest.raises(DivergenceError) as b:
        assert_agree(d.run(b"\xfe"))
    with pytest.raises(DivergenceError) as c:
        assert_agree(d.run(b"A\xc0\x80"))
    assert type(a.value) is not type(b.value)
    assert type(a.value) is type(c.value)


class IgnoreSubstitutes(Decoder):
    """A planted bug PyICU 2.17 really has: its "ignore" mode writes U+FFFD per
    error, as replace does. Shows only the ignore view (no offsets)."""

    name, shows = "planted:ignore-substitutes", frozenset({"ignore"})

    def run(self, data):
        return Outcome.partial(len(data), ignore=tuple(map(ord, data.decode("utf-8", "replace"))))


@pytest.mark.parametrize("hexin", ["C2 41", "C2 41 EF BF BD", "41 C2 EF BF BD 41"])
def test_one_ignore_bug_gets_one_signature_whatever_else_the_input_holds(hexin):
    # A literal U+FFFD (EF BF BD) later in the input must not move the blame off
    # the C2 that got output onto a character after it.
    assert sigs([IgnoreSubstitutes()], hexin) == [
        "unicode/different-replacement/incomplete-2-byte-sequence/planted:ignore-substitutes"]


def test_inserted_value_that_looks_like_a_literal_replacement_character():
    # F1 then a literal U+FFFD: the inserted U+FFFD lines up with the literal one
    # first; the alignment still blames F1.
    assert sigs([IgnoreSubstitutes()], "F1 EF BF BD 41") == [
        "unicode/different-replacement/incomplete-4-byte-sequence/planted:ignore-substitutes"]


class IgnoreKeepsLatin1(Decoder):
    """A planted bug of another kind in the ignore view: an error's bytes kept as
    Latin-1 characters (what the mutf8 C package does), not substituted."""

    name, shows = "planted:ignore-keeps-latin1", frozenset({"ignore"})

    def run(self, data):
        out = []
        for t in Reference("unicode").decode(data).tokens:
            out += [t.value] if t.kind == "char" else list(data[t.start:t.end])
        return Outcome.partial(len(data), ignore=tuple(out))


class EscapeSubstitutes(Decoder):
    """surrogateescape done as replace: U+FFFD where the bytes were to be escaped."""

    name, shows = "planted:escape-substitutes", frozenset({"escape"})

    def run(self, data):
        return Outcome.partial(len(data), escape=tuple(map(ord, data.decode("utf-8", "replace"))))


def test_substituting_where_errors_are_dropped_or_escaped_is_a_replacement_difference():
    # U+FFFD for an error is a difference in the number of U+FFFD, whichever
    # view expected something else; keeping the error's bytes as characters is
    # accepting it. A decoder doing one must not share a signature with one
    # doing the other (glibc iconv accepts F8 88 80 80 80; PyICU's ignore mode
    # substitutes for it).
    assert sigs([IgnoreKeepsLatin1()], "41 C2 41") == [
        "unicode/accepts-ill-formed/incomplete-2-byte-sequence/planted:ignore-keeps-latin1"]
    assert sigs([IgnoreSubstitutes(), IgnoreKeepsLatin1()], "F8 88 80 80 80") == [
        "unicode/accepts-ill-formed/5-byte-form/planted:ignore-keeps-latin1",
        "unicode/different-replacement/5-byte-form/planted:ignore-substitutes"]
    assert sigs([EscapeSubstitutes()], "41 C2 41") == [
        "unicode/different-replacement/incomplete-2-byte-sequence/planted:escape-substitutes"]
    assert sigs([EscapeSubstitutes()], "41 C2") == [
        "unicode/different-replacement/truncated-2-byte-at-end/planted:escape-substitutes"]


class WrongTextOnValidInput(Decoder):
    """Declares only strict (as iconv does) but carries its text on valid input;
    its planted bug: U+00E9 comes out as U+00E8."""

    name, shows = "planted:strict-with-text", frozenset({"strict"})

    def run(self, data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            return Outcome.partial(len(data), strict=(e.start, e.end))
        cps = tuple(0xE8 if ord(c) == 0xE9 else ord(c) for c in text)
        return Outcome.partial(len(data), strict=None, replace=cps, ignore=cps)


def test_text_shown_on_valid_input_is_compared_even_if_not_declared():
    assert sigs([WrongTextOnValidInput()], "41 C3 A9") == [
        "unicode/different-code-point/well-formed-2-byte/planted:strict-with-text"]
    assert sigs([WrongTextOnValidInput()], "41 C3") == []


class _Validator(Decoder):
    """bytes -> bool, as a validator says it: well-formed UTF-8 except the planted
    rule (an encoded surrogate ED A0..BF xx accepted, or EF BF BD rejected)."""

    name = "planted:validator"
    shows = frozenset({"accept"})

    def run(self, data: bytes) -> Outcome:
        try:
            data.decode("utf-8")
            ok = b"\xef\xbf\xbd" not in data
        except UnicodeDecodeError:
            ok = len(data) == 3 and data[0] == 0xED and 0xA0 <= data[1] <= 0xBF
        return Outcome.partial(len(data), accept=ok)


@pytest.mark.parametrize("full_every", [1, 4])  # in full, and through the screens
def test_a_validator_is_judged_at_the_accept_view(full_every):
    inputs = [bytes.fromhex(h) for h in ("41 42", "ED A0 80", "41 EF BF BD", "FF", "C3 A9")]
    results = Differ([_Validator()], full_every=full_every).run_many(inputs * 2)
    got = [sorted(str(d.signature) for d in r.divergences) for r in results[:5]]
    assert got == [
        [],
        ["unicode/accepts-ill-formed/surrogate/planted:validator"],
        # says not where: anchored at the first non-ASCII character
        ["unicode/rejects-well-formed/replacement-character/planted:validator"],
        [],
        [],
    ]
    assert [d.view for r in results[:5] for d in r.divergences] == ["accept", "accept"]


@pytest.mark.parametrize("hexin", [
    # found by a random search before the alignment weighed what accepted bytes
    # spell: each was blamed on an error before the C0 80, by a U+FFFD moved
    # onto the literal one
    "E2 C0 80 C0 80 ED A0 80 EF BF BD C0 82",
    "F4 90 C0 80 EF BF BD C0 80 C0 80 C0 80",
    "EF BF BD F0 F0 C0 80 C0 80",
    "C3 C0 80 C0 80 EF BF BD F4 90 98",
])
def test_an_accepted_c080_is_blamed_on_itself_beside_a_literal_replacement(hexin):
    assert sigs([planted_c080()], hexin) == [
        "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"]


def test_an_accepted_c080_is_blamed_on_itself_when_its_value_comes_again_later():
    # U+0000 from C0 80, and a literal 00 after: once blamed on the E3 before it
    assert sigs([planted_c080()], "E3 C0 80 00 C0 80") == [
        "unicode/accepts-ill-formed/non-shortest-form/planted:accepts-c080"]



class FamSpans(Decoder):
    name = "fam:spans"
    shows = frozenset({"spans"})

    def run(self, data):
        return Outcome.partial(len(data), spans=())


@functools.cache
def _real_differ():
    # these, and every in-process decoder of this machine: their families, siblings
    # that show positions, and streaming decoders
    from utf8fuzz.loop.atheris_target import select
    mine = [FamSpans(), OneShot(), Incr()]
    return Differ(mine + [d for d in select(None, None)
                          if not getattr(d, "out_of_process", False)],
                  full_every=8, defer_out_of_process=True)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_the_loops_shortcut_past_sibling_and_incremental_blame_changes_nothing(data):
    # Differ._settled skips _by_sibling / _incremental where no difference names a
    # decoder they could change: it must give what both give, on any differences of
    # the real decoders.
    d = _real_differ()
    prof = {x.name: x.profile for x in d.decoders}
    rows = data.draw(st.lists(
        st.tuples(st.sampled_from(sorted(prof)),
                  st.sampled_from(["accepts-ill-formed", "different-replacement", "crash",
                                   "different-error-offset"]),
                  st.sampled_from(["lone-continuation", "surrogate", "IndexError"])),
        max_size=8, unique_by=lambda x: x[0]))
    diffs = [Difference(n, prof[n], k, f, i, "spans", f"detail {i}")
             for i, (n, k, f) in enumerate(rows)]
    assert d._settled(diffs) == d._incremental(d._by_sibling(diffs))


def test_the_shortcut_is_taken_and_not_taken_where_it_must():
    d = Differ([FamSpans(), OneShot(), Incr()], full_every=8)
    assert d.siblings == {"fam:oneshot": ("fam:spans",)} and d._incr == {"fam:incremental"}
    w = Difference("fam:oneshot", "unicode", "different-replacement", "surrogate", 1,
                   "replace", "w")
    s = Difference("fam:spans", "unicode", "different-error-offset", "lone-continuation", 0,
                   "spans", "s")
    i = Difference("fam:incremental", "unicode", "different-replacement", "surrogate", 1,
                   "replace", "i")
    assert d._settled([w]) == [w] and d._settled([s]) == [s]
    got = d._settled([w, s])
    assert got[0].klass == "different-error-offset" and got[0].offset == 0  # blamed on s
    assert d._settled([i])[0].klass == "incremental-differs"  # no one-shot sibling differs
    assert d._settled([w, i])[1].klass == "different-replacement"  # fam:oneshot does


@pytest.mark.parametrize("full_every", [1, 8])
def test_a_crash_in_the_screened_loop_is_the_difference_judge_gives(full_every):
    # A failed outcome is judged without building the reference's Judge in the loop
    # (differ._failure): the same Difference as Differ._judge makes of it.
    from utf8fuzz.engine.classify import Judge
    dec = Crashes()
    d = Differ([dec], full_every=full_every)
    data = bytes.fromhex("41 FE 80")
    got = [r._diffs for r in d.run_many([data] * 9)]
    out = dec.decode(data)
    ref = d._oracles[0]
    want = d._judge(dec, Judge(data, ref.walk(data), ref), out)
    assert want is not None and want.klass == "crash"
    assert all(x == [want] for x in got)
    assert d.run(data, full=True).divergences[0].differences == (want,)
