"""Build test corpora from real outcomes, with the engine's own writer.

Nothing here writes an "expected" decoder output by hand: every outcome in a
sidecar comes from running a real decoder (CPython's codec in its modes, the
engine's planted-bug decoders built on CPython, this project's references)
through the engine's :class:`~utf8fuzz.engine.differ.Differ`, and every sidecar
is written by :func:`utf8fuzz.engine.corpus.build_sidecar` and ``save``.

The few decoders defined here are small plug-ins of the kind a user writes,
each a real behaviour: one that crashes and quotes its input in the exception
(hostile text reaching a crash message), and one that cuts errors per byte
(Go's ``utf8.DecodeRune`` counting), built on the per-byte reference.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import utf8fuzz
from tests.engine.planted import planted_block, planted_c080, planted_truncated4
from utf8fuzz.decoders import cpython
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.corpus import build_sidecar, save
from utf8fuzz.engine.differ import Differ
from utf8fuzz.outcome import Outcome

# The input of the crash message test below: RLO, ESC [ 2 J, NUL, and a byte that
# surrogateescape turns into a lone surrogate (U+DCFF).
HOSTILE = "\u202e".encode() + b"\x1b[2J\x00\xff"


class QuotesInputInCrash(Decoder):
    """A plug-in that raises on ill-formed input with the input in its message,
    decoded with surrogateescape (so the message holds lone surrogates, ESC, RLO)."""

    shows = frozenset({"replace"})

    def __init__(self, name: str = "plugin:quotes-input") -> None:
        self.name = name

    def run(self, data: bytes) -> Outcome:
        text = data.decode("utf-8", "surrogateescape")
        if any(0xDC80 <= ord(c) <= 0xDCFF for c in text):
            raise ValueError(f"cannot decode {text!r} / {text}")
        return Outcome.partial(len(data), replace=[ord(c) for c in text])


class PerByte(Decoder):
    """Replaces every ill-formed byte by its own U+FFFD (Go's counting), claiming
    the unicode profile with maximal-subpart - so it diverges on inputs where the
    policies differ."""

    shows = frozenset({"replace"})

    def __init__(self, name: str = "plugin:per-byte") -> None:
        self.name = name

    def run(self, data: bytes) -> Outcome:
        return Outcome.partial(
            len(data), replace=utf8fuzz.decode(data, "unicode", "per-byte").codepoints()
        )


def cpython_decoders() -> list[Decoder]:
    return [d for d in cpython.discover() if isinstance(d, Decoder)]


def standard_decoders() -> list[Decoder]:
    return [*cpython_decoders(), planted_c080(), planted_truncated4(), planted_block(),
            QuotesInputInCrash(), PerByte()]


# Inputs chosen so that every section of the report has something to show: a
# non-shortest form, a surrogate, a BOM, a truncated 4-byte sequence, a crash with
# hostile text, and a position-dependent block-boundary bug.
STANDARD_INPUTS: tuple[bytes, ...] = (
    b"\x41\xc0\x80\x42",
    b"\xef\xbb\xbf\x41",
    b"\xf0\x90\x41",
    b"\xed\xa0\x80",
    HOSTILE,
    b"\xe1\x80",
)

BLOCK_INPUT = b"a" * 15 + b"\xc0\xaf" + b"b" * 20


def write_corpus(
    root: Path,
    inputs: Iterable[bytes] = STANDARD_INPUTS,
    decoders: Sequence[Decoder] | None = None,
    position_dependent: Iterable[bytes] = (BLOCK_INPUT,),
) -> list[Path]:
    """Run the decoders on each input and save every divergence as an entry."""
    decs = list(decoders if decoders is not None else standard_decoders())
    by_name = {d.name: d for d in decs}
    differ = Differ(decs)
    posdep = set(position_dependent)
    written: list[Path] = []
    for data in [*inputs, *posdep]:
        res = differ.run(data)
        for dv in res.divergences:
            side = build_sidecar(res, dv, by_name, engine="manual", original_size=len(data),
                                 position_dependent=data in posdep)
            path, _ = save(root, side, data)
            written.append(path)
    (root / "seeds").mkdir(parents=True, exist_ok=True)
    return sorted(set(written))


def rewrite_sidecar(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    """Apply ``edit`` to a sidecar's JSON object (for damaged-corpus tests)."""
    obj = json.loads(path.read_text())
    obj = edit(copy.deepcopy(obj)) or obj
    path.write_text(json.dumps(obj))


# An input with every kind of hostile content a report must not pass through: RLO,
# ESC [ 2 J, NUL, a non-shortest form, FF (a lone surrogate under surrogateescape),
# LINE SEPARATOR.
HOSTILE_INPUT = "\u202e".encode() + b"\x1b[2J\x00\xc0\x80\xff" + "\u2028".encode()
HOSTILE_NAME = "plugin:\u202eevil\x1b[2J<b>&"


def hostile_decoders() -> list[Decoder]:
    from tests.engine.planted import Planted, accepts_c080

    return [*cpython_decoders(), QuotesInputInCrash(), Planted(HOSTILE_NAME, accepts_c080)]
