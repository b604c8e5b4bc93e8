"""Bugs that live in the call, not in the bytes: history and placement (issue 28).

The fuzz loop asks each decoder what it makes of fresh bytes in one call. Two
questions it cannot ask that way, each a decoder's optional operation
(:meth:`~utf8fuzz.decoders.base.Decoder.run_after`,
:meth:`~utf8fuzz.decoders.base.Decoder.run_placed`; None: not asked, and shown so):

* **History.** Decode the input after a short history of earlier calls in the state
  the decoder keeps between calls. An answer other than its fresh one is
  ``history-dependent`` (a validator that lets the next message through).
* **Placement.** Decode the input handed over as a view of its bytes at an offset
  inside a larger buffer of guard bytes. An answer other than its fresh one that
  changes when the guard byte changes is ``reads-outside-input`` (a decoder that
  leaks neighbouring memory into its string); one no other guard byte changes is
  ``alignment-dependent`` (right only at some offsets).

Each is self-differential: a decoder against its own fresh outcome of the same
bytes (:func:`settled`), so no reference is needed and a decoder's ordinary
divergences never show here. One finding per decoder and class: the signature's
feature is fixed by the class (:data:`FEATURES`). A decoder's state is unknown
when it is asked, so a difference is confirmed (:func:`holds`) with each question
asked after :data:`NEUTRAL`, one plain call that spends state an earlier input
left; the minimizer and replay ask the same way.

Sampling. One input in :data:`CHECK_EVERY` (``$UTF8FUZZ_CALL_EVERY``; ``0`` turns
the checks off), chosen by a hash of its bytes, so the same inputs are checked on
every run and replay of them; an out-of-process decoder (a round trip per call)
one in ``CHECK_EVERY * OUT_OF_PROCESS_FACTOR``. The history and the placement are
functions of the same hash: the history is one or two inputs from a menu the
fuzzer steers (:class:`Menu`: the last ill-formed input, input truncated at its
end and long input it made that were checked, and the last input that made this
decoder raise), the placement an offset (0..15 past a 16-byte boundary), a tail
of 1..16 guard bytes and a guard byte: one that continues the sequence the
input's end cuts short, where it cuts one (a read past the end then takes it in,
:func:`continuing`), else one from :data:`GUARDS`. Counts, never time.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from utf8fuzz.decoders.base import Decoder, reraise_interrupt
from utf8fuzz.engine.minimize import minimize
from utf8fuzz.engine.screening import is_out_of_process
from utf8fuzz.env import env_int
from utf8fuzz.outcome import VIEWS, Outcome, ViewUnavailable, checked

HISTORY = "history-dependent"
OUTSIDE = "reads-outside-input"
ALIGNMENT = "alignment-dependent"
#: The classes of a difference in the call (:data:`.signature.CLASSES` holds them).
CALL_CLASSES: tuple[str, ...] = (HISTORY, OUTSIDE, ALIGNMENT)
#: Each class's one feature: a decoder has at most one finding of each class.
FEATURES: dict[str, str] = {HISTORY: "kept-state", OUTSIDE: "guard-bytes",
                            ALIGNMENT: "offset"}
#: Each class's finding, said plainly (the finding's explanation).
TITLES: dict[str, str] = {
    HISTORY: "answers differently after an earlier call: kept state",
    OUTSIDE: "reads outside its input: the bytes around the view it is handed change "
             "its answer",
    ALIGNMENT: "answers differently when the same bytes sit at another offset in memory",
}
#: The checks, by the word ``utf8fuzz decoders`` and the run summary use.
CHECKS: tuple[str, ...] = ("history", "placed")

CHECK_EVERY = 512
CHECK_EVERY_ENV = "UTF8FUZZ_CALL_EVERY"
OUT_OF_PROCESS_FACTOR = 8
#: Guard bytes: continuation bytes first (a read past the end completes a sequence
#: the input cut short), then ASCII, NUL, bytes no UTF-8 has, a lead byte.
GUARDS: tuple[int, ...] = (0x80, 0xBF, 0xA0, 0x41, 0x00, 0xFF, 0xC2, 0xF0)
#: The menu a history is drawn from, and what fills each kind before the fuzzer does.
MENU_KINDS: tuple[str, ...] = ("ill-formed", "truncated", "long", "raises")
DEFAULT_MENU: dict[str, bytes] = {
    "ill-formed": b"\xc0\xaf\xed\xa0\x80\xff",
    "truncated": b"a\xf0\x9f\x98",
    "long": ("a\u00e9\u20ac\U0001f600" * 24).encode(),
}
#: Inputs longer than this are "long" on the menu; kept menu inputs are cut to
#: :data:`MENU_BYTES` (a history stays short).
LONG = 64
MENU_BYTES = 4096
#: Limits of a recorded call (a sidecar is hostile data).
MAX_HISTORY = 8
MAX_GUARD_BYTES = 4096
#: Inputs remembered as checked (:meth:`CallChecks.due`), then forgotten at once.
MAX_CHECKED = 1 << 14
#: Minimizer steps per input of a finding (a count: the same core on every run).
MINIMIZE_STEPS = 2000


def check_every_default() -> int:
    """``$UTF8FUZZ_CALL_EVERY`` when set (0: off), else :data:`CHECK_EVERY`."""
    return env_int(CHECK_EVERY_ENV, CHECK_EVERY, least=0,
                   expected="a non-negative integer (0: no checks of the call)")


@dataclass(frozen=True)
class Call:
    """How an input is handed over: after ``history`` (earlier calls), or, with
    ``placement`` = (offset, total, guard), as a view inside a guarded buffer."""

    history: tuple[bytes, ...] = ()
    placement: tuple[int, int, int] | None = None

    @property
    def check(self) -> str:
        return "placed" if self.placement is not None else "history"

    def to_json(self) -> dict[str, Any]:
        if self.placement is not None:
            off, total, guard = self.placement
            return {"check": "placed", "offset": off, "total": total, "guard": guard}
        return {"check": "history", "history": [h.hex() for h in self.history]}

    @classmethod
    def from_json(cls, doc: object, length: int) -> Call:
        """The call a sidecar records for an input of ``length`` bytes; ValueError
        saying why when it is not one (a sidecar is hostile)."""
        if not isinstance(doc, dict):
            raise ValueError("'call' is not an object")
        if doc.get("check") == "history":
            hist = doc.get("history")
            if not (isinstance(hist, list) and len(hist) <= MAX_HISTORY
                    and all(isinstance(h, str) and len(h) <= 2 * MENU_BYTES for h in hist)):
                raise ValueError(f"'call.history' is not a list of at most {MAX_HISTORY} "
                                 f"hex strings of at most {MENU_BYTES} bytes")
            try:
                return cls(tuple(bytes.fromhex(h) for h in hist))
            except ValueError:
                raise ValueError("'call.history' holds a string that is not hex") from None
        if doc.get("check") == "placed":
            off, total, guard = (doc.get(k) for k in ("offset", "total", "guard"))
            if not all(type(v) is int for v in (off, total, guard)):
                raise ValueError("'call.offset', 'call.total', 'call.guard' are not integers")
            assert isinstance(off, int) and isinstance(total, int) and isinstance(guard, int)
            if not (off >= 0 and off + length <= total <= length + MAX_GUARD_BYTES
                    and 0 <= guard <= 255):
                raise ValueError(f"'call' places {length} bytes at {off} in {total} with "
                                 f"guard {guard}: not inside, or over {MAX_GUARD_BYTES} "
                                 "guard bytes")
            return cls(placement=(off, total, guard))
        raise ValueError("'call.check' is neither 'history' nor 'placed'")

    def describe(self) -> str:
        """One line, bytes in hex (never decoded text)."""
        if self.placement is not None:
            off, total, guard = self.placement
            return (f"handed over as a view at offset {off} of a {total}-byte buffer of "
                    f"guard bytes {guard:02X}")
        said = "; ".join(h.hex(" ").upper() or "(empty)" for h in self.history)
        return f"after {len(self.history)} earlier call(s): {said}"

    def resized(self, before: int, now: int) -> Call:
        """The same placement for an input of ``now`` bytes (was ``before``): the
        offset and the tail of guard bytes kept."""
        if self.placement is None:
            return self
        off, total, guard = self.placement
        return Call(placement=(off, total - before + now, guard))


def ask(d: Decoder, call: Call, data: bytes) -> Outcome | None:
    """``d``'s outcome of ``data`` handed over by ``call``, never raising (a failure
    is a ``crash``, as :meth:`~Decoder.decode` makes it), checked at the boundary;
    None when ``d`` cannot be asked so."""
    try:
        if call.placement is None:
            out = d.run_after(call.history, data)
        else:
            out = d.run_placed(data, *call.placement)
    except BaseException as e:  # the point: any failure of the decoder is data
        reraise_interrupt(e)
        return d.crash(data, e)
    return None if out is None else checked(out, len(data))


#: The call that starts each question from the same state: one ASCII byte, which
#: any decoder answers plainly (a flag left set by an earlier call is spent on it).
NEUTRAL = b"a"


def settled(d: Decoder, data: bytes) -> Outcome:
    """``d``'s fresh outcome of ``data``: asked after :data:`NEUTRAL`, as every
    question of :func:`judge` is, so that state an earlier input left in a decoder
    is not blamed on the question."""
    d.decode(NEUTRAL)
    return checked(d.decode(data), len(data))


def differs(fresh: Outcome, got: Outcome) -> str | None:
    """Where ``got`` differs from ``fresh`` (the status, or the first view both
    show), in one line; None when it does not."""
    if fresh.status != got.status:
        return f"status {fresh.status}, now {got.status}"
    if not fresh.ok:
        return None
    for v in VIEWS:
        if v not in fresh.shows or v not in got.shows:
            continue
        try:
            a, b = fresh.view(v), got.view(v)
        except ViewUnavailable:
            continue
        if a != b:
            return f"{v} view: fresh {_short(a)}, now {_short(b)}"
    return None


def _short(v: Any) -> str:
    """A view's value in one short line: code points as U+XXXX, never text."""
    if isinstance(v, str):
        v = tuple(map(ord, v))
    if isinstance(v, tuple) and all(type(x) is int for x in v):
        shown = " ".join(f"U+{x:04X}" for x in v[:12])
        return f"[{shown}{' ...' if len(v) > 12 else ''}]"
    return repr(v)[:120]


