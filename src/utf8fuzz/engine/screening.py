"""The fuzz loop's speed protocol: optional operations a decoder may offer.

A decoder needs only :meth:`~utf8fuzz.decoders.base.Decoder.run`. Everything here
is opt-in, cryptofuzz-style: a decoder that offers none of it is decoded in full on
every input, and is judged exactly the same, only slower. This module is the one
place that defines the operations and the one place the differ reads them from.

The operations (all optional, looked up by name on the decoder):

``screen(data) -> dict | Outcome | None``
    A few views from the decoder's cheapest real library call, as a dict of view
    name to value, or None: "cannot say cheaply here". Views have the shapes
    :meth:`~utf8fuzz.outcome.Outcome.view` gives, except that a text view
    (replace, ignore, escape) may be the ``str`` the library returned, and
    ``tokens`` may be packed bytes (:func:`~utf8fuzz.outcome.pack_tokens`).
    Each view must equal the same view of the decoder's own full outcome (tests
    check it on arbitrary bytes). A screen must not hide a crash: when its call
    raises it returns None (the full decode then turns the exception into a
    ``crash``), or, when that call is the very one ``run`` makes, the crash outcome
    itself (``decoder.crash(data, e)``).

``screen_is_whole: bool``
    The screen, whenever it answers, gives *every* view of the full outcome on
    that input (or its packed tokens alone, from which every view follows). It is
    then judged as it is, and never decoded in full just to sample.

``whole_views(data) -> dict | Outcome | None``
    Every view, as a whole screen gives them, cheaper than ``run``: for a decoder
    whose screen is partial and whose ``run`` is expensive. Used on the sampled
    inputs instead of a full decode.

``out_of_process: bool`` and ``decode_many(inputs) -> list[Outcome]``
    A decoder in another process (node, isolated plug-ins) costs a round trip per
    call. The fuzz loop leaves it out of the per-input comparison and sends it
    inputs in bulk (:meth:`~.differ.Differ.run_out_of_process`). The list may be
    shorter than ``inputs``, never empty for a non-empty batch: after a ``timeout``
    outcome (a hang pinned on its input, the process killed and restarted) the rest
    of the batch is not decoded, since each further hang would cost a timeout; those
    inputs are not compared for that decoder.

``slow: bool``
    The decoder's library call costs more than the fuzz loop can pay on every
    input (a binding that opens a converter and raises per call, a decoder in pure
    Python), and what it would find on every input it is likely to find on the
    inputs that matter most. The fuzz loop then gives it :class:`SlowShare`'s
    inputs, as it does an out-of-process decoder, and judges it in bulk beside
    those (:meth:`~.differ.Differ.send_out_of_process`); it is decoded on the
    share's inputs as :meth:`~utf8fuzz.decoders.base.Decoder.decode` decodes, in
    the loop's process. A declared attribute, never a measured time, so a counted
    run stays the same run. Only where every decoder whose outcome decides its
    divergences (:meth:`~.differ.Differ.deciders`: its siblings that show
    positions, its one-shot siblings), and every decoder whose divergences it
    decides, is slow too: otherwise the divergence named in the loop could differ
    from the full run's. A decoder the user names gets every input
    (``slow_every=1``), and is then compared per input like any other.

``send_many(inputs) -> Callable[[], list[Outcome]]``
    ``decode_many`` in two halves, for an out-of-process decoder: the batch is
    written to its process now, and the call returned waits for the outcomes
    (:func:`send_many`). The fuzz loop sends a batch before it judges the last one
    (:meth:`~.differ.Differ.send_out_of_process`), so the decoder's process decodes
    while the loop goes on instead of the loop waiting on its answers.

Which inputs the slow decoders get (:class:`SlowShare`). An out-of-process decoder,
or one that declares itself ``slow``, is not given every input of the loop: it would
set the loop's pace (a round trip and a frame per batch, its process's decoding, and
the judging of every outcome it returns, for a peer that differs on nearly every
input; an in-process library call that costs as much as a dozen others). It is given the inputs
that matter most: the first :data:`SLOW_FIRST` of a run (the seeds, mostly), every
input that brought coverage or features no earlier input of the process did, every
input on which the decoders in the process diverged in a way not met before in the
run (a set of signatures not seen together before: known differences make the same
few sets on nearly every input), and one input in :data:`SLOW_EVERY` whatever it is
(a steady sample). The rule is a count, never a clock, so a counted run stays the
same run. An out-of-process decoder offers nothing for it: being out of process is
enough; an in-process one declares ``slow``.

How the differ uses them (:mod:`.differ`):

* **Two tiers.** A screening decoder is first compared with its reference at the
  views its screen gives (every compared view it gives, not only those the decoder
  declares). If they agree, the decoder agrees on this input and its full outcome
  is never built. On a mismatch or None it is decoded in full and compared as
  without screening, so every reported difference comes from full outcomes, or from
  a whole screen, which is the full outcome.
* **Sampling.** A view a decoder shows but its screen leaves out is compared on one
  input in ``full_every`` (decoded in full there, or through ``whole_views``).
  ``full_every=1`` (the API, the CLI, replay) never screens. The minimizer and the
  corpus always use full runs, and the finder re-runs a screened input in full
  before it names a new signature.
* **Rounds.** The finder compares inputs in rounds of several (:mod:`.finder`),
  decoder-major: each decoder screens every input of the round before the next
  decoder starts, so some twenty libraries do not evict each other from the caches.
* **In C.** The loop over the screens, their comparison with the reference walks,
  and the naming of the commonest mismatches of whole screens are C
  (``engine/_screen.c``: :func:`screen_many`, :func:`judge`), held equal to
  :func:`py_screen_many` and to :class:`~.classify.Judge` by the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from utf8fuzz.decoders.base import Decoder, mutated, private_copy, reraise_interrupt
from utf8fuzz.engine import _screen
from utf8fuzz.engine.result import outcome_of_packed
from utf8fuzz.outcome import TEXT_VIEWS, VIEWS, Outcome, checked
from utf8fuzz.profiles.walk import Walk

#: ``(screen or None, reference index, views compared, judging order or None)``:
#: one decoder's entry in a plan, as :func:`screen_many` takes it. The order is set
#: for whole screens only (they are judged as they are).
Screen = tuple[Callable[[bytes], Any] | None, int, frozenset[str], tuple[str, ...] | None]
#: What :func:`screen_many` gives per input: what each screen returned, the indices
#: of the entries that did not agree, and for each of those the C judge's
#: :data:`~.classify.Mismatch` (or None: judge it in Python).
Screened = tuple[list[Any], list[int], list[Any]]


def screen_of(d: Decoder) -> Callable[[bytes], Any] | None:
    """The decoder's ``screen``, or None when it offers none."""
    sc: Callable[[bytes], Any] | None = getattr(d, "screen", None)
    return sc


