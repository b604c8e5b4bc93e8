"""The differential engine: run decoders on one input and name where they part.

For one input, every selected decoder runs once, and each is compared with the
reference of the profile *and policy* it claims (``ref:<profile>:<policy>``), at the
views both can show (:mod:`utf8fuzz.outcome`). Differences that the specs decide
between profiles are never seen: an rfc2279 decoder is judged by the rfc2279
reference, so its accepting a 5-byte form is expected, not a bug.

Peers. Decoders that claim the same profile and policy are compared with each
other only through their reference: the reference shows every view, so whenever two
peers disagree at a view they share, at least one of them disagrees with the
reference there, and the divergence names exactly the ones that are wrong.

The first difference. Views are tried from the most detailed down (tokens, spans,
strict, reason, replace, ignore, escape); the first view that differs decides. Its
first differing position is mapped back to a *reference token* (the anchor): the
class says what the decoder did there (accepted an error, rejected a character,
...), and the anchor's bytes give the spec feature (:mod:`.signature`).

Grouping. Decoders that differ from the same reference in the same class and feature
form one divergence, whose signature lists them all; the byte offset is recorded,
never part of the name.

Incremental decoders. A difference of an ``incremental`` decoder is classed
``incremental-differs`` when a one-shot decoder of the same family (the name's part
before the first ``:``) and profile ran on the input and does *not* diverge in the
same way; otherwise the incremental decoder has the same bug as its one-shot sibling
and gets the ordinary class.

Speed. A fuzz loop calls :meth:`Differ.run` thousands of times per second, so the
common case (everything agrees) is cheap: each reference walks the input once, in
C over its profile's compiled table (:mod:`utf8fuzz.profiles.walk`, kept equal to
the Python transcription by tests), and its views are computed on first use; a
screen's text view is compared as one ``str`` with the reference's text; a decoder
showing tokens is compared by one tuple equality; classification only runs on a
difference, and outcomes are only built when someone asks for them
(:attr:`Result.outcomes`). The loop over the screens and their comparison is C
(:func:`utf8fuzz.profiles.walk.screen_many`), and :meth:`Differ.run_many` runs it
over a batch of inputs decoder-major, for warm caches. Decoders with known bugs differ on
nearly every fuzz input, so a difference is cheap to name too: a complete
screen is judged as the dict it is, a feature needs one token of the walk, and
the differences are grouped into :class:`Divergence` objects only when someone
asks (:attr:`Result.divergences`); the fuzz loop asks only for the run's
interned signatures (:meth:`Result.signature_set`).

Two tiers (screening). A decoder may offer :meth:`~utf8fuzz.decoders.base.Decoder.screen`:
a few views from its cheapest library call. When the differ screens an input, such a
decoder is first compared at the screened views it shares with the reference; if all
are equal it agrees on this input, its full outcome is never built, and
:attr:`Result.outcomes` holds a partial outcome of just the screened views (what was
observed). On any mismatch, or a screen that says None, the decoder is decoded and
compared in full, exactly as without screening, so every difference reported comes
from full outcomes - except where the screen *is* the full outcome
(``screen_complete``), which is judged as it is. The price: a view a decoder shows
but its screen leaves out is compared only on inputs decoded in full.
``full_every=N`` decodes every Nth input in full (a deterministic counter; the
first input is one of them), so such a difference is still found, at 1/N of the
rate; a decoder that offers :meth:`~utf8fuzz.decoders.base.Decoder.complete_screen`
gives every view through it there instead, judged as a complete screen is.
``full_every=1`` (the default, for the API, the CLI, replay) never screens; the
fuzz loop passes its own (see :mod:`.finder`). :meth:`Differ.signatures` - the
minimizer's predicate - and ``run(data, full=True)`` always compare in full.

Batches. A differ made with ``batch=True`` (the fuzz loop's) leaves decoders that
say ``batched`` (out of process: node, isolated plug-ins) to :meth:`Differ.run_batch`,
which gives each of them many inputs in one ``decode_many``; ``run(data, full=True)``
still runs them, so a signature is always named from a full run.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.signature import Signature, failure_feature, feature_of
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
from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles.walk import screen_many

_ORDER = VIEWS  # most detailed first
_new_tuple = tuple.__new__


class Difference(NamedTuple):
    """One decoder against its reference on one input (a NamedTuple: the fuzz loop
    makes one per divergent decoder per input, known divergences included)."""

    decoder: str
    profile: str
    klass: str
    feature: str
    offset: int
    view: str
    detail: str


class Divergence(NamedTuple):
    """Decoders that differ from one reference in one class and feature."""

    signature: Signature
    reference: str
    offset: int
    view: str
    detail: str
    differences: tuple[Difference, ...]

    @property
    def decoders(self) -> tuple[str, ...]:
        return self.signature.decoders


class Result:
    """What the differ saw on one input.

    ``outcomes`` has every decoder's outcome, the references' included. It is built
    on first access: in the fuzz loop nobody asks for it unless something diverged,
    and a partial outcome per screened decoder per input was a measurable share of
    the budget. ``walks`` holds each reference's walk (:mod:`utf8fuzz.profiles.walk`):
    its coverage features and views, without building an outcome.
    """

    __slots__ = ("_diffs", "_divergences", "_group", "_lazy", "_outcomes", "_walks", "data",
                 "full", "references")

    def __init__(self, data: bytes, outcomes: dict[str, Outcome],
                 references: Mapping[tuple[str, str], str],
                 divergences: list[Divergence] | None = None, *, full: bool = True,
                 walks: dict[tuple[str, str], Any]
                 | tuple[tuple[tuple[str, str], ...], tuple[Any, ...]] | None = None,
                 screened: Iterable[tuple[Decoder, dict[str, Any]]] = (),
                 oracles: dict[tuple[str, str], Reference] | None = None) -> None:
        self.data = data
        self._outcomes = outcomes
        self.references = references
        self._divergences = divergences if divergences is not None else []
        # the differences found, grouped into divergences when first asked for
        self._diffs: list[Difference] = []
        self._group: _Grouper | None = None
        #: False when screens were used: a decoder that agreed at its screened views has
        #: a partial outcome here, and its other views were not compared on this input.
        self.full = full
        # a dict, or (keys, walks) made a dict when asked (most results never are)
        self._walks = walks if walks is not None else {}
        # what outcomes are built from: the references' walks (each walked by the
        # reference of its key in oracles) and the screens that agreed
        self._lazy: tuple[dict[tuple[str, str], Reference],
                          Iterable[tuple[Decoder, dict[str, Any]]]] | None = (
            oracles or {}, screened)

    @property
    def walks(self) -> dict[tuple[str, str], Any]:
        """Each reference's walk of the input, by (profile, policy)."""
        w = self._walks
        if type(w) is tuple:
            w = self._walks = dict(zip(*w, strict=True))
        return w

    @property
    def outcomes(self) -> dict[str, Outcome]:
        if self._lazy is not None:
            oracles, screened = self._lazy
            out: dict[str, Outcome] = {}
            for key, walk in self.walks.items():
                ref = oracles[key]
                out[ref.name] = walk.outcome(ref._provenance())
            for d, seen in screened:
                packed = seen.get("tokens")
                out[d.name] = (
                    Outcome(len(self.data), views=seen, provenance=d._provenance())
                    if type(packed) is not bytes  # else: every token, so every view
                    else _packed_outcome(packed, self.data, d._provenance()))
            out.update(self._outcomes)
            self._outcomes = out
            self._lazy = None
        return self._outcomes

    @property
    def divergences(self) -> list[Divergence]:
        """The divergences, grouped from the differences on first access (the fuzz
        loop asks :meth:`signature_set` instead, for nearly every input)."""
        if self._group is not None:
            self._divergences = self._group.divergences(self._diffs)
            self._group = None
        return self._divergences

    @divergences.setter
    def divergences(self, value: list[Divergence]) -> None:
        self._divergences, self._group = value, None

    @property
    def diverged(self) -> bool:
        """Some decoder differed (without grouping the differences)."""
        return bool(self._diffs if self._group is not None else self._divergences)

    def signature_set(self) -> list[Signature]:
        """The signatures of :attr:`divergences`, without making them: what the fuzz
        loop checks against the signatures it knows, on nearly every input."""
        if self._group is not None:
            return self._group.signatures(self._diffs)
        return [d.signature for d in self._divergences]

    @property
    def signatures(self) -> frozenset[str]:
        return frozenset(str(s) for s in self.signature_set())

    def get(self, signature: str) -> Divergence | None:
        for d in self.divergences:
            if str(d.signature) == signature:
                return d
        return None


