"""The decoder contract: what every decoder is, and all a new one must write.

Modelled on cryptofuzz's modules. A decoder is anything that turns bytes into an
:class:`~utf8fuzz.outcome.Outcome`. It declares

* ``name``      unique and stable, ``family:variant`` (``cpython:replace``, ``icu``,
                ``iconv:ucs4``, ``ref:unicode:maximal-subpart``);
* ``profile``   the profile it claims to implement (it is judged against that
                profile's reference, never against one it does not claim);
* ``policy``    how it claims to cut errors (default maximal-subpart);
* ``shows``     the views its outcomes can show (see :mod:`utf8fuzz.outcome`);
                a view it cannot show is "unsupported", never a difference;
* ``own``       True for this project's decoders (references, fast path): the
                regression corpus requires them to agree with the reference,
                while external decoders must only keep their recorded behaviour;
* ``incremental`` True when it decodes in chunks (its differences from the
                one-shot reference are classed "incremental differs from one-shot");
* ``family``    optional: the family whose one-shot decoders are an incremental
                decoder's siblings (default: the name's part before the first
                ``:``, so ``cpython:incremental``'s are ``cpython:*``); a plug-in's
                ``+incremental`` mode and its ``:oneshot`` sibling share one;
* ``spec``      for a plug-in, the ``module:attr[@profile][+options]`` it was loaded
                from, so a corpus entry can load it again by more than its name;

and implements :meth:`Decoder.run` and, optionally, :meth:`Decoder.versions`. That
is the whole contract: an adapter with only ``run()`` works in every command and in
the fuzz loop. Callers use :meth:`Decoder.decode`, which never raises: an unexpected
exception becomes a ``crash`` outcome carrying the exception's type and message, so
one broken decoder cannot bring the harness down. Adapters that run code out of
process turn a dead process into ``crash`` and a deadline into ``timeout`` themselves.

Two optional operations ask about the call rather than the bytes (cryptofuzz's
optional operations; :mod:`utf8fuzz.engine.calls` asks them): :meth:`Decoder.run_after`
decodes an input after a history of earlier calls, in the state the decoder keeps
between calls, and :meth:`Decoder.run_placed` decodes it handed over as a view into a
larger buffer of guard bytes. Each may answer None: the decoder cannot be asked so,
and that check is not made (and is shown as not made).

Speed is opt-in and lives apart: a decoder may also offer the fuzz loop's cheaper
operations (screens, out-of-process batches), which :mod:`utf8fuzz.engine.screening`
defines and documents. Nothing here depends on them.

An adapter module exposes ``discover() -> list[Decoder | Unavailable]``: what it
can offer on this machine, and for what it cannot, one line saying why.
"""

from __future__ import annotations

import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from utf8fuzz.outcome import Outcome

#: Ctrl-Cs the user sent while a decoder ran (see :func:`install_interrupt_handler`).
_SIGINTS = [0]


def _on_sigint(signum: int, frame: object) -> None:
    _SIGINTS[0] += 1
    raise KeyboardInterrupt


