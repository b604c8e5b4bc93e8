"""Profiles: which byte sequences are well-formed, and what each one means.

One module per spec, each a declarative table in the form of
:mod:`utf8fuzz.profiles.table`:

=============  ================================================================
``unicode``    Unicode Corrigendum #1 Table 3.1B (U+0000..U+10FFFF, no surrogates)
``rfc2279``    RFC 2279 section 2: 1-6 bytes, shortest form, up to U+7FFFFFFF
``kuhn``       rfc2279 less surrogates, U+FFFE and U+FFFF (Kuhn, "What is UTF-8?")
``legacy``     the naive RFC 2279 decoder (accepts overlong forms)
``corrected``  Corrected UTF-8 (offsets, FE/FF reserved, up to U+8421109F)
=============  ================================================================

Profiles for decoders that differ from Unicode on purpose (surrogatepass,
cesu8, mutf8) register here too. To add a profile: write a module with a
``PROFILE`` table and add it to ``_MODULES``.
"""

from __future__ import annotations

import importlib

from utf8fuzz.profiles.table import EncodeError, Profile, Row, row, seq_range

_MODULES: tuple[str, ...] = (
    "unicode",
    "rfc2279",
    "kuhn",
    "legacy",
    "corrected",
    "surrogatepass",
    "cesu8",
    "mutf8",
)


def _load() -> dict[str, Profile]:
    found: dict[str, Profile] = {}
    for mod in _MODULES:
        try:
            m = importlib.import_module(f"utf8fuzz.profiles.{mod}")
        except ModuleNotFoundError as e:
            if e.name != f"utf8fuzz.profiles.{mod}":
                raise
            continue  # not written yet
        found[m.PROFILE.name] = m.PROFILE
    return found


REGISTRY: dict[str, Profile] = _load()
PROFILES: tuple[str, ...] = tuple(REGISTRY)


def get_profile(name: str | Profile) -> Profile:
    if isinstance(name, Profile):
        return name
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown profile {name!r}; profiles are {', '.join(PROFILES)}"
        ) from None


__all__ = [
    "PROFILES",
    "REGISTRY",
    "EncodeError",
    "Profile",
    "Row",
    "get_profile",
    "row",
    "seq_range",
]