class Differ:
    """Compare ``decoders`` with their references, input by input.

    ``views`` narrows the comparison (the per-mode fuzz targets use it: a ``strict``
    target compares only strict/spans/reason). Decoders that *are* references are
    the oracle and are not judged; decoders whose profile has no reference here are
    listed in :attr:`unjudged`.
    """

    def __init__(self, decoders: Iterable[Decoder], views: Iterable[str] | None = None,
                 *, full_every: int = 1, batch: bool = False) -> None:
        if full_every < 1:
            raise ValueError(f"full_every must be at least 1, got {full_every}")
        self.full_every = full_every
        self.screened = 0  # inputs compared through screens (for stats and tests)
        self._count = 0
        self.views = frozenset(views) if views is not None else frozenset(VIEWS)
        unknown = self.views - set(VIEWS)
        if unknown:
            raise ValueError(f"unknown view(s): {', '.join(sorted(unknown))}")
        self.decoders: list[Decoder] = []
        self.unjudged: list[Decoder] = []
        self.references: dict[tuple[str, str], Reference] = {}
        for d in decoders:
            if isinstance(d, Reference):
                continue
            if d.profile not in REGISTRY:
                self.unjudged.append(d)
                continue
            key = (d.profile, d.policy)
            if key not in self.references:
                self.references[key] = Reference(*key)
            self.decoders.append(d)
        self.decoders.sort(key=lambda d: d.name)
        self._compared = tuple(v for v in _ORDER if v in self.views)
        self._shared = {
            d.name: tuple(v for v in self._compared if v in d.shows)
            for d in self.decoders
        }
        # Decoders that screen, with the views their screens are compared at: every
        # compared view a screen gives, not only those the decoder declares (a
        # strict-style decoder's text on input it accepts, as _judge does); and for
        # a complete screen, the order _walk.judge names a difference in.
        compared = frozenset(self._compared)
        # a complete screen may give its packed tokens alone (Decoder.screen): where
        # tokens are not compared, the views are made from them
        whole = (lambda sc: sc) if "tokens" in compared else _views_from_tokens
        self._screens = {
            d.name: (whole(d.screen) if d.screen_complete else d.screen, compared,
                     self._compared if d.screen_complete else None)
            for d in self.decoders
            if type(d).screen is not Decoder.screen and self._shared[d.name]
        }
        # Decoders whose screen is partial but which offer a complete one for the
        # sampled inputs (Decoder.complete_screen)
        self._complete_screens = {
            d.name: (whole(d.complete_screen), compared, self._compared)
            for d in self.decoders
            if not d.screen_complete and self._shared[d.name]
            and getattr(d.complete_screen, "__func__", None) is not Decoder.complete_screen
        }
        #: Out-of-process decoders left to :meth:`run_batch` (``batch=True``).
        self.batched = tuple(d for d in self.decoders if batch and d.batched)
        # The loop's plans: each decoder with its reference's index, its screen (or
        # None) and the views that screen is compared at - looked up once, not per
        # input. Which plan an input gets is decided in run().
        self._keys = tuple(self.references)
        self._oracles = tuple(self.references.values())
        # the walkers themselves where there is one (a C callable: no Python frame)
        self._walkers = tuple(r._walker or r.walk for r in self._oracles)
        index = {k: i for i, k in enumerate(self._keys)}
        no_screen = (None, frozenset[str](), None)

        def plan(entries: Iterable[tuple[Decoder, Any, frozenset[str], Any]]) -> _Plan:
            rows = tuple((d, index[d.profile, d.policy], sc, v, o) for d, sc, v, o in entries)
            return _Plan(rows, tuple((sc, i, v, o) for _, i, sc, v, o in rows))

        # run(full=True): every decoder (the batched ones too), no screens
        self._full_plan = plan((d, *no_screen) for d in self.decoders)
        mine = [d for d in self.decoders if d not in self.batched]
        # full_every=1: every decoder this differ runs per input, in full
        self._unscreened_plan = plan((d, *no_screen) for d in mine)
        # a screened input
        self._plan = plan((d, *(self._screens.get(d.name) or no_screen)) for d in mine)
        # a sampled input (one in full_every): in full, except for decoders whose
        # screen is their whole outcome (``screen_complete``)
        self._sample_plan = plan(
            (d, *((self._screens.get(d.name) or no_screen) if d.screen_complete
                  else self._complete_screens.get(d.name) or no_screen))
            for d in mine)
        # shared by every Result (read-only: no copy per input)
        self._names = MappingProxyType({k: r.name for k, r in self.references.items()})
        self._policy = {d.name: d.policy for d in self.decoders}
        self._grouper = _Grouper(self._names, self._policy)
        self._incr = frozenset(d.name for d in self.decoders if d.incremental)
        # one-shot siblings of incremental decoders, by (family, profile)
        self._oneshot: dict[tuple[str, str], list[str]] = {}
        for d in self.decoders:
            if not d.incremental:
                fam = (d.name.split(":", 1)[0], d.profile)
                self._oneshot.setdefault(fam, []).append(d.name)

    @property
    def profiles(self) -> list[str]:
        return sorted({p for p, _ in self.references})

    def run(self, data: bytes, *, full: bool = False) -> Result:
        """Compare every decoder on ``data``; ``full`` forces full outcomes (no
        screening) whatever ``full_every`` says, without advancing its counter, and
        runs the batched decoders too."""
        return self.run_many((data,), full=full)[0]

    @property
    def walk_keys(self) -> tuple[tuple[str, str], ...]:
        """The (profile, policy) of each reference, in :meth:`walk`'s order."""
        return self._keys

    def walk(self, data: bytes) -> tuple[Any, ...]:
        """Every reference's walk of ``data``, in :attr:`walk_keys`' order, as
        :meth:`run_many` takes them (the fuzz loop needs them at once: coverage)."""
        return tuple([w(data) for w in self._walkers])

    def run_many(self, inputs: Sequence[bytes], walks: Sequence[tuple[Any, ...]] | None = None,
                 *, full: bool = False) -> list[Result]:
        """:meth:`run` on each input, in order (``full_every`` counts each one), with
        the screens called decoder-major: each decoder screens every input before
        the next decoder starts (:func:`~utf8fuzz.profiles.walk.screen_many`). The
        fuzz loop batches inputs for this; see :mod:`.finder`. ``walks`` are the
        inputs' :meth:`walk`, when the caller has them already."""
        plans = tuple([self._choose(full) for _ in inputs])
        inputs = tuple(inputs)
        walks = tuple(walks) if walks is not None else tuple(map(self.walk, inputs))
        # every screen, compared with its reference's walk (see walk.screen_many)
        screened = screen_many(inputs, walks, tuple([p.screens for p, _ in plans]))
        # The decoders that did not agree, decoded in full where their screen is not
        # their whole outcome, and judged - decoder-major too, for the same reason:
        # one decoder's misses over the batch, then the next decoder's.
        missed: dict[int, list[tuple[int, Found | None]]] = {}
        for j, (_, misses, found) in enumerate(screened):
            for i, f in zip(misses, found, strict=True):
                missed.setdefault(i, []).append((j, f))
        outcomes: list[dict[str, Outcome]] = [{} for _ in inputs]
        diffs: list[list[Difference]] = [[] for _ in inputs]
        refs: list[dict[int, _Ref]] = [{} for _ in inputs]
        # each anchor's feature, once per input and reference (several decoders
        # usually differ at the same token)
        features: dict[tuple[int, int, int], tuple[str, int]] = {}
        for i in sorted(missed):
            for j, found in missed[i]:
                data = inputs[j]
                d, k, _, _, order = plans[j][0].entries[i]
                complete = order is not None  # a complete screen (or complete_screen)
                if found is not None:
                    # a complete screen, judged in C (_walk.judge) as _judge would
                    klass, idx, view, detail = found
                    feat = features.get((j, k, idx))
                    if feat is None:
                        feat = features[j, k, idx] = _feature(data, walks[j][k], idx,
                                                              self._oracles[k])
                    # (tuple.__new__: the NamedTuple's __new__ without its Python frame)
                    diffs[j].append(_new_tuple(Difference, (d.name, d.profile, klass, *feat,
                                                            view, detail)))
                    continue
                ref = refs[j].get(k)
                if ref is None:
                    ref = refs[j][k] = _Ref(data, walks[j][k], self._oracles[k])
                seen = screened[j][0][i]
                if type(seen) is dict and complete:
                    # the screen is its whole outcome: judge that (its partial
                    # outcome is made if Result.outcomes is asked for)
                    diff = self._judge(d, ref, seen)
                else:
                    # a screen that met an exception may hand over its crash outcome
                    out = outcomes[j][d.name] = (seen if type(seen) is Outcome
                                                 else d.decode(data))
                    diff = self._judge(d, ref, out)
                if diff is not None:
                    diffs[j].append(diff)
        results = []
        for j, data in enumerate(inputs):
            plan, is_full = plans[j]
            result = Result(data, outcomes[j], self._names, full=is_full,
                            walks=(self._keys, walks[j]),
                            screened=_Agreed(plan.entries, screened[j][0]),
                            oracles=self.references)
            if diffs[j]:
                result._diffs, result._group = self._incremental(diffs[j]), self._grouper
            results.append(result)
        return results

    def _choose(self, full: bool) -> tuple[_Plan, bool]:
        """The plan for the next input, and whether it is decoded in full."""
        if full:
            return self._full_plan, True
        if self.full_every > 1 and self._screens:
            full = self._count % self.full_every == 0
            self._count += 1
            if full:
                return self._sample_plan, True
            self.screened += 1
            return self._plan, False
        return self._unscreened_plan, True

    def run_batch(self, inputs: Sequence[bytes]) -> list[Result]:
        """The batched decoders on several inputs at once (one ``decode_many`` each):
        a result for each input on which one of them diverges, naming only them.

        Why: an out-of-process decoder (node, an isolated plug-in) costs a round
        trip per call, more than every in-process decoder together; in a batch it
        costs a share of one. The fuzz loop (:mod:`.finder`) runs every input
        through :meth:`run` without them and through here in batches, and re-runs
        an input in full - everything, synchronously - before it records anything,
        so a signature is always named from one full run."""
        outs = [(d, d.decode_many(inputs)) for d in self.batched]
        results = []
        for i, data in enumerate(inputs):
            refs: dict[tuple[str, str], _Ref] = {}
            outcomes: dict[str, Outcome] = {}
            diffs: list[Difference] = []
            for d, many in outs:
                key = (d.profile, d.policy)
                ref = refs.get(key)
                if ref is None:
                    r = self.references[key]
                    ref = refs[key] = _Ref(data, r.walk(data), r)
                out = outcomes[d.name] = many[i]
                diff = self._judge(d, ref, out)
                if diff is not None:
                    diffs.append(diff)
            if diffs:
                results.append(Result(
                    data, outcomes, self._names, full=False,
                    walks={k: r.walk for k, r in refs.items()}, oracles=self.references,
                    divergences=self._grouper.divergences(self._incremental(diffs))))
        return results

    def _judge(self, d: Decoder, ref: _Ref, out: Outcome | dict[str, Any]) -> Difference | None:
        """``out`` (``d``'s full outcome, or a complete screen's views) against the
        reference at every view it shows, not only those ``d`` declares for every
        input: a strict-style decoder (iconv) also shows its text on input it
        accepts, and that text must be checked too."""
        diff = (ref.compare_views(out, self._compared) if type(out) is dict
                else ref.compare(out, self._compared))
        if diff is None:
            return None
        klass, idx, view, detail = diff
        if klass in ("crash", "timeout"):
            assert isinstance(out, Outcome)
            return Difference(d.name, d.profile, klass, failure_feature(out), 0, view, detail)
        return Difference(d.name, d.profile, klass, *ref.feature(idx), view, detail)

    def signatures(self, data: bytes) -> frozenset[str]:
        """The signatures of ``data`` from full outcomes (the minimizer's predicate:
        a signature names every decoder that differs, in any view it shows)."""
        return self.run(data, full=True).signatures

    def _incremental(self, diffs: list[Difference]) -> list[Difference]:
        incr = self._incr
        if not any(x.decoder in incr for x in diffs):
            return diffs
        by_name = {x.decoder: x for x in diffs}
        out: list[Difference] = []
        for x in diffs:
            if x.decoder in incr and x.klass not in ("crash", "timeout"):
                siblings = self._oneshot.get((x.decoder.split(":", 1)[0], x.profile), [])
                same = any(
                    (s := by_name.get(n)) is not None
                    and (s.klass, s.feature) == (x.klass, x.feature)
                    for n in siblings
                )
                if siblings and not same:
                    x = Difference(x.decoder, x.profile, "incremental-differs", x.feature,
                                   x.offset, x.view, x.detail)
            out.append(x)
        return out


