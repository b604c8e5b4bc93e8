"""Classification: what one decoder did differently from its reference, on one input.

This module is the one source of truth for naming a difference. :class:`Judge` holds
the reference's answer for an input (a walk, :mod:`utf8fuzz.profiles.walk`, or any
outcome that shows every view) and compares a decoder's outcome with it.

The rules:

* Views are compared from the most detailed down (:data:`VIEW_ORDER`: tokens, spans,
  strict, reason, accept, replace, ignore, escape), only those the decoder shows; a view it
  cannot show is never a difference. The first view that differs decides.
* Its first differing position is mapped back to a reference token, the *anchor*.
  The *class* says what the decoder did there (:data:`~.signature.CLASSES`: accepted
  an error, rejected a character, another code point, another error offset, another
  cut into errors, another reason); the anchor's bytes give the spec *feature*
  (:func:`~.signature.feature_of`).
* Text views show no offsets. The replace and ignore views are mapped back by the
  most economical explanation (an alignment), never by a character that merely
  lines up after a swallowed byte; see :meth:`Judge._replace`.
* ``crash``, ``timeout`` and ``bad-outcome`` outcomes are their own class (the
  differ checks each outcome it receives first: :func:`utf8fuzz.outcome.checked`).

A :data:`Mismatch` is ``(class, anchor token index, view, detail)``. The fuzz loop
also names the commonest mismatches of whole screens in C (``engine/_screen.c``'s
``judge``); ``tests/engine/test_judge.py`` holds it equal to :meth:`Judge.compare_views`,
and it declines everything else to this module.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine._screen import align as _align
from utf8fuzz.engine.signature import feature_of
from utf8fuzz.outcome import (
    REPLACEMENT,
    TEXT_VIEWS,
    VIEWS,
    Outcome,
    Token,
    format_codepoint,
    pack_tokens,
    unpack_tokens,
)

#: The order views are compared in: the most detailed first.
VIEW_ORDER: tuple[str, ...] = VIEWS

#: ``(class, anchor token index, view, detail)``: one decoder's first difference.
Mismatch = tuple[str, int, str, str]


def feature_at(data: bytes, walk: Any, idx: int, reference: Reference) -> tuple[str, int]:
    """The spec feature of the walk's token ``idx`` and where it starts (0 when
    there is no such token: the empty input)."""
    tok = walk.token(idx)
    return feature_of(data, tok, reference.table), tok.start if tok else 0



class OutcomeWalk:
    """A walk's interface over an outcome that shows every view."""

    __slots__ = ("_cache", "outcome_", "tokens")

    def __init__(self, outcome: Outcome) -> None:
        self.outcome_ = outcome
        self.tokens = outcome.tokens
        self._cache: dict[str, Any] = {}

    def view(self, name: str) -> Any:
        v = self._cache.get(name, self)
        if v is self:
            v = self._cache[name] = self.outcome_.view(name)
        return v

    def text(self, name: str) -> str | None:
        cps = self.view(name)
        return "".join(map(chr, cps)) if all(c <= 0x10FFFF for c in cps) else None

    @property
    def first_error(self) -> int:
        return next((i for i, t in enumerate(self.tokens) if t.kind != "char"), -1)

    def token_index(self, offset: int) -> int:
        return max(0, bisect.bisect_right([t.start for t in self.tokens], offset) - 1)

    def token(self, i: int) -> Token | None:
        return self.tokens[i] if 0 <= i < len(self.tokens) else None

    @property
    def packed(self) -> bytes:
        return pack_tokens(self.tokens)

    def outcome(self, provenance: dict[str, str]) -> Outcome:
        return self.outcome_


