"""Signatures: a deterministic name for each divergence.

A signature is ``<profile>/<class>/<feature>/<decoder>``:

* the *profile* the decoders claim (they are judged against its reference);
* the *class* of difference, seen from the reference at the first difference
  (:data:`CLASSES`);
* the *spec feature* involved, read from the reference's token at the first
  difference (:data:`FEATURES`, :func:`feature_of`);
* the decoder's name: one, never the other decoders that diverged on the same input
  (who else ran is not part of a bug; decoders that share a cause meet in one
  finding, :mod:`.explain`). Corpus format 1 joined several with ``+``; they still
  parse.

Design. Two different bugs must not share a signature, and the same bug found twice
must not get two. So the signature holds what characterises a bug and nothing that
depends on where a fuzzer happened to find it: no byte offset, no input length, no
surrounding bytes. The feature is the *spec's* name for the bytes (non-shortest
form, surrogate, truncated 4-byte sequence at the end, a Corrected UTF-8 offset
row), never the bytes themselves, so ``C0 80`` and ``C1 BF`` found on two nights
are one entry. It is finer than the class alone so that a decoder that accepts
surrogates and also accepts overlongs has two entries.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import NamedTuple

from utf8fuzz.outcome import BAD_OUTCOME_KINDS, Outcome, Token
from utf8fuzz.profiles.table import Profile, structural_length

CLASSES: tuple[str, ...] = (
    "accepts-ill-formed",
    "rejects-well-formed",
    "different-code-point",
    "different-error-offset",
    "different-replacement",
    "different-reason",
    "incremental-differs",
    # a difference in the call, not the bytes (:mod:`.calls`): the decoder against
    # its own fresh outcome, after earlier calls or handed a view of a larger buffer
    "history-dependent",
    "reads-outside-input",
    "alignment-dependent",
    "crash",
    "timeout",
    "bad-outcome",
)
#: The classes of a decoder that gave no outcome to compare: its failure is the
#: finding, named by :func:`failure_feature`, never compared at a view.
#: Severities, most serious first: what a finding's explanation says of its class
#: (:func:`severity_of`) or of its rule (a claimed policy's difference is ``policy``).
SEVERITIES: tuple[str, ...] = ("non-conformance", "reporting", "policy")
_REPORTING_CLASSES = frozenset({"different-error-offset", "different-reason",
                                "different-replacement"})


def severity_of(klass: str) -> str:
    """The severity of a difference of class ``klass``: how errors are reported
    (offsets, reasons, replacements) is ``reporting``, all else ``non-conformance``."""
    return "reporting" if klass in _REPORTING_CLASSES else "non-conformance"


FAILURES: frozenset[str] = frozenset({"crash", "timeout", "bad-outcome"})

#: Fixed feature names; ``truncated-<n>-byte-at-end``, ``incomplete-<n>-byte-sequence``,
#: ``well-formed-<n>-byte`` and ``corrected-offset-<offset>`` are parameterised.
FEATURES: tuple[str, ...] = (
    "non-shortest-form",
    "surrogate",
    "above-10ffff",
    "5-byte-form",
    "6-byte-form",
    "fe-ff",
    "noncharacter",
    "lone-continuation",
    "truncated-<n>-byte-at-end",
    "incomplete-<n>-byte-sequence",
    "ascii",
    "well-formed-<n>-byte",
    "replacement-character",
    "corrected-offset-<offset>",
    "empty",
    "<ExceptionType>",
    "oom",
    "timeout",
    "<bad-outcome kind>",
    "kept-state",
    "guard-bytes",
    "offset",
)


class Signature(NamedTuple):
    """profile/class/feature/decoders (a NamedTuple: the fuzz loop names every
    divergence of every input, known ones included)."""

    profile: str
    klass: str
    feature: str
    decoders: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.profile}/{self.klass}/{self.feature}/{'+'.join(self.decoders)}"

    @property
    def id(self) -> str:
        return signature_id(str(self))

    @classmethod
    def parse(cls, text: str) -> Signature:
        parts = text.split("/", 3)
        if len(parts) != 4 or not all(parts):
            raise ValueError(f"not a signature: {text!r}")
        profile, klass, feature, decs = parts
        if klass not in CLASSES:
            raise ValueError(f"unknown class {klass!r} in signature {text!r}")
        return cls(profile, klass, feature, tuple(decs.split("+")))


@lru_cache(maxsize=1 << 12)
def signature_id(text: str) -> str:
    """The corpus file name of a signature: 16 hex digits of its SHA-256 (cached:
    the fuzz loop asks it of every divergence, and most are known ones)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- spec features ------------------------------------------------------------------