def install_interrupt_handler() -> None:
    """Count the user's Ctrl-Cs (then raise KeyboardInterrupt, as Python's own
    handler does), so that a ``KeyboardInterrupt`` a decoder raises itself is told
    from the user's. Only where Python's default handler is in place, and from the
    main thread: a SIGINT the process inherited ignored stays ignored."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signal.signal(signal.SIGINT, _on_sigint)


def reraise_interrupt(e: BaseException) -> None:
    """Raise ``e`` again when it is the user's interrupt: a KeyboardInterrupt after
    a real SIGINT was counted, or under Python's own handler, which does not count
    (then the two cannot be told apart, and the user's wins). Where SIGINT is
    ignored, every KeyboardInterrupt is a decoder's."""
    if isinstance(e, KeyboardInterrupt):
        handler = signal.getsignal(signal.SIGINT)
        if (handler is _on_sigint and _SIGINTS[0]) or handler is signal.default_int_handler:
            raise e


def describe(e: BaseException) -> str:
    """``Type: message`` of an exception a decoder raised, cut to 500 characters.
    Never raises: a message whose ``__str__`` raises is said to."""
    try:
        said = str(e)
    except BaseException as inner:
        reraise_interrupt(inner)
        said = f"<its message raised {type(inner).__name__}>"
    if type(said) is not str:  # str() of a str subclass gives that subclass
        said = str.__str__(said)
    return f"{type(e).__name__}: {said[:500]}"[:500]


class DecoderTimeout(BaseException):
    """Raised in an in-process decoder that ran past its time (:func:`time_limited`):
    a BaseException, so that the decoder's own ``except Exception`` lets it by."""


def time_limited(run: Callable[[bytes], Outcome], seconds: float) -> Callable[[bytes], Outcome]:
    """``run`` interrupted after ``seconds`` by SIGALRM with :class:`DecoderTimeout`
    (which :meth:`Decoder.decode` makes a ``timeout`` outcome). Python code is
    interrupted wherever it spins; C code only when it returns to the interpreter.
    Off the main thread, where no signal handler can be set, ``run`` as it is."""

    def alarm(signum: int, frame: object) -> None:
        raise DecoderTimeout(f"no answer within {seconds:g} s")

    def limited(data: bytes) -> Outcome:
        if threading.current_thread() is not threading.main_thread():
            return run(data)
        old = signal.signal(signal.SIGALRM, alarm)
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            return run(data)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    return limited


def private_copy(data: bytes) -> bytes:
    """A copy of ``data`` of its own (``bytes(data)`` is ``data``): a decoder that
    writes into its input through ctypes or the C API writes into this one, which
    :func:`mutated` then compares. A 1-byte input is made by ``int.to_bytes``: every
    other way gives CPython's one shared object of that byte, which a decoder that
    wrote into it would change for the whole process."""
    n = len(data)
    return bytes(bytearray(data)) if n > 1 else data[0].to_bytes(1, "little") if n else data


def mutated(data: bytes, provenance: dict[str, str] | None = None) -> Outcome:
    """The ``bad-outcome`` of a decoder that overwrote its input."""
    return Outcome.failure(len(data), "bad-outcome",
                           "mutated-input: the decoder overwrote the bytes it was given",
                           provenance)


def placed(data: bytes, offset: int, total: int, guard: int) -> memoryview:
    """``data`` as a view of ``len(data)`` bytes at ``offset`` inside a fresh
    ``bytearray`` of ``total`` bytes whose other bytes are all ``guard``. The view
    is a slice of the whole buffer's view, so its ``obj`` is the whole buffer (as a
    view a server hands over is)."""
    n = len(data)
    if not (offset >= 0 and offset + n <= total and 0 <= guard <= 255):
        raise ValueError(f"cannot place {n} bytes at {offset} in {total} (guard {guard})")
    buf = bytearray([guard]) * total
    buf[offset:offset + n] = data
    return memoryview(buf)[offset:offset + n]


def family(decoder: str) -> str:
    """The library behind a decoder name: the part before the first ``:``, except
    for a user's decoders, each its own family without its mode (a plug-in's
    ``plugin:m:f[:mode][:oneshot][@claim]``, an ``exec:NAME:mode[:stream][@claim]``
    program): a streaming decoder and its one-shot sibling are one library."""
    head, _, rest = decoder.partition(":")
    if head in ("plugin", "exec"):
        name = rest.split("@", 1)[0].removesuffix(":oneshot").removesuffix(":stream")
        for mode in (":strict", ":replace", ":ignore", ":surrogateescape", ":validate"):
            name = name.removesuffix(mode)
        return f"{head}:{name}"
    return head


@dataclass(frozen=True)
class Unavailable:
    """A decoder this machine cannot offer, and the one-line reason."""

    name: str
    reason: str


class Decoder(ABC):
    """A decoder: its attributes (see the module docstring) and :meth:`run`."""

    name: str = ""
    profile: str = "unicode"
    policy: str = "maximal-subpart"
    shows: frozenset[str] = frozenset()
    incremental: bool = False
    family: str | None = None
    own: bool = False
    spec: str | None = None
    #: :meth:`run` takes any bytes-like object (a memoryview slice of a bytearray) as
    #: it takes bytes, so the base :meth:`run_placed` can hand it one.
    takes_views: bool = False

    @abstractmethod
    def run(self, data: bytes) -> Outcome:
        """Decode ``data``. May raise; :meth:`decode` turns that into a crash."""

    def versions(self) -> dict[str, str]:
        """What produced the outcome: library, Unicode/ICU version, code path."""
        return {}

    def run_after(self, history: Sequence[bytes], data: bytes) -> Outcome | None:
        """Decode each input of ``history`` in the state this decoder keeps between
        calls (the same object or process, nothing reset), ignore their outcomes, then
        decode ``data`` and return its outcome (:meth:`decode`'s, never raising).
        None: this decoder cannot be asked so. The default runs each history input
        through :meth:`run`, its exceptions swallowed, then :meth:`decode`."""
        for h in history:
            try:
                self.run(private_copy(h))
            except BaseException as e:  # its outcome is ignored, a failure too
                reraise_interrupt(e)
        return self.decode(data)

    def run_placed(self, data: bytes, offset: int, total: int, guard: int) -> Outcome | None:
        """Decode ``data`` handed over as a view of ``len(data)`` bytes at ``offset``
        inside a buffer of ``total`` bytes whose other bytes are all ``guard``
        (:func:`placed`). May raise, as :meth:`run`. None when this decoder takes
        only ``bytes``; the default hands :meth:`run` the view when
        :attr:`takes_views` says it takes one."""
        if not self.takes_views:
            return None
        return self.run(cast(bytes, placed(data, offset, total, guard)))

    def decode(self, data: bytes) -> Outcome:
        """:meth:`run`, with anything it raises turned into a ``crash`` outcome -
        ``SystemExit`` and ``KeyboardInterrupt`` too, except the user's own Ctrl-C
        (:func:`reraise_interrupt`) - and an input it overwrote into a
        ``bad-outcome`` (``mutated-input``): see :func:`mutated`."""
        mine = private_copy(data)
        try:
            out = self.run(mine)
        except BaseException as e:  # the point: any failure of the decoder is data
            reraise_interrupt(e)
            return self.crash(data, e)
        if mine != data:
            return mutated(data, self.versions())
        if not out.provenance:
            object.__setattr__(out, "provenance", self.provenance())
        return out

    def crash(self, data: bytes, e: BaseException) -> Outcome:
        """The ``crash`` outcome of ``e``, raised by the library on ``data`` (a
        ``timeout`` when ``e`` is a :class:`DecoderTimeout`)."""
        if isinstance(e, DecoderTimeout):
            return Outcome.failure(len(data), "timeout", str(e), self.versions())
        return Outcome.failure(len(data), "crash", describe(e), self.versions())

    def provenance(self) -> dict[str, str]:
        """:meth:`versions`, asked once: most adapters' never change while the
        process lives, and :meth:`decode` runs for every fuzz input. Adapters whose
        versions can change (the fast path's forced code path) put provenance on the
        outcome themselves."""
        cached: dict[str, str] | None = self.__dict__.get("_cached_versions")
        if cached is None:
            cached = self.__dict__["_cached_versions"] = self.versions()
        return cached

    def close(self) -> None:  # noqa: B027 - optional operation, a no-op by default
        """Release processes or handles; the harness calls it at exit."""

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "profile": self.profile,
            "policy": self.policy,
            "shows": sorted(self.shows),
            "incremental": self.incremental,
            "own": self.own,
            "versions": self.versions(),
        }

    def __repr__(self) -> str:
        return f"<decoder {self.name} ({self.profile}, {self.policy})>"