class Judge:
    """The reference's answer for one input: a walk (:mod:`utf8fuzz.profiles.walk`),
    or any outcome that shows every view (an ICU-style expectation). ``view`` and
    ``text`` are the walk's own (computed once, in C); tokens and the outcome are
    only built when something asks."""

    __slots__ = ("_features", "_outcome", "_toks", "data", "reference", "text", "view", "walk")

    def __init__(self, data: bytes, walk: Any, reference: Reference) -> None:
        self.data = data
        self._outcome: Outcome | None = None
        if isinstance(walk, Outcome):
            self._outcome = walk
            walk = OutcomeWalk(walk)
        self.walk = walk
        self.reference = reference
        self.view: Callable[[str], Any] = walk.view
        #: A text view as a str (None when a value is beyond U+10FFFF).
        self.text: Callable[[str], str | None] = walk.text
        self._toks: tuple[Token, ...] | None = None
        self._features: dict[int, tuple[str, int]] = {}

    @property
    def tokens(self) -> tuple[Token, ...]:
        if self._toks is None:
            self._toks = tuple(self.walk.tokens or ())
        return self._toks

    @property
    def outcome(self) -> Outcome:
        if self._outcome is None:
            self._outcome = self.walk.outcome(self.reference.provenance())
        return self._outcome

    def feature(self, idx: int) -> tuple[str, int]:
        """The spec feature of reference token ``idx`` and where it starts (of the
        whole input when there is no such token), once per input: several decoders
        usually differ at the same token."""
        got = self._features.get(idx)
        if got is None:
            got = self._features[idx] = feature_at(self.data, self.walk, idx, self.reference)
        return got

    def token_at(self, offset: int) -> int:
        """The index of the reference token that holds byte ``offset``."""
        i: int = self.walk.token_index(offset)
        return i

    def first_error(self) -> int:
        """The index of the first error or reserved token (0 when there is none)."""
        first: int = self.walk.first_error
        return max(0, first)

    def last_error(self) -> int:
        toks = self.tokens
        for i in range(len(toks) - 1, -1, -1):
            if toks[i].kind != "char":
                return i
        return len(toks) - 1

    # -- per view ------------------------------------------------------------------

    def compare(self, out: Outcome, views: Sequence[str]) -> Mismatch | None:
        if not out.ok:
            return (out.status, 0, "status", f"{out.status}: {out.detail or ''}"[:200])
        if out.tokens_ is None:  # a partial outcome: its views as given
            return self.compare_views(out.views, views)
        if "tokens" in views:
            if out.tokens_ == self.tokens:
                return None
            return self._tokens(out.tokens_)
        for v in views:
            try:
                mine = out.view(v)
            except LookupError:
                continue
            if v == "reason" and "strict" in views and self.view("strict") != out.view("strict"):
                continue
            if mine == self.view(v):
                continue
            return self._classify(v, mine)
        return None

    def compare_views(self, shown: dict[str, Any], views: Sequence[str]) -> Mismatch | None:
        """:meth:`compare` of a partial outcome with these views - also a screen's
        dict, judged as it is (``screen_is_whole``) without an Outcome made for it.
        A view not shown is never a difference; a text view given as a ``str`` is
        first compared as one string, and tokens given packed as one bytes. Equal
        tokens end it, as in :meth:`compare`: every other view is made from them."""
        for v in views:
            mine = shown.get(v, shown)
            if mine is shown:
                continue
            if type(mine) is str and v in TEXT_VIEWS:
                if mine == self.text(v):
                    continue
                mine = tuple(map(ord, mine))
            elif type(mine) is bytes and v == "tokens":  # packed (outcome.pack_tokens)
                if mine == self.walk.packed:
                    return None  # every other view is made from the tokens (as compare)
                mine = unpack_tokens(mine)
            if v == "reason" and "strict" in views and self.view("strict") != shown.get("strict"):
                continue  # the strict view differs, and says more
            if mine == self.view(v):
                if v == "tokens":
                    return None  # as compare: every other view is made from them
                continue
            return self._classify(v, mine)
        return None

    def _classify(self, view: str, theirs: Any) -> Mismatch:
        """The mismatch at ``view``, by the method named after it."""
        by_view: Callable[[Any], Mismatch] = getattr(self, "_" + view)
        return by_view(theirs)

    def _tokens(self, theirs: tuple[Token, ...]) -> Mismatch:
        for i, (r, d) in enumerate(zip(self.tokens, theirs, strict=False)):
            if r == d:
                continue
            detail = f"at byte {r.start}: reference {_tok(r)}, decoder {_tok(d)}"
            if r.kind == "char" and d.kind == "char":
                return ("different-code-point", i, "tokens", detail)
            if r.kind == "char":
                return ("rejects-well-formed", i, "tokens", detail)
            if d.kind == "char":
                return ("accepts-ill-formed", i, "tokens", detail)
            if (r.start, r.end) != (d.start, d.end):
                return ("different-replacement", i, "tokens", detail)
            return ("different-reason", i, "tokens", detail)
        # Both tile the same input, so a shorter list differs above; be safe anyway.
        i = min(len(self.tokens), len(theirs)) - 1
        return ("different-replacement", max(i, 0), "tokens", "different number of tokens")

    def _span_pair(self, a: tuple[int, int] | None, b: tuple[int, int] | None,
                   view: str) -> Mismatch:
        detail = f"reference {_span(a)}, decoder {_span(b)}"
        if a is None:
            assert b is not None
            return ("rejects-well-formed", self.token_at(b[0]), view, detail)
        if b is None or b[0] > a[0]:
            return ("accepts-ill-formed", self.token_at(a[0]), view, detail)
        if b[0] < a[0]:
            return ("rejects-well-formed", self.token_at(b[0]), view, detail)
        return ("different-error-offset", self.token_at(a[0]), view, detail)

    def _strict(self, theirs: tuple[int, int] | None) -> Mismatch:
        return self._span_pair(self.view("strict"), theirs, "strict")

    def _spans(self, theirs: tuple[tuple[int, int], ...]) -> Mismatch:
        mine = self.view("spans")
        k = _prefix(mine, theirs)
        a = mine[k] if k < len(mine) else None
        b = theirs[k] if k < len(theirs) else None
        return self._span_pair(a, b, "spans")

    def _reason(self, theirs: str | None) -> Mismatch:
        mine = self.view("reason")
        first = self.first_error()
        detail = f"first error's reason: reference {mine}, decoder {theirs}"
        if mine is None:
            return ("rejects-well-formed", 0, "reason", detail)
        if theirs is None:
            return ("accepts-ill-formed", first, "reason", detail)
        return ("different-reason", first, "reason", detail)

    def _accept(self, theirs: bool) -> Mismatch:
        """A validator says only yes or no. It accepted ill-formed input: the
        anchor is the reference's first error. It rejected well-formed input: it
        says not where, so the anchor is the first character that is not ASCII (a
        minimized input starts near it; ASCII is rarely what a validator trips on),
        or the first token when all are ASCII."""
        detail = (f"reference {'accepts' if not theirs else 'rejects'}, "
                  f"decoder {'accepts' if theirs else 'rejects'}")
        if theirs:
            return ("accepts-ill-formed", self.first_error(), "accept", detail)
        first = next((i for i, t in enumerate(self.tokens)
                      if t.value is None or t.value > 0x7F), 0)
        return ("rejects-well-formed", first, "accept", detail)

    def _replace(self, theirs: tuple[int, ...]) -> Mismatch:
        """The replace view shows no offsets, so an output mismatch is mapped back to
        the reference's tokens by the most economical explanation: a U+FFFD that
        swallowed bytes (or one too many) is blamed on the run of errors it belongs
        to, not on the character that happens to be misaligned after it. From the
        first mismatch (:meth:`_replace_first_mismatch`), which is exact while every
        U+FFFD is a replacement and every other value the decoder gives for an error
        is one its bytes spell; where the input holds a literal U+FFFD (one of the
        decoder's can line up with it), or the decoder gives a value no bytes there
        spell (an extra output, not an error's bytes taken as a character), a
        cheapest alignment decides (:meth:`_replace_alignment`)."""
        mine = self.view("replace")  # index k is reference token k
        k = _prefix(mine, theirs)
        x = theirs[k] if k < len(theirs) else None
        detail = (f"output {k}: reference {_cp(mine[k] if k < len(mine) else None)}, "
                  f"decoder {_cp(x)}")
        if (any(t.value == REPLACEMENT and t.kind == "char" for t in self.tokens)
                or self._unspelled(theirs, k)):
            found = self._replace_alignment(theirs)
            if found is not None:
                return (found[1], found[0], "replace", detail)
        return (*self._replace_first_mismatch(theirs, k), "replace", detail)

    def _unspelled(self, theirs: tuple[int, ...], k: int) -> bool:
        """Is the decoder's output at the first mismatch ``k`` a value other than
        U+FFFD where the reference has an error (or nothing), which no run of errors
        starting there spells (:func:`_spelled`)? Then the first mismatch can only
        guess what it belongs to."""
        toks = self.tokens
        if k >= len(theirs) or theirs[k] == REPLACEMENT:
            return False
        if k >= len(toks):
            return True
        if toks[k].kind == "char":
            return False
        # a byte passed through as Latin-1 is its own value too (bytes-as-latin1)
        return self._spelling_run(k, {theirs[k]}) is None and not (
            toks[k].end - toks[k].start == 1 and self.data[toks[k].start] == theirs[k])

    def _spelling_run(self, i: int, values: set[int]) -> int | None:
        """The end (exclusive token index) of the shortest run of errors from token
        ``i`` whose bytes spell one of ``values`` (:func:`_spelled`), else None."""
        toks = self.tokens
        j = i
        while j < len(toks) and toks[j].kind != "char" and toks[j].end - toks[i].start <= 6:
            if _spelled(self.data[toks[i].start : toks[j].end]) in values:
                return j + 1
            j += 1
        return None

    #: Edits of the replace view's alignment, in the order a tie is broken.
    _EDITS = ("accepts-ill-formed", "different-replacement", "rejects-well-formed",
              "different-code-point")

    def _replace_alignment(self, theirs: tuple[int, ...]) -> tuple[int, str] | None:
        """:meth:`_py_replace_alignment`, in C (``engine/_screen.c``: ``align``)
        where the values are plain ints, as they are from every decoder."""
        toks = self.tokens
        if (len(toks) + 1) * (len(theirs) + 1) > 20_000:
            return None
        got = _align(self.data, bytes([t.kind != "char" for t in toks]),
                     [t.value for t in toks], [t.start for t in toks], [t.end for t in toks],
                     theirs)
        if got is NotImplemented:
            return self._py_replace_alignment(theirs)
        return None if got is None else (got[0], self._EDITS[got[1]])

    def _py_replace_alignment(self, theirs: tuple[int, ...]) -> tuple[int, str] | None:
        """(The definition ``align`` in C is held to by tests/engine/test_judge.py.)
        The first edit (reference token, class) of a cheapest alignment of the
        decoder's output with the reference's tokens, the earliest one among equals.

        Each token accounts for a stretch of the output. Free: a character for
        itself, an error for one U+FFFD. One edit each: a character for another
        value (a U+FFFD: it was rejected - or, right after an error, swallowed by
        it, and that error is blamed; else a different code point); a character
        for nothing, swallowed by the error right before it (dropped costs two: a
        literal U+FFFD beside a run of errors merged into one U+FFFD is the merge,
        not the literal one lost); an error for nothing, or a run of errors for one
        U+FFFD (a different replacement: an edit for each error that lost its own,
        so that beside a literal U+FFFD, errors dropped are never a merge and the
        literal one lost); a run of errors for one other value (the bytes were
        accepted); an output no token accounts for (an extra U+FFFD or another
        value beside an error that kept its own: a different replacement, blamed on
        the error nearest to where it is). A run of errors for a value its
        bytes do not spell (by the bit layout alone: :func:`_spelled`) costs two
        (and, being also a merge, one more for each error after the first):
        so a decoder that decodes C0 80 to U+0000 is blamed for exactly that, not
        for a neighbouring error whose U+FFFD the alignment could move onto it.

        Why an alignment: the first mismatch misleads when the input holds a
        literal U+FFFD - a decoder that swallows the byte after a truncated
        sequence turns the EF BF BD after it into three U+FFFD, one of which lines
        up with the literal one, and the mismatch lands on the next character.
        A dynamic program over (tokens, outputs) in flat int arrays: about 200 µs on
        40 bytes of fuzz input, paid only where a literal U+FFFD is (see
        :meth:`_replace`), and bounded: beyond the bound the first mismatch decides
        (None)."""
        toks = self.tokens
        data = self.data
        n_t, n_p = len(toks), len(theirs)
        width = n_p + 1
        if (n_t + 1) * width > 20_000:
            return None
        err = [t.kind != "char" for t in toks]
        value = [t.value for t in toks]
        run_end = [0] * n_t  # the end of the run of errors starting at each error
        end = n_t
        for i in range(n_t - 1, -1, -1):
            if not err[i]:
                end = i
            run_end[i] = end if err[i] else i
        # near[t]: the error nearest to the gap before token t (the earlier on a
        # tie), or -1: what an output inserted there is blamed on
        after = [-1] * (n_t + 1)  # the first error at or after t
        for i in range(n_t - 1, -1, -1):
            after[i] = i if err[i] else after[i + 1]
        near = [-1] * (n_t + 1)
        before = -1  # the last error before t
        for i in range(n_t + 1):
            f = after[i]
            near[i] = f if before < 0 or (f >= 0 and f - i < i - 1 - before) else before
            if i < n_t and err[i]:
                before = i
        # An edit is one int, anchor * 4 + rank (_EDITS), so that the earliest
        # anchor, then the rank, wins a tie; NONE: no edit yet.
        acc, rep, rej, cpt = 0, 1, 2, 3
        big = 1 << 62
        none = big - 1
        cost = [big] * ((n_t + 1) * width)
        first = [none] * ((n_t + 1) * width)
        cost[0], first[0] = 0, none

        def relax(i: int, c: int, f: int) -> None:
            if c < cost[i] or (c == cost[i] and f < first[i]):
                cost[i], first[i] = c, f

        for t in range(n_t + 1):
            row = t * width
            for p in range(n_p + 1):
                c = cost[row + p]
                if c == big:
                    continue
                f = first[row + p]
                if p < n_p:
                    y = theirs[p]
                    # an output no token accounts for
                    a = near[t]
                    if a >= 0:  # the error still has its own output: this is more
                        code = a * 4 + rep
                    else:
                        code = min(t, max(n_t - 1, 0)) * 4 + (rej if y == REPLACEMENT else cpt)
                    relax(row + p + 1, c + 1, f if f != none else code)
                else:
                    y = None
                if t == n_t:
                    continue
                nxt = row + width + p  # (t + 1, p)
                if not err[t]:
                    swallowed = t > 0 and err[t - 1]
                    if y is not None:
                        if y == value[t]:
                            relax(nxt + 1, c, f)
                        else:
                            if y == REPLACEMENT:
                                code = (t - 1) * 4 + rep if swallowed else t * 4 + rej
                            else:
                                code = t * 4 + cpt
                            relax(nxt + 1, c + 1, f if f != none else code)
                    # a character for nothing: swallowed by the error before it (one
                    # edit), or dropped (two: never cheaper than merging a run of
                    # errors, which a literal U+FFFD beside the run would tie with)
                    code = (t - 1) * 4 + rep if swallowed else t * 4 + rej
                    relax(nxt, c + (1 if swallowed else 2), f if f != none else code)
                    continue
                relax(nxt, c + 1, f if f != none else t * 4 + rep)
                if y is None:
                    continue
                if y == REPLACEMENT:
                    relax(nxt + 1, c, f)
                    code = t * 4 + rep
                    for j in range(t + 2, run_end[t] + 1):
                        # as many edits as errors that lost their own U+FFFD
                        relax(j * width + p + 1, c + j - t - 1, f if f != none else code)
                else:
                    code = t * 4 + acc
                    for j in range(t + 1, run_end[t] + 1):
                        spelled = _spelled(data[toks[t].start : toks[j - 1].end]) == y
                        # unspelled, it is also a merge: an edit for each further error
                        relax(j * width + p + 1, c + (1 if spelled else 1 + j - t),
                              f if f != none else code)
        last = n_t * width + n_p
        if cost[last] == big or first[last] == none:
            return None
        return first[last] // 4, self._EDITS[first[last] % 4]

    def _replace_first_mismatch(self, theirs: tuple[int, ...], k: int) -> tuple[str, int]:
        """The blame by the first mismatch ``k``, for outputs too long to align."""
        mine = self.view("replace")
        toks = self.tokens
        r = toks[k] if k < len(toks) else None
        x = theirs[k] if k < len(theirs) else None
        if r is None:  # the decoder produced more output
            return ("different-replacement" if x == REPLACEMENT else "accepts-ill-formed",
                    self.last_error())
        rest = [t.value for t in toks[k:] if t.kind == "char"]
        prev = k - 1 if k > 0 and toks[k - 1].kind != "char" else k
        if r.kind != "char":
            if x is None:
                return ("different-replacement", prev)
            m = k
            while m < len(toks) and toks[m].kind != "char":
                m += 1
            # Accepted: the error's bytes (with errors right after it) spell x, or
            # became x and the rest lines up again, or x is nowhere after it.
            if any(_spelled(self.data[r.start : toks[j].end]) == x for j in range(k, m)):
                return ("accepts-ill-formed", k)
            if theirs[k + 1 :] == mine[m:] or x not in rest:
                return ("accepts-ill-formed", k)
            return ("different-replacement", prev)
        if x == REPLACEMENT:
            if prev != k:
                return ("different-replacement", prev)
            return ("rejects-well-formed", k)
        if x is None or (len(rest) > 1 and x == rest[1]):
            # The reference's character k is missing: an earlier U+FFFD swallowed it
            # (blame that error run), or the decoder dropped it.
            before = [i for i in range(k) if toks[i].kind != "char"]
            if before:
                return ("different-replacement", before[-1])
            return ("rejects-well-formed", k)
        return ("different-code-point", k)

    def _ignore(self, theirs: tuple[int, ...]) -> Mismatch:
        mine = self.view("ignore")
        k = _prefix(mine, theirs)
        x = theirs[k] if k < len(theirs) else None
        detail = (f"output {k}: reference {_cp(mine[k] if k < len(mine) else None)}, "
                  f"decoder {_cp(x)}")
        if theirs == self.view("replace"):
            # One U+FFFD per error (a decoder whose ignore mode substitutes, met on
            # nearly every fuzz input): the first error is the earliest any
            # alignment can insert at, and U+FFFD is all it kept.
            return ("different-replacement", self.first_error(), "ignore", detail)
        inserted = self._inserted_at(theirs)
        if inserted is not None:
            # of the errors an alignment could give the extra values to, the first
            # whose bytes spell one of them: its decoding explains them (C0 BD is
            # the U+003D after FE, not FE)
            kept = Counter(theirs)
            kept.subtract(mine)
            values = {v for v, n in kept.items() if n > 0 and v != REPLACEMENT}
            if values:
                inserted = next((i for i in range(inserted, len(self.tokens))
                                 if self.tokens[i].kind != "char"
                                 and self._spelling_run(i, values) is not None), inserted)
            return (_kept_class(theirs, mine), inserted, "ignore", detail)
        if k >= len(mine):
            return (_kept_class(theirs[k:], ()), self.last_error(), "ignore", detail)
        idx = [i for i, t in enumerate(self.tokens) if t.kind == "char"][k]
        if x is None or (k + 1 < len(mine) and mine[k + 1] == x):
            return ("rejects-well-formed", idx, "ignore", detail)
        return ("different-code-point", idx, "ignore", detail)

    def _inserted_at(self, theirs: tuple[int, ...]) -> int | None:
        """If ``theirs`` is the reference's characters in order with extra values only
        where the reference has errors (a decoder that keeps something for an error
        the ignore view drops), the index of the first error token that got some.

        An alignment, not a first-mismatch guess: with a literal U+FFFD in the input,
        an inserted U+FFFD can line up with it and make the mismatch appear later, at
        a character that is not to blame. ``reach`` maps each output position an
        alignment can reach to the earliest insertion on the way (None: none yet).
        Linear in the output per token: an error token lets every position at or
        after a reachable one be reached, so one sweep with a running minimum does it.
        Bounded: the ignore view is compared on fuzz-sized inputs."""
        n = len(theirs)
        if n * len(self.tokens) > 250_000:
            return None
        never = len(self.tokens)
        # reach[p]: the earliest insertion on the way to output position p
        # (``never``: none yet; None: not reachable)
        reach: list[int | None] = [None] * (n + 1)
        reach[0] = never
        lo = 0  # no position below lo is reachable
        for t, tok in enumerate(self.tokens):
            if tok.kind == "char":
                value = tok.value
                nxt: list[int | None] = [None] * (n + 1)
                new_lo = n + 1
                for p in range(lo, n):
                    f = reach[p]
                    if f is not None and theirs[p] == value:
                        nxt[p + 1] = f
                        if p + 1 < new_lo:
                            new_lo = p + 1
                if new_lo > n:
                    return None
                reach, lo = nxt, new_lo
                continue
            # An error: stay (keeping the insertion so far), or take any number of
            # outputs (the first insertion is this token unless there was one before).
            best = None  # min over reachable p < q of the insertion taking outputs p..q
            for q in range(lo, n + 1):
                f = reach[q]
                if best is not None and (f is None or best < f):
                    reach[q] = best
                if f is not None:
                    cand = t if f == never else f
                    if best is None or cand < best:
                        best = cand
        f = reach[n]
        return None if f is None or f == never else f

    def _escape(self, theirs: tuple[int, ...]) -> Mismatch:
        owner: list[int] = []
        for i, t in enumerate(self.tokens):
            owner.extend([i] * (1 if t.kind == "char" else t.end - t.start))
        mine = self.view("escape")
        k = _prefix(mine, theirs)
        x = theirs[k] if k < len(theirs) else None
        detail = (f"output {k}: reference {_cp(mine[k] if k < len(mine) else None)}, "
                  f"decoder {_cp(x)}")
        # what an error becomes: its bytes escaped, or (a decoder that substitutes
        # here) U+FFFD - a replacement, not a character
        x_err = x is not None and (0xDC80 <= x <= 0xDCFF or x == REPLACEMENT)
        if k >= len(mine):
            klass = "different-replacement" if x_err else "accepts-ill-formed"
            return (klass, self.last_error(), "escape", detail)
        i = owner[k]
        r = self.tokens[i]
        if r.kind == "char":
            klass = "rejects-well-formed" if x is None or x_err else "different-code-point"
        else:
            klass = "different-replacement" if x is None or x_err else "accepts-ill-formed"
        return (klass, i, "escape", detail)


