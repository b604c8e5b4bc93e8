"""The differ: run decoders on inputs and compare each with its reference.

For one input, every selected decoder runs once, and each is compared with the
reference of the profile *and policy* it claims (``ref:<profile>:<policy>``), at the
views both can show. Differences that the specs decide between profiles are never
seen: an rfc2279 decoder is judged by the rfc2279 reference, so its accepting a
5-byte form is expected, not a bug. How a difference is named is :mod:`.classify`;
the result, grouped into divergences, is :mod:`.result`.

Peers. Decoders that claim the same profile and policy are compared with each other
only through their reference: the reference shows every view, so whenever two peers
disagree at a view they share, at least one of them disagrees with the reference
there, and the divergence names exactly the ones that are wrong.

Incremental decoders. A difference of an ``incremental`` decoder is classed
``incremental-differs`` when a one-shot decoder of the same family (its ``family``
attribute, else the name's part before the first ``:``) and profile ran on the input
and does *not* diverge in the same way; otherwise the incremental decoder has the
same bug as its one-shot sibling and gets the ordinary class.

Siblings that show positions. A view without offsets (a text: replace, ignore; a
validator's accept) says only *that* a decoder differs, and its anchor is an
alignment's best guess. Where a decoder of the same library (:func:`~utf8fuzz.decoders.base.family`:
a ``+codec`` plug-in's modes, an adapter's error modes) claims the same profile and
policy and shows positions (tokens, spans, strict, escape), and it differs on the
same input, the position-less decoder's difference takes that sibling's class,
feature and offset (the first such sibling in :data:`POSITIONED` order that
differs): the bytes are blamed where the positions are, and both are evidence of
one cause. A sibling that agrees leaves the decoder its own (aligned) anchor: a
difference only that view shows. A decoder whose best view is ``escape`` (which
bytes are ill-formed, not how they are cut into errors) takes a sibling that shows
tokens, spans or the strict span the same way; streaming decoders take streaming
siblings, one-shot decoders one-shot ones.

The boundary. Every outcome a decoder hands the differ is checked there
(:func:`utf8fuzz.outcome.checked`: spans inside the input and in order, code points
in range, no view past :func:`~utf8fuzz.outcome.output_bound`); one that fails is
a ``bad-outcome`` failure, judged like a crash: one difference, never a view's.
A user's decoder's screen is checked as it answers (:func:`.screening.decode_as_screen`).

Plans. A differ decides once, at construction, how each decoder is compared: in
full, or first through the optional speed operations of :mod:`.screening` (which
also says when each plan is used). :meth:`Differ.run` (the API, the CLI, replay,
the minimizer) compares in full unless the differ was made with ``full_every > 1``
(the fuzz loop's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import MappingProxyType
from typing import Any, cast

from utf8fuzz.decoders.base import Decoder, family
from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.classify import VIEW_ORDER, Judge, Mismatch, feature_at
from utf8fuzz.engine.result import Difference, Grouper, Result
from utf8fuzz.engine.screening import (
    AgreedScreens,
    Plan,
    decode_as_screen,
    decode_many,
    is_out_of_process,
    is_own_adapter,
    is_slow,
    judge,
    outcome_agrees,
    screen_agrees,
    screen_all,
    screen_is_whole,
    screen_many,
    screen_of,
    send_many,
    views_from_tokens,
    whole_views_of,
)
from utf8fuzz.engine.signature import FAILURES, failure_feature
from utf8fuzz.outcome import VIEWS, Outcome, checked
from utf8fuzz.profiles import REGISTRY

#: The views that show where an error is, in the order a sibling is chosen by
#: (see the module docstring): every token, every error span, the first error's
#: span, each ill-formed byte escaped.
POSITIONED: tuple[str, ...] = ("tokens", "spans", "strict", "escape")

# tuple.__new__: a NamedTuple made without its Python-level __new__ frame (the fuzz
# loop makes one per divergent decoder per input, known divergences included)
_new_tuple = tuple.__new__


class Differ:
    """Compare ``decoders`` with their references, input by input.

    ``views`` narrows the comparison (the per-mode fuzz targets use it: a ``strict``
    target compares only strict/spans/reason). Decoders that *are* references are
    the oracle and are not judged; decoders whose profile has no reference here are
    listed in :attr:`unjudged`. ``defer_out_of_process`` and ``defer_slow`` leave
    the out-of-process decoders, and those that declare themselves slow, to
    :meth:`send_out_of_process` (:attr:`deferred`: the fuzz loop's).
    """

    def __init__(self, decoders: Iterable[Decoder], views: Iterable[str] | None = None,
                 *, full_every: int = 1, defer_out_of_process: bool = False,
                 defer_slow: bool = False) -> None:
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
        self._compared = tuple(v for v in VIEW_ORDER if v in self.views)
        self._shared = {
            d.name: tuple(v for v in self._compared if v in d.shows)
            for d in self.decoders
        }
        # Decoders that screen, with the views their screens are compared at: every
        # compared view a screen gives, not only those the decoder declares (a
        # strict-style decoder's text on input it accepts, as _judge does); and for
        # a whole screen, the order the C judge names a difference in.
        compared = frozenset(self._compared)
        # a whole screen may give its packed tokens alone (see .screening): where
        # tokens are not compared, the views are made from them
        whole = (lambda sc: sc) if "tokens" in compared else views_from_tokens
        # Each decoder's screen, and whether it is whole. One that offers none is
        # screened by its own decode(), whole by construction (decode_as_screen):
        # the C loop then compares it and names its commonest mismatches too.
        self._screens: dict[str, tuple[Any, frozenset[str], tuple[str, ...] | None]] = {}
        whole_names = set()
        for d in self.decoders:
            if not self._shared[d.name]:
                continue
            sc, is_whole = screen_of(d), screen_is_whole(d)
            if sc is None:
                sc, is_whole = decode_as_screen(d), True
                if sc is None:
                    continue
            if is_whole:
                whole_names.add(d.name)
            self._screens[d.name] = (whole(sc) if is_whole else sc, compared,
                                     self._compared if is_whole else None)
        self._whole = frozenset(whole_names)
        # Whose outcomes are checked (outcome.checked) on every input: a user's
        # decoders. This project's adapters are held to the bounds by its tests, so
        # theirs are checked only in run(full=True): what the CLI shows, and every
        # input the fuzz loop records (re-run in full first), not every input.
        self._untrusted = frozenset(d.name for d in self.decoders if not is_own_adapter(d))
        # Decoders whose screen is partial but which offer every view cheaper than
        # run() for the sampled inputs (whole_views)
        self._whole_views = {
            d.name: (whole(wv), compared, self._compared)
            for d in self.decoders
            if d.name not in self._whole and self._shared[d.name]
            and (wv := whole_views_of(d)) is not None
        }
        self._incr = frozenset(d.name for d in self.decoders if d.incremental)
        # one-shot siblings of incremental decoders, by (family, profile)
        self._oneshot: dict[tuple[str, str], list[str]] = {}
        for d in self.decoders:
            if not d.incremental:
                self._oneshot.setdefault((_family(d), d.profile), []).append(d.name)
        self._family = {d.name: _family(d) for d in self.decoders if d.incremental}
        #: Each position-less decoder's siblings that show positions, best first.
        self.siblings: dict[str, tuple[str, ...]] = _siblings(self.decoders)
        #: Out-of-process decoders left to :meth:`run_out_of_process`
        #: (``defer_out_of_process=True``).
        self.out_of_process = tuple(d for d in self.decoders
                                    if defer_out_of_process and is_out_of_process(d))
        #: In-process decoders that declare themselves slow, left to it too
        #: (``defer_slow=True``; :meth:`_slow_apart`).
        self.slow_in_process = self._slow_apart() if defer_slow else ()
        #: Every decoder this differ leaves out of :meth:`run` and judges in bulk:
        #: the out-of-process ones, then the slow in-process ones.
        self.deferred = self.out_of_process + self.slow_in_process
        #: Inputs each of them decoded through :meth:`run_out_of_process` or
        #: :meth:`send_out_of_process` (after a hang, the rest of a batch is not).
        self.decoded: dict[str, int] = {d.name: 0 for d in self.deferred}
        #: The references whose walks judge them (:meth:`send_out_of_process`'s ``walks``).
        self.deferred_keys = tuple(dict.fromkeys((d.profile, d.policy) for d in self.deferred))
        # the order a batch is sent to them in (send_out_of_process): one of each
        # library in turn, the in-process ones (decoded as they are sent) last, so
        # that the other processes decode while they are
        self._send_order = _interleaved(self.out_of_process) + self.slow_in_process
        # Whose outcomes this project's code made from what the decoder said (an exec
        # client's replies, parsed: exact ints; an adapter's, in process), so that one
        # equal to the reference is known to pass outcome.checked
        # (.screening.outcome_agrees). A plug-in's own outcomes (an isolated worker's)
        # are checked and judged in full.
        self._parsed = frozenset(d.name for d in self.deferred if is_own_adapter(d))
        # a slow in-process decoder's whole screen: on the inputs it is given, its
        # one call for every view, compared with the walk in C as in run_many
        self._slow_screens = {d.name: self._screens[d.name][0] for d in self.slow_in_process
                              if d.name in self._whole}
        self._compared_set = frozenset(self._compared)
        # The loop's plans: each decoder with its reference's index, its screen (or
        # None) and the views that screen is compared at - looked up once, not per
        # input. Which plan an input gets is decided in run().
        self._keys = tuple(self.references)
        self._oracles = tuple(self.references.values())
        # the walkers themselves where there is one (a C callable: no Python frame)
        self._walkers = tuple(r.walker or r.walk for r in self._oracles)
        index = {k: i for i, k in enumerate(self._keys)}
        no_screen = (None, frozenset[str](), None)

        def plan(entries: Iterable[tuple[Decoder, Any, frozenset[str], Any]]) -> Plan:
            rows = tuple((d, index[d.profile, d.policy], sc, v, o) for d, sc, v, o in entries)
            return Plan(rows, tuple((sc, i, v, o) for _, i, sc, v, o in rows))

        # run(full=True): every decoder (the out-of-process ones too), no screens
        self._full_plan = plan((d, *no_screen) for d in self.decoders)
        mine = [d for d in self.decoders if d not in self.deferred]
        # full_every=1: every decoder this differ runs per input, in full
        self._unscreened_plan = plan((d, *no_screen) for d in mine)
        # a screened input
        self._plan = plan((d, *(self._screens.get(d.name) or no_screen)) for d in mine)
        # a sampled input (one in full_every): in full, except for decoders whose
        # screen is their whole outcome (``screen_is_whole``)
        self._sample_plan = plan(
            (d, *((self._screens.get(d.name) or no_screen) if d.name in self._whole
                  else self._whole_views.get(d.name) or no_screen))
            for d in mine)
        # shared by every Result (read-only: no copy per input)
        self._names = MappingProxyType({k: r.name for k, r in self.references.items()})
        self._policy = {d.name: d.policy for d in self.decoders}
        self._grouper = Grouper(self._names, self._policy)
        # Who can change a difference in _by_sibling (a position-less decoder, and
        # a sibling of one) or _incremental (a streaming decoder): an input whose
        # differences name neither, known ones in the loop mostly, skips both.
        self._sib_weak = frozenset(self.siblings)
        self._sib_strong = frozenset(n for ns in self.siblings.values() for n in ns)

    def deciders(self, names: Iterable[str]) -> list[Decoder]:
        """The decoders whose outcomes decide the divergences of the decoders
        ``names`` in a full run: each itself, its siblings that show positions
        (:meth:`_by_sibling`) and, for a streaming one, its one-shot siblings with
        theirs (:meth:`_incremental`). A differ of these alone names those
        decoders' divergences as this one does, without running the others (the
        minimizer's predicate runs thousands of inputs)."""
        want: set[str] = set()
        for name in names:
            want.add(name)
            want.update(self.siblings.get(name, ()))
            if name in self._incr:
                d = next(x for x in self.decoders if x.name == name)
                for n in self._oneshot.get((self._family[name], d.profile), ()):
                    want.add(n)
                    want.update(self.siblings.get(n, ()))
        return [d for d in self.decoders if d.name in want]

    def _slow_apart(self) -> tuple[Decoder, ...]:
        """The in-process decoders that declare themselves slow
        (:func:`.screening.is_slow`) and can be judged apart from the others: those
        whose divergences no other decoder's outcome decides, and that decide no
        other decoder's (:meth:`deciders`, both ways), but slow ones of the same
        kind. A divergence is then named in bulk from their outcomes alone as a
        full run names it; any other slow decoder is compared per input."""
        linked: dict[str, set[str]] = {d.name: set() for d in self.decoders}
        for d in self.decoders:
            for x in self.deciders([d.name]):
                linked[d.name].add(x.name)
                linked[x.name].add(d.name)
        apart = {d.name for d in self.decoders if is_slow(d) and not is_out_of_process(d)}
        while drop := {n for n in apart if not linked[n] <= apart}:
            apart -= drop
        return tuple(d for d in self.decoders if d.name in apart)

    @property
    def profiles(self) -> list[str]:
        return sorted({p for p, _ in self.references})

    def run(self, data: bytes, *, full: bool = False) -> Result:
        """Compare every decoder on ``data``; ``full`` forces full outcomes (no
        screening) whatever ``full_every`` says, without advancing its counter, and
        runs the out-of-process decoders too."""
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
        the next decoder starts (:func:`.screening.screen_many`). The fuzz loop
        compares inputs in rounds for this; see :mod:`.finder`. ``walks`` are the
        inputs' :meth:`walk`, when the caller has them already."""
        plans = tuple([self._choose(full) for _ in inputs])
        inputs = tuple(inputs)
        walks = tuple(walks) if walks is not None else tuple(map(self.walk, inputs))
        # every screen, compared with its reference's walk (.screening.screen_many)
        screened = screen_many(inputs, walks, tuple([p.screens for p, _ in plans]))
        # The decoders that did not agree, decoded in full where their screen is not
        # their whole outcome, and judged - decoder-major too, for the same reason:
        # one decoder's misses over the round, then the next decoder's.
        missed: dict[int, list[tuple[int, Mismatch | None]]] = {}
        for j, (_, misses, judged) in enumerate(screened):
            for i, m in zip(misses, judged, strict=True):
                missed.setdefault(i, []).append((j, m))
        outcomes: list[dict[str, Outcome]] = [{} for _ in inputs]
        diffs: list[list[Difference]] = [[] for _ in inputs]
        refs: list[dict[int, Judge]] = [{} for _ in inputs]
        # each anchor's feature, once per input and reference (several decoders
        # usually differ at the same token)
        features: dict[tuple[int, int, int], tuple[str, int]] = {}
        for i in sorted(missed):
            for j, judged_in_c in missed[i]:
                data = inputs[j]
                d, k, _, _, order = plans[j][0].entries[i]
                complete = order is not None  # a whole screen (or whole_views)
                if judged_in_c is not None:
                    # a whole screen, judged in C (.screening.judge) as _judge would
                    klass, idx, view, detail = judged_in_c
                    feat = features.get((j, k, idx))
                    if feat is None:
                        feat = features[j, k, idx] = feature_at(data, walks[j][k], idx,
                                                                self._oracles[k])
                    # (tuple.__new__: the NamedTuple's __new__ without its Python frame)
                    diffs[j].append(_new_tuple(Difference, (d.name, d.profile, klass, *feat,
                                                            view, detail)))
                    continue
                seen = screened[j][0][i]
                if type(seen) is not dict or not complete:
                    # a screen that met an exception may hand over its crash outcome
                    out = seen if type(seen) is Outcome else d.decode(data)
                    if d.name in self._untrusted or plans[j][0] is self._full_plan:
                        out = checked(out, len(data))
                    outcomes[j][d.name] = out
                    if out.status in FAILURES:
                        # judged without the reference (as Judge.compare does)
                        diffs[j].append(_failure(d, out))
                        continue
                ref = refs[j].get(k)
                if ref is None:
                    ref = refs[j][k] = Judge(data, walks[j][k], self._oracles[k])
                if type(seen) is dict and complete:
                    # the screen is its whole outcome: judge that (its partial
                    # outcome is made if Result.outcomes is asked for)
                    diff = self._judge(d, ref, seen)
                else:
                    diff = self._judge(d, ref, out)
                if diff is not None:
                    diffs[j].append(diff)
        results = []
        for j, data in enumerate(inputs):
            plan, is_full = plans[j]
            result = Result(data, outcomes[j], self._names, full=is_full,
                            walks=(self._keys, walks[j]),
                            screened=AgreedScreens(plan.entries, screened[j][0]),
                            oracles=self.references)
            if diffs[j]:
                result._diffs, result._group = self._settled(diffs[j]), self._grouper
            results.append(result)
        return results

    def _choose(self, full: bool) -> tuple[Plan, bool]:
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

    def _send(self, d: Decoder, inputs: Sequence[bytes]) -> Callable[[], list[Any]]:
        """``d``'s outcomes of ``inputs`` (:func:`.screening.send_many`), or for a
        slow in-process decoder with a whole screen, what the screen gave (a dict of
        every view, or an outcome), made now: where it raised, the input is decoded
        in full now too (a crash outcome), while the finder holds the batch in
        flight, never later when the batch is judged."""
        sc = self._slow_screens.get(d.name)
        if sc is None:
            return send_many(d, inputs)
        seen = [d.decode(x) if s is None else s
                for s, x in zip(screen_all(sc, inputs), inputs, strict=True)]
        return lambda: seen

    def run_out_of_process(self, inputs: Sequence[bytes]) -> list[Result]:
        """The :attr:`deferred` decoders on several inputs at once (one ``decode_many``
        each): a result for each input on which one of them diverges, naming only them.
        The out-of-process ones are the reason; the slow in-process ones are judged
        the same way, on the inputs the loop gives them.

        Why: an out-of-process decoder (node, an isolated plug-in) costs a round
        trip per call, more than every in-process decoder together; in a batch it
        costs a share of one. The fuzz loop (:mod:`.finder`) runs every input
        through :meth:`run` without them and through here in bulk
        (:meth:`send_out_of_process`), and re-runs an input in full - everything,
        synchronously - before it records anything, so a signature is always named
        from one full run."""
        return self._judge_out_of_process(
            inputs, [(d, decode_many(d, inputs) if d.name not in self._slow_screens
                      else self._send(d, inputs)()) for d in self.deferred])

    def send_out_of_process(self, inputs: Sequence[bytes],
                            walks: Sequence[dict[tuple[str, str], Any]] | None = None,
                            ) -> Callable[[], list[Result]]:
        """:meth:`run_out_of_process`, pipelined: ``inputs`` go to the decoders now
        (:func:`.screening.send_many`), and the call returned waits for their
        outcomes and gives the results. Until then the loop goes on and the
        decoders' processes work beside it. A slow in-process decoder decodes them
        now, in this call. ``walks``: each input's :attr:`~.result.Result.walks`,
        where the caller has them (else they are walked again)."""
        inputs = tuple(inputs)
        # Sent one decoder of each library in turn: decoders of one library mostly
        # share a process (an exec client's modes), which answers their batches one
        # after the other, and a batch is only written once the one before it to
        # that process is answered. In turn, each process decodes while the batches
        # of the others are written. Judged in the decoders' own order.
        sent = {id(d): self._send(d, inputs) for d in self._send_order}

        def results() -> list[Result]:
            return self._judge_out_of_process(
                inputs, [(d, sent[id(d)]()) for d in self.deferred], walks)

        return results

    def _judge_out_of_process(self, inputs: Sequence[bytes],
                              outs: list[tuple[Decoder, list[Any]]],
                              known: Sequence[dict[tuple[str, str], Any]] | None = None,
                              ) -> list[Result]:
        """The results of :meth:`run_out_of_process`, from each decoder's outcomes of
        ``inputs`` (a prefix of them after a hang: screening.decode_many; a slow
        in-process decoder's whole screens: :meth:`_send`), the inputs' walks
        taken from ``known`` where given."""
        for d, many in outs:
            if d.name in self.decoded:
                self.decoded[d.name] += min(len(many), len(inputs))
        results = []
        trusted, compared = self._parsed, self._compared_set
        for i, data in enumerate(inputs):
            refs: dict[tuple[str, str], Judge] = {}
            walks: dict[tuple[str, str], Any] = dict(known[i]) if known is not None else {}
            outcomes: dict[str, Outcome] = {}
            screens: list[tuple[Decoder, dict[str, Any]]] = []
            diffs: list[Difference] = []
            for d, many in outs:
                if i >= len(many):  # it stopped after a hang (screening.decode_many)
                    continue
                key = (d.profile, d.policy)
                walk = walks.get(key)
                if walk is None:
                    walk = walks[key] = self.references[key].walk(data)
                out = many[i]
                if type(out) is dict:
                    # a whole screen's views: compared, and its commonest mismatches
                    # named, in C, as run_many does (the rest by _judge)
                    if screen_agrees(walk, out, compared):
                        continue
                    ref = refs.get(key)
                    if ref is None:
                        ref = refs[key] = Judge(data, walk, self.references[key])
                    screens.append((d, out))  # Result.outcomes makes its outcome
                    named = judge(walk, out, self._compared)
                    if named is NotImplemented:
                        diff = self._judge(d, ref, out)
                    elif named is None:
                        diff = None
                    else:
                        klass, idx, view, detail = named
                        diff = Difference(d.name, d.profile, klass, *ref.feature(idx), view,
                                          detail)
                    if diff is not None:
                        diffs.append(diff)
                    continue
                if d.name in trusted and outcome_agrees(walk, out, len(data), compared):
                    # equal to the reference at every view it shows: no difference,
                    # and an outcome of the input (.screening.outcome_agrees)
                    outcomes[d.name] = out
                    continue
                ref = refs.get(key)
                if ref is None:
                    ref = refs[key] = Judge(data, walk, self.references[key])
                out = outcomes[d.name] = checked(out, len(data))
                diff = self._judge(d, ref, out)
                if diff is not None:
                    diffs.append(diff)
            if diffs:
                results.append(Result(
                    data, outcomes, self._names, full=False,
                    walks={k: r.walk for k, r in refs.items()}, oracles=self.references,
                    screened=screens,
                    divergences=self._grouper.divergences(self._settled(diffs))))
        return results

    def _judge(self, d: Decoder, ref: Judge, out: Outcome | dict[str, Any]) -> Difference | None:
        """``out`` (``d``'s full outcome, or a whole screen's views) against the
        reference at every view it shows, not only those ``d`` declares for every
        input: a strict-style decoder (iconv) also shows its text on input it
        accepts, and that text must be checked too."""
        # (type() is: this runs for every mismatch the fuzz loop meets)
        diff = (ref.compare_views(out, self._compared)
                if type(out) is dict else ref.compare(cast(Outcome, out), self._compared))
        if diff is None:
            return None
        klass, idx, view, detail = diff
        if klass in FAILURES:
            assert isinstance(out, Outcome)
            return Difference(d.name, d.profile, klass, failure_feature(out), 0, view, detail)
        return Difference(d.name, d.profile, klass, *ref.feature(idx), view, detail)

    def signatures(self, data: bytes) -> frozenset[str]:
        """The signatures of ``data`` from full outcomes (the minimizer's predicate:
        each decoder's first difference, in any view it shows)."""
        return self.run(data, full=True).signatures

    def _settled(self, diffs: list[Difference]) -> list[Difference]:
        """``diffs`` through :meth:`_by_sibling` and :meth:`_incremental`, skipping
        each where no difference names a decoder it could change (one set built,
        no Python frame per difference: nearly every input of the loop)."""
        names = {x.decoder for x in diffs}
        if not (names.isdisjoint(self._sib_weak) or names.isdisjoint(self._sib_strong)):
            diffs = self._by_sibling(diffs)
        if not names.isdisjoint(self._incr):
            diffs = self._incremental(diffs)
        return diffs

    def _by_sibling(self, diffs: list[Difference]) -> list[Difference]:
        """Each position-less decoder's difference anchored where its first sibling
        that shows positions and differs too is (the module docstring)."""
        sib = self.siblings
        if len(diffs) < 2 or not sib or not any(x.decoder in sib for x in diffs):
            return diffs
        by_name = {x.decoder: x for x in diffs}
        out: list[Difference] = []
        for x in diffs:
            if x.decoder in sib and x.klass not in FAILURES:
                s = next((y for n in sib[x.decoder]
                          if (y := by_name.get(n)) is not None and y.klass not in FAILURES),
                         None)
                if s is not None:
                    x = Difference(x.decoder, x.profile, s.klass, s.feature, s.offset, x.view,
                                   f"{x.detail}; {s.decoder} shows where: {s.detail}")
            out.append(x)
        return out

    def _incremental(self, diffs: list[Difference]) -> list[Difference]:
        incr = self._incr
        if not any(x.decoder in incr for x in diffs):
            return diffs
        by_name = {x.decoder: x for x in diffs}
        out: list[Difference] = []
        for x in diffs:
            if x.decoder in incr and x.klass not in FAILURES:
                siblings = self._oneshot.get((self._family[x.decoder], x.profile), [])
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


def _failure(d: Decoder, out: Outcome) -> Difference:
    """The difference of a failed outcome (``crash``, ``timeout``, ``bad-outcome``):
    what :meth:`Differ._judge` gives for it, whatever the reference says."""
    return Difference(d.name, d.profile, out.status, failure_feature(out), 0, "status",
                      f"{out.status}: {out.detail or ''}"[:200])


def _siblings(decoders: Iterable[Decoder]) -> dict[str, tuple[str, ...]]:
    """For each decoder that shows no view of :data:`POSITIONED` but ``escape`` (which
    says which bytes are ill-formed, not how they are cut into errors), the decoders
    of its library (:func:`~utf8fuzz.decoders.base.family`), claim and kind (one-shot or streaming)
    that show a view before its best one, by the first such view each shows
    (:data:`POSITIONED` order), then by name."""
    def rank(d: Decoder) -> int:
        return next((i for i, v in enumerate(POSITIONED) if v in d.shows), len(POSITIONED))

    decoders = list(decoders)
    weak = POSITIONED.index("escape")
    out: dict[str, tuple[str, ...]] = {}
    for d in decoders:
        mine_rank = rank(d)
        if mine_rank < weak:
            continue
        mine = (family(d.name), d.profile, d.policy, d.incremental)
        sibs = sorted((s for s in decoders if s is not d and rank(s) < mine_rank
                       and (family(s.name), s.profile, s.policy, s.incremental) == mine),
                      key=lambda s: (rank(s), s.name))
        if sibs:
            out[d.name] = tuple(s.name for s in sibs)
    return out


def _interleaved(decoders: Sequence[Decoder]) -> tuple[Decoder, ...]:
    """``decoders``, one of each library (:func:`~utf8fuzz.decoders.base.family`) in
    turn, each library's in their order."""
    rows: dict[str, list[Decoder]] = {}
    for d in decoders:
        rows.setdefault(family(d.name), []).append(d)
    most = max(map(len, rows.values()), default=0)
    return tuple(r[k] for k in range(most) for r in rows.values() if k < len(r))


def _family(d: Decoder) -> str:
    """``d``'s family: whose one-shot decoders are an incremental one's siblings."""
    return getattr(d, "family", None) or d.name.split(":", 1)[0]
