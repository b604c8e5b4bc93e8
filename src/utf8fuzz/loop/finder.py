"""From a disagreeing input to a saved corpus entry: the step every engine shares.

:class:`Finder` takes inputs from any generator (Hypothesis, Atheris, seeds), runs
the differ, and for each signature it has not seen - in this run or in the corpus -
minimizes the input, re-runs the differ on the minimized input (the sidecar records
outcomes of *that* input), and saves the entry atomically. Signatures already in the
corpus are not minimized again: that is what keeps a nightly run fast once the
known bugs are recorded.

To the cause (:meth:`Finder._record`). The input is explained first, and minimized
while that explanation holds, not merely its signature, so that a core shows the
cause it was met for and no wrong blame survives. A later input whose signature was
recorded (in this run, or in the corpus by an earlier one: :meth:`Finder._adopt`),
but whose first difference no rule recorded for the decoder predicts, may show
another cause at the same place: it is explained and minimized in
turn (:meth:`Finder._other_causes`, the first :data:`CAUSE_CHECKS` inputs a
signature; of the corpus's signatures, those on the run's turn: :meth:`Finder._on_turn`;
a screened input is run again in full first, :data:`CAUSE_RERUNS` a signature at most),
so that three bugs at one feature are three findings, each saved with
its own entry (:func:`.corpus.entry_path`: the first cause under a signature at the
signature's name, another at the signature's and its finding's). A core of a cause
recorded already is that finding's evidence, not saved again.

Screening (:mod:`.screening`). The finder's differ screens: every ``full_every``-th
input is decoded in full by every decoder, the others only by the decoders whose
cheap screen disagrees with the reference. The default is :data:`FULL_EVERY` or
``$UTF8FUZZ_FULL_EVERY`` (``utf8fuzz fuzz --full-every N`` sets it, also for the
Atheris subprocess). A screened input whose divergences include a signature not yet
known is run again in full before anything is recorded: a decoder's signature is
its first difference at any view it shows, which a screen may not have compared.

Rounds. :meth:`Finder.queue` (the Atheris loop's) walks an input at once - the walks
are its coverage, which libFuzzer reads when the call returns - and compares it
later, in a round of :data:`ROUND` inputs, through :meth:`~.differ.Differ.run_many`
(decoder-major, for warm caches). The price is crash attribution: a decoder that
kills the process does it while libFuzzer holds the round's last input. So while a
round is compared, its inputs are kept in an *in-flight* file (:class:`InFlight`,
one hex line each), which survives the crash and is emptied when the round is done.
``$UTF8FUZZ_ROUND=1`` compares each input at once. :meth:`Finder.consider`
(Hypothesis, the seeds, tests) compares at once, always.

Out-of-process decoders (node, isolated plug-ins) cost a round trip per call, more
than all in-process decoders together; an in-process decoder may declare itself
``slow`` (:mod:`.screening`: PyICU's, whose every call opens a converter). The
finder's differ leaves them out of the per-input comparison (its
:attr:`~.differ.Differ.deferred`); the finder keeps the inputs they are to get (which ones:
:class:`.screening.SlowShare`, one rule for every such decoder, ``slow_every=1``:
every input, as the engines give decoders a user named, and then the slow in-process
ones are compared per input like the others; the coverage that makes an
input novel is :attr:`Finder.cover`'s) and every :data:`BULK` of them
(or sooner, when :data:`BULK_SECONDS` have passed, except in a run bounded by a
count: :attr:`Finder.counted`) sends them to each such decoder in one batch
(:meth:`~.differ.Differ.send_out_of_process`), pipelined: a batch is judged when the
next one is sent, so the decoders' processes decode it while the loop goes on. An
input on which one of them diverges with a signature not yet known is run again in
full before anything is recorded. Call :meth:`Finder.flush` when the run ends, or
the last inputs are never compared. The Atheris target does it from
a C exit handler (:func:`~.atheris_target.at_process_exit`): libFuzzer ends the
process with ``exit()``, and Python's own exit handlers never run.

Policy tally (:mod:`.policy_tally`). The inputs compared in full (one in
``full_every``) are also counted for the replacement-policy fingerprints, within a
time budget (:data:`TALLY_SHARE` of the loop's time: counting one input costs a
few hundred microseconds, several times what comparing it costs; in a run bounded
by a count, a count: :data:`TALLY_FIRST`, :data:`TALLY_EVERY`); screened inputs
are not looked at. The counts are merged into ``<corpus>/fingerprints.json``
at most every :data:`TALLY_SECONDS` (checked once a round) and by
:meth:`Finder.save_tally`, which the engines call when a worker or target ends.
"""

from __future__ import annotations

import bisect
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz import safe
from utf8fuzz.decoders.base import Decoder, family
from utf8fuzz.engine import calls as calls_mod
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.minimize import Minimized, minimize
from utf8fuzz.engine.result import Divergence, Result
from utf8fuzz.engine.screening import SLOW_EVERY, SlowShare
from utf8fuzz.engine.signature import FAILURES, Signature
from utf8fuzz.env import env_int
from utf8fuzz.loop.call_findings import sidecar as call_sidecar
from utf8fuzz.outcome import Outcome
from utf8fuzz.triage import policy_tally
from utf8fuzz.triage.explain import (
    LONG_INPUT,
    RULES,
    Rule,
    Run,
    explain,
    explains_first,
    rule_of,
    unplaced,
    window,
)
from utf8fuzz.triage.generalize import MAX_POSITIONS, pattern, render
from utf8fuzz.triage.group import finding_id

