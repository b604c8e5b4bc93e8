"""Explanations: the simplest rule, in the spec's words, that reproduces what a
decoder did on an input where it diverged from its reference; and findings, one
per decoder family and explanation.

A signature names *where* a decoder first differed (class and spec feature); one
root cause shows at many features (a decoder that cuts errors per byte differs at
every ill-formed sequence longer than a byte). An explanation names the cause.

Rules. Each rule but the last two *predicts* the decoder's whole outcome on any input
(so it can be checked, and refuted, on inputs it was not found on). They are tried
in this order, the first that reproduces every view the decoder showed deciding:

1. a failure explains itself: the kind of crash (``SIGSEGV``, ``IndexError``), or a
   hang;
2. another reference, or a point of the decoder model (:class:`Point`: the sequences
   a table reads, which part of them it rejects whole, how a lead takes its bytes,
   how the bytes between characters are cut): the claimed profile under another
   policy (``policy:per-byte``: a policy difference, not a bug); the claimed table
   cut by the lead's count, each sequence checked only once complete
   (``checked-when-complete``: a reporting difference; before the other profiles,
   which fit such a decoder at the end of the input); another profile's table
   (``profile:rfc2279/maximal-subpart``: it decodes RFC 2279's forms), also with one
   part of what it reads beyond the claim read whole and rejected whole, each
   sequence one error (:func:`_parts`: an ill-formed feature's sequences of code
   points the claim has none of, ``+surrogate-one-error``; a length the claim's
   leads do not announce, of code points it encodes otherwise, ``+4-byte-one-error``;
   values above the claim's top, ``+beyond-10FFFF-one-error``), or cut by the lead's
   count (``profile:kuhn/checked-when-complete``);
3. a view transformation: its ignore view keeps one U+FFFD per error
   (``ignore-substitutes``); its text shows each ill-formed byte as U+0080..U+00FF
   (``bytes-as-latin1``); a point whose table holds every sequence a lead's count
   takes, unchecked, as the value its bits spell (:func:`unchecked_table`), a lead
   the end cuts short an error by itself (``continuations-unchecked``; with every
   other byte as Latin-1, ``+latin1``); its text holds code points no
   bytes spell at one kind of place: before the error that holds a lead the end of
   the input cuts short, before or after each error, at the end
   (``inserts:before-cut-short-end:U+0030``); its replace view renders every error
   as one fixed text other than one U+FFFD (``renders-errors-as:nothing``,
   ``renders-errors-as:U+003F``);
4. a token rule: one change to the claimed profile's well-formed set, at a spec
   feature and a sequence length the input shows: it accepts the n-byte sequences of
   an ill-formed feature as the value their bits spell
   (``accepts:non-shortest-form:2-byte``), or rejects those of a well-formed one, each
   as one error (``rejects:noncharacter:3-byte``; at every length the table has it,
   ``rejects:noncharacter``); every error takes the byte after
   it into the same U+FFFD (``swallows-next-byte``), or every error of one spec feature does
   (``swallows-next-byte:incomplete-4-byte-sequence``: the byte that ended a
   truncated sequence is lost);
5. a reason or span rule: the point of the claimed table whose ill-formed bytes
   between characters are cut as another table cuts them (``errors-as:unicode``); it
   cuts the end of the input by the lead's high bits alone
   (one truncated error); it calls an impossible prefix at the end truncated, or a
   truncation illegal; its error spans cover the lead byte only; it does not check
   the end: a sequence the end cuts short is dropped without an error
   (``end-unchecked``);
6. for a streaming decoder that differs from its own one-shot result (an
   ``incremental-differs`` divergence, which gets these rules alone: the one-shot
   sibling, fed the same bytes whole, refutes any rule of the bytes alone), how it
   carries a sequence a chunk boundary cuts: it decodes each chunk as if it were the
   last (``stream:each-chunk-as-final``), loses the bytes it should hold at the
   chunk's end (``stream:drops-held-bytes``) or when the next chunk comes
   (``stream:forgets-held-bytes``: the end still sees them), each also checked on the
   input ended at each boundary and ended there with ASCII after it (what tells
   them apart on a validator's yes or no); else the feature of the sequence a
   boundary cuts (``split:4-byte-sequence``);
7. otherwise the signature's own class and feature (``accepts-ill-formed/surrogate``),
   which predicts nothing and is never refuted.

Checked before believed. Given a way to run the decoder (``run``), a rule that
reproduces the input is also tried on :func:`fresh_inputs`: the input in other
text, after a stray continuation byte, before a lead with ASCII where its
continuation bytes belong, with each of its first bytes deleted, and with each
byte replaced by the ends of its byte class
(:func:`utf8fuzz.triage.generalize.byte_classes`); a validator's rules also on each
sequence of the input alone (its no does not say which it rejected); a rule may add
its own probes (``checked-when-complete``: the sequence the end cuts short, completed; a
move of the well-formed set, to another profile's table or the claimed one changed:
the least sequence to each place where its table and the claimed one read a byte class
otherwise, :func:`_differences`, so that a move is not believed on part of what it
says). One fresh
input whose outcome the rule does not predict refutes it (:func:`unexplained`:
except where the rule predicts no divergence and the decoder shows a different one,
another bug's), and the next rule is tried. Of the rules that hold, the one that
leaves fewest fresh inputs to another bug is believed: a decoder that takes
continuation bytes unchecked *and* passes stray bytes through as Latin-1 is one rule
that says both, not the first of two that each say half. The inputs are a function
of the input alone, so the same minimized input gets the same explanation on any
night.

A *finding* is one (decoder family, explanation): :func:`family` maps the adapters
of one library to one name (iconv's four targets, ICU system and bundled), and
:func:`finding_id` names the pair deterministically. Different bugs in one decoder
have different explanations, so never share a finding.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import product
from typing import Any

from utf8fuzz.decoders.chunks import cuts
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.classify import VIEW_ORDER, Judge
from utf8fuzz.engine.signature import SEVERITIES, feature_of, severity_of
from utf8fuzz.outcome import REPLACEMENT, TEXT_VIEWS, Outcome, Token, ViewUnavailable
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles.table import (
    DEAD,
    Profile,
    Row,
    bits_encode,
    bits_value,
    structural_length,
)
from utf8fuzz.triage.generalize import byte_classes

#: The version of the rules below, recorded with each finding: a corpus explained by
#: older rules is explained again by ``utf8fuzz corpus migrate`` (a finding's id
#: depends on its rule). 2: checked-when-complete, probes, fewest left to another bug.
#: 3: points of the decoder model, moved one axis at a time and named by the axis of
#: the first difference; one-feature moves before whole profiles; another cause's
#: input left to it past its first difference. 4: the per-library rules as points of
#: the model (a part of another table read whole and rejected whole; cuts by the lead's
#: count; errors cut as another table cuts them). 5: moves narrower than a spec feature
#: (boxes of byte classes, another profile's row, one ill-formed feature read as
#: U+FFFD), the claimed table joined with another profile's, the end cut short after
#: k bytes; Latin-1 pass-through of the upper half alone. 6: halves taken unchecked
#: paired only where their bytes are a pair row's. 7: a feature rejected at every
#: length; a rejection checked on its sequences alone and the feature's at each
#: length; the end rules checked on the input's own cut-short end replaced; a
#: validator's rules checked on each sequence of the input alone. 8: the end handling
#: an axis of its own in the check (a fresh input whose only difference is an
#: unchecked end left to it; an end rule's difference before the end left to
#: another cause); a rule displaces the best only by explaining what it leaves; a
#: joined table not where that is another feature's move. 9: a fresh input judged
#: where the rule and the decoder first differ: another deviation's where the rule
#: predicts the reference there and the difference is of another class or feature
#: (whatever the input's signature). 10: there also where the rule moved an error's end
#: alone (the reference's error starts there too) and the decoder begins no error
#: there (it accepts those bytes: the table's axis, not the span convention's).
#: 11: a move of the well-formed set (another profile's table, a feature's, a box's,
#: a joined table) also checked where its table and the claimed one differ
#: (:func:`_differences`); a box of another profile's row cut to the claimed byte
#: classes up to where the claim rejects it.
RULES = 11
#: The most work the rules may do for one input, in bytes predicted (each rule's
#: prediction of an input costs its length): past it, rules that would need
#: checking are passed over (the best one checked so far, or the rule that predicts
#: nothing, is the explanation). A count, not seconds, so that the same input gets
#: the same explanation, and its finding the same id, on any machine under any
#: load. Short inputs use a few thousand; a 65 KB input's rules about 1.5 million
#: (docs/performance.md); an input of thousands of errors, whose rules resume after
#: each one, could use far more without it.
EXPLAIN_BYTES = 8_000_000


@dataclass(frozen=True)
class Explanation:
    """``rule``: a stable key (part of the finding's id); ``text``: the rule as a
    sentence; ``severity``: one of :data:`SEVERITIES`; ``checked``: how many fresh
    inputs it was checked on (0: not checked, or a rule that predicts nothing)."""

    rule: str
    text: str
    severity: str
    checked: int = 0


_refs: dict[tuple[str, str], Reference] = {}


def _ref(profile: str, policy: str) -> Reference:
    r = _refs.get((profile, policy))
    if r is None:
        r = _refs[profile, policy] = Reference(profile, policy)
    return r


def _shown(out: Outcome) -> tuple[str, ...]:
    # tokens imply every other view: compare them alone when the decoder has them
    if "tokens" in out.shows:
        return ("tokens",)
    # escape is computed from the input's bytes, unless the decoder gave it itself
    return tuple(v for v in sorted(out.shows)
                 if v != "escape" or out.data is not None or "escape" in out.views)


# -- the rules --------------------------------------------------------------------

#: What a rule predicts on one input: an outcome, and views that differ from it.
Prediction = tuple[Outcome, dict[str, Any]]


@dataclass(frozen=True)
class Rule:
    """A candidate explanation and its prediction (None: predicts nothing);
    ``probes``: inputs, made from the input, that this rule is also checked on,
    beside :func:`fresh_inputs` (where it and the rules before it differ).
    ``ends``: the rule moves the end handling (how a sequence the end of the input
    cuts short is taken), so a fresh input's end is its to predict; any other rule
    predicts the end its table checks, and leaves a fresh input whose only
    difference is an unchecked end to that axis (:func:`_end_left`). ``joined``: the
    claimed table joined with another profile's, a move at several spec features at
    once, believed over a narrower rule only for what no one-feature move explains
    (:func:`_one_feature_each`)."""

    explanation: Explanation
    predict: Callable[[bytes], Prediction] | None
    probes: Callable[[bytes], list[bytes]] | None = None
    ends: bool = False
    joined: bool = False

    def holds(self, data: bytes, out: Outcome) -> bool:
        """Does the rule reproduce every view ``out`` shows? (True for a rule that
        predicts nothing.)"""
        return self.predict is None or _same(self.predict(data), out)


def _same(pred: Prediction, out: Outcome) -> bool:
    """Does prediction ``pred`` reproduce every view ``out`` shows?"""
    base, override = pred
    views = _shown(out)
    try:
        return bool(views) and all(
            out.view(v) == (override[v] if v in override else base.view(v)) for v in views)
    except ViewUnavailable:
        return False


def _first_unequal(a: Sequence[Any], b: Sequence[Any]) -> int:
    """The first index where ``a`` and ``b`` differ (the shorter's length when one
    is a prefix of the other)."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


def explains_first(rule: Rule, data: bytes, out: Outcome, profile: str, policy: str) -> bool:
    """Does ``rule`` predict ``out`` up to and including its first difference from
    the reference (``profile``, ``policy``), at every view ``out`` shows? What a
    signature names is that first difference: an input whose first difference a
    rule predicts is that rule's evidence there, whatever else it shows further
    on (another cause's, at another place)."""
    if rule.predict is None:
        return False
    base, override = rule.predict(data)
    ref = _ref(profile, policy).decode(data)
    try:
        for v in _shown(out):
            mine, want = out.view(v), override[v] if v in override else base.view(v)
            if mine == want:
                continue
            theirs = ref.view(v)
            if not (isinstance(mine, tuple) and isinstance(want, tuple)
                    and isinstance(theirs, tuple)):
                return False
            k = _first_unequal(mine, theirs)
            if mine[:k + 1] != want[:k + 1]:
                return False
    except ViewUnavailable:
        return False
    return True


#: The views that tie an error to its bytes; a decoder that shows none of them says
#: where its text differs only as far as the text can (:func:`unplaced`).
PLACED = frozenset({"tokens", "spans", "strict"})


def unplaced(rule: Rule, data: bytes, out: Outcome, profile: str, policy: str) -> bool:
    """Is ``out`` position-less (text views only: no view of :data:`PLACED`), where no
    view ties its first difference from the reference to input bytes, on an input
    ``rule`` predicts a difference on of its own? Then ``out`` is not evidence
    against ``rule`` (nor of another cause beside it): whether its first difference
    is the rule's or one further on, the text cannot tell. A text view places its
    first difference (index ``k``; the rule's text up to it is the decoder's) only
    where the text before it is written by the
    same bytes in the rule's prediction as in the reference: the bytes before the
    reference's token that writes ``k`` (:func:`_written_before`), which the rule
    reads as the reference does. Else the text before ``k`` may be written by other
    bytes in another number (``80 ED B0 80`` read as two U+FFFD for 80 and a
    surrogate agrees with the reference's U+FFFD for 80 and ED on two of them; the
    rule of two U+FFFD an error predicts its first difference, the text cannot say
    where the surrogate is). A yes or no has no place either, but a rule either
    predicts it or does not (:meth:`Rule.holds`)."""
    views = _shown(out)
    if rule.predict is None or not views or PLACED & set(views):
        return False
    base, override = rule.predict(data)
    mine_ref = _ref(profile, policy)
    ref = mine_ref.decode(data)
    moved = False  # the rule predicts a difference of its own
    try:
        for v in views:
            mine, theirs = out.view(v), ref.view(v)
            want: Any = override[v] if v in override else base.view(v)
            moved |= want != theirs
            if mine == theirs:
                continue
            if not (isinstance(mine, tuple) and isinstance(theirs, tuple)):
                return False  # a yes or no: predicted or not
            k = _first_unequal(mine, theirs)
            if tuple(want[:k]) != mine[:k]:
                return False  # the rule is refuted before it, where the text agrees
            # the bytes before the place, ended by a character no sequence takes in
            head = data[:_written_before(mine_ref, ref, data, v, k)] + b"A"
            pb, po = rule.predict(head)
            if (po[v] if v in po else pb.view(v)) == mine_ref.decode(head).view(v):
                return False  # placed: the rule reads what comes before it as the reference
    except ViewUnavailable:
        return False
    return moved


def _written_before(ref: Reference, out: Outcome, data: bytes, view: str, k: int) -> int:
    """The start of the token of ``out`` (the reference's on ``data``) whose text in
    ``view`` holds index ``k`` (``len(data)`` past its text): the last token start
    before which at most ``k`` code points are written, found by halves (what a
    prefix writes, ended by an ASCII byte: a token is ended by it as by the byte
    that ended it)."""
    starts = [t.start for t in out.tokens]
    if k >= len(_view(out, view)):
        return len(data)
    lo, hi = 0, len(starts) - 1  # starts[lo] writes at most k before it
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(_view(ref.decode(data[:starts[mid]] + b"A"), view)) - 1 <= k:
            lo = mid
        else:
            hi = mid - 1
    return starts[lo] if starts else 0


def _reference_rule(rule: str, text: str, severity: str, profile: str,
                    policy: str) -> Rule:
    def predict(data: bytes) -> Prediction:
        return _ref(profile, policy).decode(data), {}
    return Rule(Explanation(rule, text, severity), predict)


def candidates(data: bytes, profile: str, policy: str, klass: str,
               feature: str, out: Outcome | None = None, run: Run | None = None
               ) -> Iterator[Rule]:
    """The rules 2-7 of the module docstring, in order (a caller takes the first
    that holds); ``out``, the decoder's outcome, and ``run``, the decoder, say where
    a streaming split shows (:func:`_split_feature`). An ``incremental-differs``
    divergence gets the streaming rules (6) alone: its one-shot sibling, fed the same
    bytes whole, does not differ so, which refutes on this very input any rule that is
    a function of the bytes alone (2-5)."""
    if klass == "incremental-differs":
        yield from _stream_rules(data, _ref(profile, policy), out, run)
        yield _signature_rule(klass, feature)
        return
    for pol in POLICIES:
        if pol != policy:
            yield _reference_rule(
                f"policy:{pol}",
                f"it cuts ill-formed bytes into errors by the {pol} policy, where it "
                f"claims {policy}: a policy difference, not a conformance bug", "policy",
                profile, pol)
    # Before the other profiles: at the end of the input it looks like one that takes
    # RFC 2279's prefixes (legacy, rfc2279); the sequence completed tells them apart.
    yield _move_rule(_when_complete_move(profile, profile, policy, klass), _completed)
    # The model's other moves from the claim, one axis (the well-formed set, the cut,
    # the replace view's cut), then two or three at once: before the other profiles,
    # each of which moves the well-formed set in many places at once.
    claimed = REGISTRY[profile]
    accepting = _accepting_moves(data, profile, policy)
    cuts_ = _policy_moves(claimed, policy)
    renders = _rendering_moves(claimed, policy)
    for move in (*cuts_[-1:], *renders):
        yield _move_rule(move)
    for move in accepting:
        yield _move_rule(move, _both(_feature_probes(profile),
                                     _difference_probes(profile, move[3].table)))
    yield from _combined(data, out, profile, policy, [accepting, cuts_, renders])
    # Narrower moves of the well-formed set before whole other profiles: a feature's
    # rejection first (the wider change), then boxes of the byte classes, then the
    # claimed table joined with another profile's.
    yield from (r for r in _delta_rules(data, _ref(profile, policy), claimed)
                if r.explanation.rule.startswith("rejects:"))
    yield from _rejecting_boxes(data, profile, policy)
    yield from _accepting_boxes(data, profile, policy)
    yield from _union_rules(profile, policy, klass)
    for prof in REGISTRY:
        if prof == profile:
            continue
        # a move to another profile says how the decoder reads every input: checked
        # also where the two tables differ, not only near the input
        differ = _difference_probes(profile, REGISTRY[prof])
        for pol in (policy, *[p for p in POLICIES if p != policy]):
            if pol == policy:
                yield replace(_reference_rule(
                    f"profile:{prof}/{pol}",
                    f"it decodes these bytes as the {prof} profile does "
                    f"({REGISTRY[prof].spec}), where it claims {profile}",
                    severity_of(klass), prof, pol), probes=differ)
            else:  # two axes moved: named by the one that makes the first difference
                yield from (_also_probed(r, differ) for r in _combined(
                    data, out, profile, policy, [[(
                        f"profile:{prof}/{policy}",
                        f"it decodes these bytes as the {prof} profile does "
                        f"({REGISTRY[prof].spec}), where it claims {profile}",
                        severity_of(klass), Point(REGISTRY[prof], policy))],
                        [m for m in cuts_ if m[3].policy == pol], []]))
            for move in _rejecting_moves(profile, prof, pol, klass):
                yield _move_rule(move, differ)
        yield _move_rule(_when_complete_move(prof, profile, policy, klass),
                         _both(_completed, differ))
    table = REGISTRY[profile]
    mine = _ref(profile, policy)

    def substitutes(d: bytes) -> Prediction:
        r = mine.decode(d)
        return r, {"ignore": r.view("replace")}
    yield Rule(Explanation("ignore-substitutes",
                           "its ignore view keeps one U+FFFD for each error instead of "
                           "dropping it: it substitutes", "reporting"), substitutes)

    def as_latin1(d: bytes) -> Prediction:
        toks = [u for t in mine.decode(d).tokens
                for u in ((t,) if t.kind == "char" else
                          [Token("char", d[i], i, i + 1) for i in range(t.start, t.end)])]
        return _predicted(toks, d)
    yield Rule(Explanation("bytes-as-latin1",
                           "it passes each ill-formed byte through as the code point of "
                           "the same number (U+0080..U+00FF), as Latin-1 would",
                           "non-conformance"), as_latin1)
    # every byte so, the well-formed ones too: a table of its own (after the rule
    # above, the smaller move where an input cannot tell them apart)
    yield Rule(Explanation(
        "profile:latin1", "it decodes every byte as the character of its value (ISO/IEC "
        "8859-1): no byte sequence is read as one UTF-8 character", severity_of(klass)),
        Point(LATIN1, policy).predict)
    # A lead followed by bytes that are not continuation bytes is in every set of
    # fresh inputs (fresh_inputs): a decoder that takes them refutes bytes-as-latin1,
    # one that checks them refutes these.
    for latin1 in (False, True):
        yield _move_rule(_unchecked_move(profile, latin1))
    if any(table.row_of(bytes([b])) is None for b in range(0x80)):
        yield _unchecked_high_latin1(mine, profile)
    if out is not None:
        # Before the insertions: two U+FFFD for every error is one rendering, where
        # an insertion names it only on inputs with one error.
        yield from _rendering_rules(data, mine, out)
        yield from _insertion_rules(data, mine, out)
    # One cause at every error before one at each feature: a decoder that loses the
    # byte after any error is one finding, not one per kind of error.
    if any(t.kind != "char" for t in mine.decode(data).tokens[:-1]):
        yield Rule(Explanation(
            "swallows-next-byte",
            "after each error it loses the next byte into the same U+FFFD (a character "
            "there is lost: rejected, not a reporting difference)", "non-conformance"),
            _merging(mine, table, None))
    yield from _delta_rules(data, mine, table)
    yield from _accepting_boxes(data, profile, policy, narrow=True)
    yield from _unreported_rules(data, profile, policy)
    merged: list[str] = []
    for t in mine.decode(data).tokens[:-1]:
        f = feature_of(data, t, table)
        if t.kind != "char" and f not in merged:
            merged.append(f)
            yield Rule(Explanation(
                f"swallows-next-byte:{f}",
                f"after each error at {f.replace('-', ' ')} it loses the next byte into the "
                "same U+FFFD (a character there is lost: rejected, not a reporting "
                "difference)", "non-conformance"), _merging(mine, table, f))
    if _structural_tail(data, mine) is not None:
        yield Rule(Explanation(
            "truncated-by-structure",
            "it calls a lead byte and the continuation bytes after it at the end of the "
            "input one truncated error, as far as the lead's high bits announce (RFC 2279 "
            "section 2), whatever the table's ranges for its second byte say",
            "reporting"), _truncated_tail(mine))
    if any(t.kind != "char" for t in mine.decode(data).tokens):
        for prof in REGISTRY:
            if prof != profile:
                yield _move_rule(_errors_as_move(profile, prof, policy))
    yield Rule(Explanation("truncated-for-illegal",
                           "it calls truncated an error that no byte could complete (an "
                           "impossible prefix cut off by the end of the input)", "reporting"),
               _reasons(mine, "illegal", "truncated"))
    yield Rule(Explanation("illegal-for-truncated",
                           "it calls illegal a well-formed prefix that only the end of the "
                           "input cut short", "reporting"),
               _reasons(mine, "truncated", "illegal"))

    def lead_only(d: bytes) -> Prediction:
        r = mine.decode(d)
        return r, {"spans": tuple((a, a + 1) for a, _ in r.view("spans"))}
    yield Rule(Explanation("spans-lead-byte-only",
                           "its error spans cover only the first byte of each error",
                           "reporting"), lead_only)
    yield Rule(_END_UNCHECKED, _end_unchecked(mine), _cut_short_ends, ends=True)
    yield from _end_unchecked_after(mine)
    yield _end_as_text(data, mine, out)
    yield _signature_rule(klass, feature)


_END_UNCHECKED = Explanation(
    "end-unchecked", "it does not check the end of the input: a sequence the end cuts "
    "short is dropped without an error, as if more input were to come (a streaming "
    "decoder or validator that is never told the input ended, or forgets to check what "
    "it holds then)", "non-conformance")


def _end_unchecked(ref: Reference) -> Callable[[bytes], Prediction]:
    """The reference without the truncated error the input ends with, if it ends so."""
    def predict(d: bytes) -> Prediction:
        toks = list(ref.decode(d).tokens)
        if toks and toks[-1].reason == "truncated" and toks[-1].end == len(d):
            toks.pop()
        return _predicted(toks, d)
    return predict


def _unchecked_high_latin1(ref: Reference, profile: str) -> Rule:
    """``continuations-unchecked+latin1`` where Latin-1 is its upper half alone: a byte
    below 80 that the table rejects (modified UTF-8's 00) stays an error wherever a
    lead does not take it (the C ``mutf8``'s loop). The same name: the same cause,
    predicted on more inputs."""
    loose = _unchecked_move(profile, True)[3].predict

    def predict(d: bytes) -> Prediction:
        toks = [Token("error", None, t.start, t.end, "illegal")
                if t.kind == "char" and t.end - t.start == 1 and d[t.start] < 0x80
                and ref.table.row_of(d[t.start:t.end]) is None else t
                for t in loose(d)[0].tokens]
        return _predicted(toks, d)
    return Rule(Explanation(
        "continuations-unchecked+latin1",
        "where a lead byte announces n bytes (a length the profile has sequences of) it "
        "takes the next n-1 as its continuation bytes without checking them (RFC 2279 "
        "section 2's bit layout, no 10xxxxxx check, no range check), and a lead the end "
        "cuts short is an error by itself; any other byte of 80..FF it passes through as "
        "Latin-1, and a byte below 80 that the profile rejects is an error",
        "non-conformance"), predict)


def _end_unchecked_after(ref: Reference) -> Iterator[Rule]:
    """``end-unchecked`` for a sequence the end cuts short after exactly k bytes (k = 1:
    a lead that is the input's last byte), narrower than the spec feature (which
    counts the bytes the lead announces): the end of a loop that stops k bytes early."""
    for k in (1, 2, 3):
        def predict(d: bytes, k: int = k) -> Prediction:
            toks = list(ref.decode(d).tokens)
            if toks and toks[-1].reason == "truncated" and toks[-1].end == len(d) \
                    and toks[-1].end - toks[-1].start == k:
                toks.pop()
            return _predicted(toks, d)
        yield Rule(Explanation(
            f"end-unchecked:{k}-byte",
            f"a sequence the end of the input cuts short after {k} byte{'s' * (k > 1)} "
            f"({'its lead alone, the last byte' if k == 1 else 'the lead and what follows'})"
            " is dropped without an error; one cut short after more bytes is an error, as "
            "it should be", "non-conformance"), predict, _cut_short_ends, ends=True)


def _end_as_text(data: bytes, ref: Reference, out: Outcome | None) -> Rule:
    """A sequence the end cuts short (a lead byte and fewer continuation bytes than its
    high bits announce, RFC 2279 section 2: C0 and E2 82 alike) is no error: the
    decoder writes a text of its own for it, in every view, the same on every input;
    the text is read off ``out`` (none where ``out`` shows no text: a strict mode
    cannot show it, and is the same cause)."""
    text: tuple[int, ...] = ()
    p = _cut_short_lead(data)
    if out is not None and p is not None:
        head = ref.decode(data[:p])
        for v in ("replace", "ignore", "escape"):
            if v not in _shown(out):
                continue
            try:
                mine, theirs = out.view(v), _predicted(list(head.tokens), data)[0].view(v)
            except ViewUnavailable:
                continue
            if isinstance(mine, tuple) and isinstance(theirs, tuple) \
                    and mine[:len(theirs)] == theirs:
                text = tuple(mine[len(theirs):])
                break

    def predict(d: bytes) -> Prediction:
        q = _cut_short_lead(d)
        if q is None:
            return ref.decode(d), {}
        base = _predicted(list(ref.decode(d[:q]).tokens), d)[0]
        return base, {v: tuple(base.view(v)) + text for v in ("replace", "ignore", "escape")}
    if not text and out is not None:
        # nothing written for it: the end unchecked, cut short by the lead's layout
        # rather than the table's prefixes (what a decoder holds back: CPython's
        # incremental decoder holds ED A0), one cause with end-unchecked, one name
        return Rule(_END_UNCHECKED, predict, _cut_short_ends, ends=True)
    label = " ".join(f"U+{c:04X}" for c in text) or "a text of its own"
    return Rule(Explanation(
        "end-cut-short-as-text",
        f"a sequence the end of the input cuts short (a lead byte and fewer continuation "
        f"bytes than its high bits announce) is no error: it writes {label} for it in "
        "every mode", "non-conformance"), predict, _cut_short_ends, ends=True)


def _cut_short_ends(data: bytes) -> list[bytes]:
    """The input ended by a sequence cut short after one, two and three bytes (E2, E2
    82, F0 90 80), and its own cut-short end (:func:`_cut_short_lead`; none: the
    empty input) replaced by each: what tells the end rules apart. The second kind
    holds no error before the end that the input's own cut-short lead would be, which
    a strict view, showing the first error alone, needs to see the end at all."""
    p = _cut_short_lead(data)
    heads = (data, data[:p] if p is not None else b"")
    return [h + bytes.fromhex(e) for h in heads for e in ("E2", "E2 82", "F0 90 80")]


def _cut_in_two_ends(data: bytes) -> list[bytes]:
    """The input, and its head before its own cut-short end, ended by E0 80: a lead
    the end cuts short that the table cuts into two errors (80 does not follow E0).
    A text written before the token that holds the lead keeps both errors; a text
    written for the cut-short end instead of its errors (``end-cut-short-as-text``)
    does not: what tells the two apart, which a cut-short end of one error cannot."""
    p = _cut_short_lead(data)
    return [h + b"\xe0\x80" for h in (data, data[:p] if p is not None else b"")]


def _signature_rule(klass: str, feature: str) -> Rule:
    return Rule(Explanation(f"{klass}/{feature}", f"{klass.replace('-', ' ')} at {feature}",
                            severity_of(klass)), None)


def _stream_rules(data: bytes, mine: Reference, out: Outcome | None, run: Run | None
                  ) -> Iterator[Rule]:
    """How a streaming decoder carries a sequence a chunk boundary cuts, whatever its
    length: as if the chunk were the end of the input, or not at all (its bytes
    lost at the chunk's end, or when the next chunk comes); else the feature of the
    sequence a boundary cuts. Each is also checked on :func:`_boundary_probes`."""
    for lose, last, name, what in (
            (False, False, "each-chunk-as-final",
             "it decodes each chunk as if it were the last: a sequence a chunk "
             "boundary cuts is an error where the chunk ends, and its rest in the "
             "next chunk stray continuation bytes"),
            (True, True, "drops-held-bytes",
             "it does not hold back the bytes a chunk ends with when they begin a "
             "sequence: they are lost, without an error, and the rest of that "
             "sequence in the next chunk is stray continuation bytes"),
            (True, False, "forgets-held-bytes",
             "it holds back the bytes a chunk ends with when they begin a sequence, but "
             "forgets them when the next chunk comes: they are lost, without an error, "
             "and the rest of that sequence is stray continuation bytes (the end of "
             "the input after them is still an error)")):
        yield Rule(Explanation(f"stream:{name}", f"fed in chunks, {what}: a "
                               "streaming bug", "non-conformance"),
                   _chunked(mine, lose, last), _boundary_probes)
    cut = _split_feature(data, mine, out, run)
    if cut is not None:
        yield Rule(Explanation(
            f"split:{cut}", f"fed in chunks, it differs from its own one-shot result "
            f"where a chunk boundary cuts a sequence ({cut}): a streaming bug",
            "non-conformance"), None)


def _boundary_probes(data: bytes) -> list[bytes]:
    """At each chunk boundary inside ``data`` (:func:`~utf8fuzz.decoders.chunks.cuts`):
    the input ended there, and ended there with ``A`` after it. They tell the stream
    rules apart where a view says little (a validator's yes or no): the bytes a
    boundary cuts off the rest of their sequence are then followed by ASCII in a chunk
    of its own (lost: accepted; decoded as if final: an error), or by the end (lost at
    the chunk's end, or only when the next chunk comes)."""
    out: list[bytes] = []
    for c in cuts(data)[:-1]:
        out += [data[:c], data[:c] + b"A"]
    return out


#: Where an extra output goes (:func:`_insertion_rules`), in the words of a rule.
_PLACES: dict[str, str] = {
    "at-end": "at the end of its text, whatever the input",
    "before-cut-short-end": "before the output of the token that holds a lead byte the "
                            "end of the input cuts short of the bytes it announces (RFC "
                            "2279 section 2)",
    "before-each-error": "before the output of each error",
    "after-each-error": "after the output of each error",
}


def _insertion_rules(data: bytes, ref: Reference, out: Outcome) -> Iterator[Rule]:
    """Where the decoder's text (its replace or ignore view) is the reference's with
    one stretch of extra code points in it (no byte spells them: an output nothing
    in the input accounts for), the rules that put that stretch at one kind of place
    (:data:`_PLACES`); each is checked on fresh inputs like any other."""
    views = [v for v in ("replace", "ignore") if v in out.shows]
    if not views or not out.ok:
        return
    r = ref.decode(data)
    try:
        theirs, mine = out.view(views[0]), r.view(views[0])
    except ViewUnavailable:
        return
    extra = len(theirs) - len(mine)
    if extra <= 0:
        return
    a = next((i for i in range(len(mine)) if theirs[i] != mine[i]), len(mine))
    if theirs[:a] + theirs[a + extra:] != mine:
        return  # not one stretch inserted
    text = tuple(theirs[a : a + extra])
    label = " ".join(f"U+{c:04X}" for c in text)
    for place, where in _PLACES.items():
        yield Rule(Explanation(
            f"inserts:{place}:{label.replace(' ', '+')}",
            f"it writes {label}, which no bytes of the input spell, {where}",
            "non-conformance"), _inserting(ref, text, place),
            _cut_in_two_ends if place == "before-cut-short-end" else None,
            ends=place in ("before-cut-short-end", "at-end"))


#: What a replace view may render an error as, other than one U+FFFD: nothing, or
#: the one or two code points the decoder wrote in its place (inferred from its text).
_RENDERING_WIDTHS = (0, 1, 2)


def _rendering_rules(data: bytes, ref: Reference, out: Outcome) -> Iterator[Rule]:
    """Where the decoder's replace view is the reference's with every error rendered
    as one fixed string other than one U+FFFD (nothing, ``?``, two U+FFFD), the rule
    that says so (the view transform of the outcome model: how errors are rendered,
    not which bytes are errors); checked on fresh inputs like any other."""
    if "replace" not in out.shows or not out.ok:
        return
    r = ref.decode(data)
    try:
        theirs = out.view("replace")
    except ViewUnavailable:
        return
    first = next((i for i, t in enumerate(r.tokens) if t.kind != "char"), None)
    if first is None:
        return
    at = first  # the replace view holds one code point per token
    seen: set[tuple[int, ...]] = set()
    for width in _RENDERING_WIDTHS:
        text = tuple(theirs[at:at + width])
        if len(text) != width or text == (REPLACEMENT,) or text in seen:
            continue
        seen.add(text)
        if _rendered(r, text) != theirs:
            continue
        label = " ".join(f"U+{c:04X}" for c in text) or "nothing"
        yield Rule(Explanation(
            f"renders-errors-as:{label.replace(' ', '+')}",
            f"its replace view renders each error as {label}, not as one U+FFFD: it "
            "finds the errors the profile and policy name, and writes another text for "
            "them",
            "non-conformance"), _rendering(ref, text))


def _rendered(r: Outcome, text: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    for t in r.tokens:
        if t.kind == "char":
            out.append(t.value or 0)
        else:
            out += text
    return tuple(out)


def _rendering(ref: Reference, text: tuple[int, ...]) -> Callable[[bytes], Prediction]:
    def predict(d: bytes) -> Prediction:
        r = ref.decode(d)
        return r, {"replace": _rendered(r, text)}
    return predict


def _inserting(ref: Reference, text: tuple[int, ...], place: str
               ) -> Callable[[bytes], Prediction]:
    def predict(d: bytes) -> Prediction:
        r = ref.decode(d)
        cut = _cut_short_lead(d) if place == "before-cut-short-end" else None
        over: dict[str, Any] = {}
        for v in ("replace", "ignore"):
            got: list[int] = []
            for t in r.tokens:
                err = t.kind != "char"
                if (err and place == "before-each-error") or (
                        cut is not None and t.start <= cut < t.end):
                    got += text
                if not err:
                    got.append(t.value or 0)
                elif v == "replace":
                    got.append(REPLACEMENT)
                if err and place == "after-each-error":
                    got += text
            if place == "at-end":
                got += text
            over[v] = tuple(got)
        return r, over
    return predict


def _cut_short_lead(d: bytes) -> int | None:
    """The offset of a lead byte the end of ``d`` cuts short of the bytes its high
    bits announce (RFC 2279 section 2), only continuation bytes after it; else None."""
    for p in range(len(d) - 1, max(-1, len(d) - 6), -1):
        if not 0x80 <= d[p] <= 0xBF:
            return p if structural_length(d[p]) > len(d) - p else None
    return None


def _split_feature(data: bytes, ref: Reference, out: Outcome | None,
                   run: Run | None = None) -> str | None:
    """``<n>-byte-sequence`` for the first reference token that begins with a lead
    byte announcing n bytes (RFC 2279 section 2) when a chunk boundary
    (:mod:`utf8fuzz.decoders.chunks`) falls inside those n bytes: where a streaming
    decoder must carry bytes from one chunk to the next, whether they complete a
    character (F2 90 80 | 80) or turn out an error (F2 90 80 | FF or F2 90 80 | end:
    the end of the last chunk is a boundary too, as the decoder learns only from a
    last, empty, final call that nothing follows). The search starts where the
    decoder's text (``out``'s replace view, one code point a reference token) differs
    from the reference's: between their common prefix and their common suffix (where
    the two overlap, as when every code point is U+FFFD, anywhere in the overlap). A
    boundary that cut an earlier sequence the decoder carried right is not the bug
    (E0 | F0 | BF BF loses F0 BF BF, not E0), nor is one past the bytes a token took
    (ED | BF: ED's sequence ended at BF). Where the text cannot tell (E0 | F0 | BF BF
    | end: one U+FFFD of two lost), the decoder (``run``) is asked: the first
    candidate whose bytes, taken out of the input, leave the decoder no difference is
    named (one run per candidate); without it, the first candidate."""
    ends = cuts(data)
    r = ref.decode(data)
    tokens = r.tokens
    window = range(len(tokens))
    if out is not None and "replace" in out.shows and len(r.view("replace")) == len(tokens):
        got, want = out.view("replace"), r.view("replace")
        common = min(len(got), len(want))
        prefix = next((i for i in range(common) if got[i] != want[i]), common)
        suffix = next((i for i in range(common) if got[-1 - i] != want[-1 - i]), common)
        lo, hi = sorted((prefix, len(want) - suffix - 1))
        window = range(max(lo, 0), min(hi, len(tokens) - 1) + 1)
    for where in (window, range(len(tokens))):  # where it differs; else anywhere
        cut: list[tuple[Token, int]] = []
        for i in where:
            t = tokens[i]
            n = structural_length(data[t.start])
            # a boundary within the bytes the token took, or at their end, short of
            # what the lead announced: bytes the decoder had to carry over
            if n > 1 and any(t.start < c <= t.end and c < t.start + n for c in ends):
                cut.append((t, n))
        if len(cut) > 1 and run is not None:
            for t, n in cut:
                without = run(data[:t.start] + data[t.end:])
                if without is not None and not without[1]:  # no difference left
                    return f"{n}-byte-sequence"
        if cut:
            return f"{cut[0][1]}-byte-sequence"
    return None


#: How far ahead of a token :func:`_walk` decodes before it trusts the token: more
#: than the longest sequence (6 bytes) and the byte after it.
_LOOKAHEAD = 8


def _walk(ref: Reference, d: bytes, i: int) -> Iterator[Token]:
    """``ref``'s tokens of ``d`` decoded from offset ``i`` (as ``ref.decode(d[i:])``
    does, at their offsets in ``d``), lazily: a window at a time, each token given
    once the window holds :data:`_LOOKAHEAD` bytes after it; the window starts small
    and doubles at each step (so does a run of errors longer than it). A rule that
    resumes decoding after each error it rewrites walks a long input about once, not
    once per error."""
    width = 32
    while i < len(d):
        end = min(len(d), i + width)
        last = i
        for t in ref.decode(d[i:end]).tokens:
            if end < len(d) and i + t.end > end - _LOOKAHEAD:
                break
            last = i + t.end
            yield Token(t.kind, t.value, i + t.start, last, t.reason)
        if end == len(d):
            return
        width = min(width * 2, 1 << 16)
        i = last


#: What a rewriting rule makes of one of ``ref``'s tokens: None keeps it; else the
#: tokens in its place, and where decoding resumes (None: after the token, as it was).
Step = Callable[[Token], tuple[list[Token], int | None] | None]


def _rewrite(ref: Reference, d: bytes, step: Step) -> list[Token]:
    """``ref``'s tokens of ``d``, each passed through ``step``; where it resumes
    decoding elsewhere, ``ref`` decodes afresh from there (:func:`_walk`)."""
    toks: list[Token] = []
    i = 0
    while i < len(d):
        for t in _walk(ref, d, i):
            got = step(t)
            if got is None:
                toks.append(t)
                continue
            toks += got[0]
            if got[1] is not None:
                i = got[1]
                break
        else:
            i = len(d)
    return toks


def _complete(d: bytes, i: int) -> int:
    """The length of the sequence at ``i`` when its lead announces n > 1 bytes and n-1
    continuation bytes (80..BF) follow (RFC 2279 section 2's layout), else 0."""
    n = structural_length(d[i])
    if n > 1 and i + n <= len(d) and all(0x80 <= b <= 0xBF for b in d[i + 1:i + n]):
        return n
    return 0


def _delta_rules(data: bytes, ref: Reference, table: Profile) -> Iterator[Rule]:
    """The decoder as its claimed profile with one change to the well-formed set, at
    a spec feature and a sequence length seen on the input: it accepts the n-byte
    sequences of an ill-formed feature (``accepts:non-shortest-form:2-byte``: C0 80,
    the value its bits spell), or rejects the n-byte sequences of a well-formed
    one as one error each (``rejects:noncharacter:3-byte``). Checked on fresh
    inputs, which hold other features and lengths: a decoder that accepts only some
    of them refutes the wider rule."""
    accepts: list[tuple[str, int]] = []
    rejects: list[tuple[str, int]] = []
    for t in ref.decode(data).tokens:
        if t.kind == "char":
            key = (feature_of(data, t, table), t.end - t.start)
            if key not in rejects:
                rejects.append(key)
        elif (n := _complete(data, t.start)):
            key = (feature_of(data, t, table), n)
            if key not in accepts:
                accepts.append(key)
    for f, n in accepts:
        yield Rule(Explanation(
            f"accepts:{f}:{n}-byte",
            f"it accepts the {n}-byte sequences the profile calls ill-formed at "
            f"{f.replace('-', ' ')}, as the value their bits spell (RFC 2279 section "
            "2's layout): a change to the well-formed set", "non-conformance"),
            _accepting(ref, table, f, n),
            _difference_probes(table.name, accepting_table(table.name, f, n)))
    for f, n in rejects:
        yield Rule(Explanation(
            f"rejects:{f}:{n}-byte",
            f"it rejects the well-formed {n}-byte sequences at {f.replace('-', ' ')}, "
            "each as one error: a change to the well-formed set", "non-conformance"),
            _rejecting(ref, table, f, n), _rejection_probes(table, f))
    # one feature at every length the table has it (U+FFFE and U+1FFFE), after the
    # lengths seen: the wider move, where the feature's sequence of another length
    # (a probe of the rules above) refutes each length's alone
    wide: list[str] = []
    for f, _ in rejects:
        if f not in wide and len(_feature_lengths(table, f)) > 1:
            wide.append(f)
            yield Rule(Explanation(
                f"rejects:{f}",
                f"it rejects the well-formed sequences at {f.replace('-', ' ')}, of every "
                "length, each as one error: a change to the well-formed set",
                "non-conformance"), _rejecting(ref, table, f, None),
                _rejection_probes(table, f))


#: (table name, feature, length) -> :func:`_feature_ends`'s answer.
_FEATURE_ENDS: dict[tuple[str, str, int], tuple[bytes, ...]] = {}


def _feature_ends(table: Profile, feat: str, n: int) -> tuple[bytes, ...]:
    """The well-formed ``n``-byte sequences of ``table`` at feature ``feat`` among its
    rows' lowest and highest sequences (the ends of its byte classes: U+FFFF, EF BF
    BF; U+3FFFF, F0 BF BF BF; 00 and 7F)."""
    key = (table.name, feat, n)
    if key not in _FEATURE_ENDS:
        if len(_FEATURE_ENDS) >= 4096:
            _FEATURE_ENDS.clear()
        ends: list[bytes] = []
        for seq in (bytes(r[i] for r in row.ranges) for row in table.rows
                    if row.length == n and row.value_fn is None for i in (0, 1)):
            cp = _value(table, seq)
            if cp is not None and seq not in ends \
                    and feature_of(seq, Token("char", cp, 0, n), table) == feat:
                ends.append(seq)
        _FEATURE_ENDS[key] = tuple(ends)
    return _FEATURE_ENDS[key]


def _feature_lengths(table: Profile, feat: str) -> list[int]:
    """The lengths at which ``table`` has well-formed sequences at ``feat``."""
    return [n for n in sorted(_announced(table) | {1}) if _feature_ends(table, feat, n)]


def _rejection_probes(table: Profile, feat: str) -> Callable[[bytes], list[bytes]]:
    """Probes for rejecting ``feat``'s sequences: those at the ends of the table's rows
    (:func:`_feature_ends`), of each length, each alone (alone: a validator's no
    says what it rejected): a decoder that rejects or accepts other lengths or
    sequences than the move refutes it."""
    ends = [q for k in _feature_lengths(table, feat) for q in _feature_ends(table, feat, k)]
    return lambda d: ends


def _accepting(ref: Reference, table: Profile, feat: str, n: int
               ) -> Callable[[bytes], Prediction]:
    def predict(d: bytes) -> Prediction:
        def step(t: Token) -> tuple[list[Token], int | None] | None:
            if (t.kind != "char" and _complete(d, t.start) == n
                    and feature_of(d, t, table) == feat):
                seq = d[t.start:t.start + n]
                return [Token("char", bits_value(seq), t.start, t.start + n)], t.start + n
            return None
        return _predicted(_rewrite(ref, d, step), d)
    return predict


def _rejecting(ref: Reference, table: Profile, feat: str, n: int | None
               ) -> Callable[[bytes], Prediction]:
    """The reference with each well-formed ``n``-byte sequence at ``feat`` (None: of
    any length) one error."""
    def predict(d: bytes) -> Prediction:
        toks = [Token("error", None, t.start, t.end, "illegal")
                if t.kind == "char" and (n is None or t.end - t.start == n)
                and feature_of(d, t, table) == feat else t
                for t in ref.decode(d).tokens]
        return _predicted(toks, d)
    return predict


def _chunked(ref: Reference, lose: bool, last: bool = True) -> Callable[[bytes], Prediction]:
    """The reference fed the chunks of :func:`~utf8fuzz.decoders.chunks.cuts` one by
    one, each decoded alone; ``lose``: a truncated error a chunk ends with (bytes a
    decoder must hold for the next chunk) dropped, the last chunk's too when ``last``
    (every chunk is fed as not final; the end is an empty final call), else kept (the
    held bytes are lost only when another chunk comes)."""
    def predict(d: bytes) -> Prediction:
        toks: list[Token] = []
        prev = 0
        ends = cuts(d)
        for c in ends:
            part = [t._replace(start=t.start + prev, end=t.end + prev)
                    for t in ref.decode(d[prev:c]).tokens]
            if lose and part and part[-1].reason == "truncated" and (last or c != ends[-1]):
                part.pop()
            toks += part
            prev = c
        return _predicted(toks, d)
    return predict


def _predicted(toks: list[Token], d: bytes) -> Prediction:
    return Outcome.from_tokens(toks, len(d), data=d, check=False), {}


def _merging(ref: Reference, prof: Profile, feat: str | None
             ) -> Callable[[bytes], Prediction]:
    """The reference, where an error at ``feat`` (any error: None) also takes the
    byte after it."""
    def predict(d: bytes) -> Prediction:
        def step(t: Token) -> tuple[list[Token], int | None] | None:
            if t.kind != "char" and t.end < len(d) and (
                    feat is None or feature_of(d, t, prof) == feat):
                # the byte after the error goes into it; decoding resumes after it
                return [Token("error", None, t.start, t.end + 1, "illegal")], t.end + 1
            return None
        return _predicted(_rewrite(ref, d, step), d)
    return predict


def _paired(toks: list[Token], rows: bytes | None = None) -> list[Token]:
    """A high surrogate's 3-byte character followed by a low one's made one character,
    as CESU-8's and modified UTF-8's 6-byte pairs are; given the input (``rows``),
    only where its bytes there are a pair row's first two of each half (ED A0..AF,
    ED B0..BF)."""
    out: list[Token] = []
    for t in toks:
        p = out[-1] if out else None
        if (p is not None and p.kind == t.kind == "char" and p.value is not None
                and t.value is not None and 0xD800 <= p.value <= 0xDBFF
                and 0xDC00 <= t.value <= 0xDFFF and p.end - p.start == t.end - t.start == 3
                and (rows is None or (rows[p.start] == rows[t.start] == 0xED
                                      and 0xA0 <= rows[p.start + 1] <= 0xAF
                                      and 0xB0 <= rows[t.start + 1] <= 0xBF))):
            out[-1] = Token("char", 0x10000 + ((p.value - 0xD800) << 10) + (t.value - 0xDC00),
                            p.start, t.end)
        else:
            out.append(t)
    return out


def _announced(table: Profile) -> frozenset[int]:
    """The sequence lengths of ``table`` that a lead byte announces by its high bits
    (RFC 2279 section 2), above 1: a row of 6 bytes made of two 3-byte sequences
    (modified UTF-8's surrogate pairs) is not one."""
    return frozenset(r.length for r in table.rows
                     if r.length > 1 and structural_length(r.ranges[0][0]) == r.length)


def _structural_tail(data: bytes, ref: Reference) -> int | None:
    """Where the input ends in a lead byte and only continuation bytes after it, fewer
    than its high bits announce, that the reference cuts otherwise than as one
    truncated error: that lead's offset; else None."""
    for p in range(len(data) - 1, max(-1, len(data) - 6), -1):
        b = data[p]
        if 0x80 <= b <= 0xBF:
            continue
        if structural_length(b) <= len(data) - p:
            return None
        tail = [t for t in ref.decode(data).tokens if t.end > p]
        if any(t.kind == "char" or t.start < p for t in tail):
            return None
        return None if len(tail) == 1 and tail[0].reason == "truncated" else p
    return None


def _completed(data: bytes) -> list[bytes]:
    """``data`` with the sequence its end cuts short completed by continuation bytes
    (80), as many as its lead announces (RFC 2279 section 2); [] when the end cuts
    none."""
    for p in range(len(data) - 1, max(-1, len(data) - 6), -1):
        if not 0x80 <= data[p] <= 0xBF:
            short = structural_length(data[p]) - (len(data) - p)
            return [data + b"\x80" * short] if short > 0 else []
    return []


def _truncated_tail(ref: Reference) -> Callable[[bytes], Prediction]:
    def predict(d: bytes) -> Prediction:
        r = ref.decode(d)
        p = _structural_tail(d, ref)
        if p is None:
            return r, {}
        toks = [t for t in r.tokens if t.end <= p]
        toks.append(Token("error", None, p, len(d), "truncated"))
        return _predicted(toks, d)
    return predict


def _reasons(ref: Reference, mine: str, theirs: str) -> Callable[[bytes], Prediction]:
    def predict(d: bytes) -> Prediction:
        r = ref.decode(d)
        reason = r.view("reason")
        return r, {"reason": theirs if reason == mine else reason}
    return predict


#: Sequences where decoders part: ill-formed ones of four spec features (non-shortest
#: form, surrogate, above U+10FFFF, a 5-byte form) that maximal subparts cut into one
#: error per byte and whole-sequence policies into one; a truncated sequence (E1 80,
#: then A), one error of maximal subparts and two of per-byte; and a 4-byte character
#: (U+1F600; CESU-8 and modified UTF-8 have none): a rule about one meets the others.
_PROBES = tuple(bytes.fromhex(h) for h in
                ("E0 80 80", "ED A0 80", "F4 90 80 80", "F8 88 80 80 80", "E1 80 41",
                 "F0 9F 98 80"))
#: A lead byte announcing each length (RFC 2279 section 2), none of them a form some
#: profile treats specially (C0, E0, ED, F0 and F4 are).
_LEADS = {2: 0xC2, 3: 0xE1, 4: 0xF1, 5: 0xF9, 6: 0xFD}


def window(data: bytes, at: int, width: int) -> range:
    """``width`` positions of ``data`` around offset ``at`` (all of a short input):
    where a long input's finding is."""
    lo = max(0, min(at - width // 2, len(data) - width))
    return range(lo, min(len(data), lo + width))


def fresh_inputs(data: bytes, profile: str, at: int = 0) -> list[bytes]:
    """Inputs made from ``data`` alone, deterministically: it in other text of the
    profile (A, U+00E9 and U+20AC as the profile encodes them, before or after it,
    and it twice), it followed by a lead byte of each length the profile's leads
    announce and ASCII where that lead's continuation bytes belong (C2 41, E1 41 41,
    ...), it after a continuation byte no lead claims (80) and after each of
    :data:`_PROBES`, each of 12 of its bytes deleted, and each of them replaced by the
    lowest and highest byte of its class in ``profile``'s table: the first 12 of a
    short input, the 12 around offset ``at`` (its first difference) of a long one.

    The text is of the Basic Multilingual Plane, which every profile encodes alike: a
    character beyond it is a surrogate pair in CESU-8 and modified UTF-8, another
    spec feature, and would test a rule about these bytes on other ones."""
    table = REGISTRY[profile]
    text: list[bytes] = []
    for cp in (0x41, 0xE9, 0x20AC):
        try:
            text.append(table.encode([cp]))
        except ValueError:  # a profile without it (EncodeError): other text will do
            continue
    out = [t + data for t in text[:2]] + [data + t for t in text]
    # a lead of each length the profile announces, followed by ASCII where its
    # continuation bytes belong: what a decoder that does not check them shows
    out += [data + bytes([_LEADS[n]]) + b"A" * (n - 1) for n in sorted(_announced(table))]
    out.append(b"\x80" + data)  # a continuation byte no lead claims
    out += [p + data for p in _PROBES]  # each before it: decoded before it begins
    if len(data) <= 32:
        out.append(data + data)
    where = window(data, at, 12)
    out += [data[:i] + data[i + 1:] for i in where]
    classes = byte_classes(profile)
    for i in where:
        lo, hi = next(c for c in classes if c[0] <= data[i] <= c[1])
        out += [data[:i] + bytes([b]) + data[i + 1:] for b in sorted({lo, hi} - {data[i]})]
    seen: set[bytes] = {data}
    unique: list[bytes] = []
    for f in out:
        if f and f not in seen:
            seen.add(f)
            unique.append(f)
    return unique


#: What each kind of ``bad-outcome`` (:data:`~utf8fuzz.outcome.BAD_OUTCOME_KINDS`) means.
_BAD_OUTCOME: dict[str, str] = {
    "oversized-output": "more output than 8 code points a byte and 64 allow",
    "span-outside-input": "an error span or token outside the input",
    "spans-out-of-order": "error spans or tokens out of order",
    "code-point-out-of-range": "a code point below 0 or above U+8421109F",
    "mutated-input": "it overwrote the input it was given",
}


#: The decoder on a fresh input: its outcome and the (class, feature) of each of its
#: divergences there; None when it cannot say.
Run = Callable[[bytes], tuple[Outcome, frozenset[tuple[str, str]]] | None]


def explain(data: bytes, out: Outcome, profile: str, policy: str, klass: str,
            feature: str, *, run: Run | None = None, at: int = 0) -> Explanation:
    """The explanation of a decoder's outcome ``out`` on ``data``, where it claims
    ``profile`` and ``policy`` and its divergence was classed ``klass`` at
    ``feature`` (see the module docstring for the rules). With ``run``, a rule is
    believed only after it also held on :func:`fresh_inputs` made from the input (from
    the bytes around offset ``at``, the first difference, of one over
    :data:`LONG_INPUT` bytes: see :func:`_around`); :func:`unexplained` says when one
    does not, and which fresh inputs it leaves to another bug. Of the rules that
    hold, the first that leaves none wins, else the one that leaves fewest (the first
    of those): the rule that explains more of what the decoder did; past
    :data:`EXPLAIN_BYTES` of predictions, rules not yet checked are passed over. Without ``run``,
    the first rule that holds, not checked (``checked`` 0)."""
    if not out.ok:
        what = ("hangs" if out.status == "timeout"
                else f"answers what is not an outcome of its input ({feature}: "
                     + _BAD_OUTCOME.get(feature, "see its detail") + ")"
                if out.status == "bad-outcome" else f"crashes ({feature})")
        return Explanation(f"{out.status}:{feature}", f"it {what}", "non-conformance")
    fresh: list[tuple[bytes, Outcome, frozenset[tuple[str, str]]]] | None = None
    best: tuple[int, Explanation] | None = None
    rest: list[tuple[bytes, Outcome, frozenset[tuple[str, str]]]] = []  # what best leaves
    narrower: Rule | None = None  # best's rule
    if run is not None:  # rules share probes: each input is run once
        run = _memo(run)
    budget = Budget(EXPLAIN_BYTES)
    lo, hi = _around(data, at, _ref(profile, policy)) if run is not None else (0, len(data))
    near = data[lo:hi]
    # a long input's own bytes around its difference: a rule they refute is not worth
    # a walk of the whole input
    first = _fresh_outcomes([near], run) if run is not None and near != data else []
    for rule in candidates(data, profile, policy, klass, feature, out, run):
        if first and rule.predict is not None and unexplained(
                rule, first, profile, policy, (klass, feature), budget) is None:
            continue
        if run is not None and rule.predict is not None and not budget.spend(len(data)):
            continue
        if not rule.holds(data, out) and not _holds_but_the_end(rule, data, out, profile,
                                                                 policy):
            continue
        if run is None:
            return rule.explanation
        if rule.predict is None:  # predicts nothing: only when no rule was checked
            return best[1] if best is not None else rule.explanation
        if fresh is None:
            fresh = first + _fresh_outcomes(fresh_inputs(near, profile, at - lo), run)
            if set(_shown(out)) == {"accept"}:  # a yes or no: each piece alone says whose
                fresh += _fresh_outcomes(_pieces(near, profile, policy), run)
        extra = _fresh_outcomes(rule.probes(near), run) if rule.probes else []
        checked = fresh + extra
        gone = _left(rule, checked, profile, policy, (klass, feature), budget)
        if gone is None:
            continue
        left = len(gone)
        if best is not None and left < best[0]:
            # fewer left only by explaining what the best leaves (not by being checked
            # on fewer inputs: the best's own probes), and a joined table not where
            # that is another feature's move of its own (two findings)
            more = [x for x in rest if _same(rule.predict(x[0]), x[1])]
            if not more or (rule.joined and _one_feature_each(more, profile, policy, feature,
                                                              narrower)):
                continue
        e = rule.explanation
        if best is None or left < best[0]:
            best = (left, Explanation(e.rule, e.text, e.severity, len(checked)))
            rest, narrower = [checked[i] for i in gone], rule
            _remember((data, profile, policy, klass, feature, e.rule), rule)
        if left == 0:
            break
    if best is None:
        raise AssertionError("the last rule always holds")
    return best[1]


#: The part of the well-formed set each ill-formed feature is at: the values above
#: the code space's top, whatever the length that spells them, are one (RFC 3629's
#: U+10FFFF against RFC 2279's U+7FFFFFFF), as :func:`_parts` has them.
_PART_OF = {"5-byte-form": "above-10ffff", "6-byte-form": "above-10ffff"}


def _one_feature_each(inputs: list[tuple[bytes, Outcome, frozenset[tuple[str, str]]]],
                      profile: str, policy: str, feature: str, narrower: Rule | None
                      ) -> bool:
    """Are there ``inputs`` (what a joined table explains that the ``narrower`` rule
    leaves), and does a move of one ill-formed feature of another part of the
    well-formed set than ``feature``'s (:func:`_accepting_moves`) predict each one's
    first difference (:func:`_up_to_first_difference`; a yes or no, which has no
    place: with ``narrower``, :func:`_both_accept`)? Then the joined table is that
    rule and another deviation of its own, two one-axis moves, and each is its own
    finding (modified UTF-8's table joined to UTF-8's adds C0 80 and surrogates: two
    features)."""
    mine = _PART_OF.get(feature, feature)

    def moved(d: bytes, out: Outcome, m: Move) -> bool:
        if _shown(out) == ("accept",):
            return narrower is not None and narrower.predict is not None \
                and out.view("accept") == _both_accept(narrower.predict(d), m[3].predict(d))
        return _up_to_first_difference(m[3].predict(d), out, _ref(profile, policy).decode(d))
    return bool(inputs) and all(any(
        _PART_OF.get(f, f) != mine and moved(d, out, m)
        for m in _accepting_moves(d, profile, policy) for f in [m[0].split(":")[1]])
        for d, out, _ in inputs)


def _both_accept(a: Prediction, b: Prediction) -> bool:
    """Two moves of the well-formed set at once, as a yes or no: every byte is in a
    character one of them reads (each reads what the other rejects)."""
    taken = {i for pred in (a, b) for t in pred[0].tokens if t.kind == "char"
             for i in range(t.start, t.end)}
    return len(taken) == a[0].length


def _up_to_first_difference(pred: Prediction, out: Outcome, ref: Outcome) -> bool:
    """Does ``pred`` give what ``out`` shows up to and including its first difference
    from ``ref``, in each view? The error views (spans; strict, the first error or
    none) by offset: the first difference is the earlier start of the first errors
    that differ, and the errors that start up to it must be ``out``'s. A yes or no has
    no place: it must be ``out``'s."""
    base, override = pred
    try:
        for v in _shown(out):
            mine: Any = out.view(v)
            theirs: Any = ref.view(v)
            want: Any = override[v] if v in override else base.view(v)
            if mine == want:
                continue
            if mine == theirs:
                return False
            if v in ("strict", "spans"):
                m, t, w = (() if x is None else (x,) if v == "strict" else tuple(x)
                           for x in (mine, theirs, want))
                i = _first_unequal(m, t)
                k = min(x[i][0] for x in (m, t) if i < len(x))
                if [x for x in m if x[0] <= k] != [x for x in w if x[0] <= k]:
                    return False
            elif isinstance(mine, tuple) and isinstance(theirs, tuple) \
                    and isinstance(want, tuple):
                k = _first_unequal(mine, theirs)
                if mine[:k + 1] != want[:k + 1]:
                    return False
            else:
                return False
    except ViewUnavailable:
        return False
    return True


#: The most sequences of an input a validator is run on alone (:func:`_pieces`).
PIECES = 8


def _pieces(data: bytes, profile: str, policy: str) -> list[bytes]:
    """The well-formed sequences of ``data`` (the reference's characters), each alone,
    the first :data:`PIECES` distinct ones: a validator's no on ``data`` says that
    something was rejected, each sequence alone says what (F0 90 80 80 alone is a yes
    where F0 90 80 80 EF BF BF is a no)."""
    got = [data[t.start:t.end] for t in _ref(profile, policy).decode(data).tokens
           if t.kind == "char"]
    return [p for p in dict.fromkeys(got) if p != data][:PIECES]


def _memo(run: Run) -> Run:
    seen: dict[bytes, tuple[Outcome, frozenset[tuple[str, str]]] | None] = {}

    def once(d: bytes) -> tuple[Outcome, frozenset[tuple[str, str]]] | None:
        if d not in seen:
            seen[d] = run(d)
        return seen[d]
    return once


#: The rule each explanation chose, by (input, claim, class, feature, rule name):
#: points of the model that move different axes may share a name (the axis that
#: makes the first difference), and :func:`rule_of` gives the one that was checked.
_CHOSEN: dict[tuple[bytes, str, str, str, str, str], Rule] = {}


def _remember(key: tuple[bytes, str, str, str, str, str], rule: Rule) -> None:
    if len(_CHOSEN) >= 4096:
        _CHOSEN.clear()
    _CHOSEN[key] = rule


#: Over this many bytes, an input's fresh inputs are made from the bytes around its
#: first difference (:func:`_around`): a rule is checked on what the difference is
#: made of, and each check costs what a short input's does, not a walk of the input.
LONG_INPUT = 256


def _around(data: bytes, at: int, ref: Reference, width: int = 32) -> tuple[int, int]:
    """``(lo, hi)``: all of ``data`` up to :data:`LONG_INPUT` bytes; else about
    ``width`` bytes each side of offset ``at``, widened to ``ref``'s token boundaries
    (no sequence or error cut in two)."""
    if len(data) <= LONG_INPUT:
        return 0, len(data)
    a, b = max(0, at - width), min(len(data), at + width)
    lo, hi = 0, len(data)
    for t in ref.decode(data).tokens:
        if t.start <= a:
            lo = t.start
        if t.end >= b:
            hi = t.end
            break
    return lo, hi


class Budget:
    """Work left, in bytes predicted: :meth:`spend` takes ``n`` and says whether
    there was that much left (once it says no, :attr:`spent` stays true)."""

    def __init__(self, total: int) -> None:
        self.left = total
        self.spent = False

    def spend(self, n: int) -> bool:
        self.left -= n
        self.spent = self.spent or self.left < 0
        return not self.spent


def unexplained(rule: Rule, fresh: Iterable[tuple[bytes, Outcome, frozenset[tuple[str, str]]]],
                profile: str, policy: str, kind: tuple[str, str],
                budget: Budget | None = None) -> int | None:
    """How many of the decoder's outcomes on fresh inputs ``rule`` leaves to another
    bug; None when one refutes it, or when ``budget`` runs out before all are
    checked. A fresh outcome the rule does not reproduce
    refutes it, unless the rule predicts no divergence there and the decoder's
    divergence is of another class or feature than the one explained (``kind``):
    that is another finding's evidence, not this rule's failure (a decoder with two
    bugs shows the second on some fresh input)."""
    gone = _left(rule, fresh, profile, policy, kind, budget)
    return None if gone is None else len(gone)


def _left(rule: Rule, fresh: Iterable[tuple[bytes, Outcome, frozenset[tuple[str, str]]]],
          profile: str, policy: str, kind: tuple[str, str], budget: Budget | None = None
          ) -> list[int] | None:
    """:func:`unexplained`, as the places in ``fresh`` of the outcomes left."""
    assert rule.predict is not None
    left: list[int] = []
    tail: list[tuple[int, ...]] = []  # the one text an unchecked end writes
    for i, (data, out, kinds) in enumerate(fresh):
        if budget is not None and not budget.spend(len(data)):
            return None
        pred = rule.predict(data)
        if _same(pred, out):
            continue
        if not rule.ends and _end_left(rule.predict, data, out, tail):
            left.append(i)  # the end handling's, another axis (whatever the signature)
            continue
        ref = _ref(profile, policy).decode(data)
        if (not _quiet(pred, out, ref) or (
                kind in kinds and not (rule.ends and _end_agrees(rule.predict, data, out)))) \
                and not _elsewhere(pred, data, out, ref, profile, policy, kind):
            return None
        left.append(i)
    return left


def _elsewhere(pred: Prediction, data: bytes, out: Outcome, ref: Outcome, profile: str,
               policy: str, kind: tuple[str, str]) -> bool:
    """Is the first place where ``out`` and the rule's prediction ``pred`` disagree one
    the rule does not move (its token there is the reference's, ``ref``'s), where
    the decoder's difference is of another class or spec feature than ``kind``, the
    one explained (as the engine names them: :class:`~.classify.Judge`, with the
    prediction for the reference)? Then that disagreement is another deviation's,
    left to another cause, whatever the input's signature (a decoder that cuts
    errors per byte and accepts overlongs: E1 80 41 C0 80 is named by the overlong,
    the more severe, but differs from the rule first at E1 80). Where the rule moved
    only the end of an error that starts where the reference's does (a span
    convention) and the decoder begins no error there, the decoder's difference is
    of the table, which no span convention moves: judged against the reference's
    error there (a decoder that ends each error a byte late and accepts C0 AF: the
    late end's rule meets C0 AF accepted). A disagreement of
    the rule's own kind is its refutation (a rule of C0 80 alone meeting C0 81
    accepted). The place is found in a view that ties it to bytes (:data:`PLACED`),
    or in a text view where the spans place every error (and agree), the text
    written before it the rule's; else (text only, a yes or no) it is not found: no."""
    base, override = pred
    views = [v for v in VIEW_ORDER if v in _shown(out)]
    if base.tokens_ is None or not PLACED & set(views):
        return False
    reference = _ref(profile, policy)
    m = Judge(data, base, reference).compare(out, [v for v in views if v not in override])
    # a text view's place is the engine's blame (an extra U+FFFD is its error's), where
    # every error is placed and the same in both (the spans, compared before it); a
    # view the rule gives otherwise than its tokens would (``override``) has no place:
    # it must be the decoder's
    if m is None or not (m[2] in PLACED or (m[2] in TEXT_VIEWS and "spans" in views)) \
            or not 0 <= m[1] < len(base.tokens_) \
            or any(out.view(v) != override[v] for v in views if v in override):
        return False
    tok = base.tokens_[m[1]]
    if tok not in ref.tokens:
        # the rule moved there: its own difference, not another's; unless it moved an
        # error's end alone (a span convention: the reference's error starts there
        # too) and the decoder begins no error there (it accepts those bytes: the
        # table's axis, which no span convention moves)
        same = next((t for t in ref.tokens if t.start == tok.start), None)
        if not (m[0] == "accepts-ill-formed" and tok.kind != "char"
                and same is not None and same.kind != "char"):
            return False
        tok = same
    head = Outcome.from_tokens(base.tokens_[:m[1]], tok.start, data=data[:tok.start],
                               check=False)
    try:
        if any(tuple(_view(out, v))[:len(_view(head, v))] != _view(head, v)
               for v in views if v in TEXT_VIEWS and v not in override):
            return False  # the text differs before it: the first place is not placed
    except ViewUnavailable:
        return False
    got = feature_of(data, tok, reference.table)
    return m[0] != kind[0] or _PART_OF.get(got, got) != _PART_OF.get(kind[1], kind[1])


def _holds_but_the_end(rule: Rule, data: bytes, out: Outcome, profile: str,
                       policy: str) -> bool:
    """Does ``rule`` (one that does not move the end handling) reproduce ``out`` but
    for an unchecked end (:func:`_end_left`), where ``out`` differs from the reference
    before that end too? Then the input shows two axes moved, the rule's first (ED A0
    80 C0: a surrogate accepted, then "0" U+FFFD for the C0 the end cuts short), and
    is the rule's evidence, as a point that moves two axes is named by the one that
    makes the first difference."""
    if rule.ends or rule.predict is None:
        return False
    ref = _ref(profile, policy)
    return not _end_left(lambda d: (ref.decode(d), {}), data, out, []) \
        and _end_left(rule.predict, data, out, [])


def _end_agrees(predict: Callable[[bytes], Prediction], data: bytes, out: Outcome) -> bool:
    """For a rule of the end handling: does ``out`` end as ``predict`` says, from the
    lead byte the end cuts short (:func:`_cut_short_lead`) on, in each view (the
    text written there; the errors from there on; a yes where it predicts none
    there)? Then what differs is before it,
    another cause's, whatever its signature (a decoder's cut-short ``ED A0`` and a
    surrogate before it are both at ``surrogate``)."""
    q = _cut_short_lead(data)
    if q is None:
        return False
    base, over = predict(data)
    head, hover = predict(data[:q])
    after = [t for t in base.tokens if t.kind != "char" and t.start >= q]
    try:
        for v in _shown(out):
            mine: Any = out.view(v)
            if v in ("replace", "ignore", "escape"):
                want, lead = (tuple(o[v] if v in o else _view(b, v))
                              for b, o in ((base, over), (head, hover)))
                text = want[len(lead):]
                if want[:len(lead)] != lead or tuple(mine)[len(mine) - len(text):] != text:
                    return False
            elif v == "spans":
                if [x for x in mine if x[0] >= q] != [(t.start, t.end) for t in after]:
                    return False
            elif v == "strict":
                if (mine is None or mine[0] >= q) and mine != (
                        (after[0].start, after[0].end) if after else None):
                    return False
            elif v == "accept":  # a yes is no error at the end either
                if not mine or after:
                    return False
            else:
                return False
    except ViewUnavailable:
        return False
    return True


def _end_left(predict: Callable[[bytes], Prediction], data: bytes, out: Outcome,
              tail: list[tuple[int, ...]]) -> bool:
    """Is ``out`` what ``predict`` says of ``data`` up to a lead byte the end cuts short
    (:func:`_cut_short_lead`), and no error for that lead and the bytes after it: the
    same text in every text view (nothing, or one text of its own, ``tail``'s if a
    fresh input set it already)? Then the difference is the end handling's (an end
    not checked), another axis than a rule of the table moves: a table's every
    sequence the end cuts short is an error. A signature cannot tell it (the
    decoder's ``ED A0`` at the end and ``ED A0 80`` both accept a surrogate's bytes)."""
    q = _cut_short_lead(data)
    if q is None:
        return False
    head, over = predict(data[:q])
    views = [v for v in _shown(out) if v in ("replace", "ignore", "escape")]
    try:
        base = _predicted(list(head.tokens), data)[0]
        texts = {v: tuple(over[v] if v in over else _view(head, v)) for v in views}
        if views:
            mine = tuple(_view(out, views[0]))
            if mine[:len(texts[views[0]])] != texts[views[0]]:
                return False
            text = mine[len(texts[views[0]]):]
        else:
            text = ()
    except ViewUnavailable:
        return False
    if tail and views and text != tail[0]:
        return False
    if not _same((base, {v: texts[v] + text for v in views}), out):
        return False
    if views and not tail:
        tail.append(text)
    return True


def _view(o: Outcome, v: str) -> Any:
    return o.view(v)


def _quiet(pred: Prediction, out: Outcome, ref: Outcome) -> bool:
    """Does ``pred`` predict no divergence where ``out`` shows one: the reference
    ``ref`` in each view up to and including ``out``'s first difference from it there
    (past it, the input is that other divergence's: a second cause's bytes further on
    are not this rule's to predict), and in a view where ``out`` shows none, all of it?"""
    base, override = pred
    try:
        views = _shown(out)
        # the views that drop errors (ignore, escape) hold no place of them: where a
        # view that does differs, the first difference is found there
        placed = [v for v in views if v not in ("ignore", "escape")
                  and out.view(v) != ref.view(v)]
        for v in views if not placed else [v for v in views if v not in ("ignore", "escape")]:
            mine, theirs = out.view(v), ref.view(v)
            want = override[v] if v in override else base.view(v)
            if mine != theirs and isinstance(mine, tuple) and isinstance(theirs, tuple) \
                    and isinstance(want, tuple):
                k = _first_unequal(mine, theirs)
                if want[:k + 1] != theirs[:k + 1]:
                    return False
            elif want != theirs:
                return False
    except ViewUnavailable:
        return False
    return True


def _fresh_outcomes(inputs: list[bytes], run: Run
                    ) -> list[tuple[bytes, Outcome, frozenset[tuple[str, str]]]]:
    """The decoder's outcomes on ``inputs`` (a failure is another finding's business,
    so it is left out). Every input is run: they are few (:func:`fresh_inputs`), and
    a bound in seconds would make the explanation depend on the machine's load."""
    got: list[tuple[bytes, Outcome, frozenset[tuple[str, str]]]] = []
    for f in inputs:
        r = run(f)
        if r is not None and r[0].ok:
            got.append((f, *r))
    return got


def rule_of(data: bytes, profile: str, policy: str, klass: str, feature: str,
            rule: str, out: Outcome | None = None) -> Rule | None:
    """The candidate named ``rule`` for this input (None: no such candidate): the one
    :func:`explain` chose, where it chose one of that name on this input; else the
    first that reproduces ``out``, else the first of that name."""
    chosen = _CHOSEN.get((data, profile, policy, klass, feature, rule))
    if chosen is not None and (out is None or chosen.holds(data, out)):
        return chosen  # (another decoder's choice on the same input may not hold)
    first: Rule | None = None
    for r in candidates(data, profile, policy, klass, feature, out):
        if r.explanation.rule == rule:
            if out is None or r.holds(data, out):
                return r  # of the points that share a name, one that reproduces it
            first = first or r
    return first


# -- the decoder model, one axis at a time ----------------------------------------
#
# A decoder is described along the specs' axes: its table (the claimed profile's
# well-formed set, another profile's, the claimed one with the sequences of one
# spec feature added, or every sequence a lead's count takes; and a part of what the
# table reads rejected whole), its cut (a policy, or the lead's count: how the
# ill-formed bytes between are cut into errors, or cut as another table cuts them),
# and its replace view's rendering (one U+FFFD an error, or one a byte). A
# point that moves two axes predicts an input that shows two deviations at once; its
# finding is the axis whose move alone predicts the input's first difference from
# the reference (what the signature names), so that a decoder with two deviations
# is two findings, each named by one axis, never one finding for the pair.

#: Every byte the character of its value (ISO/IEC 8859-1): a table with no
#: multi-byte sequence, what a decoder that does no UTF-8 at all decodes by.
LATIN1 = Profile(
    name="latin1", title="every byte as the character of its value (ISO/IEC 8859-1)",
    spec="ISO/IEC 8859-1: each byte is the character of its value",
    rows=[Row(((0x00, 0xFF),), clause="ISO/IEC 8859-1: one byte, one character")],
    max_codepoint=0xFF)

_C = (0x80, 0xBF)
#: The sequences of each ill-formed spec feature (signature.FEATURES), by length: the
#: bytes RFC 2279 section 2's layout reads as one value that Table 3.1B rejects
#: (Corrigendum #1: which second bytes mark non-shortest forms, surrogates, values
#: above U+10FFFF).
_FEATURE_ROWS: dict[str, dict[int, tuple[tuple[tuple[int, int], ...], ...]]] = {
    "non-shortest-form": {2: (((0xC0, 0xC1), _C),), 3: (((0xE0, 0xE0), (0x80, 0x9F), _C),),
                          4: (((0xF0, 0xF0), (0x80, 0x8F), _C, _C),),
                          5: (((0xF8, 0xF8), (0x80, 0x87), _C, _C, _C),),
                          6: (((0xFC, 0xFC), (0x80, 0x83), _C, _C, _C, _C),)},
    "surrogate": {3: (((0xED, 0xED), (0xA0, 0xBF), _C),)},
    "above-10ffff": {4: (((0xF4, 0xF4), (0x90, 0xBF), _C, _C), ((0xF5, 0xF7), _C, _C, _C))},
}


def _minus(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]
           ) -> list[tuple[tuple[int, int], ...]]:
    """The sequences of row ranges ``a`` that are not in ``b`` (same length), as rows."""
    if any(max(x[0], y[0]) > min(x[1], y[1]) for x, y in zip(a, b, strict=True)):
        return [a]
    out: list[tuple[tuple[int, int], ...]] = []
    for i, ((alo, ahi), (blo, bhi)) in enumerate(zip(a, b, strict=True)):
        lo, hi = max(alo, blo), min(ahi, bhi)
        if alo < lo:
            out.append((*a[:i], (alo, lo - 1), *a[i + 1:]))
        if hi < ahi:
            out.append((*a[:i], (hi + 1, ahi), *a[i + 1:]))
        a = (*a[:i], (lo, hi), *a[i + 1:])
    return out


@cache
def _added(profile: str, feat: str, n: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The rows of feature ``feat``'s ``n``-byte sequences that ``profile``'s table
    does not have already (modified UTF-8 has C0 80)."""
    pieces: list[tuple[tuple[int, int], ...]] = []
    for box in _FEATURE_ROWS.get(feat, {}).get(n, ()):
        left = [box]
        for r in REGISTRY[profile].rows:
            if r.length == n:
                left = [p for q in left for p in _minus(q, r.ranges)]
        pieces += left
    return tuple(pieces)


@cache
def accepting_table(profile: str, feat: str, n: int | None) -> Profile | None:
    """``profile``'s table with the ``n``-byte sequences of ill-formed feature ``feat``
    well-formed (None: at every length its leads announce), each the value its bits
    spell; None where that adds nothing (or the table is one of offsets and reserved
    leads, Corrected UTF-8's, whose sequences a bit layout does not spell)."""
    base = REGISTRY[profile]
    if base.reserved_leads or any(r.offset for r in base.rows):
        return None
    lengths = [n] if n is not None else sorted(_announced(base))
    added = [p for k in lengths for p in _added(profile, feat, k)]
    if not added:
        return None
    return Profile(
        name=f"{profile}+{feat}" + (f":{n}" if n else ""), title=base.title, spec=base.spec,
        rows=[*base.rows, *(Row(p, clause=f"RFC 2279 section 2: {feat} read by its bits")
                            for p in added)],
        max_codepoint=max(base.max_codepoint, *(bits_value(bytes(hi for _, hi in p))
                                                for p in added)))


_table_refs: dict[tuple[str, str], Reference] = {}


def _table_ref(table: Profile, policy: str) -> Reference:
    if table.name in REGISTRY:
        return _ref(table.name, policy)
    r = _table_refs.get((table.name, policy))
    if r is None:
        if len(_table_refs) >= 512:  # box moves make tables of inputs' own bytes
            _table_refs.clear()
        r = _table_refs[table.name, policy] = Reference(table, policy)
    return r


#: The cuts by the lead's count, beside :data:`~utf8fuzz.policies.POLICIES`: a lead
#: announcing n bytes (RFC 2279 section 2) takes the bytes after it before the table
#: is asked, and a sequence so taken that the table rejects is an error over all its
#: bytes but the last. :data:`BY_STRUCTURE`: the next n-1 bytes, whatever they are (n a
#: length the table's leads announce), a lead the end cuts short one truncated error
#: with the bytes after it; :data:`BY_LEAD_ALONE`: the same, but a lead the end cuts
#: short an error by itself, the bytes after it read again; :func:`when_complete`:
#: the bytes while they are continuation bytes, at every length RFC 2279 announces
#: (2 to 6), what breaks off before n bytes cut as that layout cuts it by a policy.
BY_STRUCTURE = "by-structure"
BY_LEAD_ALONE = "by-structure:lead-alone"
_WHEN_COMPLETE = "when-complete/"
_BY_STRUCTURE_RULE = "checked-when-complete+continuations-unchecked"


def when_complete(policy: str) -> str:
    """The cut that checks a sequence only once the lead has its bytes, the rest cut
    by RFC 2279's layout under ``policy``."""
    return _WHEN_COMPLETE + policy


#: (table name, sequence) -> the value ``table`` reads it as (None: no row): a cut by
#: the lead's count asks the table once per sequence it meets, not once per token.
_ROWS: dict[tuple[str, bytes], int | None] = {}


def _value(table: Profile, seq: bytes) -> int | None:
    key = (table.name, seq)
    if key not in _ROWS:
        if len(_ROWS) >= 1 << 16:
            _ROWS.clear()
        row = table.row_of(seq)
        _ROWS[key] = row.value(seq) if row is not None else None
    return _ROWS[key]


def _by_structure(table: Profile, d: bytes, lead_alone: bool = False) -> list[Token]:
    lengths = _announced(table)

    def unit(i: int) -> tuple[Token, int]:
        n = structural_length(d[i])
        if n not in lengths:
            v = _value(table, d[i:i + 1])
            return (Token("char", v, i, i + 1) if v is not None
                    else Token("error", None, i, i + 1, "illegal")), i + 1
        if i + n > len(d):
            end = i + 1 if lead_alone else len(d)
            return Token("error", None, i, end, "truncated"), end
        if (v := _value(table, d[i:i + n])) is not None:
            return Token("char", v, i, i + n), i + n
        return Token("error", None, i, i + n - 1, "illegal"), i + n - 1

    def step(t: Token) -> tuple[list[Token], int | None] | None:
        # the table's own character of the length the lead announces is what the
        # count takes too: kept as the table's walk gives it (the fast path)
        n = structural_length(d[t.start])
        if t.kind == "char" and t.end - t.start == (n if n in lengths else 1):
            return None
        tok, nxt = unit(t.start)
        return [tok], None if nxt == t.end else nxt  # the walk goes on where it ends
    return _rewrite(_table_ref(table, "maximal-subpart"), d, step)


def _when_complete(table: Profile, d: bytes, policy: str) -> list[Token]:
    """RFC 2279's layout (the legacy profile) cut by ``policy``, each sequence it reads
    kept where ``table`` has it, else an illegal error over all its bytes but the
    last, after which decoding resumes."""
    def step(t: Token) -> tuple[list[Token], int | None] | None:
        if t.kind != "char":
            return None
        v = _value(table, d[t.start:t.end])
        if v is not None:
            return [Token("char", v, t.start, t.end)], None
        resume = max(t.start + 1, t.end - 1)
        return [Token("error", None, t.start, resume, "illegal")], resume
    return _rewrite(_ref("legacy", policy), d, step)


@dataclass(frozen=True)
class Part:
    """A part of a table's sequences, in the spec's terms: those of one ill-formed
    spec feature (its rows in :data:`_FEATURE_ROWS`), of one length, or with a value
    above a code point. ``name`` is how a rule calls it (``surrogate``, ``4-byte``,
    ``beyond-10FFFF``); ``words``, in a sentence."""

    name: str
    words: str
    feature: str | None = None
    length: int | None = None
    above: int | None = None

    def lengths(self) -> frozenset[int] | None:
        """The lengths of its sequences (None: any)."""
        if self.feature is not None:
            return frozenset(_FEATURE_ROWS[self.feature])
        return frozenset({self.length}) if self.length is not None else None

    def holds(self, d: bytes, t: Token) -> bool:
        """Is the character token ``t`` of ``d`` in this part?"""
        if self.feature is not None:
            boxes = _FEATURE_ROWS[self.feature].get(t.end - t.start, ())
            return any(box[0][0] <= d[t.start] <= box[0][1] and all(
                lo <= b <= hi for b, (lo, hi) in zip(d[t.start:t.end], box, strict=True))
                for box in boxes)
        if self.length is not None:
            return t.end - t.start == self.length
        return self.above is not None and (t.value or 0) > self.above


@dataclass(frozen=True)
class Point:
    """A point of the decoder model: the sequences ``table`` reads, cut into errors by
    ``policy`` (one of :data:`~utf8fuzz.policies.POLICIES`, or a cut by the lead's
    count: :data:`BY_STRUCTURE`, :data:`BY_LEAD_ALONE`, :func:`when_complete`); of
    what it reads, those of the part ``rejects`` each one error over all their bytes
    (read whole, rejected whole); the ill-formed bytes between its characters cut as
    ``errors_as`` cuts them by the same policy, where that table's errors cover the
    same bytes; a high and a low surrogate's characters one character (``utf16``:
    text held as UTF-16, as a JS or Java string holds it), or only where their bytes
    are a pair row's (``pair_rows``: ED A0..AF xx ED B0..BF xx, the 6-byte rows of
    CESU-8 and modified UTF-8, which a decoder that takes continuation bytes unchecked
    still matches by those bytes); its replace view cut by ``rendering`` instead
    (None: the same cut), one U+FFFD an error."""

    table: Profile
    policy: str
    utf16: bool = False
    rendering: str | None = None
    rejects: Part | None = None
    errors_as: Profile | None = None
    pair_rows: bool = False

    def tokens(self, d: bytes, policy: str) -> list[Token]:
        if policy in (BY_STRUCTURE, BY_LEAD_ALONE):
            toks = _by_structure(self.table, d, policy == BY_LEAD_ALONE)
        elif policy.startswith(_WHEN_COMPLETE):
            toks = _when_complete(self.table, d, policy.removeprefix(_WHEN_COMPLETE))
        else:
            toks = list(_table_ref(self.table, policy).decode(d).tokens)
        if self.rejects is not None:
            part, lengths = self.rejects, self.rejects.lengths()
            toks = [Token("error", None, t.start, t.end, "illegal")
                    if t.kind == "char" and (lengths is None or t.end - t.start in lengths)
                    and part.holds(d, t) else t for t in toks]
        if self.errors_as is not None and policy in POLICIES:
            toks = _errors_cut_as(toks, _table_ref(self.errors_as, policy).decode(d).tokens)
        if self.pair_rows:
            toks = _paired(toks, d)
        return _paired(toks) if self.utf16 else toks

    def predict(self, d: bytes) -> Prediction:
        base = _predicted(self.tokens(d, self.policy), d)[0]
        if self.rendering is None:
            return base, {}
        return base, {"replace": tuple(t.value or 0 if t.kind == "char" else REPLACEMENT
                                       for t in self.tokens(d, self.rendering))}


def _errors_cut_as(mine: list[Token], other: Sequence[Token]) -> list[Token]:
    """``mine``'s characters, and between them ``other``'s tokens where they are errors
    that cover the same bytes (else ``mine``'s)."""
    starts = [t.start for t in other]
    toks: list[Token] = []
    run: list[Token] = []

    def flush() -> None:
        if run:
            lo, hi = run[0].start, run[-1].end
            a, b = bisect_left(starts, lo), bisect_left(starts, hi)
            cut = other[a:b]
            ok = bool(cut) and cut[0].start == lo and cut[-1].end == hi \
                and all(t.kind != "char" for t in cut)
            toks.extend(cut if ok else run)
            run.clear()
    for t in mine:
        if t.kind == "char":
            flush()
            toks.append(t)
        else:
            run.append(t)
    flush()
    return toks


def _agrees_first(pred: Prediction, out: Outcome, ref: Outcome) -> bool:
    """Does ``pred`` give what ``out`` shows up to and including each view's first
    difference from ``ref`` (views where ``out`` agrees with ``ref`` left aside)?"""
    base, override = pred
    try:
        for v in _shown(out):
            mine, theirs = out.view(v), ref.view(v)
            if mine == theirs:
                continue
            want = override[v] if v in override else base.view(v)
            if isinstance(mine, tuple) and isinstance(theirs, tuple) and isinstance(want, tuple):
                k = _first_unequal(mine, theirs)
                if mine[:k + 1] != want[:k + 1]:
                    return False
            elif mine != want:
                return False
    except ViewUnavailable:
        return False
    return True


#: A move along one axis from the claim: the rule it names, its sentence and
#: severity, and the point it reaches.
Move = tuple[str, str, str, Point]


def _combined(data: bytes, out: Outcome | None, profile: str, policy: str,
              axes: list[list[Move]]) -> Iterator[Rule]:
    """Points that move two or three of ``axes`` (table, policy, rendering) at once,
    one move each; each is named by the move whose point alone predicts ``out``'s
    first difference from the reference (the first moved axis's, where none does or
    there is no ``out``): what the signature names is that axis's doing."""
    ref = _ref(profile, policy).decode(data) if out is not None else None
    none: Move = ("", "", "", Point(REGISTRY[profile], policy))
    tables, cuts_, renders = ([none, *a] for a in axes)
    # the replace view's cut after the cut of errors: where a text alone cannot tell
    # them apart (a text-only decoder), the cut of errors names it
    for t, r, p in product(tables, renders, cuts_):
        moved = [m for m in (t, p, r) if m is not none]
        if len(moved) < 2:
            continue
        point = Point(t[3].table, p[3].policy, t[3].utf16, r[3].rendering,
                      pair_rows=t[3].pair_rows)
        name = next((m for m in moved if out is not None and ref is not None
                     and _agrees_first(m[3].predict(data), out, ref)), moved[0])
        yield Rule(Explanation(*name[:3]), point.predict,
                   _both(_feature_probes(profile), _difference_probes(profile, t[3].table))
                   if t is not none else None)


@cache
def _feature_sequences(profile: str) -> tuple[bytes, ...]:
    """The first sequence of each row an ill-formed feature (:data:`_FEATURE_ROWS`)
    adds to ``profile``'s table at each length its leads announce."""
    lengths = _announced(REGISTRY[profile])
    return tuple(bytes(lo for lo, _ in row) for f, rows in _FEATURE_ROWS.items()
                 for k in rows if k in lengths for row in _added(profile, f, k))


#: The most sequences where two tables differ that a move between them is checked on
#: (:func:`_differences`), the shortest first: each is two fresh inputs.
DIFFERENCES = 12


def _class_lows(*tables: Profile) -> list[int]:
    """The lowest byte of each byte class of ``tables`` together (the classes of
    :func:`~utf8fuzz.triage.generalize.byte_classes`, cut by every table's rows): within
    one, each table reads every byte alike."""
    cuts = {0, 0x80, 0xC0, 0xE0, 0xF0, 0xF8, 0xFC, 0xFE}
    for t in tables:
        cuts.update(b for r in t.rows for lo, hi in r.ranges for b in (lo, hi + 1))
        cuts.update(b for x in t.reserved_leads for b in (x, x + 1))
    return sorted(cuts - {0x100})


def _differences(a: Profile, b: Profile) -> tuple[bytes, ...]:
    """The least sequence that reaches each place where tables ``a`` and ``b`` read a
    byte class otherwise: walking both tables' DFAs at once over their byte classes
    (:func:`_class_lows`), a byte after which one table reads on and the other rejects
    (the prefix completed by the least bytes to a sequence of the one that reads on),
    or after which one accepts a sequence the other does not, or reads it as another
    value; in the order found, shortest first, at most :data:`DIFFERENCES`. A function
    of the two tables alone."""
    da, db = a.dfa, b.dfa
    reps = _class_lows(a, b)

    def value(table: Profile, s: int, seq: bytes) -> int | None:
        acc = table.dfa.accept[s]
        return None if acc < 0 else table.rows[acc].value(seq)

    def completed(table: Profile, s: int, seq: bytes) -> bytes:
        d = table.dfa
        seen, queue = {s}, deque([(s, seq)])
        while queue:
            t, got = queue.popleft()
            if d.accept[t] >= 0:
                return got
            for x in reps:
                n = d.trans[t][x]
                if n != DEAD and n not in seen:
                    seen.add(n)
                    queue.append((n, got + bytes([x])))
        return seq  # a live state always reaches an accepting one

    found: list[bytes] = []
    seen = {(da.start, db.start)}
    # a difference reached, by the states it leads from and to: the other bytes of a
    # class the tables cut alike show the same one
    shown: set[tuple[int, int, int, int]] = set()
    queue = deque([(da.start, db.start, b"")])
    while queue and len(found) < DIFFERENCES:
        sa, sb, path = queue.popleft()
        for x in reps:
            ta, tb = da.trans[sa][x], db.trans[sb][x]
            seq = path + bytes([x])
            if ta == DEAD and tb == DEAD:
                continue
            key = (sa, sb, ta, tb)
            if (ta == DEAD) != (tb == DEAD):
                if key not in shown:
                    shown.add(key)
                    found.append(completed(b, tb, seq) if ta == DEAD
                                 else completed(a, ta, seq))
                continue
            if value(a, ta, seq) != value(b, tb, seq) and key not in shown:
                shown.add(key)
                found.append(seq)
            if (ta, tb) not in seen:
                seen.add((ta, tb))
                queue.append((ta, tb, seq))
    return tuple(dict.fromkeys(found))[:DIFFERENCES]


#: (claimed profile, other table's name) -> :func:`_differences`.
_DIFFERENCES: dict[tuple[str, str], tuple[bytes, ...]] = {}


def _difference_probes(profile: str, other: Profile | None) -> Callable[[bytes], list[bytes]]:
    """Probes for a move from ``profile``'s table to ``other`` (another profile's, or
    the claimed one changed; None: no table, no probes): each sequence where they
    differ (:func:`_differences`), ended by ASCII, alone and after the input. A move
    says how the decoder reads every input; one that holds only on part of the
    difference (reads a lone low surrogate as modified UTF-8 does, but rejects a lone
    high one as CESU-8 does) is refuted, and a narrower change explains the input."""
    def probes(d: bytes) -> list[bytes]:
        if other is None:
            return []
        key = (profile, other.name)
        if key not in _DIFFERENCES:
            if len(_DIFFERENCES) >= 4096:
                _DIFFERENCES.clear()
            _DIFFERENCES[key] = _differences(REGISTRY[profile], other)
        return [x for s in _DIFFERENCES[key] for x in (s + b"A", d + s + b"A")]
    return probes


def _both(*probes: Callable[[bytes], list[bytes]]) -> Callable[[bytes], list[bytes]]:
    return lambda d: [x for p in probes for x in p(d)]


def _also_probed(rule: Rule, probes: Callable[[bytes], list[bytes]]) -> Rule:
    """``rule`` checked on ``probes`` too, beside its own."""
    return replace(rule, probes=probes if rule.probes is None else _both(rule.probes, probes))


def _feature_probes(profile: str) -> Callable[[bytes], list[bytes]]:
    """Probes for a move of the well-formed set: the input after a sequence of each
    ill-formed feature, at each length: a move that accepts too few or too many of
    them is refuted, or leaves them to another bug."""
    return lambda d: [q + d for q in _feature_sequences(profile)]


def _accepting_moves(data: bytes, profile: str, policy: str) -> list[Move]:
    """Table moves for the ill-formed features the reference finds on ``data``: each
    feature at the length seen (``accepts:surrogate:3-byte``), then at every length
    (``accepts:non-shortest-form``); a surrogate's also with pairs read as UTF-16."""
    table = REGISTRY[profile]
    seen: list[tuple[str, int]] = []
    for t in _ref(profile, policy).decode(data).tokens:
        if t.kind == "char":
            continue
        f = feature_of(data, t, table)
        n = structural_length(data[t.start])
        if f in _FEATURE_ROWS and (f, n) not in seen:
            seen.append((f, n))
    moves: list[Move] = []
    # every feature at every length too, seen or not: a decoder's other deviation
    # (one this input does not show) moves the table on the fresh inputs it is checked on
    for f, n in seen + [(f, 0) for f in _FEATURE_ROWS]:
        if not n and sum(k in _FEATURE_ROWS[f] for k in _announced(table)) < 2:
            n = next((k for k in _FEATURE_ROWS[f] if k in _announced(table)), 0)
            if not n or (f, n) in seen:
                continue  # the move of its one length
        tab = accepting_table(profile, f, n or None)
        if tab is None:
            continue
        rule = f"accepts:{f}:{n}-byte" if n else f"accepts:{f}"
        text = (f"it accepts the {f'{n}-byte ' if n else ''}sequences the profile calls "
                f"ill-formed at {f.replace('-', ' ')}, as the value their bits spell (RFC "
                "2279 section 2's layout): a change to the well-formed set")
        for utf16 in (False, True) if f == "surrogate" else (False,):
            moves.append((rule, text + ("; a high and a low surrogate so read are one "
                                        "character, as in a UTF-16 string" if utf16 else ""),
                          "non-conformance", Point(tab, policy, utf16)))
    return moves


def _policy_moves(table: Profile, policy: str) -> list[Move]:
    """The other cuts of ill-formed bytes into errors, from the claim."""
    moves: list[Move] = [(f"policy:{pol}", f"it cuts ill-formed bytes into errors by the {pol} "
                          f"policy, where it claims {policy}: a policy difference, not a "
                          "conformance bug", "policy", Point(table, pol)) for pol in POLICIES
                         if pol != policy]
    moves.append((_BY_STRUCTURE_RULE,
                  "it takes the bytes a lead announces (RFC 2279 section 2) without checking "
                  "them and checks the sequence against the table only once it has them all: "
                  "a complete sequence the table rejects is an error over all its bytes but "
                  "the last, and a lead the end cuts short one truncated error with the "
                  "bytes after it", "reporting", Point(table, BY_STRUCTURE)))
    return moves


_PER_BYTE = "renders-errors-as:U+FFFD-per-byte"


def _rendering_moves(table: Profile, policy: str) -> list[Move]:
    """The replace view cut otherwise than the errors it reports: per byte."""
    return [(_PER_BYTE, "its replace view writes one U+FFFD for each ill-formed byte, where "
             "its errors (strict, spans) are cut as it claims", "reporting",
             Point(table, policy, rendering="per-byte"))]

def _move_rule(move: Move, probes: Callable[[bytes], list[bytes]] | None = None) -> Rule:
    """The rule of a move: its point's prediction, checked like any rule."""
    name, text, sev, point = move
    return Rule(Explanation(name, text, sev), point.predict, probes)


def _as_profile(prof: str, profile: str) -> str:
    return (f"it decodes these bytes as the {prof} profile does ({REGISTRY[prof].spec}), "
            f"where it claims {profile}")


def _when_complete_move(prof: str, profile: str, policy: str, klass: str) -> Move:
    """``prof``'s table (the claimed one: a reporting difference) cut by
    :func:`when_complete`."""
    own = prof == profile
    return (
        "checked-when-complete" if own else f"profile:{prof}/checked-when-complete",
        ("" if own else _as_profile(prof, profile) + "; ")
        + "it takes the bytes a lead announces (RFC 2279 section 2) while they are "
        "continuation bytes and checks the sequence against the table only once it has "
        "them all: a prefix the table rejects is still incomplete to it, and a complete "
        "sequence the table rejects is an error over all its bytes but the last (the "
        "longest prefix it called incomplete)",
        "reporting" if own else severity_of(klass),
        Point(REGISTRY[prof], when_complete(policy), pair_rows=_pairs(REGISTRY[prof])))


def _pairs(table: Profile) -> bool:
    """Has ``table`` surrogate pairs of its own, two 3-byte sequences in one row (CESU-8,
    modified UTF-8), that a cut by the lead's count reads as two?"""
    return any(r.length == 6 for r in table.rows) and 6 not in _announced(table)


def _parts(profile: str, prof: str) -> list[Part]:
    """The parts of ``prof``'s sequences that spell what ``profile`` has no sequence of
    that length for: an ill-formed feature's, of code points the claim cannot encode
    (encoded surrogates: Table 3-7's ED A0..BF row); a length its leads do not
    announce, of code points it encodes otherwise (4-byte sequences, where CESU-8 and
    modified UTF-8 write a surrogate pair); values above its code space's top."""
    claimed, other = REGISTRY[profile], REGISTRY[prof]

    def encodes(cp: int) -> bool:
        try:
            claimed.encode_one(cp)
        except ValueError:
            return False
        return True

    def spells(seq: bytes | None) -> int | None:  # the value ``prof`` reads it as
        row = other.row_of(seq) if seq is not None else None
        return row.value(seq) if row is not None and seq is not None else None
    parts: list[Part] = []
    for f, rows in _FEATURE_ROWS.items():
        values = [spells(bytes(lo for lo, _ in box)) for boxes in rows.values()
                  for box in boxes]
        if f != "above-10ffff" and any(_added(profile, f, n) for n in rows) \
                and any(v is not None and v <= claimed.max_codepoint and not encodes(v)
                        for v in values):
            parts.append(Part(f, _feature_words(f), feature=f))
    for n in sorted(_announced(other) - _announced(claimed)):
        least = 0x80 if n == 2 else 1 << (5 * n - 4)  # the least value n bytes spell
        if spells(bits_encode(least, n)) == least and encodes(least):
            parts.append(Part(f"{n}-byte", f"{n}-byte sequences ({profile} has none: it "
                              "encodes their values otherwise)", length=n))
    top = claimed.max_codepoint
    if other.max_codepoint > top:
        parts.append(Part(f"beyond-{top:X}", f"values above U+{top:04X}", above=top))
    return parts


def _feature_words(feature: str) -> str:
    return {"surrogate": "encoded surrogates (ED A0..BF 80..BF)",
            "non-shortest-form": "non-shortest forms"}.get(feature, feature.replace("-", " "))


def _same_set(claimed: Profile, point: Point) -> bool:
    """Does ``point`` (a table less a part) accept what ``claimed`` accepts, on the first
    and last sequence of each row of either table?"""
    part = point.rejects
    boxes = [r.ranges for t in (claimed, point.table) for r in t.rows] + [
        box for rows in _FEATURE_ROWS.values() for bs in rows.values() for box in bs]
    for s in {bytes(c[k] for c in box) for box in boxes for k in (0, 1)}:
        v = _value(point.table, s)
        mine = v is not None and not (part is not None and part.holds(
            s, Token("char", v, 0, len(s))))
        if mine != (claimed.row_of(s) is not None):
            return False
    return True


# -- moves narrower than a spec feature: boxes of the spec's byte classes -----------
#
# A decoder may accept or reject less than a whole spec feature: a stray continuation
# byte taken as a character, U+0000 (the 00 byte) rejected, the 4-byte sequences
# after F0 90 rejected, a CESU-8 pair accepted where lone surrogates stay errors.
# Each such move changes the claimed table by one *box*: a sequence of byte ranges,
# one per position, each a range of Table 3-7's columns (a row's range cut at the
# input's own byte), a structural class of RFC 2279 section 2, or a row of another
# profile's table. Like every point, a box move predicts whole outcomes and is
# checked on fresh inputs; the widest box is tried first, so the finding names the
# most the decoder does, not the one input it was met on.

#: At most this many sequences of the input are made into box moves of each kind
#: (the first ones): the moves are checked on fresh inputs, which hold the others.
_BOX_SEQUENCES = 6
#: RFC 2279 section 2's structural classes: bytes of one number of leading 1 bits.
_STRUCTURAL = ((0x00, 0x7F), (0x80, 0xBF), (0xC0, 0xDF), (0xE0, 0xEF), (0xF0, 0xF7),
               (0xF8, 0xFB), (0xFC, 0xFD), (0xFE, 0xFF))

Box = tuple[tuple[int, int], ...]


def _box_name(box: Box) -> str:
    return "_".join(f"{lo:02X}" if lo == hi else f"{lo:02X}..{hi:02X}" for lo, hi in box)


def _rows_minus(rows: Iterable[Row], box: Box) -> list[Row]:
    """``rows`` less the sequences of ``box`` (each row cut into the rows of its rest)."""
    out: list[Row] = []
    for r in rows:
        if r.length != len(box) or r.value_fn is not None:
            out.append(r)
            continue
        out += [Row(p, offset=r.offset, clause=r.clause) for p in _minus(r.ranges, box)]
    return out


def _box_table(profile: str, name: str, add: Iterable[Row] = (), drop: Box | None = None
               ) -> Profile | None:
    """``profile``'s table with the rows ``add`` (less what it has already) and without
    the sequences of ``drop``; None where that is no change, or the table is one of
    offsets and reserved leads (Corrected UTF-8's)."""
    base = REGISTRY[profile]
    if base.reserved_leads or any(r.offset for r in base.rows):
        return None
    rows = list(base.rows) if drop is None else _rows_minus(base.rows, drop)
    added: list[Row] = []
    for a in add:
        pieces = [a.ranges]
        for r in base.rows:
            if r.length == a.length:
                pieces = [p for q in pieces for p in _minus(q, r.ranges)]
        if a.value_fn is not None:  # a pair row: whole or not at all
            if pieces == [a.ranges]:
                added.append(a)
            continue
        added += [Row(p, clause=a.clause) for p in pieces]
    if not added and len(rows) == len(base.rows) and drop is None:
        return None
    try:
        return Profile(name=f"{profile}{name}", title=base.title, spec=base.spec,
                       rows=[*rows, *added], max_codepoint=max(
                           [base.max_codepoint, *(bits_value(r.last) for r in added
                                                  if r.value_fn is None)]))
    except ValueError:  # rows that overlap: not one table
        return None


def _box_rule(rule: str, text: str, table: Profile | None, policy: str,
              probes: Callable[[bytes], list[bytes]] | None = None) -> Rule | None:
    if table is None:
        return None
    return Rule(Explanation(rule, text + ": a change to the well-formed set",
                            "non-conformance"), Point(table, policy).predict, probes)


def _rejecting_boxes(data: bytes, profile: str, policy: str) -> Iterator[Rule]:
    """The claimed table less one box of a well-formed sequence the input holds, or
    begins (a prefix the end or a wrong byte cut short, an error of two or more bytes):
    the sequence's first k bytes as they are and the rest of its row's ranges, k from
    1 (its row's sequences with this lead) to its length (that sequence alone)."""
    table = REGISTRY[profile]
    seen: set[Box] = set()
    done = 0
    for t in _ref(profile, policy).decode(data).tokens:
        if done >= _BOX_SEQUENCES or (t.kind != "char" and t.end - t.start < 2):
            continue
        seq = data[t.start:t.end]
        row = table.row_of(seq) if t.kind == "char" else next(
            (r for r in table.rows if r.length > len(seq) and r.value_fn is None
             and all(lo <= b <= hi for b, (lo, hi) in zip(seq, r.ranges, strict=False))),
            None)
        if row is None or row.value_fn is not None:
            continue
        done += 1
        for k in range(1, len(seq) + 1):
            box = (*((b, b) for b in seq[:k]), *row.ranges[k:])
            if box in seen:
                continue
            seen.add(box)
            rule = _box_rule(f"rejects:{_box_name(box)}",
                             f"it rejects the well-formed sequences {_box_name(box)} "
                             "(a part of Table 3-7's row "
                             f"{row.describe()}), each as the profile cuts an ill-formed "
                             "sequence into errors", _box_table(
                                 profile, f"-{_box_name(box)}", drop=box), policy)
            if rule is not None:
                yield rule


def _stray_classes(table: Profile, b: int) -> list[tuple[int, int]]:
    """The ranges around byte ``b`` that begin no sequence of ``table``: within its
    structural class (RFC 2279 section 2), then within its byte class, widest first."""
    def run(lo: int, hi: int) -> tuple[int, int]:
        a = z = b
        while a > lo and not _begins(table, a - 1):
            a -= 1
        while z < hi and not _begins(table, z + 1):
            z += 1
        return a, z
    out = [run(*next(c for c in _STRUCTURAL if c[0] <= b <= c[1]))]
    cls = next(c for c in byte_classes(table.name) if c[0] <= b <= c[1]) \
        if table.name in REGISTRY else None
    if cls is not None and run(*cls) not in out:
        out.append(run(*cls))
    return out


def _begins(table: Profile, b: int) -> bool:
    return table.row_of(bytes([b])) is not None or table.is_prefix(bytes([b]))


def _accepting_boxes(data: bytes, profile: str, policy: str, narrow: bool = False
                     ) -> Iterator[Rule]:
    """The claimed table with one box more, read before the table at each place the
    claimed profile finds an error (the rest cut into errors as claimed: a decoder
    that checks for the box first, then decodes as it should), made from an error the
    input holds: a row of another profile's table that matches the bytes there (a
    CESU-8 pair, C0 80, a 5-byte form); a byte that begins no sequence taken as the
    character of its value, as Latin-1 would (its structural class, then its byte
    class); a sequence of an ill-formed spec feature taken as one U+FFFD, without an
    error (a decoder that substitutes what it reads but does not report it). With
    ``narrow``, instead: each such row cut to the claimed byte classes of the bytes
    there, up to the byte the claimed table rejects them at (narrower than a spec
    feature's move, so tried after those: :func:`_delta_rules`)."""
    table = REGISTRY[profile]
    mine = _ref(profile, policy)
    seen: set[str] = set()
    done = 0
    for t in mine.decode(data).tokens:
        if t.kind == "char" or done >= _BOX_SEQUENCES:
            continue
        done += 1
        moves: list[tuple[str, str, list[Row]]] = []
        for prof, other in REGISTRY.items():
            if prof == profile or other.reserved_leads or any(r.offset for r in other.rows):
                continue
            for r in other.rows:
                seq = data[t.start:t.start + r.length]
                if not r.matches(seq) or table.row_of(seq) is not None:
                    continue
                if narrow:
                    if r.value_fn is None:
                        moves += _narrowed(profile, prof, r, seq)
                    continue
                rows = [r] if r.value_fn is not None else [
                    Row(p, clause=r.clause) for p in _box_table_rows(profile, r)]
                if any(sorted(x.ranges for x in rows) == sorted(_added(profile, f, len(seq)))
                       for f in _FEATURE_ROWS):
                    continue  # a whole spec feature's sequences: that move's, by its name
                moves.append((f"accepts:{_box_name(r.ranges)}",
                              f"it accepts the sequences {r.describe()} that the profile "
                              f"rejects, as the {prof} profile reads them ({r.clause})", rows))
        if t.end - t.start == 1 and not narrow:
            moves += [(f"accepts:{_box_name(((lo, hi),))}",
                       f"it takes a byte {_box_name(((lo, hi),))}, which begins no sequence, "
                       "as the character of its value, as Latin-1 would",
                       [Row(((lo, hi),), clause="ISO/IEC 8859-1")])
                      for lo, hi in _stray_classes(table, data[t.start])]
        for name, text, rows in moves:
            if name not in seen and rows:
                seen.add(name)
                yield Rule(Explanation(name, text + ": a change to the well-formed set",
                                       "non-conformance"), _reading_first(mine, rows),
                           _difference_probes(profile, _box_table(profile, f"+{name}", rows)))


def _narrowed(profile: str, prof: str, r: Row, seq: bytes
              ) -> list[tuple[str, str, list[Row]]]:
    """Row ``r`` of ``prof``'s table cut to the claimed profile's byte classes of the
    bytes of ``seq`` (one of its sequences) up to the byte the claimed table rejects
    them at, the row's ranges past it: the part of the row the decoder may read where
    it does not read all of it (a lone low surrogate, not a high one); none where that
    is the whole row, or a whole spec feature's sequences (that move's, by its name)."""
    table, classes = REGISTRY[profile], byte_classes(profile)
    k = next((i for i in range(1, len(seq)) if not table.is_prefix(seq[:i])), len(seq))
    cut = tuple((max(lo, c[0]), min(hi, c[1])) if i < k else (lo, hi)
                for i, ((lo, hi), c) in enumerate(zip(r.ranges, (
                    next(c for c in classes if c[0] <= b <= c[1]) for b in seq), strict=True)))
    pieces = _box_table_rows(profile, Row(cut))
    if cut == r.ranges or not pieces or any(
            sorted(pieces) == sorted(_added(profile, f, len(seq))) for f in _FEATURE_ROWS):
        return []
    return [(f"accepts:{_box_name(cut)}",
             f"it accepts the sequences {Row(cut).describe()} that the profile rejects (a "
             f"part of the {prof} profile's row {r.describe()}), as that profile reads "
             f"them ({r.clause})", [Row(p, clause=r.clause) for p in pieces])]


def _unreported_rules(data: bytes, profile: str, policy: str) -> Iterator[Rule]:
    """A sequence of an ill-formed spec feature the input holds taken as one U+FFFD,
    without an error (a decoder that substitutes what it reads but does not report
    it): after the moves that read it as the value its bits spell, which a view
    without text (strict, a validator's yes or no) cannot tell from it."""
    table = REGISTRY[profile]
    mine = _ref(profile, policy)
    seen: set[str] = set()
    for t in mine.decode(data).tokens:
        f, n = feature_of(data, t, table), _complete(data, t.start)
        name = f"accepts:{f}:{n}-byte:as-U+FFFD"
        if t.kind == "char" or not n or f not in _FEATURE_ROWS or name in seen:
            continue
        seen.add(name)
        rows = [Row(p, clause=f"{f} read as one U+FFFD", value_fn=_fffd)
                for p in _added(profile, f, n)]
        if rows:
            yield Rule(Explanation(
                name, f"it takes each {n}-byte sequence the profile calls ill-formed at "
                f"{f.replace('-', ' ')} as one character, U+FFFD, and reports no error (a "
                "substitution it does not report)", "non-conformance"),
                _reading_first(mine, rows))


def _box_table_rows(profile: str, r: Row) -> list[Box]:
    """Row ``r``'s sequences that ``profile``'s table does not have, as boxes."""
    pieces = [r.ranges]
    for x in REGISTRY[profile].rows:
        if x.length == r.length:
            pieces = [p for q in pieces for p in _minus(q, x.ranges)]
    return pieces


def _reading_first(ref: Reference, rows: list[Row]) -> Callable[[bytes], Prediction]:
    """``ref``, where an error begins with a sequence of one of ``rows``: that sequence
    one character (its row's value), and decoding resumed after it."""
    longest = max(r.length for r in rows)

    def predict(d: bytes) -> Prediction:
        def step(t: Token) -> tuple[list[Token], int | None] | None:
            if t.kind == "char":
                return None
            head = d[t.start:t.start + longest]
            for r in rows:
                if r.matches(head[:r.length]):
                    end = t.start + r.length
                    return [Token("char", r.value(d[t.start:end]), t.start, end)], end
            return None
        return _predicted(_rewrite(ref, d, step), d)
    return predict


def _fffd(seq: bytes) -> int:
    return REPLACEMENT


@cache
def union_table(profile: str, other: str) -> Profile | None:
    """``profile``'s table with every sequence of ``other``'s it lacks (a decoder that
    accepts what either accepts: glibc's iconv, Unicode's UTF-8 and RFC 2279's forms
    up to U+7FFFFFFF less surrogates and non-shortest forms, Kuhn's table); None where
    that is either table, or one of them is Corrected UTF-8's."""
    base, more = REGISTRY[profile], REGISTRY[other]
    if any(p.reserved_leads or any(r.offset for r in p.rows) for p in (base, more)):
        return None
    if _within(base, more):
        return None  # the union is ``other``'s table: the move to that profile
    return _box_table(profile, f"|{other}", more.rows)


def _within(a: Profile, b: Profile) -> bool:
    """Is every sequence of ``a``'s table one of ``b``'s?"""
    for r in a.rows:
        if r.value_fn is not None:
            if not any(x.value_fn is not None and x.ranges == r.ranges for x in b.rows):
                return False
            continue
        left = [r.ranges]
        for x in b.rows:
            if x.length == r.length and x.value_fn is None:
                left = [p for q in left for p in _minus(q, x.ranges)]
        if left:
            return False
    return True


def _rejecting_moves(profile: str, prof: str, policy: str, klass: str) -> list[Move]:
    """``prof``'s table cut by ``policy``, with one part of what it reads beyond the
    claim (:func:`_parts`) read whole and rejected whole: each sequence of it one
    error over all its bytes; where the claim has surrogate pairs of its own (CESU-8,
    modified UTF-8), a high and a low surrogate so read one character, as its pair
    rows have them."""
    moves: list[Move] = []
    pairs = _pairs(REGISTRY[profile])
    for part in _parts(profile, prof):
        point = Point(REGISTRY[prof], policy, rejects=part, pair_rows=pairs)
        same = _same_set(REGISTRY[profile], point)
        moves.append((
            f"profile:{prof}/{policy}+{part.name}-one-error",
            f"it reads sequences as the {prof} profile does ({REGISTRY[prof].spec}), where "
            f"it claims {profile}, and rejects its {part.words} whole, each one error over "
            "all its bytes" + (f": it rejects what {profile} rejects, but cuts it into "
                               "errors otherwise (a policy difference)" if same else ""),
            "policy" if same else severity_of(klass), point))
    return moves


@cache
def unchecked_table(profile: str, latin1: bool) -> Profile:
    """``profile``'s table with every sequence of a length its leads announce (RFC 2279
    section 2) whatever its continuation bytes, the value its bits spell; with
    ``latin1``, every other byte it has no sequence of as the character of its value."""
    base = REGISTRY[profile]
    lengths = _announced(base)
    added: list[tuple[tuple[int, int], ...]] = []
    for n in sorted(lengths):
        leads = [b for b in range(256) if structural_length(b) == n]
        left = [((leads[0], leads[-1]), *[(0x00, 0xFF)] * (n - 1))]
        for r in base.rows:
            if r.length == n:
                left = [p for q in left for p in _minus(q, r.ranges)]
        added += left
    if latin1:
        ones = [b for b in range(256) if structural_length(b) not in lengths
                and base.row_of(bytes([b])) is None]
        for b in ones:
            if added and added[-1][0][1] == b - 1 and len(added[-1]) == 1:
                added[-1] = ((added[-1][0][0], b),)
            else:
                added.append(((b, b),))
    return Profile(
        name=f"{profile}+unchecked" + ("+latin1" if latin1 else ""), title=base.title,
        spec=base.spec, rows=[*base.rows, *(Row(p, clause="RFC 2279 section 2's layout, "
                                                "unchecked") for p in added)],
        max_codepoint=0x7FFFFFFF)


def _unchecked_move(profile: str, latin1: bool) -> Move:
    """The table of sequences taken unchecked (:func:`unchecked_table`), cut by
    :data:`BY_LEAD_ALONE`; a high and a low surrogate so taken one character where
    the claim has surrogate pairs of its own (modified UTF-8, CESU-8)."""
    pairs = _pairs(REGISTRY[profile])
    return (
        "continuations-unchecked" + ("+latin1" if latin1 else ""),
        "where a lead byte announces n bytes (a length the profile has sequences of) "
        "it takes the next n-1 as its "
        "continuation bytes without checking them (RFC 2279 section 2's bit layout, "
        "no 10xxxxxx check, no range check), and a lead the end cuts short is an "
        "error by itself"
        + ("; any other byte it passes through as Latin-1: it reports no error but a "
           "lead byte the end of the input cuts short" if latin1 else "")
        + ("; a high and a low surrogate so taken make one pair, as the profile's "
           "pairs do" if pairs else ""),
        "non-conformance", Point(unchecked_table(profile, latin1), BY_LEAD_ALONE,
                                 pair_rows=pairs))


def _errors_as_move(profile: str, prof: str, policy: str) -> Move:
    """The claim's table and policy, the ill-formed bytes between its characters cut
    as ``prof``'s table cuts them."""
    return (f"errors-as:{prof}",
            f"it accepts what {profile} accepts, as it claims, but cuts the ill-formed bytes "
            f"between into errors as the {prof} profile does ({REGISTRY[prof].spec})",
            "reporting", Point(REGISTRY[profile], policy, errors_as=REGISTRY[prof]))


def _union_rules(profile: str, policy: str, klass: str) -> Iterator[Rule]:
    """For each other profile: the claimed table joined with its table, read by the
    claimed policy, and checked only once complete (:func:`_when_complete`)."""
    for prof in REGISTRY:
        if prof == profile or (u := union_table(profile, prof)) is None:
            continue
        what = (f"it accepts what {profile} accepts and what the {prof} profile accepts "
                f"too ({REGISTRY[prof].spec})")
        differ = _difference_probes(profile, u)
        yield Rule(Explanation(f"profile:{profile}|{prof}/{policy}", what,
                               severity_of(klass)), Point(u, policy).predict, differ,
                   joined=True)
        yield Rule(Explanation(
            f"profile:{profile}|{prof}/checked-when-complete",
            what + "; it takes the bytes a lead announces (RFC 2279 section 2) while they "
            "are continuation bytes and checks the sequence against that table only once it "
            "has them all: a prefix the table rejects is still incomplete to it, and a "
            "complete sequence the table rejects is an error over all its bytes but the last",
            severity_of(klass)), Point(u, when_complete(policy), pair_rows=_pairs(u)).predict,
            _both(_completed, differ), joined=True)


__all__ = ["BY_LEAD_ALONE", "BY_STRUCTURE", "LONG_INPUT", "RULES", "SEVERITIES", "Explanation",
           "Part", "Point", "Rule", "accepting_table",
           "candidates", "explain", "explains_first", "fresh_inputs", "rule_of", "unexplained",
           "unplaced", "window"]