def _ill_formed_feature(data: bytes, tok: Token) -> str:
    """Name the spec feature of an error token from its bytes.

    The checks follow Corrigendum #1, Table 3.1B (which second bytes rule out
    non-shortest forms, surrogates and values above U+10FFFF) and RFC 2279 section 2
    (5- and 6-byte forms). Order matters: the most specific reason first.
    """
    if tok.kind == "reserved":
        return "fe-ff"
    b0 = data[tok.start]
    b1 = data[tok.start + 1] if tok.start + 1 < len(data) else None
    cont1 = b1 is not None and 0x80 <= b1 <= 0xBF
    if 0x80 <= b0 <= 0xBF:
        return "lone-continuation"
    if b0 in (0xFE, 0xFF):
        return "fe-ff"
    if b0 in (0xC0, 0xC1):
        return "non-shortest-form"
    if cont1:
        assert b1 is not None
        if (
            (b0 == 0xE0 and b1 <= 0x9F)
            or (b0 == 0xF0 and b1 <= 0x8F)
            or (b0 == 0xF8 and b1 <= 0x87)
            or (b0 == 0xFC and b1 <= 0x83)
        ):
            return "non-shortest-form"
        if b0 == 0xED and b1 >= 0xA0:
            return "surrogate"
        if b0 == 0xF4 and b1 >= 0x90:
            return "above-10ffff"
        if b0 == 0xEF and b1 == 0xBF and tok.start + 2 < len(data) and data[tok.start + 2] >= 0xBE:
            return "noncharacter"
    if 0xF5 <= b0 <= 0xF7:
        return "above-10ffff"
    if 0xF8 <= b0 <= 0xFB:
        return "5-byte-form"
    if b0 in (0xFC, 0xFD):
        return "6-byte-form"
    n = structural_length(b0)
    if tok.reason == "truncated":
        return f"truncated-{n}-byte-at-end"
    return f"incomplete-{n}-byte-sequence"


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE


def _char_feature(data: bytes, tok: Token, profile: Profile) -> str:
    cp = tok.value
    assert cp is not None
    n = tok.end - tok.start
    if n == 1:
        return "ascii"
    if profile.name == "corrected":
        r = profile.row_of(data[tok.start : tok.end])
        return f"corrected-offset-{r.offset if r is not None else 0}"
    if 0xD800 <= cp <= 0xDFFF:
        return "surrogate"
    if n == 5:
        return "5-byte-form"
    if n == 6:
        return "6-byte-form"
    if cp > 0x10FFFF:
        return "above-10ffff"
    if cp == 0xFFFD:
        return "replacement-character"
    if _is_noncharacter(cp):
        return "noncharacter"
    return f"well-formed-{n}-byte"


def feature_of(data: bytes, tok: Token | None, profile: Profile) -> str:
    """The spec feature of one reference token (see :data:`FEATURES`)."""
    if tok is None:
        return "empty"
    if tok.kind == "char":
        return _char_feature(data, tok, profile)
    return _ill_formed_feature(data, tok)


def failure_feature(outcome: Outcome) -> str:
    """For a crash, what kind of crash, as ClusterFuzz names crashes by type: the
    exception type (``IndexError``); for a process that died, its signal
    (``SIGSEGV``) or exit status (``exit-3``), the same names whether it was an
    in-process decoder re-run in a fork (:mod:`.recover`) or a worker or ``exec:``
    client (:mod:`utf8fuzz.decoders._subprocess`); ``oom`` for one that ran out of
    memory, ``garbage-reply`` for a client whose reply broke the protocol,
    ``failed`` for one that said it failed. For a timeout: ``timeout``. Not the
    input's bytes: one crash bug reached through many inputs must get one
    signature; and not the decoder's name: a segfault and an abort in one decoder
    are two bugs. For a ``bad-outcome``: its kind (``oversized-output``), one of
    :data:`~utf8fuzz.outcome.BAD_OUTCOME_KINDS`."""
    if outcome.status == "timeout":
        return "timeout"
    if outcome.status == "bad-outcome":
        kind = (outcome.detail or "").split(":", 1)[0]
        return kind if kind in BAD_OUTCOME_KINDS else "bad-outcome"
    return _crash_name(outcome.detail or "")


#: How a worker's or exec client's end reads (decoders/_subprocess.py, exec.py):
#: its name (no spaces, not ending in ":", which an exception's type does) and
#: what happened, anchored at the start, so that no stderr text or exception
#: message after it can name a crash.
_DEATH = re.compile(r"(?:oom: )?[^\s:]\S*[^\s:](?: worker)? (?:killed by (?:(SIG[A-Z0-9]+)"
                    r"|signal (\d+))|exited with status (\d+)|(closed its output)|(failed: )"
                    r"|(cannot run: ))|(garbage (?:reply|hello) from )")
#: What :mod:`.recover` puts first for an in-process decoder's death.
_FORKED = re.compile(r"(SIG[A-Z0-9]+|signal-\d+|exit-\d+): ")


@lru_cache(maxsize=1 << 10)
def _crash_name(detail: str) -> str:
    """A crash's kind from its detail (cached: a decoder that crashes on most fuzz
    inputs is named on each of them, by a few kinds)."""
    if detail.startswith("oom:"):
        return "oom"
    m = _FORKED.match(detail)
    if m is not None:
        return m[1]
    m = _DEATH.match(detail)
    if m is not None:
        sig, signum, status, closed, failed, _cannot, garbage = m.groups()
        if sig or signum:
            return sig or f"signal-{signum}"
        if status:
            return f"exit-{status}"
        if garbage:
            return "garbage-reply"
        return "closed-output" if closed else "failed" if failed else "cannot-start"
    head = detail.split(":", 1)[0]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", head.strip()).strip("-")[:60]
    return name or "crash"
