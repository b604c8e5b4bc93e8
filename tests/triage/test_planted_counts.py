"""Findings per planted cause (issue 25): on decoders nobody tuned the explanation
rules to (tests/triage/planted), a right triage reports one finding per planted bug
that the shape can show, and none for a correct decoder.

A small subset of the table, in-process: each decoder (``+inprocess``) meets one
fixed list of inputs through the engine's :class:`~utf8fuzz.engine.finder.Finder`,
and its findings are the distinct finding ids of what it saved, as ``utf8fuzz fuzz``
counts them. The inputs are a seeded draw of pieces that show every planted bug,
the same on every run: no fuzzer's luck. The cases that triage gets wrong today are
``xfail(strict=True)``, so each flips to a failure (to be unmarked) when triage
improves. The whole table, on both engines, is ``scripts/triage_measure.py``
(docs/triage.md).
"""

from __future__ import annotations

import random

import pytest

from tests.triage.planted import CODEC, INCREMENTAL, PLANTED, TEXT, VALIDATOR, Planted, single
from utf8fuzz.decoders import resolve
from utf8fuzz.engine.finder import Finder

#: Pieces that together show every planted bug: well-formed characters of each
#: length, U+FFFD, U+FFFE, a noncharacter, U+0000, and ill-formed pieces of each kind.
PIECES = [bytes.fromhex(h) for h in (
    "41", "00", "C3 A9", "E2 82 AC", "EF BF BD", "EF BF BE", "EF B7 90", "F0 90 80 80",
    "F0 9F 98 80", "80", "BF", "C0 AF", "C1 BF", "E0 80 AF", "F0 80 80 AF", "ED A0 80",
    "ED B0 80", "F4 90 80 80", "F5 80 80 80", "E2 82", "F0 90 80", "C3", "FF")]


def inputs() -> list[bytes]:
    """The fixed inputs: short draws of pieces, some past 16 bytes, some that end in
    a lead byte (the position-dependent bugs)."""
    rng = random.Random(25)
    out = [b"".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))) for _ in range(150)]
    out += [b"A" * 16 + b"".join(rng.choice(PIECES) for _ in range(3)) for _ in range(30)]
    return out


def findings(spec: str) -> set[str]:
    """The finding ids of what the engine saves for ``spec`` on :func:`inputs`."""
    # minimizing is bounded by counts; the seconds only stop it, far past those counts
    finder = Finder(resolve(spec + "+inprocess"), None, "test", minimize_seconds=600,
                    tally=False)
    for x in inputs():
        finder.consider(x)
    return {str(s.finding["id"]) for s in finder.found}


def _planted(attr: str) -> Planted:
    (p,) = [p for p in PLANTED if p.attr == attr]
    return p


def _case(attr: str, shape: str, today: str | None = None):  # type: ignore[no-untyped-def]
    marks = [pytest.mark.xfail(strict=True, reason=today)] if today else []
    return pytest.param(_planted(attr), shape, marks=marks, id=f"{attr}+{shape}")


CASES = [
    _case("correct", CODEC),
    _case("correct", TEXT),
    _case("correct", VALIDATOR),
    _case("Correct", INCREMENTAL),
    _case("accepts_surrogates", TEXT),
    _case("accepts_overlong2", VALIDATOR),
    _case("cuts_per_byte", CODEC),
    _case("cuts_per_sequence", TEXT),
    _case("rejects_fffd", CODEC),
    _case("rejects_fffd", TEXT),  # U+FFFD for U+FFFD: nothing to see
    _case("accepts_overlong2", CODEC,
          "7 findings: its ignore and escape modes' differences are blamed on the features "
          "next to the overlong (lone-continuation, incomplete-N-byte-sequence, ...)"),
    _case("rejects_fffe_ffff", TEXT,
          "5 findings: each U+FFFD it adds is blamed on the feature before it"),
    _case("two_fffd_per_error", TEXT, "11 findings: one different-replacement per feature"),
    _case("strict_end_off_by_one", CODEC, "8 findings: one swallows-next-byte per feature"),
    _case("surrogates_from_offset_16", CODEC,
          "2 findings: a second one blamed on an incomplete 4-byte sequence"),
    _case("LosesSplitSequence", INCREMENTAL,
          "3 findings: one per sequence length (split:2/3/4-byte-sequence)"),
    _case("overlong2_and_per_byte", CODEC, "8 findings for 2 bugs"),
    _case("cesu8_like_trio", CODEC,
          "11 findings for 3 bugs, none named C0 80 or the end-of-input \"0\""),
]


@pytest.mark.parametrize(("planted", "shape"), CASES)
def test_one_finding_per_planted_bug(planted: Planted, shape: str) -> None:
    assert len(findings(planted.spec(shape))) == planted.expected(shape)


def test_the_base_decoder_is_cpython_codec_on_every_short_input() -> None:
    # the planted decoders' base (tests/triage/planted/spec.py) against CPython's
    # codec, a real conforming decoder: every input of up to two bytes, every mode
    # and the strict error's span
    for n in range(0x10000 + 0x100 + 1):
        data = b"" if n == 0 else bytes([n - 1]) if n <= 0x100 else (n - 0x101).to_bytes(2, "big")
        for mode in ("replace", "ignore", "surrogateescape"):
            assert single.correct(data, mode) == data.decode("utf-8", mode), (data, mode)
        try:
            want: object = data.decode("utf-8")
        except UnicodeDecodeError as e:
            want = (e.start, e.end)
        try:
            got: object = single.correct(data)
        except UnicodeDecodeError as e:
            got = (e.start, e.end)
        assert got == want, data
