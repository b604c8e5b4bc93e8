"""What the differ produces: differences, divergences, and the result of one input.

* :class:`Difference`: one decoder against its reference on one input: the class
  and the spec feature of its first difference (:mod:`.classify`), where, and in
  which view.
* :class:`Divergence`: one decoder's difference from its reference, named by one
  :class:`~.signature.Signature`. :class:`Grouper` makes them from differences: the
  byte offset is recorded, never part of the name, and neither is any other decoder
  that happened to differ on the same input.
* :class:`Result`: what the differ saw on one input. Its outcomes and divergences are
  built on first access: in the fuzz loop nobody asks unless something new diverged.
* :func:`assert_agree`: a divergence as an exception whose class is unique to its
  signature, for property tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from utf8fuzz.engine.signature import Signature
from utf8fuzz.outcome import Outcome, unpack_tokens

if TYPE_CHECKING:
    from utf8fuzz.decoders.base import Decoder
    from utf8fuzz.decoders.reference import Reference


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
    """A decoder that differs from its reference in one class and feature (sidecars
    of corpus format 1 may name several decoders in one)."""

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
        self._group: Grouper | None = None
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
        if isinstance(w, tuple):
            w = self._walks = dict(zip(*w, strict=True))
        return w

    @property
    def outcomes(self) -> dict[str, Outcome]:
        if self._lazy is not None:
            oracles, screened = self._lazy
            out: dict[str, Outcome] = {}
            for key, walk in self.walks.items():
                ref = oracles[key]
                out[ref.name] = walk.outcome(ref.provenance())
            for d, seen in screened:
                out[d.name] = self._of_screen(d, seen)
            out.update(self._outcomes)
            self._outcomes = out
            self._lazy = None
        return self._outcomes

    def _of_screen(self, d: Decoder, seen: dict[str, Any]) -> Outcome:
        packed = seen.get("tokens")
        return (Outcome(len(self.data), views=seen, provenance=d.provenance())
                if type(packed) is not bytes  # else: every token, so every view
                else outcome_of_packed(packed, self.data, d.provenance()))

    def outcome_of(self, name: str) -> Outcome | None:
        """One decoder's outcome (None for a name that did not run), without
        building every other one as :attr:`outcomes` does: the fuzz loop's policy
        tally (:mod:`.policy_tally`) asks it of the decoders that diverged."""
        got = self._outcomes.get(name)
        if got is not None or self._lazy is None:
            return got
        for d, seen in self._lazy[1]:
            if d.name == name:
                return self._of_screen(d, seen)
        return None

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


class Grouper:
    """Differences into divergences: one per decoder, named by its profile, class,
    feature and its own name.

    Design. A signature never names a second decoder: which other decoders differ on
    the same input depends on the run (who else was there, what else the input
    held), and one bug must keep one name whichever they are. Decoders that share a
    cause are brought together one level up, by their finding (:mod:`.explain`).

    Called for nearly every fuzz input (known divergences too), so it keeps one
    Signature object per signature for the whole run, and :meth:`signatures`
    names them without making the Divergence objects, which only a new signature
    (or a caller of :attr:`Result.divergences`) needs."""

    def __init__(self, names: Mapping[tuple[str, str], str], policy: dict[str, str]) -> None:
        self.names, self.policy = names, policy
        self.known: dict[tuple[str, str, str, str], Signature] = {}
        # the signatures of each combination of differences met (known bugs make the
        # same few on nearly every input)
        self._sets: dict[tuple[tuple[str, str, str, str], ...], list[Signature]] = {}

    def _signature(self, x: Difference) -> Signature:
        key = (x.profile, x.klass, x.feature, x.decoder)
        sig = self.known.get(key)
        if sig is None:
            if len(self.known) > 1 << 14:  # a run meets few; a pathological one is bounded
                self.known.clear()
            sig = self.known[key] = Signature(x.profile, x.klass, x.feature, (x.decoder,))
        return sig

    def signatures(self, diffs: list[Difference]) -> list[Signature]:
        """The signatures of ``diffs`` (a list shared by every caller: not to be
        changed)."""
        key = tuple([(x.decoder, x.profile, x.klass, x.feature) for x in diffs])
        got = self._sets.get(key)
        if got is None:
            if len(self._sets) > 1 << 14:  # bounded, as known
                self._sets.clear()
            got = self._sets[key] = [self._signature(x) for x in diffs]
        return got

    def divergences(self, diffs: list[Difference]) -> list[Divergence]:
        out = [Divergence(self._signature(x), self.names[x.profile, self.policy[x.decoder]],
                          x.offset, x.view, x.detail, (x,)) for x in diffs]
        out.sort(key=lambda d: d.signature)
        return out


def outcome_of_packed(packed: bytes, data: bytes,
                      provenance: dict[str, str] | None = None) -> Outcome:
    """The outcome of packed tokens (:func:`utf8fuzz.outcome.pack_tokens`) on
    ``data``: every view follows from them."""
    return Outcome.from_tokens(unpack_tokens(packed), len(data), provenance, data=data)


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