def screen_is_whole(d: Decoder) -> bool:
    return bool(getattr(d, "screen_is_whole", False))


def whole_views_of(d: Decoder) -> Callable[[bytes], Any] | None:
    """The decoder's ``whole_views``, or None when it offers none."""
    wv: Callable[[bytes], Any] | None = getattr(d, "whole_views", None)
    return wv


def is_out_of_process(d: Decoder) -> bool:
    return bool(getattr(d, "out_of_process", False))


def is_slow(d: Decoder) -> bool:
    """``d`` declares that its library call is too expensive for every input (the
    module docstring's ``slow``): the fuzz loop gives it the slow decoders' share."""
    return bool(getattr(d, "slow", False))


def decode_many(d: Decoder, inputs: Sequence[bytes]) -> list[Outcome]:
    """The decoder's ``decode_many`` where it offers one (a prefix of the inputs'
    outcomes, ending at a ``timeout``: module docstring), else one :meth:`decode`
    each."""
    many: Callable[[Sequence[bytes]], list[Outcome]] | None = getattr(d, "decode_many", None)
    return many(inputs) if many is not None else [d.decode(x) for x in inputs]


def send_many(d: Decoder, inputs: Sequence[bytes]) -> Callable[[], list[Outcome]]:
    """:func:`decode_many` in two halves: the decoder's ``send_many`` where it offers
    one (the batch goes to its process now, and the call returned waits for the
    outcomes), else the batch decoded now."""
    send: Callable[[Sequence[bytes]], Callable[[], list[Outcome]]] | None = getattr(
        d, "send_many", None)
    if send is not None:
        return send(inputs)
    outs = decode_many(d, inputs)
    return lambda: outs