#: The guard bytes a placement is asked again with, to tell a read outside the
#: input from an offset's effect: an ASCII letter and a continuation byte. A
#: decoder that reads a guard byte shows one of them differently from any other
#: guard (a letter is text of its own; a lone continuation byte is an error where
#: a letter is not), whichever guard it was first asked with: C2, FF and 80 read
#: outside are each one U+FFFD in replace mode, so one other guard of "another
#: kind" can answer the same.
OTHER_GUARDS: tuple[int, ...] = (0x41, 0x80)


def other_guards(guard: int) -> tuple[int, ...]:
    """The guard bytes of :data:`OTHER_GUARDS` other than ``guard``."""
    return tuple(g for g in OTHER_GUARDS if g != guard)


@dataclass(frozen=True)
class Hit:
    """One decoder answering differently when asked by ``call``."""

    decoder: Decoder
    call: Call
    data: bytes
    klass: str
    detail: str
    fresh: Outcome
    got: Outcome


def ask_settled(d: Decoder, call: Call, data: bytes) -> Outcome | None:
    """:func:`ask` after :data:`NEUTRAL`, as :func:`settled` asks fresh."""
    d.decode(NEUTRAL)
    return ask(d, call, data)


def judge(d: Decoder, call: Call, data: bytes, fresh: Outcome) -> Hit | None:
    """``d`` asked by ``call`` (:func:`ask_settled`) against its ``fresh`` outcome:
    the difference and its class, or None (no difference, or ``d`` cannot be asked
    so)."""
    got = ask_settled(d, call, data)
    return None if got is None else compared(d, call, data, fresh, got)


