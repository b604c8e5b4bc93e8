"""The Hypothesis engine's loop: :mod:`utf8fuzz.strategies` drawn in batches into a
:class:`~.finder.Finder` (:func:`hypothesis_worker`; :mod:`.run` runs it in forked
workers).

Batches. Hypothesis costs about 2 ms per example besides its draws (its engine's
bookkeeping: the example's data tree, its spans, the test's wrapper), and tens of
microseconds per choice a strategy draws: either is more than comparing an input
with every in-process decoder. So each example is a batch of :data:`BATCH` inputs
(:data:`LONG_BATCH` long ones) made from one Hypothesis draw, a random stream, by
the generators the public strategies run on their draws
(:func:`utf8fuzz.strategies.batches`), and the whole batch goes to the finder.

Counts. A run bounded by ``runs`` counts *inputs*, not examples: the inputs of a
batch past the count are dropped, never compared. With ``seed``, each call of the
test (a few examples) is seeded by the seed and its number, so the same seed gives
the same inputs in the same order.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.long import long_share
from utf8fuzz.engine.screening import SLOW_EVERY
from utf8fuzz.loop.finder import Finder, InFlight
from utf8fuzz.loop.state import derived_seed

#: Inputs drawn by one Hypothesis example: short ones, and long ones (65 bytes to
#: 64 KiB, each costing a hundred short ones to compare).
BATCH = 32
LONG_BATCH = 4
#: Examples per call of the test, short and long: a call (Hypothesis's run of a
#: test) has a set-up cost of its own, and the engine switches between short and
#: long calls to give the long ones their share.
EXAMPLES = (10, 10)


def hypothesis_worker(decoders: Sequence[Decoder], corpus: Path | None, deadline: float,
                      report: Callable[[int, int, list[dict[str, Any]]], None],
                      minimize_seconds: float, seeds: Sequence[bytes] = (),
                      full_every: int | None = None, *, inflight: InFlight | None = None,
                      exclude: Iterable[bytes] = (),
                      died: Callable[[BaseException], NoReturn] | None = None,
                      runs: int | None = None, seed: int | None = None,
                      slow_every: int = SLOW_EVERY) -> Finder:
    """Compare ``seeds``, then feed Hypothesis's batches to a finder until ``deadline``,
    in rounds held in ``inflight``; ``report`` after each call of the test. ``died`` is
    called with anything comparing an input raises, before Hypothesis could catch it
    and shrink (for a worker, an exception here is either the harness failing or a
    decoder ending the process).

    ``runs``: stop after that many inputs (the seeds not counted), whichever of it
    and ``deadline`` comes first; short and long calls then alternate by a count
    (:func:`_cost`), not by the time each took. ``seed``: each call draws from
    Hypothesis seeded by it and the call's number (:func:`derived_seed`), so that the
    same seed gives the same inputs in the same order (with ``runs``: the same run).
    ``exclude``: inputs never compared (they end the process), seeds or drawn.
    ``finder.examples`` is the count of inputs drawn (at most ``runs``).
    ``slow_every``: the out-of-process decoders' share (:class:`.finder.Finder`)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    from utf8fuzz import strategies as u8

    finder = Finder(decoders, corpus, "hypothesis", minimize_seconds=minimize_seconds,
                    full_every=full_every, inflight=inflight, counted=runs is not None,
                    deadline=deadline, slow_every=slow_every, turn=seed)
    profiles = sorted({d.profile for d in finder.differ.decoders})
    if not profiles:
        finder.examples = runs or 0  # nothing to draw from: a count met at once
        return finder
    sent = gone = 0

    def tell() -> None:
        nonlocal sent, gone
        report(finder.executions, finder.divergent_inputs,
               [f.to_json() for f in [*finder.found[sent:], *finder.unreproduced[gone:]]])
        sent, gone = len(finder.found), len(finder.unreproduced)

    def flush() -> None:
        finder.flush()
        tell()

    def end(e: BaseException) -> NoReturn:
        if died is None:
            raise e
        with contextlib.suppress(BaseException):
            tell()  # what was found and saved before this still counts
        with contextlib.suppress(BaseException):
            finder.save_tally()  # and so do the policy counts
        died(e)

    longs = st.lists(st.one_of(*[u8.long_inputs(p) for p in profiles]),
                     min_size=LONG_BATCH, max_size=LONG_BATCH)
    queue = finder.queue
    told = time.monotonic()
    skip = frozenset(exclude)
    drawn = drawn_bytes = 0  # inputs met (past the deadline too), and their bytes

    def example(batch: list[bytes]) -> None:
        nonlocal told, drawn, drawn_bytes
        for data in batch:
            drawn += 1
            drawn_bytes += len(data)
            if (runs is not None and drawn > runs) or time.monotonic() >= deadline:
                continue  # Hypothesis's call ends on its own; what is past is dropped
            if skip and data in skip:
                continue
            try:
                queue(data)  # compared in rounds; flush() ends the last
            except BaseException as e:
                end(e)
        # A decoder that kills the process takes the unsent counts with it: tell
        # every second, not only at the end of a call.
        now = time.monotonic()
        if now - told > 1.0:
            told = now
            try:
                tell()
            except BaseException as e:
                end(e)

    def call(which: int, n: int, number: int) -> Callable[[], None]:
        # each call's batches salted by its number (and the seed): Hypothesis's first
        # example of every call is its simplest, the same one
        salt = derived_seed(seed, number) if seed is not None else random.getrandbits(32)

        # derandomize=False: Hypothesis's "ci" profile, loaded wherever $CI is set
        # (GitHub Actions, most CI), derandomizes, and every call would then draw the
        # same inputs: a nightly job in CI would fuzz one call's worth, over and over
        @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), derandomize=False)
        @given(u8.batches(profiles, BATCH, salt) if which == 0 else longs)
        def examples(batch: list[bytes]) -> None:
            example(batch)

        if seed is not None:  # each call its own draws, the same on every run
            examples = seeded(derived_seed(seed, number))(examples)
        return examples

    # Short and long calls alternate so that the long ones take their share of
    # the time (utf8fuzz.engine.long.long_share; each call's own time, whatever
    # its inputs cost, less what minimizing its findings took; with runs, its
    # cost counted). Short ones first; a long call is small, so the short loop is
    # never held up long.
    per_example = (BATCH, LONG_BATCH)
    spent = [0.0, 0.0]
    share = long_share()
    number = 0

    try:
        for s in seeds:
            if s not in skip:
                queue(s)  # in rounds, so that a seed that kills is in flight
        flush()
        while time.monotonic() < deadline and (runs is None or drawn < runs):
            which = int(share == 1.0 or spent[1] < share * sum(spent))
            n = EXAMPLES[which]
            if runs is not None:  # no more examples than the count needs
                n = min(n, -(-(runs - drawn) // per_example[which]))
            t0, found, before, before_bytes = time.monotonic(), len(finder.found), drawn, \
                drawn_bytes
            call(which, n, number)()
            number += 1
            flush()
            if runs is None:
                spent[which] += time.monotonic() - t0 - _minimizing(finder.found[found:])
            else:
                if drawn == before:
                    break  # the strategy draws nothing more: never loop on it
                spent[which] += _cost(drawn - before, drawn_bytes - before_bytes)
        finder.examples = min(drawn, runs) if runs is not None else drawn
        finder.save_tally()
    except BaseException as e:
        end(e)
    return finder


#: The count a batch costs in a counted run (:func:`_cost`): an input, plus one
#: for every this many of its bytes (a short input's cost is mostly per call, a
#: long one's per byte; measured in process, CPU time, on two planted decoders and
#: CPython's strict and replace: 0.12 ms a short input of 24 bytes on average,
#: 1.0 ms a long one of 4,100: one short input's cost per 570 bytes).
COST_BYTES = 512


def _cost(inputs: int, nbytes: int) -> float:
    """What ``inputs`` inputs of ``nbytes`` in all cost, as a count: how a counted run
    shares its inputs between short and long calls (the same on every machine,
    unlike the time each took)."""
    return inputs + nbytes / COST_BYTES


def _minimizing(found: Sequence[Any]) -> float:
    """Seconds the finder spent minimizing and explaining ``found`` (new signatures):
    not charged to the call that met them, or one finding would hold its path back."""
    total = 0.0
    for x in found:
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
            total += float(x.sidecar["found"]["minimizer"]["seconds"])
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
            total += float(x.sidecar["found"]["explain_seconds"])
    return total
