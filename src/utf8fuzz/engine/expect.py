"""ICU-style expectations: what a conforming decoder must produce for one input.

The shape follows ICU's data-driven conversion tests (``conversion.txt``: bytes,
expected Unicode, expected offsets, and the callback), one block per callback mode:

``substitute``  CPython's ``replace``: every output code point (U+FFFD per error),
                the source offset where its bytes begin, and every error;
``skip``        CPython's ``ignore``: the same without the U+FFFDs;
``stop``        CPython's ``strict``: the output before the first error, and that
                error (``null`` when the input is valid).

Each error carries its offset, its bytes (hex) and its reason: ``illegal``, or
``truncated`` - an incomplete sequence cut off by the end of the input (CPython's
"unexpected end of data", ICU's U_TRUNCATED_CHAR_FOUND, iconv's EINVAL) - or
``reserved`` for Corrected UTF-8's FE/FF units. A prefix that no byte could ever
complete (``E0 80``, ``ED A0`` at the end) is ``illegal``, not truncated.

The expectation is derived from the reference decoder of the profile and policy
(:mod:`utf8fuzz.policies`), so it is exactly as right as the spec transcription.
:func:`check_outcome` checks any decoder's outcome against an expectation at the
resolution the outcome can show; the corpus replay uses it, and so can a user's
own tests.
"""

from __future__ import annotations

from typing import Any

from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.classify import VIEW_ORDER, Judge
from utf8fuzz.outcome import REPLACEMENT, Outcome, Token, format_codepoint


def expectation(data: bytes, profile: str = "unicode",
                policy: str = "maximal-subpart") -> dict[str, Any]:
    ref = Reference(profile, policy)
    toks = ref.decode(data).tokens
    errors = [_error(data, t) for t in toks if t.kind != "char"]
    sub_out = [format_codepoint(_value(t)) for t in toks]
    chars = [t for t in toks if t.kind == "char"]
    first = next((i for i, t in enumerate(toks) if t.kind != "char"), len(toks))
    return {
        "input": data.hex(),
        "profile": ref.profile,
        "policy": policy,
        "substitute": {
            "output": sub_out,
            "offsets": [t.start for t in toks],
            "errors": errors,
        },
        "skip": {
            "output": [format_codepoint(_value(t)) for t in chars],
            "offsets": [t.start for t in chars],
            "errors": errors,
        },
        "stop": {
            "output": sub_out[:first],
            "offsets": [t.start for t in toks[:first]],
            "error": errors[0] if errors else None,
        },
    }


def _value(t: Token) -> int:
    """A char token's code point; U+FFFD for an error or reserved token."""
    return t.value if t.kind == "char" and t.value is not None else REPLACEMENT


def _error(data: bytes, t: Token) -> dict[str, Any]:
    return {
        "offset": t.start,
        "bytes": data[t.start : t.end].hex(" ").upper(),
        "reason": "reserved" if t.kind == "reserved" else t.reason,
    }


def expected_outcome(exp: dict[str, Any]) -> Outcome:
    """The token outcome an expectation describes (rebuilt from ``substitute``)."""
    data = bytes.fromhex(exp["input"])
    sub = exp["substitute"]
    errors = {e["offset"]: e for e in sub["errors"]}
    offsets = [*list(sub["offsets"]), len(data)]
    toks: list[Token] = []
    for i, cp_text in enumerate(sub["output"]):
        start, end = offsets[i], offsets[i + 1]
        e = errors.get(start)
        if e is not None:
            if e["reason"] == "reserved":
                toks.append(Token("reserved", None, start, end))
            else:
                toks.append(Token("error", None, start, end, e["reason"]))
        else:
            toks.append(Token("char", int(cp_text[2:], 16), start, end))
    return Outcome.from_tokens(toks, len(data), data=data)


def check_outcome(out: Outcome, exp: dict[str, Any]) -> str | None:
    """None when ``out`` meets ``exp`` at every view it shows; else one line
    saying where it first does not (class, view and detail)."""
    data = bytes.fromhex(exp["input"])
    ref = Judge(data, expected_outcome(exp), Reference(exp["profile"], exp["policy"]))
    found = ref.compare(out, tuple(v for v in VIEW_ORDER if v in out.shows or not out.ok))
    if found is None:
        return None
    klass, _, view, detail = found
    return f"{klass} ({view} view): {detail}"


def format_text(exp: dict[str, Any]) -> str:
    """A plain-text rendering, one line per mode (hex and U+XXXX only)."""
    lines = [f"input: {exp['input'] or '(empty)'}   profile: {exp['profile']}   "
             f"policy: {exp['policy']}"]
    for mode in ("substitute", "skip", "stop"):
        b = exp[mode]
        pairs = " ".join(f"{c}@{o}" for c, o in zip(b["output"], b["offsets"], strict=True))
        lines.append(f"{mode:<10} output: {pairs or '(none)'}")
        errs = b["errors"] if mode != "stop" else ([b["error"]] if b["error"] else [])
        for e in errs:
            lines.append(f"{'':<10} error at {e['offset']}: {e['bytes']} ({e['reason']})")
        if mode == "stop" and not errs:
            lines.append(f"{'':<10} no error (valid)")
    return "\n".join(lines)