def decode_as_screen(d: Decoder) -> Callable[[bytes], Any] | None:
    """A whole screen made of the decoder's own ``run``, for a decoder that offers
    no screen, or None when it overrides :meth:`~Decoder.decode` (then it is
    decoded in full, through its own decode). What ``run`` gives is all of the
    outcome: a partial outcome's views are given as the screen's dict (compared,
    and their commonest mismatches named, in C; provenance is added if an Outcome
    is ever made of them); any other outcome (tokens, a crash) is handed over as
    the decoded outcome. One call either way, as :meth:`~Decoder.decode` makes it."""
    if type(d).decode is not Decoder.decode:
        return None
    run, crash, provenance = d.run, d.crash, d.provenance

    def handed_over(out: Outcome) -> Any:
        # a partial outcome's views as the screen's dict; any other outcome, with
        # its provenance, as the decoded outcome
        if out.tokens_ is None and out.status == "ok":
            return out.views
        if not out.provenance:
            object.__setattr__(out, "provenance", provenance())
        return out

    if is_own_adapter(d):
        # This project's adapters (mutf8) are checked by its tests, on arbitrary
        # bytes, to tile their input and hold their bounds: not per input, in the
        # loop that runs thousands of inputs a second. A user's decoder is.
        def trusted(data: bytes) -> Any:
            try:
                out = run(data)
            except BaseException as e:
                reraise_interrupt(e)
                return crash(data, e)
            return handed_over(out)

        return trusted

    def screen(data: bytes) -> Any:
        # as Decoder.decode: a copy of the input of its own, anything raised a crash
        mine = private_copy(data)
        try:
            out = run(mine)
        except BaseException as e:
            reraise_interrupt(e)
            return crash(data, e)
        if mine != data:
            return mutated(data, d.versions())
        # Held to the bounds here, before its views are compared or judged (in C
        # too): the decoder's code is anyone's. The adapters' own screens (screen_of)
        # are this project's, trusted as above.
        return handed_over(checked(out, len(data)))

    return screen


def is_own_adapter(d: Decoder) -> bool:
    """``d`` is one of this project's adapters (:mod:`utf8fuzz.decoders`), not a
    user's decoder (a plug-in, which :mod:`utf8fuzz.decoders.plugin` wraps)."""
    mod = type(d).__module__
    return mod.startswith("utf8fuzz.decoders.") and mod != "utf8fuzz.decoders.plugin"