#: Screen, and decode every decoder in full on one input in this many.
FULL_EVERY = 8
FULL_EVERY_ENV = "UTF8FUZZ_FULL_EVERY"
#: Inputs asked per signature and run whether they show another cause than the ones
#: recorded (:meth:`Finder._other_causes`): a count, not seconds (each costs a
#: prediction or two; one that may show another cause, an explanation).
CAUSE_CHECKS = 64
#: Screened inputs run again in full per signature and run to be asked whether they
#: show another cause (:meth:`Finder._rerun`): the inputs compared in full (one in
#: ``full_every``) are asked too, so a few suffice; a count, as each costs a full run of
#: the decoders that decide the signature.
CAUSE_RERUNS = 8
#: Of the signatures an earlier run recorded in the corpus, how many a run asks for
#: other causes (:meth:`Finder._on_turn`): its turn's share, so that what a run pays
#: for them is a count whatever the corpus's size (each adopted costs its rules'
#: models, then up to :data:`CAUSE_CHECKS` inputs), and every one has its turn
#: within ``ceil(recorded / CAUSE_SIGNATURES)`` consecutive turns (nights).
CAUSE_SIGNATURES = 8
#: Inputs compared together by :meth:`Finder.queue`, a round (``$UTF8FUZZ_ROUND``).
ROUND = 32
ROUND_ENV = "UTF8FUZZ_ROUND"
#: Inputs sent at once to the out-of-process decoders, and the longest a kept
#: input waits.
BULK = 128
BULK_SECONDS = 1.0
#: An input kept for the deferred decoders keeps the walks that judge them
#: when it is at most this long; a longer one is walked again then, so that two
#: batches of long inputs do not hold their walks (the loop's memory stays flat).
KEEP_WALKS_BYTES = 1024
#: Seconds between two merges of the policy tally into the corpus (a worker killed
#: by a decoder loses at most this much of it).
TALLY_SECONDS = 30.0
#: The share of the loop's time the policy tally may take (process CPU seconds
#: spent counting per CPU second of loop, measured), and the credit a run starts
#: with (seconds): enough for its first inputs (the seeds) to be counted whatever.
TALLY_SHARE = 0.03
TALLY_CREDIT = 0.05
#: A counted run's tally budget (:attr:`Finder.counted`), a count: the first
#: :data:`TALLY_FIRST` inputs compared in full (the seeds, mostly), then one in
#: :data:`TALLY_EVERY` of them.
TALLY_FIRST = 128
TALLY_EVERY = 16
#: The longest input the policy tally counts: judging a decoder's spans costs the
#: product of its places and its spans (ED A0 80 800 times, 2,400 bytes: 1.5 s, one
#: input), and the budget is asked before an input, not during it: a long input
#: full of errors (64 KiB of encoded surrogates) held a worker past the hard stop.
#: The short loop's inputs are all under it.
TALLY_MAX_BYTES = 256


def full_every_default() -> int:
    """``$UTF8FUZZ_FULL_EVERY`` when set (a positive integer), else :data:`FULL_EVERY`."""
    return _positive_env(FULL_EVERY_ENV, FULL_EVERY, "1: every input in full")


def round_default() -> int:
    """``$UTF8FUZZ_ROUND`` when set (a positive integer), else :data:`ROUND`."""
    return _positive_env(ROUND_ENV, ROUND, "1: every input compared at once")


def _positive_env(name: str, default: int, hint: str) -> int:
    return env_int(name, default, least=1, expected=f"a positive integer ({hint})")


class InFlight:
    """The inputs of the round being compared, one hex line each, in a file that
    outlives a crash: what to replay when a decoder kills the process mid-round
    (libFuzzer saves only the input it was handed last). Written before the round
    runs and emptied after it, through one open descriptor (two system calls a
    round: a write, and a truncation after it); removed by :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._empty = True  # the file is empty: no truncation before the next hold

    def hold(self, inputs: Iterable[bytes]) -> None:
        if self._fd is not None:
            text = "".join(x.hex() + "\n" for x in inputs).encode()
            if not self._empty:  # a round that raised was never released
                os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, text, 0)
            self._empty = False

    @property
    def held(self) -> bool:
        """A round is in the file: held and never released, so the process is
        ending because of it (its inputs are the evidence; keep the file)."""
        return self._fd is not None and not self._empty

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            self._empty = True

    def close(self) -> None:
        """Done with it: the file goes (nothing was in flight)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self.path.unlink(missing_ok=True)


@dataclass
class NewSignature:
    signature: str
    decoders: tuple[str, ...]
    klass: str
    feature: str
    input: bytes
    original_size: int
    path: Path | None
    position_dependent: bool
    sidecar: dict[str, Any] = field(repr=False, default_factory=dict)
    #: Its finding (:func:`finding_of`): id, family, rule, explanation, severity,
    #: pattern, checked, rules.
    finding: dict[str, Any] = field(default_factory=dict)
    #: False: seen once in the loop, but a full run of the same input no longer
    #: showed it (a stateful or flaky decoder); reported, never saved.
    reproduced: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "decoders": list(self.decoders),
            "class": self.klass,
            "feature": self.feature,
            "input": self.input.hex(),
            "original_size": self.original_size,
            "position_dependent": self.position_dependent,
            "path": str(self.path) if self.path else None,
            "reproduced": self.reproduced,
            "finding": self.finding,
        }


