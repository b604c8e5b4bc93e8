"""Planted decoders for measuring triage (issue 25): decoders nobody tuned the
explanation rules to, each with its bugs named in spec terms, plugged in every
shape it has. :data:`PLANTED` is the table; a right triage reports, for each entry
and shape, exactly as many findings as :meth:`Planted.expected` says.

The codecs (``f(data, errors) -> str``) are in :mod:`.single` (one bug each) and
:mod:`.multi` (two or three), the incremental decoders in :mod:`.streaming`, all
built on the correct decoder of :mod:`.spec`. A codec's other shapes are here:
``text.NAME`` is its replace mode as a ``bytes -> str`` function (``+text``) and
``validator.NAME`` its strict mode as ``bytes -> bool`` (``+validator``)::

    utf8fuzz fuzz --decoder tests.triage.planted.single:accepts_overlong2+codec
    utf8fuzz fuzz --decoder tests.triage.planted:text.accepts_overlong2+text
    utf8fuzz fuzz --decoder tests.triage.planted:validator.accepts_overlong2+validator
    utf8fuzz fuzz --decoder tests.triage.planted.streaming:LosesSplitSequence+incremental
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

from tests.triage.planted import multi, single, streaming

#: The shapes a codec is plugged in as, and what shows each bug.
CODEC, TEXT, VALIDATOR, INCREMENTAL = "codec", "text", "validator", "incremental"
ALL = frozenset({CODEC, TEXT, VALIDATOR})          # seen in accept/reject and in the text
NO_VALIDATOR = frozenset({CODEC, TEXT})            # how errors are cut or written
STRICT_ONLY = frozenset({CODEC})                   # the spans strict mode reports
NO_TEXT = frozenset({CODEC, VALIDATOR})            # U+FFFD for U+FFFD: replace cannot tell


@dataclass(frozen=True)
class Bug:
    """One planted cause and the shapes in which it can be seen at all."""

    kind: str       # acceptance, rejection, spans, replacement, position, streaming
    shows_in: frozenset[str]


@dataclass(frozen=True)
class Planted:
    """A planted decoder: its module and attribute, and its bugs (none: correct)."""

    module: str
    attr: str
    bugs: tuple[Bug, ...]

    @property
    def shapes(self) -> tuple[str, ...]:
        return (INCREMENTAL,) if self.module.endswith("streaming") else (CODEC, TEXT, VALIDATOR)

    def spec(self, shape: str) -> str:
        """The ``--decoder`` spec of this decoder in ``shape``."""
        if shape in (TEXT, VALIDATOR):
            return f"tests.triage.planted:{shape}.{self.attr}+{shape}"
        return f"{self.module}:{self.attr}+{shape}"

    def expected(self, shape: str) -> int:
        """The findings a right triage reports: one per bug that ``shape`` can show."""
        return sum(shape in b.shows_in for b in self.bugs)


def _b(kind: str, shows_in: frozenset[str] = ALL) -> Bug:
    return Bug(kind, shows_in)


_S, _M, _T = "tests.triage.planted.single", "tests.triage.planted.multi", \
    "tests.triage.planted.streaming"

PLANTED: tuple[Planted, ...] = (
    Planted(_S, "correct", ()),
    Planted(_S, "accepts_overlong2", (_b("acceptance"),)),
    Planted(_S, "accepts_overlong3", (_b("acceptance"),)),
    Planted(_S, "accepts_overlong4", (_b("acceptance"),)),
    Planted(_S, "accepts_surrogates", (_b("acceptance"),)),
    Planted(_S, "accepts_above_10ffff", (_b("acceptance"),)),
    Planted(_S, "accepts_continuation_as_latin1", (_b("acceptance"),)),
    Planted(_S, "accepts_cesu8_pairs", (_b("acceptance"),)),
    Planted(_S, "rejects_fffe_ffff", (_b("rejection"),)),
    Planted(_S, "rejects_noncharacters", (_b("rejection"),)),
    Planted(_S, "rejects_f090", (_b("rejection"),)),
    Planted(_S, "rejects_fffd", (_b("rejection", NO_TEXT),)),
    Planted(_S, "rejects_nul", (_b("rejection"),)),
    Planted(_S, "cuts_per_byte", (_b("spans", NO_VALIDATOR),)),
    Planted(_S, "cuts_per_sequence", (_b("spans", NO_VALIDATOR),)),
    Planted(_S, "strict_end_off_by_one", (_b("spans", STRICT_ONLY),)),
    Planted(_S, "two_fffd_per_error", (_b("replacement", NO_VALIDATOR),)),
    Planted(_S, "replace_drops_errors", (_b("replacement", NO_VALIDATOR),)),
    Planted(_S, "replace_with_question_mark", (_b("replacement", NO_VALIDATOR),)),
    Planted(_S, "surrogates_from_offset_16", (_b("position"),)),
    Planted(_S, "drops_lead_at_last_byte", (_b("position"),)),
    Planted(_T, "Correct", ()),
    Planted(_T, "LosesSplitSequence", (_b("streaming", frozenset({INCREMENTAL})),)),
    Planted(_T, "ErrorForSplitSequence", (_b("streaming", frozenset({INCREMENTAL})),)),
    Planted(_M, "overlong2_and_per_byte", (_b("acceptance"), _b("spans", NO_VALIDATOR))),
    Planted(_M, "surrogates_and_two_fffd", (_b("acceptance"), _b("replacement", NO_VALIDATOR))),
    Planted(_M, "fffe_ffff_and_strict_end", (_b("rejection"), _b("spans", STRICT_ONLY))),
    Planted(_M, "overlong3_and_last_byte", (_b("acceptance"), _b("position"))),
    Planted(_M, "overlong2_and_strict_end", (_b("acceptance"), _b("spans", STRICT_ONLY))),
    Planted(_M, "cesu8_like_trio", (_b("position"), _b("acceptance"), _b("acceptance"))),
)


def _as_text(f: Callable[[bytes, str], str]) -> Callable[[bytes], str]:
    def text(data: bytes) -> str:
        return f(data, "replace")
    text.__doc__ = f"{f.__name__} in replace mode: {f.__doc__}"
    text.__qualname__ = text.__name__ = f.__name__
    return text


def _as_validator(f: Callable[[bytes, str], str]) -> Callable[[bytes], bool]:
    def valid(data: bytes) -> bool:
        try:
            f(data, "strict")
        except UnicodeDecodeError:
            return False
        return True
    valid.__doc__ = f"{f.__name__} in strict mode, as a yes or a no: {f.__doc__}"
    valid.__qualname__ = valid.__name__ = f.__name__
    return valid


_CODECS = {p.attr: getattr(single if p.module == _S else multi, p.attr)
           for p in PLANTED if p.module != _T}
#: Each codec's replace mode, ``bytes -> str`` (``+text``).
text = SimpleNamespace(**{name: _as_text(f) for name, f in _CODECS.items()})
#: Each codec's strict mode, ``bytes -> bool`` (``+validator``).
validator = SimpleNamespace(**{name: _as_validator(f) for name, f in _CODECS.items()})

__all__ = ["PLANTED", "Bug", "Planted", "multi", "single", "streaming", "text", "validator"]