def compared(d: Decoder, call: Call, data: bytes, fresh: Outcome, got: Outcome) -> Hit | None:
    """:func:`judge` of ``got``, ``d``'s answer to ``call``."""
    why = differs(fresh, got)
    if why is None:
        return None
    if call.placement is None:
        return Hit(d, call, data, HISTORY, why, fresh, got)
    off, total, guard = call.placement
    others = other_guards(guard)
    for g in others:
        other = ask_settled(d, Call(placement=(off, total, g)), data)
        if other is not None and differs(got, other) is not None:
            return Hit(d, call, data, OUTSIDE, f"{why}; with guard bytes {g:02X} it "
                       "answers otherwise", fresh, got)
    shown = " and ".join(f"{g:02X}" for g in others)
    return Hit(d, call, data, ALIGNMENT, f"{why}; the same with guard bytes {shown}",
               fresh, got)


def holds(d: Decoder, call: Call, data: bytes, klass: str) -> bool | None:
    """Does ``d`` still answer ``data`` asked by ``call`` otherwise than fresh, with
    class ``klass``? (The minimizer's predicate and replay's.) None: ``d`` cannot
    be asked so."""
    fresh = settled(d, data)
    got = ask_settled(d, call, data)
    if got is None:
        return None
    hit = compared(d, call, data, fresh, got)
    return hit is not None and hit.klass == klass