class _Grouper:
    """Differences into divergences: those from one reference (profile and policy)
    in one class and feature form one, named by all their decoders.

    Called for nearly every fuzz input (known divergences too), so it keeps one
    Signature object per signature for the whole run, and :meth:`signatures`
    names them without making the Divergence objects, which only a new signature
    (or a caller of :attr:`Result.divergences`) needs."""

    def __init__(self, names: Mapping[tuple[str, str], str], policy: dict[str, str]) -> None:
        self.names, self.policy = names, policy
        self.known: dict[tuple[tuple[str, str, str, str], tuple[str, ...]], Signature] = {}
        # the signatures of each combination of differences met (known bugs make the
        # same few on nearly every input)
        self._sets: dict[tuple[tuple[str, str, str, str], ...], list[Signature]] = {}

    def _groups(self, diffs: list[Difference]) -> dict[tuple[str, str, str, str],
                                                       list[Difference]]:
        groups: dict[tuple[str, str, str, str], list[Difference]] = {}
        policy = self.policy
        for x in diffs:
            key = (x.profile, policy[x.decoder], x.klass, x.feature)
            g = groups.get(key)
            if g is None:
                groups[key] = [x]
            else:
                g.append(x)
        return groups

    def _signature(self, key: tuple[str, str, str, str], members: list[Difference]) -> Signature:
        names = tuple(sorted([m.decoder for m in members])) if len(members) > 1 else (
            members[0].decoder,)
        sig = self.known.get((key, names))
        if sig is None:
            if len(self.known) > 1 << 14:  # a run meets few; a pathological one is bounded
                self.known.clear()
            profile, _, klass, feat = key
            sig = self.known[key, names] = Signature(profile, klass, feat, names)
        return sig

    def signatures(self, diffs: list[Difference]) -> list[Signature]:
        """The signatures of ``diffs`` (a list shared by every caller: not to be
        changed)."""
        key = tuple([(x.decoder, x.profile, x.klass, x.feature) for x in diffs])
        got = self._sets.get(key)
        if got is None:
            if len(self._sets) > 1 << 14:  # bounded, as known
                self._sets.clear()
            got = self._sets[key] = [self._signature(k, m)
                                     for k, m in self._groups(diffs).items()]
        return got

    def divergences(self, diffs: list[Difference]) -> list[Divergence]:
        groups = self._groups(diffs)
        out = []
        for key in sorted(groups):
            members = groups[key]
            if len(members) > 1:
                members.sort(key=_decoder_of)
                first = min(members, key=_offset_of)
            else:
                first = members[0]
            out.append(Divergence(self._signature(key, members), self.names[key[:2]],
                                  first.offset, first.view, first.detail, tuple(members)))
        return out