def views_from_tokens(screen: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """A whole ``screen`` for a differ that does not compare tokens: when it gives
    its packed tokens alone, the views are made from them."""

    def views(data: bytes) -> Any:
        seen = screen(data)
        if type(seen) is dict and len(seen) == 1 and type(seen.get("tokens")) is bytes:
            out = outcome_of_packed(seen["tokens"], data)
            return {v: out.view(v) for v in VIEWS}
        return seen

    return views


#: The first inputs of a run every slow decoder gets (:class:`SlowShare`).
SLOW_FIRST = 1024
#: Past those, one input in this many goes to the slow decoders whatever it is.
SLOW_EVERY = 16
#: How many sets of signatures :class:`SlowShare` remembers (a pathological run
#: that makes more has the rest sampled).
_SLOW_SETS = 1 << 16


class SlowShare:
    """Which inputs of the loop the slow decoders (out of process, or declared
    ``slow``) are given (the module docstring): :meth:`wants`, asked once per input
    in the order the loop compares them. ``every=1`` gives them every input."""

    __slots__ = ("_met", "asked", "every", "first", "given")

    def __init__(self, every: int = SLOW_EVERY, first: int = SLOW_FIRST) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.every, self.first = every, first
        self.asked = self.given = 0
        self._met: set[frozenset[Any]] = set()

    def wants(self, novel: bool, divergences: Iterable[Any] = ()) -> bool:
        """Whether the slow decoders get this input: ``novel``, it brought coverage
        or features no earlier input did; ``divergences``, the signatures the
        decoders in the process diverged with on it."""
        n = self.asked
        self.asked = n + 1
        take = novel or n < self.first or n % self.every == 0
        if divergences:
            met = frozenset(divergences)
            if met not in self._met and len(self._met) < _SLOW_SETS:
                self._met.add(met)
                take = True
        self.given += take
        return take


class Plan(NamedTuple):
    """How the differ compares one input: each decoder with its reference's index,
    screen (or None), screened views and judging order (whole screens only); and
    the same entries without the decoder, as :func:`screen_many` takes them."""

    entries: tuple[tuple[Decoder, int, Any, frozenset[str], tuple[str, ...] | None], ...]
    screens: tuple[Screen, ...]


class AgreedScreens:
    """What each screen saw on an input, walked only when someone asks for
    :attr:`~.result.Result.outcomes`: a partial outcome for each decoder whose
    screen answered."""

    __slots__ = ("entries", "seens")

    def __init__(self, entries: tuple[tuple[Decoder, int, Any, frozenset[str],
                                            tuple[str, ...] | None], ...],
                 seens: list[Any]) -> None:
        self.entries, self.seens = entries, seens

    def __iter__(self) -> Iterator[tuple[Decoder, dict[str, Any]]]:
        for (d, *_), seen in zip(self.entries, self.seens, strict=True):
            if type(seen) is dict:
                yield d, seen


# -- the screening loop, in Python: the definition the C is held to ----------------


def agrees(walk: Walk, seen: dict[str, Any], views: frozenset[str]) -> bool:
    """A screen's views equal the walk's at every view in ``views``, and at least
    one was compared (an empty screen proves nothing). A text view given as a
    ``str`` is compared with the walk's text; tokens given packed with the walk's
    packed tokens, and equal tokens end it: every other view follows from them."""
    compared = False
    for v, val in seen.items():
        if v in views:
            packed = type(val) is bytes and v == "tokens"
            if type(val) is str and v in TEXT_VIEWS:
                mine: Any = walk.text(v)
            elif packed:
                mine = walk.packed
            else:
                mine = walk.view(v)
            if val != mine:
                return False
            if packed:
                return True
            compared = True
    return compared


def screen_agrees(walk: Any, seen: dict[str, Any], views: frozenset[str]) -> bool:
    """:func:`agrees`, by the C walk's own where it has one (held equal to it)."""
    in_c: Callable[[dict[str, Any], frozenset[str]], bool] | None = getattr(
        walk, "agrees", None)
    return in_c(seen, views) if in_c is not None else agrees(walk, seen, views)


def screen_all(screen: Callable[[bytes], Any], inputs: Sequence[bytes]) -> list[Any]:
    """``screen`` on each input, None where it raised (as :func:`py_screen`: the
    differ then decodes that input in full, which turns a failure into a crash)."""
    out: list[Any] = []
    for data in inputs:
        try:
            out.append(screen(data))
        except Exception:
            out.append(None)
    return out


def outcome_agrees(walk: Any, out: Any, length: int, views: frozenset[str]) -> bool:
    """An outcome the differ was handed (an out-of-process decoder's) shows only
    views in ``views``, and equals ``walk`` at each, as :func:`agrees` compares a
    screen: then :meth:`~.classify.Judge.compare` finds no difference in it. For an
    outcome of exact values (ints, tuples: what this project's exec parser makes of
    a client's reply) it also passes :func:`~utf8fuzz.outcome.checked`: a view equal
    to the reference's is inside the input and in range. False for anything else
    (a failure, tokens, another length, a view not compared): judged in full."""
    if (type(out) is not Outcome or out.status != "ok" or out.tokens_ is not None
            or out.length != length):
        return False
    shown = out.views
    if not shown.keys() <= views:
        return False
    return screen_agrees(walk, shown, views)


def py_screen(data: bytes, walks: tuple[Walk, ...], plan: tuple[Screen, ...]) -> Screened:
    """The screening of one input: call each ``(screen, walk index, views, order)``
    of ``plan`` on ``data`` and compare what it saw with ``walks[index]``
    (:func:`agrees`). Returns what each screen returned (None when it raised: the
    differ then decodes in full, which turns a real failure into a crash outcome),
    the indices of the entries that did not agree (no screen, no dict, or a
    difference), and None for each (this definition leaves judging to the differ)."""
    seens: list[Any] = []
    misses: list[int] = []
    for k, (sc, w, views, _) in enumerate(plan):
        seen = None
        if sc is not None:
            try:
                seen = sc(data)
            except Exception:
                seen = None
        seens.append(seen)
        if type(seen) is not dict or not agrees(walks[w], seen, views):
            misses.append(k)
    return seens, misses, [None] * len(misses)


def py_screen_many(inputs: tuple[bytes, ...], walks: tuple[tuple[Walk, ...], ...],
                   plans: tuple[tuple[Screen, ...], ...]) -> list[Screened]:
    """:func:`py_screen` of each input with its walks and plan, input by input. The
    C :func:`screen_many` gives the same answer calling the screens decoder-major,
    and also names the commonest mismatches of whole screens (:func:`judge`)."""
    if not len(inputs) == len(walks) == len(plans):
        raise ValueError("screen_many: one walks and one plan per input")
    if len({len(p) for p in plans}) > 1:
        raise ValueError("screen_many: plans of different lengths")
    return [py_screen(d, w, p) for d, w, p in zip(inputs, walks, plans, strict=True)]


#: The screening loop in C (``engine/_screen.c``), the one the differ runs.
screen_many: Callable[[tuple[bytes, ...], tuple[tuple[Walk, ...], ...],
                       tuple[tuple[Screen, ...], ...]], list[Screened]] = _screen.screen_many

#: The C judge of a whole screen's mismatch: ``judge(walk, seen, order)`` gives the
#: :data:`~.classify.Mismatch` that :meth:`~.classify.Judge.compare_views` names, or
#: NotImplemented where it leaves the case to it.
judge: Callable[[Any, dict[str, Any], tuple[str, ...]], Any] = _screen.judge