def offered(d: Decoder) -> dict[str, bool]:
    """Which checks ``d`` may get, by what it declares: history always (a decoder
    that cannot be asked answers :meth:`~Decoder.run_after` with None); placement
    where it takes views or has its own :meth:`~Decoder.run_placed`. A decoder that
    answers None is not asked that check again (:attr:`CallChecks.declined`)."""
    placed = bool(d.takes_views) or type(d).run_placed is not Decoder.run_placed
    return {"history": True, "placed": placed}


class Menu:
    """The inputs a history is drawn from, by kind (:data:`MENU_KINDS`): the last of
    each kind among the checked inputs, the last input that made each decoder raise."""

    def __init__(self) -> None:
        self.kinds: dict[str, bytes] = dict(DEFAULT_MENU)
        self.raised: dict[str, bytes] = {}

    def learn(self, data: bytes) -> None:
        if len(data) > LONG:
            self.kinds["long"] = data[:MENU_BYTES]
            return
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            kind = "truncated" if e.end == len(data) and e.reason == "unexpected end of data" \
                else "ill-formed"
            self.kinds[kind] = data

    def history(self, d: Decoder, h: int) -> tuple[bytes, ...]:
        """One or two inputs for decoder ``d``, chosen by ``h``."""
        out = []
        for _ in range(1 + (h & 1)):
            h >>= 1
            kind = MENU_KINDS[h % len(MENU_KINDS)]
            h //= len(MENU_KINDS)
            got = self.raised.get(d.name) if kind == "raises" else self.kinds.get(kind)
            out.append(got if got is not None else self.kinds["ill-formed"])
        return tuple(out)


#: Bytes that may continue a sequence, one from each continuation range of
#: Table 3-7 (80..8F after F4, 90..9F after ED, A0..BF after E0 and F0).
CONTINUING: tuple[int, ...] = (0x80, 0x90, 0xA0, 0xBF)