def _kept_class(theirs: Sequence[int], mine: Sequence[int]) -> str:
    """The class of an ignore-view output that is the reference's characters plus
    values kept for errors: ``theirs`` less ``mine`` as multisets is exactly what
    was kept (whichever alignment). All U+FFFD: a decoder that substitutes where
    errors are to be dropped (PyICU's "ignore"), a difference in the number of
    U+FFFD; anything else is an error's bytes decoded as a character."""
    kept = Counter(theirs)
    kept.subtract(mine)
    values = {v for v, n in kept.items() if n > 0}
    return "different-replacement" if values == {REPLACEMENT} else "accepts-ill-formed"


def _spelled(seq: bytes) -> int | None:
    """The value ``seq`` spells by the bit layout of RFC 2279 section 2 alone (a lead
    announcing its length, that many continuation bytes, the x bits concatenated),
    whatever the profile forbids (overlongs, surrogates, values past U+10FFFF), or
    None when it is not one such sequence: what a decoder that accepted ``seq``
    most plausibly made of it."""
    if not seq:
        return None
    lead = seq[0]
    if lead < 0x80:
        return lead if len(seq) == 1 else None
    n = 8 - (lead ^ 0xFF).bit_length()  # the lead's leading ones: the length
    if not 2 <= n <= 6 or len(seq) != n:
        return None
    value = lead & (0x7F >> n)
    for b in seq[1:]:
        if b & 0xC0 != 0x80:
            return None
        value = value << 6 | b & 0x3F
    return value


def _prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _cp(c: int | None) -> str:
    return "nothing" if c is None else format_codepoint(c)


def _span(s: tuple[int, int] | None) -> str:
    return "no error" if s is None else f"error [{s[0]},{s[1]})"


def _tok(t: Token) -> str:
    if t.kind == "char":
        return f"{format_codepoint(t.value or 0)} [{t.start},{t.end})"
    extra = f" {t.reason}" if t.reason else ""
    return f"{t.kind} [{t.start},{t.end}){extra}"

