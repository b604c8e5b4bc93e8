"""What a user's decoder claims, as the user writes it: ``@profile[/policy]``.

Plug-ins (``module:attr@corrected/per-byte``) and ``exec:`` programs
(``exec:'./client'@unicode/per-run``) say it the same way, and both are judged
against the reference of exactly that profile and policy. Omitted, the profile is
``unicode`` and the policy ``maximal-subpart`` (Unicode's recommended practice).
"""

from __future__ import annotations

from dataclasses import dataclass

from utf8fuzz import safe
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import get_profile


@dataclass(frozen=True)
class Claim:
    """A parsed claim; None where the user said nothing."""

    profile: str | None = None
    policy: str | None = None

    def __str__(self) -> str:
        """The claim as written (``@unicode/per-byte``), or ``""`` when there is none;
        part of the decoder's name, so two claims of one decoder are two decoders."""
        if self.profile is None:
            return ""
        return f"@{self.profile}" + (f"/{self.policy}" if self.policy else "")


def parse_claim(text: str, spec: str) -> Claim:
    """``"corrected/per-byte"`` (what follows the ``@``) as a Claim; ValueError, one
    line naming ``spec``, for an unknown profile or policy."""
    if not text:
        return Claim()
    profile, slash, policy = text.partition("/")
    shown = safe.text(spec, 200)
    try:
        get_profile(profile)
    except ValueError as e:
        raise ValueError(f"{safe.text(e, 200)} (in {shown!r})") from None
    if slash and policy not in POLICIES:
        raise ValueError(f"unknown policy {safe.text(policy, 60)!r} in {shown!r}; "
                         f"policies are {', '.join(POLICIES)}")
    return Claim(profile, policy or None)
