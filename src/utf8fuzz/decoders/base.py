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

Speed is opt-in and lives apart: a decoder may also offer the fuzz loop's cheaper
operations (screens, out-of-process batches), which :mod:`utf8fuzz.engine.screening`
defines and documents. Nothing here depends on them.

An adapter module exposes ``discover() -> list[Decoder | Unavailable]``: what it
can offer on this machine, and for what it cannot, one line saying why.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from utf8fuzz.outcome import Outcome


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

    @abstractmethod
    def run(self, data: bytes) -> Outcome:
        """Decode ``data``. May raise; :meth:`decode` turns that into a crash."""

    def versions(self) -> dict[str, str]:
        """What produced the outcome: library, Unicode/ICU version, code path."""
        return {}

    def decode(self, data: bytes) -> Outcome:
        """:meth:`run`, with any exception turned into a ``crash`` outcome."""
        try:
            out = self.run(data)
        except Exception as e:  # the point: any failure of the decoder is data
            return self.crash(data, e)
        if not out.provenance:
            object.__setattr__(out, "provenance", self.provenance())
        return out

    def crash(self, data: bytes, e: Exception) -> Outcome:
        """The ``crash`` outcome of ``e``, raised by the library on ``data``."""
        return Outcome.failure(len(data), "crash", f"{type(e).__name__}: {e}"[:500],
                               self.versions())

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