class _Plan(NamedTuple):
    """A plan of Differ.run: each decoder with its reference's index, screen (or
    None), screened views and judging order (complete screens only); and the
    (screen, index, views, order) entries that
    :func:`~utf8fuzz.profiles.walk.screen_many` runs for an input."""

    entries: tuple[tuple[Decoder, int, Any, frozenset[str], tuple[str, ...] | None], ...]
    screens: tuple[tuple[Any, int, frozenset[str], tuple[str, ...] | None], ...]


class _Agreed:
    """What each screen saw on an input, walked only when someone asks for
    :attr:`Result.outcomes`: a partial outcome for each decoder whose screen
    answered (a decoder decoded in full on this input has its full outcome
    there instead)."""

    __slots__ = ("entries", "seens")

    def __init__(self, entries: tuple[tuple[Decoder, int, Any, frozenset[str],
                                            tuple[str, ...] | None], ...],
                 seens: list[Any]) -> None:
        self.entries, self.seens = entries, seens

    def __iter__(self) -> Iterator[tuple[Decoder, dict[str, Any]]]:
        for (d, *_), seen in zip(self.entries, self.seens, strict=True):
            if type(seen) is dict:
                yield d, seen


def _feature(data: bytes, walk: Any, idx: int, reference: Reference) -> tuple[str, int]:
    """The spec feature of the walk's token ``idx`` and where it starts (0 when
    there is no such token: the empty input)."""
    tok = walk.token(idx)
    return feature_of(data, tok, reference._profile), tok.start if tok else 0


