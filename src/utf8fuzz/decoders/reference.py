"""The reference decoders: every profile under every policy.

These are the spec transcriptions themselves (:mod:`utf8fuzz.profiles` and
:mod:`utf8fuzz.policies`), named ``ref:<profile>:<policy>``. Each shows every
view, since it produces tokens. They walk the profile's compiled table with
:func:`utf8fuzz.profiles.walk.walker` (in C, held equal to ``decode_tokens`` by
its tests; ``UTF8FUZZ_PURE_REFERENCE=1`` walks it in Python).
"""

from __future__ import annotations

from collections.abc import Callable

from utf8fuzz import __version__
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import VIEWS, Outcome
from utf8fuzz.policies import POLICIES, decode_tokens
from utf8fuzz.profiles import REGISTRY, get_profile
from utf8fuzz.profiles.table import Profile
from utf8fuzz.profiles.walk import Walk, walker


class Reference(Decoder):
    shows = frozenset(VIEWS)
    own = True

    def __init__(self, profile: str | Profile, policy: str = "maximal-subpart") -> None:
        #: The compiled table of the profile this reference walks (a registered
        #: profile's name, or a table of its own: triage's models of a decoder).
        self.table: Profile = get_profile(profile)
        self._profile = self.table
        self.profile = self._profile.name
        self.policy = policy
        self.name = reference_name(self.profile, policy)
        # An unknown policy raises when decoding, as decode_tokens does.
        self._walker = walker(self._profile, policy) if policy in POLICIES else None

    @property
    def walker(self) -> Callable[[bytes], Walk] | None:
        """The walker itself (a C callable when compiled), or None for an unknown
        policy: what the fuzz loop calls per input, without :meth:`walk`'s frame."""
        return self._walker

    def run(self, data: bytes) -> Outcome:
        return self.walk(data).outcome(self.versions())

    def walk(self, data: bytes) -> Walk:
        """This reference's walk of ``data``: tokens, views and coverage features,
        each built when first asked for."""
        if self._walker is None:
            decode_tokens(data, self._profile, self.policy)  # raises: unknown policy
            raise AssertionError("unreachable")
        return self._walker(data)

    def versions(self) -> dict[str, str]:
        return {"utf8fuzz": __version__, "spec": self._profile.spec}


def reference_name(profile: str, policy: str = "maximal-subpart") -> str:
    return f"ref:{profile}:{policy}"


def reference(profile: str, policy: str = "maximal-subpart") -> Reference:
    return Reference(profile, policy)


def discover() -> list[Decoder | Unavailable]:
    return [Reference(p, pol) for p in REGISTRY for pol in POLICIES]
