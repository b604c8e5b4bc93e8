"""The in-process measurement: a decoder's findings on one fixed list of inputs,
through the engine's :class:`~utf8fuzz.loop.finder.Finder` (what both engines feed),
without a fuzzer's luck: the same inputs, the same findings, on every run."""

from __future__ import annotations

import random

from utf8fuzz.decoders.plugin import load_all
from utf8fuzz.loop.finder import Finder

#: Pieces that together show every planted bug: well-formed characters of each
#: length, U+FFFD, U+FFFE, a noncharacter, U+0000, and ill-formed pieces of each kind.
PIECES = [bytes.fromhex(h) for h in (
    "41", "00", "C3 A9", "E2 82 AC", "EF BF BD", "EF BF BE", "EF B7 90", "F0 90 80 80",
    "F0 9F 98 80", "80", "BF", "C0 AF", "C1 BF", "E0 80 AF", "F0 80 80 AF", "ED A0 80",
    "ED B0 80", "F4 90 80 80", "F5 80 80 80", "E2 82", "F0 90 80", "C3", "FF")]


#: Sequences a bug shows on only as they are, which no draw of :data:`PIECES` holds:
#: C0 80 (modified UTF-8's U+0000, where C0 AF and C1 BF are other overlongs).
WHOLE = [bytes.fromhex("C0 80")]


def inputs() -> list[bytes]:
    """The fixed inputs: 150 short draws of pieces (1 to 6), then 30 after 16 bytes of
    ASCII (the position-dependent bugs), then each of :data:`WHOLE` alone and between
    ASCII (after the draws, which it leaves as they were)."""
    rng = random.Random(25)
    out = [b"".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))) for _ in range(150)]
    out += [b"A" * 16 + b"".join(rng.choice(PIECES) for _ in range(3)) for _ in range(30)]
    out += [x for w in WHOLE for x in (w, b"A" + w + b"A")]
    return out


def findings(spec: str, data: list[bytes] | None = None) -> dict[str, tuple[str, int]]:
    """Finding id -> (rule, signatures) of what the engine saves for ``spec``, a
    plug-in (run ``+inprocess``), on :func:`inputs` (or ``data``): the findings
    ``utf8fuzz fuzz`` counts. Loaded as ``resolve`` loads a plug-in, without discovering every other
    decoder (which runs ``ldconfig``), so that it starts no process."""
    # minimizing is bounded by counts; the seconds only stop it, far past those counts
    finder = Finder(load_all(spec + "+inprocess"), None, "test", minimize_seconds=600,
                    tally=False)
    for x in inputs() if data is None else data:
        finder.consider(x)
    out: dict[str, tuple[str, int]] = {}
    for s in finder.found:
        rule, n = out.get(str(s.finding["id"]), (str(s.finding["rule"]), 0))
        out[str(s.finding["id"])] = (rule, n + 1)
    return out
