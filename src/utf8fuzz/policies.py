"""Policies: how ill-formed bytes are cut into errors, generic over profiles.

A profile says which sequences are well-formed; it does not say how many errors
``E0 80 80`` is. Decoders disagree, and each answer has a tradition:

``maximal-subpart``
    Unicode's "U+FFFD substitution of maximal subparts" (W3C/WHATWG Encoding,
    CPython, ICU 60+, Rust). At each position, the longest prefix of some
    well-formed sequence is one error; a byte that begins none is an error by
    itself. ``E0 80 80`` is three errors (E0 cannot be followed by 80), but
    ``F0 90 80 41`` is one error (``F0 90 80``) and then ``A``.
``per-sequence``
    One error per structurally delimited sequence: the lead byte with as many
    continuation bytes as its high bits announce (RFC 2279 section 2), fewer if
    a non-continuation byte or the end cuts it short. A continuation byte with no
    lead, FE and FF are an error each. This is how the layout of Kuhn's UTF-8
    decoder stress test counts: ``E0 80 80`` (an overlong) is one error.
``per-byte``
    One error per ill-formed byte, as Go's ``utf8.DecodeRune`` counts.
``per-run``
    One error per maximal run of ill-formed bytes: the errors per-byte cutting
    makes, merged while adjacent. This transcribes Go's ``strings.ToValidUTF8``,
    which "returns a copy of the string s with each run of invalid UTF-8 byte
    sequences replaced by the replacement string" (one U+FFFD for the whole run).
    ``E0 80 80`` and ``80 BF C0`` are one error each; ``80 41 80`` is two (``A``
    ends the run), and so is ``80 E2 82 AC 80`` (a well-formed ``€`` ends it).
    A reserved unit is never part of a run: it stays its own token, and the
    bytes either side of it are two runs.

All four agree on well-formed input, and all four start a new attempt right
after an error (per-run then merges attempts that fail next to each other). They
share one walk over the profile's DFA (:mod:`utf8fuzz.profiles.table`): at
position ``i`` the walk reports the end of the longest well-formed sequence
starting at ``i`` (if any) and how far the bytes stay a prefix of one. Only what
happens when there is no well-formed sequence differs, which is the definition of
a policy.

Reserved units (Corrected UTF-8's FE/FF) are decided before any policy: a
reserved lead and every following byte up to the next recognized lead byte form
one ``reserved`` token.

An error's reason is ``truncated`` when everything from its start to the end of
the input is a proper prefix of a well-formed sequence - it is an error only
because the input ended - and ``illegal`` otherwise. So ``E1 80`` at the end is
truncated, and ``E0 80`` at the end is illegal (no byte could complete it). A
per-run error is one error, so the rule reads from the start of the run:
``F0 90 80`` at the end is one truncated run, ``80 E1 80`` one illegal run.
"""

from __future__ import annotations

from utf8fuzz.outcome import Reason, Token
from utf8fuzz.profiles.table import DEAD, Profile, structural_length

POLICIES: tuple[str, ...] = ("maximal-subpart", "per-sequence", "per-byte", "per-run")


def decode_tokens(data: bytes, profile: Profile, policy: str = "maximal-subpart") -> list[Token]:
    """Cut ``data`` into tokens under ``profile`` and ``policy``."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; policies are {', '.join(POLICIES)}")
    dfa = profile.dfa
    trans, accept, live_after, start = dfa.trans, dfa.accept, dfa.live_after, dfa.start
    rows = profile.rows
    single = dfa.single  # byte -> code point, for bytes that are a whole sequence alone
    reserved, recognized = profile.reserved_leads, profile.recognized_leads
    n = len(data)
    near_end = n - profile.max_length  # only errors past here can be truncated
    out: list[Token] = []
    append = out.append
    i = 0
    while i < n:
        b = data[i]
        cp = single[b]
        if cp >= 0:  # ASCII in every profile: skip the walk
            append(Token("char", cp, i, i + 1))
            i += 1
            continue
        if b in reserved:
            j = i + 1
            while j < n and data[j] not in recognized:
                j += 1
            append(Token("reserved", None, i, j))
            i = j
            continue
        # Walk the DFA from i: remember the longest well-formed sequence and how
        # far the bytes stay a prefix of one.
        s = start
        j = i
        best = -1
        best_row = -1
        while j < n:
            s = trans[s][data[j]]
            if s == DEAD:
                break
            j += 1
            if accept[s] >= 0:
                best, best_row = j, accept[s]
            if not live_after[s]:
                break
        if best >= 0:
            append(Token("char", rows[best_row].value(data[i:best]), i, best))
            i = best
            continue
        if policy == "maximal-subpart":
            end = max(j, i + 1)
        elif policy == "per-byte":
            end = i + 1
        elif policy == "per-run":
            end = i + 1
            if out and out[-1].kind == "error" and out[-1].end == i:
                i = out.pop().start  # the run goes on: one error from its start
        else:  # per-sequence
            end = i + 1
            want = structural_length(b)
            while end < n and end - i < want and 0x80 <= data[end] <= 0xBF:
                end += 1
        reason: Reason = "illegal"
        if i > near_end and profile.is_prefix(data[i:]):
            reason = "truncated"
        append(Token("error", None, i, end, reason))
        i = end
    return out
