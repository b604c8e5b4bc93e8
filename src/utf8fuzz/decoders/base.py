"""The decoder interface: one small plug-in shape for every decoder.

Modelled on cryptofuzz's modules. A decoder is anything that turns bytes into an
:class:`~utf8fuzz.outcome.Outcome`. It declares

* ``name``      unique and stable, ``family:variant`` (``cpython:replace``, ``icu``,
                ``iconv:ucs4``, ``ref:unicode:maximal-subpart``);
* ``profile``   the profile it claims to implement (it is judged against that
                profile's reference, never against one it does not claim);
* ``policy``    how it claims to cut errors (default maximal-subpart);
* ``shows``     the views its outcomes can show (see :mod:`utf8fuzz.outcome`);
                a view it cannot show is "unsupported", never a difference;
* ``incremental`` True when it decodes in chunks (its differences from the
                one-shot reference are classed "incremental differs from one-shot");
* ``spec``      for a plug-in, the ``module:attr[@profile][+options]`` it was loaded
                from, so a corpus entry can load it again by more than its name;
* ``batched``   True for an out-of-process decoder whose :meth:`decode_many` is
                much cheaper per input than :meth:`decode`: the fuzz loop then
                compares it in batches (:meth:`~utf8fuzz.engine.differ.Differ.run_batch`);
* ``own``       True for this project's decoders (references, fast path): the
                regression corpus requires them to agree with the reference,
                while external decoders must only keep their recorded behaviour.

and implements :meth:`Decoder.run`. Callers use :meth:`Decoder.decode`, which never
raises: an unexpected exception becomes a ``crash`` outcome carrying the
exception's type and message, so one broken decoder cannot bring the harness
down. Adapters that run code out of process (node, isolated plug-ins) turn a
dead process into ``crash`` and a deadline into ``timeout`` themselves.

*Screening* (optional, :meth:`Decoder.screen`): the fuzz loop's cheap first tier.
A decoder that can give a few views from one cheap library call returns them; the
differ compares those with the reference and builds the full outcome only when
they differ (or, on a sample of inputs, always). See :mod:`utf8fuzz.engine.differ`.

An adapter module exposes ``discover() -> list[Decoder | Unavailable]``: what it
can offer on this machine, and for what it cannot, one line saying why.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from utf8fuzz.outcome import Outcome


@dataclass(frozen=True)
class Unavailable:
    """A decoder this machine cannot offer, and the one-line reason."""

    name: str
    reason: str


class Decoder(ABC):
    name: str = ""
    profile: str = "unicode"
    policy: str = "maximal-subpart"
    shows: frozenset[str] = frozenset()
    incremental: bool = False
    batched: bool = False
    screen_complete: bool = False
    own: bool = False
    spec: str | None = None

    @abstractmethod
    def run(self, data: bytes) -> Outcome:
        """Decode ``data``. May raise; :meth:`decode` turns that into a crash."""

    def versions(self) -> dict[str, str]:
        """What produced the outcome: library, Unicode/ICU version, code path."""
        return {}

    def decode(self, data: bytes) -> Outcome:
        try:
            out = self.run(data)
        except Exception as e:  # the point: any failure of the decoder is data
            return self.crash(data, e)
        if not out.provenance:
            object.__setattr__(out, "provenance", self._provenance())
        return out

    def crash(self, data: bytes, e: Exception) -> Outcome:
        """The ``crash`` outcome of ``e``, raised by the library on ``data``: what
        :meth:`decode` returns then (and what a screen may hand over instead of
        None, see :meth:`screen`)."""
        return Outcome.failure(len(data), "crash", f"{type(e).__name__}: {e}"[:500],
                               self.versions())

    def _provenance(self) -> dict[str, str]:
        # versions() of most adapters never change while the process lives, and
        # decode() runs for every fuzz input: ask once. Adapters whose versions can
        # change (the fast path's forced code path) put provenance on the outcome.
        cached: dict[str, str] | None = self.__dict__.get("_cached_versions")
        if cached is None:
            cached = self.__dict__["_cached_versions"] = self.versions()
        return cached

    def screen(self, data: bytes) -> dict[str, Any] | Outcome | None:
        """A few views from the cheapest real library call, or None (the default).

        Optional, cryptofuzz-style: a decoder that does not screen is simply
        decoded in full, and a view a screen leaves out is never a difference. The
        views have the shapes :meth:`Outcome.view` gives (``(start, end)`` or None for
        strict, a tuple of spans for spans, a reason string or None), except that
        replace/ignore/escape may be given as the ``str`` the library returned (the
        view is its code points): the differ compares it with the reference's text
        as one string comparison, where a tuple of ints would first have to be
        built; and ``tokens`` as bytes, packed by
        :func:`~utf8fuzz.outcome.pack_tokens` (C that makes tokens packs them
        without a Token object each, and the differ compares one bytes). Each
        must equal the same view of this decoder's own full outcome (tests check
        it on arbitrary bytes). None means "cannot say cheaply here": the differ
        then calls :meth:`decode`. A screen
        must not hide a crash: if the cheap call raises, return None, so that the
        full path runs and turns the exception into a ``crash`` outcome - or, when
        the cheap call is the very call :meth:`run` makes, return that outcome,
        ``self.crash(data, e)``, which the differ judges as the full outcome
        without calling the library again (the pure-Python mutf8 raises on most
        fuzz inputs).

        ``screen_complete = True`` promises more: every screen that answers gives
        *every* view of the full outcome on that input (a strict decoder's text too
        when the input is valid), so decoding in full would show nothing the screen
        did not; the tests hold each such adapter to it. Such a screen may give its
        packed tokens alone, ``{"tokens": ...}``, when the outcome is made from
        tokens: every view follows from them (the ICU adapter's does; the differ
        makes the views where it does not compare tokens). The differ then never
        decodes it in full just to sample (``full_every``), only on a mismatch.
        """
        return None

    def complete_screen(self, data: bytes) -> dict[str, Any] | Outcome | None:
        """Every view, as a complete screen gives them (see :meth:`screen`), for a
        decoder whose :meth:`screen` is cheap and partial and whose :meth:`run` is
        expensive; or None (the default): decode in full.

        Optional. The differ calls it where it would otherwise decode in full just
        to sample (``full_every``), and judges what it gives as it is. Why: the fast
        path's cheap screen is two calls (about 3,000 instructions an input,
        callgrind), its full outcome a token derivation in Python (about 150,000);
        the same derivation in C, as a complete screen, costs 25,000 - a sixth of
        the full outcome, but eight times the cheap screen, so it stands in for the
        one and not the other."""
        return None

    def _bind_c(self, cls: type, operation: str, c: Callable[[], Any] | None) -> None:
        """Make ``operation`` (``"screen"`` or ``"complete_screen"``) the C callable
        ``c()`` gives - C glue doing what the method does, without a Python frame
        (the differ's loop calls it from C) - when there is such C (``c`` is not
        None) and this is ``cls`` itself: a subclass (a planted bug) may override
        what the method reads, so it keeps the method. Tests hold each to its
        method."""
        if c is not None and type(self) is cls:
            setattr(self, operation, c())

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        """Decode several inputs, in order. Optional: out-of-process adapters (node,
        isolated plug-ins) override it to send one batch instead of a round trip each."""
        return [self.decode(d) for d in inputs]

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