def _decoder_of(x: Difference) -> str:
    return x.decoder


def _offset_of(x: Difference) -> tuple[int, str]:
    return (x.offset, x.decoder)


# -- comparing one outcome with the reference --------------------------------------

Found = tuple[str, int, str, str]  # class, anchor token index, view, detail


class _OutcomeWalk:
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


def _views_from_tokens(screen: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """A complete ``screen`` for a differ that does not compare tokens: when it gives
    its packed tokens alone, the views are made from them."""

    def views(data: bytes) -> Any:
        seen = screen(data)
        if type(seen) is dict and len(seen) == 1 and type(seen.get("tokens")) is bytes:
            out = _packed_outcome(seen["tokens"], data)
            return {v: out.view(v) for v in VIEWS}
        return seen

    return views


def _packed_outcome(packed: bytes, data: bytes,
                    provenance: dict[str, str] | None = None) -> Outcome:
    """The outcome of a screen's packed tokens (``outcome.pack_tokens``): every view."""
    return Outcome.from_tokens(unpack_tokens(packed), len(data), provenance, data=data)


class _Ref:
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
            walk = _OutcomeWalk(walk)
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
            self._outcome = self.walk.outcome(self.reference._provenance())
        return self._outcome

    def feature(self, idx: int) -> tuple[str, int]:
        """The spec feature of reference token ``idx`` and where it starts (of the
        whole input when there is no such token), once per input: several decoders
        usually differ at the same token."""
        got = self._features.get(idx)
        if got is None:
            got = self._features[idx] = _feature(self.data, self.walk, idx, self.reference)
        return got

    def token_at(self, offset: int) -> int:
        """The index of the reference token that holds byte ``offset``."""
        return self.walk.token_index(offset)  # type: ignore[no-any-return]

    def first_error(self) -> int:
        """The index of the first error or reserved token (0 when there is none)."""
        return max(0, self.walk.first_error)

    def last_error(self) -> int:
        toks = self.tokens
        for i in range(len(toks) - 1, -1, -1):
            if toks[i].kind != "char":
                return i
        return len(toks) - 1

    # -- per view ------------------------------------------------------------------

    def compare(self, out: Outcome, views: Sequence[str]) -> Found | None:
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
            return getattr(self, "_" + v)(mine)
        return None

    def compare_views(self, shown: dict[str, Any], views: Sequence[str]) -> Found | None:
        """:meth:`compare` of a partial outcome with these views - also a screen's
        dict, judged as it is (``screen_complete``) without an Outcome made for it.
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
            return getattr(self, "_" + v)(mine)
        return None

    def _tokens(self, theirs: tuple[Token, ...]) -> Found:
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
                   view: str) -> Found:
        detail = f"reference {_span(a)}, decoder {_span(b)}"
        if a is None:
            assert b is not None
            return ("rejects-well-formed", self.token_at(b[0]), view, detail)
        if b is None or b[0] > a[0]:
            return ("accepts-ill-formed", self.token_at(a[0]), view, detail)
        if b[0] < a[0]:
            return ("rejects-well-formed", self.token_at(b[0]), view, detail)
        return ("different-error-offset", self.token_at(a[0]), view, detail)

    def _strict(self, theirs: tuple[int, int] | None) -> Found:
        return self._span_pair(self.view("strict"), theirs, "strict")

    def _spans(self, theirs: tuple[tuple[int, int], ...]) -> Found:
        mine = self.view("spans")
        k = _prefix(mine, theirs)
        a = mine[k] if k < len(mine) else None
        b = theirs[k] if k < len(theirs) else None
        return self._span_pair(a, b, "spans")

    def _reason(self, theirs: str | None) -> Found:
        mine = self.view("reason")
        first = self.first_error()
        detail = f"first error's reason: reference {mine}, decoder {theirs}"
        if mine is None:
            return ("rejects-well-formed", 0, "reason", detail)
        if theirs is None:
            return ("accepts-ill-formed", first, "reason", detail)
        return ("different-reason", first, "reason", detail)

    def _replace(self, theirs: tuple[int, ...]) -> Found:
        """The replace view shows no offsets, so an output mismatch is mapped back to
        the reference's tokens by the most economical explanation: a U+FFFD that
        swallowed bytes (or one too many) is blamed on the run of errors it belongs
        to, not on the character that happens to be misaligned after it. From the
        first mismatch (:meth:`_replace_first_mismatch`), which is exact while every
        U+FFFD is a replacement; where the input holds a literal U+FFFD, one of the
        decoder's can line up with it, and a cheapest alignment decides
        (:meth:`_replace_alignment`)."""
        mine = self.view("replace")  # index k is reference token k
        k = _prefix(mine, theirs)
        x = theirs[k] if k < len(theirs) else None
        detail = (f"output {k}: reference {_cp(mine[k] if k < len(mine) else None)}, "
                  f"decoder {_cp(x)}")
        if any(t.value == REPLACEMENT and t.kind == "char" for t in self.tokens):
            found = self._replace_alignment(theirs)
            if found is not None:
                return (found[1], found[0], "replace", detail)
        return (*self._replace_first_mismatch(theirs, k), "replace", detail)

    #: Edits of the replace view's alignment, in the order a tie is broken.
    _EDITS = ("accepts-ill-formed", "different-replacement", "rejects-well-formed",
              "different-code-point")

    def _replace_alignment(self, theirs: tuple[int, ...]) -> tuple[int, str] | None:
        """The first edit (reference token, class) of a cheapest alignment of the
        decoder's output with the reference's tokens, the earliest one among equals.

        Each token accounts for a stretch of the output. Free: a character for
        itself, an error for one U+FFFD. One edit each: a character for another
        value (a U+FFFD: it was rejected - or, right after an error, swallowed by
        it, and that error is blamed; else a different code point); a character
        for nothing (swallowed by the error right before it, or dropped); an error
        for nothing, or a run of errors for one U+FFFD (a different replacement); a
        run of errors for one other value (the bytes were accepted); an output no
        token accounts for (an extra U+FFFD, blamed on the error nearest to where
        it is; an extra value kept for an error).

        Why an alignment: the first mismatch misleads when the input holds a
        literal U+FFFD - a decoder that swallows the byte after a truncated
        sequence turns the EF BF BD after it into three U+FFFD, one of which lines
        up with the literal one, and the mismatch lands on the next character.
        A dynamic program over (tokens, outputs) in flat int arrays: about 200 µs on
        40 bytes of fuzz input, paid only where a literal U+FFFD is (see
        :meth:`_replace`), and bounded: beyond the bound the first mismatch decides
        (None)."""
        toks = self.tokens
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
                    if a >= 0:
                        code = a * 4 + (rep if y == REPLACEMENT else acc)
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
                    code = (t - 1) * 4 + rep if swallowed else t * 4 + rej
                    relax(nxt, c + 1, f if f != none else code)
                    continue
                relax(nxt, c + 1, f if f != none else t * 4 + rep)
                if y is None:
                    continue
                if y == REPLACEMENT:
                    relax(nxt + 1, c, f)
                    code = t * 4 + rep
                    for j in range(t + 2, run_end[t] + 1):
                        relax(j * width + p + 1, c + 1, f if f != none else code)
                else:
                    code = t * 4 + acc
                    for j in range(t + 1, run_end[t] + 1):
                        relax(j * width + p + 1, c + 1, f if f != none else code)
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
            # Accepted: the error's bytes became x and the rest lines up again.
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

    def _ignore(self, theirs: tuple[int, ...]) -> Found:
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

    def _escape(self, theirs: tuple[int, ...]) -> Found:
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


# -- failures for property tests ----------------------------------------------------


class DivergenceError(AssertionError):
    """Raised by :func:`assert_agree`; each signature gets its own subclass."""

    signature: str = ""


_ERROR_TYPES: dict[str, type[DivergenceError]] = {}


def error_for(div: Divergence, data: bytes) -> DivergenceError:
    """An exception of a class unique to the signature: Hypothesis tells failures
    apart by exception type and location, so its shrinker keeps different bugs apart
    (and reports each) instead of shrinking one into another."""
    sig = str(div.signature)
    cls = _ERROR_TYPES.get(sig)
    if cls is None:
        cls = type(f"Divergence_{div.signature.id}", (DivergenceError,), {"signature": sig})
        _ERROR_TYPES[sig] = cls
    return cls(f"{sig} on input {data.hex(' ').upper() or '(empty)'}: {div.detail}")


def assert_agree(result: Result) -> None:
    """Raise the first divergence of ``result`` as its signature's exception."""
    if result.divergences:
        raise error_for(result.divergences[0], result.data)