class Finder:
    def __init__(
        self,
        decoders: Iterable[Decoder],
        corpus: Path | None,
        engine: str,
        *,
        views: Iterable[str] | None = None,
        minimize_seconds: float | None = None,
        full_every: int | None = None,
        round_size: int | None = None,
        inflight: InFlight | None = None,
        tally: bool = True,
        counted: bool = False,
        slow_every: int = SLOW_EVERY,
        call_every: int | None = None,
        deadline: float | None = None,
        turn: int | None = None,
    ) -> None:
        decs = list(decoders)
        if full_every is None:
            full_every = full_every_default()
        self.round_size = round_default() if round_size is None else round_size
        if self.round_size < 1:
            raise ValueError(f"round_size must be at least 1, got {self.round_size}")
        self.inflight = inflight
        self.differ = Differ(decs, views=views, full_every=full_every,
                             defer_out_of_process=True, defer_slow=slow_every > 1)
        self.by_name = {d.name: d for d in decs}
        self._alone: dict[str, Differ] = {}  # one-decoder differs, for finding_of
        self._narrowed: dict[tuple[str, ...], Differ] = {}  # for the minimizer (_narrow)
        self.corpus = Path(corpus) if corpus is not None else None
        self.engine = engine
        self.minimize_seconds = minimize_seconds
        #: When the run ends (``time.monotonic()``; None: no end): no minimization
        #: goes past it (:meth:`_minimizing`).
        self.deadline = deadline
        self.known: set[str] = corpus_mod.signature_ids(self.corpus) if self.corpus else set()
        #: Which of the corpus's signatures this run asks for other causes
        #: (:meth:`_on_turn`): a seeded run's seed, else the UTC day (a nightly job's
        #: consecutive nights take consecutive turns).
        self.turn = turn if turn is not None else int(time.time() // 86400)
        self._recorded = sorted(self.known)  # the signatures the turns are taken over
        self.found: list[NewSignature] = []
        #: Signatures met once that a full run of the same input did not show again.
        self.unreproduced: list[NewSignature] = []
        self.executions = 0
        #: The bytes of the inputs compared (long inputs cost what they are).
        self.bytes = 0
        self.divergent_inputs = 0
        #: Which inputs the deferred decoders get (:mod:`.screening`).
        self.slow = SlowShare(slow_every)
        #: Feeds an input's walks (:meth:`queue`'s) to the engine's coverage, and says
        #: whether they reached coverage no earlier input did (the Atheris target's;
        #: None: no coverage, no input is novel).
        self.cover: Callable[[tuple[Any, ...]], bool] | None = None
        #: The engine's own inputs drawn (its count, for a run bounded by one).
        self.examples = 0
        #: A run bounded by a count: nothing it does depends on the clock (the
        #: out-of-process decoders are sent inputs every BULK only, the policy
        #: tally's budget is a count), so the same inputs give the same findings.
        self.counted = counted
        self._pending: list[bytes] = []  # for the out-of-process decoders
        self._pending_walks: list[dict[tuple[str, str], Any]] = []  # their walks
        self._pending_clean: list[bool] = []  # which of them no in-process decoder
        # diverged on: one diverging out of process is then a divergent input too
        self._since = 0.0
        # the batch the out-of-process decoders are decoding: its inputs, which of
        # them were clean, and the call that waits for its results
        self._sent: tuple[list[bytes], list[bool], Callable[[], list[Result]]] | None = None
        self._queued: list[bytes] = []  # for queue(), with their walks
        self._queued_walks: list[tuple[Any, ...]] = []
        self._queued_novel: list[bool] = []  # and whether each was novel (cover)
        self._seen: set[Signature] = set()  # signatures met, all of them in known
        # each signature recorded in this run: the rules recorded for it (key: the
        # Rule, None where it predicts nothing), and how many inputs were asked
        # whether they show another cause (_other_causes)
        self._causes: dict[Signature, tuple[dict[str, Rule | None], list[int]]] = {}
        # screened inputs under each of them run again in full to be asked (_rerun),
        # the signatures that may still be (of _causes: its first _synced), and those
        # that may not
        self._reruns: dict[Signature, int] = {}
        self._open: set[Signature] = set()
        self._shut: set[Signature] = set()
        self._synced = 0
        # every rule recorded in this run that predicts outcomes, by the decoder it
        # explains: an input one of them predicts is that cause's evidence, whatever
        # signature its first difference got
        self._predictors: dict[str, dict[str, Rule]] = {}
        #: The policy tally of the inputs compared in full (None: not kept).
        # (the out-of-process decoders are not in the differ's per-input results:
        # judged in bulk, they never show a full one)
        oop = self.differ.deferred
        self.tally = (policy_tally.LoopTally(
            [d for d in self.differ.decoders if d not in oop], self.differ.views, oop)
            if tally else None)
        if self.tally is not None and not self.tally.watching:
            self.tally = None  # no decoder shows replace or spans: nothing to count
        self._tally_saved = time.monotonic()
        self._bulk_count = 0  # inputs sent to the out-of-process decoders: which to sample
        # the tally's time budget (TALLY_SHARE): seconds it may still spend, and when
        # the credit was last topped up
        self._tally_credit, self._tally_clock = TALLY_CREDIT, time.process_time()
        #: inputs compared in full that the budget left uncounted
        self.tally_skipped = 0
        self._tally_asked = 0  # a counted run's: inputs it was asked about
        #: The checks of the call (:mod:`.calls`: history, placement); None: off.
        every = calls_mod.check_every_default() if call_every is None else call_every
        self.calls = (calls_mod.CallChecks(calls_mod.decoders_checked(self.differ.decoders),
                                           every) if every else None)
        self._settle = {id(d) for d in calls_mod.decoders_checked(self.differ.decoders)
                        if d not in self.differ.out_of_process}
        self._oop_names = frozenset(d.name for d in self.differ.out_of_process)

    def consider(self, data: bytes) -> Result:
        """Compare ``data`` now, and record what is new."""
        res = self.differ.run(data)
        self._after(res)
        return res

    def queue(self, data: bytes) -> tuple[Any, ...]:
        """Compare ``data`` with the next :attr:`round_size` inputs (a round, see
        above); its references' walks now, in the differ's order
        (``differ.walk``): its coverage. :meth:`flush` compares what is queued."""
        walks = self.differ.walk(data)
        self._queued.append(data)
        self._queued_walks.append(walks)
        self._queued_novel.append(self.cover is not None and self.cover(walks))
        if len(self._queued) >= self.round_size:
            self._compare_queued()
        return walks

    def _compare_queued(self) -> None:
        inputs, walks, novel = self._queued, self._queued_walks, self._queued_novel
        self._queued, self._queued_walks, self._queued_novel = [], [], []
        if not inputs:
            return
        if self.inflight is not None:
            self.inflight.hold(inputs)
        results = self.differ.run_many(inputs, walks)
        if self.inflight is not None:
            self.inflight.release()
        for res, new in zip(results, novel, strict=True):
            self._after(res, new)
        if self.tally is not None and time.monotonic() - self._tally_saved > TALLY_SECONDS:
            self.save_tally()

    def _after(self, res: Result, novel: bool = False) -> None:
        """The bookkeeping of one compared input (``novel``: it brought coverage)."""
        self.executions += 1
        self.bytes += len(res.data)
        if res.full and self.tally is not None and self._tally_afford(len(res.data)):
            t = time.process_time()
            self.tally.observe(res)
            self._tally_spent(t)
        if res.diverged:
            self.divergent_inputs += 1
            self._learn(res.data, res)
        if self.calls is not None and self.calls.due(res.data):
            for hit in self.calls.check(res.data):
                self._record_call(hit)
        if self.differ.deferred and self.slow.wants(
                novel, res.signature_set() if res.diverged else ()):
            if not self._pending:
                self._since = time.monotonic()
            self._pending.append(res.data)
            if len(res.data) <= KEEP_WALKS_BYTES:
                w = res.walks
                self._pending_walks.append({k: w[k] for k in self.differ.deferred_keys})
            else:
                self._pending_walks.append({})
            self._pending_clean.append(not res.diverged)
            if len(self._pending) >= BULK or (
                    not self.counted and time.monotonic() - self._since > BULK_SECONDS):
                self._flush_out_of_process()

    def inputs_seen(self) -> dict[str, int]:
        """How many of the loop's inputs each decoder was compared on: every one for
        the decoders compared per input (screened or in full), those it was sent and
        decoded for a deferred one (out of process, or slow: :attr:`slow`); full
        re-runs of an input (to name or minimize a signature) are not counted."""
        seen = {d.name: self.executions for d in self.differ.decoders
                if d not in self.differ.deferred}
        seen.update(self.differ.decoded)
        return seen

    def flush(self) -> None:
        """Compare what :meth:`queue` holds, then the out-of-process decoders on the inputs
        kept since they were last sent, and wait for every batch they are decoding."""
        self._compare_queued()
        self._flush_out_of_process(wait=True)

    def _tally_afford(self, nbytes: int) -> bool:
        """Whether the tally's budget allows counting one more input (a full one:
        the screened path never asks) of ``nbytes``: never one longer than
        :data:`TALLY_MAX_BYTES`. The budget is a share of the loop's own
        time, so counting costs the loop at most :data:`TALLY_SHARE` whatever the
        decoders, inputs and machine; what it leaves uncounted is a sample lost,
        not a bias (the inputs skipped are those that came while it was spent)."""
        if nbytes > TALLY_MAX_BYTES:
            self.tally_skipped += 1
            return False
        if self.counted:
            self._tally_asked += 1
            if self._tally_asked <= TALLY_FIRST or self._tally_asked % TALLY_EVERY == 0:
                return True
            self.tally_skipped += 1
            return False
        now = time.process_time()
        self._tally_credit = min(TALLY_CREDIT,
                                 self._tally_credit + (now - self._tally_clock) * TALLY_SHARE)
        self._tally_clock = now
        if self._tally_credit > 0:
            return True
        self.tally_skipped += 1
        return False

    def _tally_spent(self, since: float) -> None:
        now = time.process_time()
        self._tally_credit -= now - since
        self._tally_clock = now  # its own time does not earn credit

    def save_tally(self) -> None:
        """Merge the policy tally counted since the last save into the corpus's
        (:func:`.policy_tally.save`); without a corpus it is kept in memory."""
        self._tally_saved = time.monotonic()
        if self.tally is not None and self.corpus is not None:
            delta = self.tally.take()
            try:
                policy_tally.save(self.corpus, delta)
            except OSError as e:
                # a corpus that cannot be written loses the counts, not the run
                print(f"utf8fuzz: note: the policy tally could not be saved in "
                      f"{safe.text(self.corpus)}: {safe.text(e.strerror or e)}", file=sys.stderr)

    def _flush_out_of_process(self, *, wait: bool = False) -> None:
        """Send the kept inputs to the out-of-process decoders, then judge the batch
        sent before (they decode the new one meanwhile); ``wait``: the new one too."""
        pending, self._pending = self._pending, []
        clean, self._pending_clean = self._pending_clean, []
        walks, self._pending_walks = self._pending_walks, []
        before, self._sent = self._sent, None
        if pending:
            inflight = self.inflight if self.differ.slow_in_process else None
            if inflight is not None:
                # the slow in-process decoders decode the batch now, in this process:
                # one that kills it leaves the batch as the evidence, as a round does
                inflight.hold(pending)
            self._sent = (pending, clean, self.differ.send_out_of_process(pending, walks))
            if inflight is not None:
                inflight.release()
        if before is not None:
            self._judge_sent(*before)
        if wait and self._sent is not None:
            sent, self._sent = self._sent, None
            self._judge_sent(*sent)

    def _judge_sent(self, pending: list[bytes], clean: list[bool],
                    results_of: Callable[[], list[Result]]) -> None:
        """Learn from a batch the out-of-process decoders decoded (waiting for it)."""
        clean_ones = {x for x, c in zip(pending, clean, strict=True) if c}
        results = results_of()
        for res in results:
            if res.diverged and res.data in clean_ones:
                clean_ones.discard(res.data)
                self.divergent_inputs += 1
            self._learn(res.data, res)
        if self.tally is not None and self.tally.bulk.by_profile:
            # one input in full_every, as the in-process decoders are sampled
            by_data = {res.data: res for res in results}
            every, n = self.differ.full_every, self._bulk_count
            for k, x in enumerate(pending):
                if (n + k) % every == 0 and self._tally_afford(len(x)):
                    t = time.process_time()
                    self.tally.observe_bulk(x, by_data.get(x))
                    self._tally_spent(t)
            self._bulk_count = n + len(pending)

    def _learn(self, data: bytes, res: Result) -> None:
        """Record each signature of ``res`` not known yet, from a full run."""
        seen = self._seen
        if all(s in seen for s in res.signature_set()):
            if not self._causes:
                return  # the common case: known divergences, by one hash each
            if not self._whole(res):
                names = self._rerun(res)
                if not names:
                    return
                # a screened input holds only what the screens compared: asked for
                # another cause as a full run (of the decoders that decide those
                # divergences), or a bug met mostly on screened inputs (7 in 8 in
                # process) hides behind the first cause at its feature
                res = self._full(data, self._narrow(*names))
            if all(s in seen for s in res.signature_set()):
                self._other_causes(data, res)
                return
        if not res.full and any(d.signature.id not in self.known for d in res.divergences):
            first = res
            res = self._full(data)
            again = res.signatures
            for div in first.divergences:
                if div.signature.id not in self.known and str(div.signature) not in again:
                    self._unreproduced(data, div.signature)
        adopted = False
        for div in res.divergences:
            if div.signature.id not in self.known:
                self.known.add(div.signature.id)
                self._record(data, str(div.signature))
            elif (self.corpus is not None and div.signature not in seen
                  and div.signature not in self._causes):
                self._finish(div.signature)
                adopted |= self._adopt(div.signature)
            seen.add(div.signature)
        if adopted and self._whole(res):
            self._other_causes(data, res)

    def _rerun(self, res: Result) -> list[str]:
        """The decoders whose divergences on the screened ``res`` are run again in
        full to be asked for other causes: those at a signature that is asked
        (:meth:`_other_causes`, fewer than :data:`CAUSE_CHECKS` times) and has had
        fewer than :data:`CAUSE_RERUNS` screened inputs run again (a count of its own:
        an input whose outcome cannot be asked does not stop it). Once no signature
        may be, it costs nothing per input."""
        if len(self._causes) != self._synced:  # signatures recorded or adopted since
            self._open.update(s for s in self._causes
                              if s.klass not in FAILURES and s not in self._shut)
            self._synced = len(self._causes)
        if not self._open:
            return []
        names = []
        for sig in self._open.intersection(res.signature_set()):
            n = self._reruns.get(sig, 0)
            if n >= CAUSE_RERUNS or self._causes[sig][1][0] >= CAUSE_CHECKS:
                self._open.discard(sig)
                self._shut.add(sig)
                continue
            self._reruns[sig] = n + 1
            names.append(sig.decoders[0])
        return names

    def _whole(self, res: Result) -> bool:
        """Does ``res`` hold the whole outcome of each decoder that diverged, as a full
        run does? A batch of the out-of-process decoders does too
        (:meth:`~.differ.Differ.run_out_of_process`: each named decoder's outcome, at
        every view it shows), though it is not a full run; a screened input does not."""
        return res.full or all(d.decoders[0] in self._oop_names for d in res.divergences)

    def _adopt(self, sig: Signature) -> bool:
        """Take the rules an earlier run recorded in the corpus for ``sig`` (the
        finding of each of its entries) as this run's, so that an input under it that
        none of them predicts is asked whether it shows another cause, as under a
        signature recorded in this run (:meth:`_other_causes`): a second bug at a
        feature is found on any night, not only on the night the first one was.
        Called once per signature and run, and only a signature on this run's turn
        (:meth:`_on_turn`) is taken; the entries are hostile data (a rule is only a
        name looked up among the candidates); True when one was taken."""
        assert self.corpus is not None
        if (sig.klass in FAILURES or sig.decoders[0] not in self.by_name
                or not self._on_turn(sig)):
            return False
        name = sig.decoders[0]
        rules: dict[str, Rule | None] = {}
        for path in sorted(corpus_mod.entries_dir(self.corpus).glob(f"{sig.id}*.json")):
            try:
                entry = corpus_mod.load_entry(path)
            except corpus_mod.CorpusError:
                continue  # `corpus check` names it; nothing to take
            rec = entry.sidecar.get("finding")
            if entry.signature != str(sig) or not isinstance(rec, dict):
                continue
            rule = rec.get("rule")
            if not isinstance(rule, str) or rule in rules:
                continue
            out = corpus_mod.outcomes_of(entry.sidecar, len(entry.data)).get(name)
            made = rules[rule] = rule_of(entry.data, sig.profile, self.by_name[name].policy,
                                         sig.klass, sig.feature, rule, out)
            if made is not None and made.predict is not None:
                self._predictors.setdefault(name, {})[rule] = made
        if rules:
            self._causes[sig] = (rules, [0])
        return bool(rules)

    def _finish(self, sig: Signature) -> None:
        """Minimize each entry of ``sig`` that an earlier run saved before its
        minimizer finished (its time ran out: :func:`.corpus.unminimized`), now that
        this run meets the signature (every run replays the corpus's inputs first, so
        it does), as :meth:`_record` would have: bounded by the minimizer's counts,
        and by this run's :attr:`deadline`. The entry is replaced atomically only by
        a core of the same finding, at its signature or at one no entry has; else it
        is left (a later run tries again). Called once per signature and run."""
        assert self.corpus is not None
        for path in sorted(corpus_mod.entries_dir(self.corpus).glob(f"{sig.id}*.json")):
            try:
                entry = corpus_mod.load_entry(path)
            except corpus_mod.CorpusError:
                continue  # `corpus check` names it
            if (entry.signature == str(sig) and corpus_mod.unminimized(entry)
                    and sig.decoders[0] in self.by_name and "call" not in entry.sidecar):
                self._record(entry.data, entry.signature, finish=entry)

    def _on_turn(self, sig: Signature) -> bool:
        """Whether this run asks the inputs under ``sig``, recorded in the corpus by
        an earlier run, for other causes: the corpus's signatures, sorted by id, are
        dealt into ``ceil(n / CAUSE_SIGNATURES)`` turns, and a run takes the one its
        :attr:`turn` names. A bound by count (at most :data:`CAUSE_SIGNATURES`
        adopted a run), and over as many consecutive turns, every signature."""
        ids = self._recorded
        i = bisect.bisect_left(ids, sig.id)
        if i == len(ids) or ids[i] != sig.id:
            return False  # recorded since this run began: by another worker
        turns = -(-len(ids) // CAUSE_SIGNATURES)
        return i % turns == self.turn % turns

    def _unreproduced(self, data: bytes, sig: Signature) -> None:
        """A signature met once that a full run of the same input did not show
        again: a decoder with state (earlier inputs changed what it does) or a
        flaky one. It is not saved - nothing replays it - but it is reported, once
        per signature and run, with the input it was met on: silence would hide
        exactly the bugs that are hardest to find. It is not tried again in this
        run (a flaky decoder would otherwise cost a minimization each time)."""
        self.known.add(sig.id)  # both callers met it unknown: reported once
        self.unreproduced.append(NewSignature(str(sig), sig.decoders, sig.klass, sig.feature, data,
                                       len(data), None, False, reproduced=False))

    def _other_causes(self, data: bytes, res: Result) -> None:
        """An input whose divergences all have signatures recorded in this run: where
        no rule recorded for a signature predicts this input's whole outcome, it may
        show another cause at the same place, and is recorded in turn (the first
        :data:`CAUSE_CHECKS` inputs a signature and run are asked: a count)."""
        for div in res.divergences:
            causes = self._causes.get(div.signature)
            if causes is None or div.signature.klass in FAILURES:
                continue
            rules, asked = causes
            by = self._sibling_divergence(res, div) or div
            out = res.outcomes.get(by.decoders[0])
            if out is None or not out.ok or asked[0] >= CAUSE_CHECKS:
                continue
            asked[0] += 1
            if _predicted(self._predictors.get(by.decoders[0], {}), data, out,
                          by.signature.profile, self.by_name[by.decoders[0]].policy):
                continue
            s = by.signature
            policy = self.by_name[by.decoders[0]].policy
            if len(data) <= LONG_INPUT and explain(
                    data, out, s.profile, policy, s.klass, s.feature).rule in rules:
                continue  # the first rule that holds is one recorded: not worth checking
            # (a batch result names only the out-of-process decoders: recorded from a
            # full run of every decoder, as a new signature is)
            self._record(data, str(div.signature), first=res if res.full else None)

    def _record(self, data: bytes, sig: str, first: Result | None = None,
                finish: corpus_mod.Entry | None = None) -> None:
        """Minimize ``data`` to the cause of its divergence ``sig``, explain and save
        it. The minimizer holds the explanation, checked first on ``data``: where it
        predicts outcomes, every candidate's outcome must be the one it predicts
        (so the core can sit at another spec feature than the input it was met on:
        its signature may change); where it does not, the signature, and no rule
        recorded for it may predict the candidate's outcome (another cause met under
        a signature recorded before: :meth:`_other_causes`). A core whose finding is
        one recorded already adds nothing; another is saved, under the signature's
        name, or beside an entry of another cause (:func:`.corpus.entry_path`).
        ``finish``: ``data`` is that corpus entry's input, left unminimized by an
        earlier run (:meth:`_finish`); the core replaces it, nothing is found."""
        first = first if first is not None else self._full(data)
        div0 = first.get(sig)
        if div0 is None:
            if finish is None:
                self._unreproduced(data, Signature.parse(sig))
            return
        by0 = self._sibling_divergence(first, div0) or div0
        mine, theirs = div0.decoders[0], by0.decoders[0]
        dec = self.by_name[theirs]
        out0 = first.outcomes[theirs]
        # (an entry finished is its own cause, recorded or not)
        known = self._causes.get(div0.signature, ({}, [0]))[0] if finish is None else {}
        predictors = self._predictors.get(theirs, {})
        rule: Rule | None = None
        key0 = ""
        if out0.ok and len(data) <= LONG_INPUT:
            s0 = by0.signature
            why = explain(data, out0, s0.profile, dec.policy, s0.klass, s0.feature,
                          run=runner(dec, self._alone, self.inflight), at=by0.offset)
            if why.rule in known:
                return  # a cause recorded already
            key0 = why.rule
            rule = rule_of(data, s0.profile, dec.policy, s0.klass, s0.feature, why.rule, out0)
            if rule is not None and rule.predict is None:
                rule = None

        # explained by no rule: the class is what is explained, and its core may sit
        # at another feature (80 C0, whose extra output an alignment can give to
        # either error: C0 alone shows it); not explained (a failure, a long input):
        # the signature
        fallback = key0 == f"{by0.signature.klass}/{by0.signature.feature}"

        # the minimizer's runs: only the decoders that decide mine's and theirs'
        # divergences (the others, peers among them, cost a round trip each)
        narrow = self._narrow(mine, theirs)

        def keeps(b: bytes) -> bool:
            r = self._full(b, narrow)
            if rule is None:
                d = next((x for x in r.divergences if x.decoders == (mine,) and (
                    x.signature.klass == div0.signature.klass if fallback
                    else str(x.signature) == sig)), None)
                if d is None or not known:  # not another cause: any core will do
                    return d is not None
                o = r.outcomes.get(theirs)
                return o is not None and o.ok and not _predicted(
                    predictors, b, o, by0.signature.profile, dec.policy)
            d = next((x for x in r.divergences if x.decoders == (mine,)), None)
            if d is None:
                return False
            by = self._sibling_divergence(r, d) or d
            o = r.outcomes.get(theirs)
            if o is None or not o.ok or not rule.holds(b, o):
                return False
            # another sibling first to diverge judges this core: the rule must hold
            # on it too (E0 C1 BF shows an overlong in escape only; C1 BF in strict)
            ob = r.outcomes.get(by.decoders[0])
            return by.decoders == (theirs,) or (ob is not None and ob.ok and rule.holds(b, ob))

        # The core's own explanation, checked on fresh inputs made from it, can differ
        # from the one held (F0 90 41 cut to F0 90, whose fresh F0 90 E1 41 41 meets
        # another bug): then the signature is held too, which keeps what told them
        # apart.
        holds = [keeps] if rule is None else [
            keeps, lambda b: keeps(b) and sig in self._full(b, narrow).signatures]
        for hold in holds:
            m = minimize(data, hold, seconds=self._minimizing())
            res = self._full(m.data)
            got = next((x for x in res.divergences if x.decoders == (mine,)), None)
            if got is None:  # a flaky decoder: keep the original input
                res, got = first, div0
            div = got
            if (str(div.signature) != sig and div.signature.id in self.known
                    and hold is not holds[-1]):
                continue  # a core at a known signature: this one is kept as evidence
            t = time.monotonic()
            # judged where the positions are: a position-less decoder whose sibling
            # differs on this input is evidence of the sibling's finding (differ.py)
            by = self._sibling_divergence(res, div) or div
            fid = finding_of(res.data, by.signature, res.outcomes[by.decoders[0]],
                             self.by_name[by.decoders[0]], self._alone, self.inflight,
                             at=by.offset)
            seconds = time.monotonic() - t
            if fid["rule"] == key0:
                break
        new_sig = div.signature
        if finish is not None:
            self._improve(finish, res, div, fid, m, len(data))
            return
        if str(new_sig) != sig and new_sig.id in self.known and new_sig not in self._causes:
            return  # the core is evidence of a signature known before this run
        side = corpus_mod.build_sidecar(
            res, div, self.by_name, engine=self.engine, original_size=len(data),
            minimizer=m.stats(), position_dependent=m.position_dependent,
        )
        side["finding"] = fid
        side["found"]["explain_seconds"] = round(seconds, 3)
        s = div.signature
        self.known.add(s.id)
        rules, _ = self._causes.setdefault(s, ({}, [0]))
        fid = side["finding"]
        met = self._causes.setdefault(div0.signature, ({}, [0]))[0]
        if met is not rules:  # the signature met is asked again for other causes
            met.setdefault(str(fid.get("rule")), None)
        if str(fid.get("rule")) in rules:
            return  # the core is of a cause recorded already
        again = bool(rules)  # another cause under a signature saved already
        made = rules[str(fid.get("rule"))] = rule_of(
            res.data, by.signature.profile, self.by_name[by.decoders[0]].policy,
            by.signature.klass, by.signature.feature, str(fid.get("rule")),
            res.outcomes.get(by.decoders[0]))
        if made is not None and made.predict is not None:
            self._predictors.setdefault(by.decoders[0], {})[str(fid.get("rule"))] = made
        rules.setdefault(key0, None)
        path = None
        if self.corpus is not None:  # another cause under a saved signature: its own entry
            path, _ = corpus_mod.save(self.corpus, side, res.data, cause=again)
        self.found.append(NewSignature(str(s), s.decoders, s.klass, s.feature, res.data, len(data),
                                path, m.position_dependent, side, side["finding"]))


    def _improve(self, old: corpus_mod.Entry, res: Result, div: Divergence,
                 fid: dict[str, Any], m: Minimized, original_size: int) -> None:
        """Replace the unminimized entry ``old`` by the core ``res`` (:meth:`_finish`),
        when it is of the same finding, no longer, and at ``old``'s signature or at one
        no entry has (one that has keeps its own evidence)."""
        assert self.corpus is not None
        before = old.sidecar.get("finding")
        s = div.signature
        if (not isinstance(before, dict) or fid.get("id") != before.get("id")
                or len(res.data) > len(old.data)
                or (str(s) != old.signature and s.id in self.known)):
            return
        side = corpus_mod.build_sidecar(
            res, div, self.by_name, engine=self.engine, original_size=original_size,
            minimizer=m.stats(), position_dependent=m.position_dependent)
        side["finding"] = fid
        corpus_mod.improve(self.corpus, old, side, res.data)
        self.known.add(s.id)

    def _full(self, data: bytes, differ: Differ | None = None) -> Result:
        """A full run of ``data`` (by ``differ``, else the finder's) that records and
        minimizing trust, each in-process decoder first asked
        :data:`.calls.NEUTRAL`: state an earlier input left in a decoder is spent
        there, not blamed on ``data`` (a decoder whose answer depends on it is the
        history check's, :mod:`.calls`)."""
        differ = differ if differ is not None else self.differ
        settle = self._settle
        for d in differ.decoders:
            if id(d) in settle:
                d.decode(calls_mod.NEUTRAL)
        return differ.run(data, full=True)

    def _record_call(self, hit: calls_mod.Hit) -> None:
        """Minimize and save a difference in the call (:mod:`.calls`), once a
        signature, as :meth:`_record` does a difference in the bytes."""
        d = hit.decoder
        sig = Signature(d.profile, hit.klass, calls_mod.FEATURES[hit.klass], (d.name,))
        if sig.id in self.known:
            return
        self.known.add(sig.id)
        data, call = calls_mod.minimized(hit, self._minimizing())
        side = call_sidecar(self.differ.run(data, full=True), sig, d, call, self.by_name,
                            engine=self.engine, original_size=len(hit.data))
        path = corpus_mod.save(self.corpus, side, data)[0] if self.corpus is not None else None
        self.found.append(NewSignature(str(sig), sig.decoders, sig.klass, sig.feature, data,
                                       len(hit.data), path, False, side, side["finding"]))

    def _minimizing(self) -> float | None:
        """The seconds a minimization may take now: :attr:`minimize_seconds`, and
        never past :attr:`deadline` (a signature met as the run ends is saved as met,
        or minimized as far as the time left allows: the run's time is a limit)."""
        if self.deadline is None:
            return self.minimize_seconds
        left = max(0.0, self.deadline - time.monotonic())
        return left if self.minimize_seconds is None else min(self.minimize_seconds, left)

    def _narrow(self, *names: str) -> Differ:
        """A full-run differ of the decoders that decide the divergences of
        ``names`` (:meth:`.differ.Differ.deciders`), cached."""
        key = tuple(sorted(set(names)))
        one = self._narrowed.get(key)
        if one is None:
            one = self._narrowed[key] = Differ(self.differ.deciders(key),
                                               views=self.differ.views)
        return one

    def _sibling_divergence(self, res: Result, div: Divergence) -> Divergence | None:
        """The divergence on ``res`` of the first sibling that shows positions of
        ``div``'s decoder (:attr:`.differ.Differ.siblings`), if one diverged."""
        for name in self.differ.siblings.get(div.decoders[0], ()):
            got = next((d for d in res.divergences if d.decoders == (name,)), None)
            if got is not None and got.signature.klass not in FAILURES:
                return got
        return None


def _full_runner(decoder: Decoder, alone: dict[str, Differ] | None,
                 inflight: InFlight | None) -> Callable[[bytes], Result]:
    """A full run of ``decoder`` alone (its differ cached in ``alone`` by name), each
    input held in ``inflight`` meanwhile (see :func:`finding_of`)."""
    name = decoder.name
    one = (alone or {}).get(name)
    if one is None:
        one = Differ([decoder])
        if alone is not None:
            alone[name] = one

    def full(f: bytes) -> Result:
        if inflight is None:
            return one.run(f, full=True)
        inflight.hold((f,))
        try:
            return one.run(f, full=True)
        finally:
            inflight.release()
    return full


def runner(decoder: Decoder, alone: dict[str, Differ] | None = None,
           inflight: InFlight | None = None) -> Run:
    """``decoder`` as :func:`.explain.explain` runs it on fresh inputs: its outcome
    and the (class, feature) of its divergences (:func:`_full_runner`)."""
    full = _full_runner(decoder, alone, inflight)

    def run(f: bytes) -> tuple[Outcome, frozenset[tuple[str, str]]] | None:
        res = full(f)
        o = res.outcomes.get(decoder.name)
        return None if o is None else (o, frozenset((s.klass, s.feature)
                                                    for s in res.signature_set()))
    return run


def _predicted(rules: dict[str, Rule], data: bytes, out: Outcome, profile: str,
               policy: str) -> bool:
    """Does one of ``rules`` that predicts outcomes predict ``out`` on ``data``, as
    far as its first difference from the reference (:func:`.explain.explains_first`:
    what its signature names), or as far as a position-less outcome can say
    (:func:`.explain.unplaced`: where no view places that difference, not evidence
    against a rule that predicts one)?"""
    return any(r.holds(data, out) or explains_first(r, data, out, profile, policy)
               or unplaced(r, data, out, profile, policy) for r in rules.values())


def finding_of(data: bytes, sig: Signature, out: Outcome, decoder: Decoder,
               alone: dict[str, Differ] | None = None,
               inflight: InFlight | None = None, at: int = 0) -> dict[str, Any]:
    """The finding of the divergence ``sig`` of ``decoder`` (its outcome ``out`` on the
    minimized input ``data``): its explanation (:func:`.explain.explain`), checked on
    fresh inputs the decoder is run on, and the input generalized into a byte-class
    pattern (:mod:`.generalize`) over which the explanation still holds and the
    decoder still diverges (for a rule that predicts nothing: still with this class
    and feature); ``at`` is the first difference's byte offset, around which a long
    input is checked and generalized. A crash or hang is not run again: its pattern
    is its bytes.
    ``alone`` caches the one-decoder differ by name; each input the decoder is run on
    is held in ``inflight`` meanwhile, so that a decoder that kills the process on
    one of them is caught as the loop's rounds are (:class:`InFlight`)."""
    name = decoder.name
    full = _full_runner(decoder, alone, inflight)
    run = runner(decoder, alone, inflight)
    why = explain(data, out, sig.profile, decoder.policy, sig.klass, sig.feature,
                  run=run if out.ok else None, at=at)
    if out.ok:
        rule = rule_of(data, sig.profile, decoder.policy, sig.klass, sig.feature, why.rule, out)

        def holds(f: bytes) -> bool:
            res = full(f)
            o = res.outcomes.get(name)
            if rule is None or rule.predict is None or o is None:
                return str(sig) in res.signatures
            return res.diverged and o.ok and rule.holds(f, o)
        pat = render(pattern(data, holds, sig.profile,
                             positions=window(data, at, MAX_POSITIONS)))
    else:
        pat = render([[(b, b)] for b in data])
    fam = family(name)
    return {"id": finding_id(fam, why.rule), "family": fam, "rule": why.rule,
            "explanation": why.text, "severity": why.severity, "pattern": pat,
            "checked": why.checked, "rules": RULES}