def continuing(data: bytes) -> int | None:
    """A byte that continues the sequence the end of ``data`` cuts short (one that
    a decoder reading past the end would take in), or None when the end cuts
    none short."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.end == len(data) and e.reason == "unexpected end of data":
            for g in CONTINUING:
                try:
                    (data + bytes([g])).decode("utf-8")
                except UnicodeDecodeError as e2:
                    if e2.start < e.start or e2.reason != "unexpected end of data":
                        continue
                return g
    return None


def placement(h: int, data: bytes) -> tuple[int, int, int]:
    """The (offset, total, guard) of ``data``, chosen by ``h``: the guard continues
    a sequence the end cuts short (:func:`continuing`), else one of :data:`GUARDS`."""
    off = h % 16
    tail = 1 + (h >> 4) % 16
    guard = continuing(data)
    if guard is None:
        guard = GUARDS[(h >> 8) % len(GUARDS)]
    return off, off + len(data) + tail, guard


@dataclass
class CallChecks:
    """The check stage of the fuzz loop (the module docstring): :meth:`check` each
    compared input; it answers the decoders that answered otherwise."""

    decoders: Sequence[Decoder]
    every: int = CHECK_EVERY
    menu: Menu = field(default_factory=Menu)
    #: Checks made, by check (the run summary's counts).
    asked: Counter[str] = field(default_factory=Counter)
    #: Decoders that answered None to a check: not asked it again.
    declined: dict[str, set[str]] = field(default_factory=dict)
    #: (decoder, class) already hit in this run: a hit is reported once.
    hit: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._checked: set[bytes] = set()
        self._offers = {d.name: offered(d) for d in self.decoders}
        for d in self.decoders:
            for c, yes in self._offers[d.name].items():
                if not yes:
                    self.declined.setdefault(d.name, set()).add(c)

    def due(self, data: bytes) -> bool:
        """Is ``data`` one to check: chosen by its hash, and not checked before in
        this run (a fuzzer repeats inputs - the empty one above all, whose CRC-32
        is 0 - and each would be checked again at full cost)."""
        if self.every <= 0 or zlib.crc32(data) % self.every:
            return False
        if data in self._checked:
            return False
        if len(self._checked) >= MAX_CHECKED:
            self._checked.clear()
        self._checked.add(data)
        return True

    def check(self, data: bytes) -> list[Hit]:
        """Ask every decoder due on ``data`` (:meth:`due` first) about it."""
        h = zlib.crc32(data) // self.every
        slow = h % OUT_OF_PROCESS_FACTOR == 0
        h //= OUT_OF_PROCESS_FACTOR
        hits = []
        for d in self.decoders:
            name = d.name
            declined = self.declined.get(name, ())
            if len(declined) == len(CHECKS) or (is_out_of_process(d) and not slow):
                continue
            # unsettled here (a call or two fewer per decoder): a hit is confirmed
            # by holds(), which settles each question
            fresh = checked(d.decode(data), len(data))
            if fresh.status == "crash" and len(data) <= MENU_BYTES:
                self.menu.raised[name] = data
            for call in (Call(self.menu.history(d, h)),
                         Call(placement=placement(h >> 3, data))):
                if call.check in declined:
                    continue
                answer = ask(d, call, data)
                if answer is None:  # cannot be asked so: not again
                    self.declined.setdefault(name, set()).add(call.check)
                    continue
                self.asked[call.check] += 1
                got = compared(d, call, data, fresh, answer)
                if got is None:
                    continue
                if (name, got.klass) in self.hit:
                    continue
                # a stateful decoder's fresh answer may have been the odd one out
                if holds(d, call, data, got.klass):
                    self.hit.add((name, got.klass))
                    hits.append(got)
        self.menu.learn(data)
        return hits

    def summary(self) -> dict[str, Any]:
        """For the run summary: checks made, and the decoders that declined each."""
        return {"asked": dict(sorted(self.asked.items())),
                "declined": {c: sorted(n for n, s in self.declined.items() if c in s)
                             for c in CHECKS}}


def minimized(hit: Hit, seconds: float | None = None) -> tuple[bytes, Call]:
    """The hit's input and history made as small as they go while its class holds
    (:func:`holds`): the input, then each history input, then history inputs
    dropped; a placement keeps its offset, guard and tail of guard bytes."""
    d, klass = hit.decoder, hit.klass
    data, call = hit.data, hit.call

    def keeps_input(b: bytes) -> bool:
        return bool(holds(d, call.resized(len(data), len(b)), b, klass))

    data = minimize(data, keeps_input, seconds=seconds, max_steps=MINIMIZE_STEPS).data
    call = call.resized(len(hit.data), len(data))
    if call.placement is not None:
        return data, call
    hist = list(call.history)
    for i in range(len(hist) - 1, -1, -1):
        without = Call(tuple(hist[:i] + hist[i + 1:]))
        if hist and holds(d, without, data, klass):
            del hist[i]
    for i in range(len(hist)):
        def keeps_history(b: bytes, i: int = i) -> bool:
            return bool(holds(d, Call(tuple([*hist[:i], b, *hist[i + 1:]])), data, klass))
        hist[i] = minimize(hist[i], keeps_history, seconds=seconds,
                           max_steps=MINIMIZE_STEPS).data
    return data, Call(tuple(hist))


def decoders_checked(decoders: Iterable[Decoder]) -> list[Decoder]:
    """The decoders the check stage asks: every judged one but the references."""
    return [d for d in decoders if not d.name.startswith("ref:")]


def plan(decoders: Iterable[Decoder]) -> dict[str, Any]:
    """The run summary's ``call_checks``: one input in how many is checked (0: off),
    and the checks each decoder gets (:func:`offered`; a plug-in that turns out to
    take only bytes is then not handed views)."""
    every = check_every_default()
    return {"every": every,
            "decoders": {d.name: [c for c, on in offered(d).items() if on and every]
                         for d in decoders_checked(decoders)}}
