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

Large inputs. :func:`expectation` holds one Python object per token, fine for a
fuzz finding, not for a megabyte (a 1 MB random input took 16 s and 1.3 GB as
JSON). What ``utf8fuzz expect`` prints is made from the reference's walk a token
at a time instead: :func:`write_json` writes exactly ``json.dumps(expectation(...),
indent=2)`` in pieces, and :func:`summary_text` is :func:`format_text` of it, which
lists the first :data:`TEXT_ITEMS` code points and :data:`TEXT_ERRORS` errors of
each mode and counts the rest. Both take linear time and memory of a few dozen
bytes per token (the walk's own arrays).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from utf8fuzz.decoders.reference import Reference
from utf8fuzz.engine.classify import VIEW_ORDER, Judge
from utf8fuzz.outcome import REPLACEMENT, Outcome, Token, format_codepoint

#: The text rendering lists at most this many output code points, and error lines,
#: per mode, and this many input bytes; it counts the rest (``--json`` has them all).
TEXT_ITEMS = 1000
TEXT_ERRORS = 100
#: How many JSON lines :func:`write_json` gathers before each write.
_PIECES = 1 << 14


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
    """A plain-text rendering, one line per mode (hex and U+XXXX only); long lists
    are cut (:data:`TEXT_ITEMS`, :data:`TEXT_ERRORS`) with a count of the rest."""
    return _format(exp, None)


def _format(exp: dict[str, Any], totals: dict[str, tuple[int, int]] | None) -> str:
    """``exp``'s lists may be cut already; ``totals`` then gives each mode's
    (code points, errors) in full."""
    hexin, nbytes = exp["input"], exp.get("length", len(exp["input"]) // 2)
    shown = hexin[: 2 * TEXT_ITEMS]
    more = f" ... (+{nbytes - len(shown) // 2} more bytes)" if nbytes > len(shown) // 2 else ""
    lines = [f"input: {shown or '(empty)'}{more}   profile: {exp['profile']}   "
             f"policy: {exp['policy']}"]
    for mode in ("substitute", "skip", "stop"):
        b = exp[mode]
        errs = b["errors"] if mode != "stop" else ([b["error"]] if b["error"] else [])
        n_out, n_err = totals[mode] if totals else (len(b["output"]), len(errs))
        pairs = " ".join(f"{c}@{o}" for c, o in zip(b["output"][:TEXT_ITEMS],
                                                     b["offsets"][:TEXT_ITEMS], strict=True))
        if n_out > TEXT_ITEMS:
            pairs += f" ... (+{n_out - TEXT_ITEMS} more)"
        lines.append(f"{mode:<10} output: {pairs or '(none)'}")
        for e in errs[:TEXT_ERRORS]:
            lines.append(f"{'':<10} error at {e['offset']}: {e['bytes']} ({e['reason']})")
        if n_err > TEXT_ERRORS:
            lines.append(f"{'':<10} ... (+{n_err - TEXT_ERRORS} more errors)")
        if mode == "stop" and not errs:
            lines.append(f"{'':<10} no error (valid)")
    return "\n".join(lines)


# -- large inputs: from the walk, a chunk of tokens at a time ---------------------------


class _Walked:
    """The reference's tokens of one input as its walk packs them
    (:func:`~utf8fuzz.outcome.pack_tokens`: kind | reason << 8, start, end, value
    or -1), read a chunk at a time, never as one Token object each."""

    def __init__(self, data: bytes, profile: str, policy: str) -> None:
        ref = Reference(profile, policy)
        self.data, self.profile, self.policy = data, ref.profile, policy
        self.walk = ref.walk(data)
        self._packed = memoryview(self.walk.packed).cast("q")
        self.n = len(self._packed) // 4
        first = self.walk.first_error
        self.first = first if first >= 0 else self.n

    def field(self, k: int, stop: int | None = None) -> Iterator[list[int]]:
        """Field ``k`` (0 kind | reason << 8, 1 start, 2 end, 3 value) of tokens
        ``[0, stop)``, in lists of up to :data:`_PIECES`."""
        m, stop = self._packed, self.n if stop is None else stop
        for i in range(0, stop, _PIECES):
            yield m[4 * i + k : 4 * min(i + _PIECES, stop) : 4].tolist()

    def token(self, i: int) -> tuple[int, int, int, int]:
        """Token ``i``'s four fields."""
        k, start, end, value = self._packed[4 * i : 4 * i + 4].tolist()
        return k, start, end, value

    def chunks(self, stop: int | None = None) -> Iterator[tuple[list[int], ...]]:
        """(kinds, starts, ends, values) of tokens ``[0, stop)``, chunk by chunk."""
        return zip(*(self.field(k, stop) for k in range(4)), strict=True)


def _cp(v: int) -> str:
    return format_codepoint(v if v >= 0 else REPLACEMENT)


def _reason(kind: int) -> str | None:
    """A packed kind's reason, as :func:`_error` gives it."""
    if kind & 0xFF == 2:
        return "reserved"
    return (None, "illegal", "truncated")[kind >> 8]


def summary_text(data: bytes, profile: str = "unicode", policy: str = "maximal-subpart") -> str:
    """``format_text(expectation(data, profile, policy))``, without the expectation:
    one pass over the walk keeps what the text shows and counts the rest."""
    w = _Walked(data, profile, policy)
    sub_out: list[str] = []
    sub_off: list[int] = []
    skip_out: list[str] = []
    skip_off: list[int] = []
    errors: list[dict[str, Any]] = []
    n_char = 0
    for kinds, starts, ends, values in w.chunks():
        n_char += kinds.count(0)
        room = TEXT_ITEMS - len(sub_out)
        sub_out += map(_cp, values[:room])
        sub_off += starts[:room]
        for i, k in enumerate(kinds):
            if len(skip_out) >= TEXT_ITEMS and len(errors) >= TEXT_ERRORS:
                break
            if k == 0:
                if len(skip_out) < TEXT_ITEMS:
                    skip_out.append(_cp(values[i]))
                    skip_off.append(starts[i])
            elif len(errors) < TEXT_ERRORS:
                errors.append({"offset": starts[i], "bytes": _hex(data, starts[i], ends[i]),
                               "reason": _reason(k)})
    n_err = w.n - n_char
    stop_n = min(w.first, TEXT_ITEMS)
    exp = {
        "input": data[:TEXT_ITEMS].hex(), "length": len(data),
        "profile": w.profile, "policy": policy,
        "substitute": {"output": sub_out, "offsets": sub_off, "errors": errors},
        "skip": {"output": skip_out, "offsets": skip_off, "errors": errors},
        "stop": {"output": sub_out[:stop_n], "offsets": sub_off[:stop_n],
                 "error": errors[0] if errors else None},
    }
    totals = {"substitute": (w.n, n_err), "skip": (n_char, n_err),
              "stop": (w.first, 1 if n_err else 0)}
    return _format(exp, totals)


_HEX = tuple(f"{b:02X}" for b in range(256))


def _hex(data: bytes, start: int, end: int) -> str:
    return data[start:end].hex(" ").upper()


def write_json(data: bytes, write: Callable[[str], object], profile: str = "unicode",
               policy: str = "maximal-subpart") -> None:
    """Write ``json.dumps(expectation(data, profile, policy), indent=2)`` through
    ``write``, in pieces of at most :data:`_PIECES` lines (and the input's hex)."""
    w = _Walked(data, profile, policy)
    ind = " " * 6  # a list item's indent: {"mode": {"key": [item]}}

    def array(key: str, pieces: Iterator[list[str]], last: bool = False) -> None:
        write(f'    "{key}": [')
        sep = "\n"
        for items in pieces:
            if items:
                write(sep + ",\n".join(items))
                sep = ",\n"
        write("]" if sep == "\n" else "\n    ]")
        write("\n" if last else ",\n")

    def error(start: int, end: int, kind: int, ind: str) -> str:
        return (f'{{\n{ind}  "offset": {start},\n{ind}  "bytes": "{_hex(data, start, end)}",'
                f'\n{ind}  "reason": {json.dumps(_reason(kind))}\n{ind}}}')

    # The loops below run once a token (some 10^6 times for a megabyte): inline
    # formatting, a lookup table of single bytes (most errors), and each error's
    # closing lines made once per kind.
    head = f'{ind}{{\n{ind}  "offset": '
    tails = {k: f'",\n{ind}  "reason": {json.dumps(_reason(k))}\n{ind}}}'
             for k in (1, 1 | 1 << 8, 1 | 2 << 8, 2)}

    small = [f'{ind}"U+{v:04X}"' for v in range(0x800)]  # 1- and 2-byte forms
    replacement = f'{ind}"U+{REPLACEMENT:04X}"'

    def output(stop: int | None = None, chars: bool = False) -> Iterator[list[str]]:
        for kinds, _, _, values in w.chunks(stop):
            if chars:
                values = [v for k, v in zip(kinds, values, strict=True) if k == 0]
            yield [small[v] if 0 <= v < 0x800 else replacement if v < 0 else f'{ind}"U+{v:04X}"'
                   for v in values]

    def offsets(stop: int | None = None, chars: bool = False) -> Iterator[list[str]]:
        for kinds, starts, _, _ in w.chunks(stop):
            if chars:
                starts = [s for k, s in zip(kinds, starts, strict=True) if k == 0]
            yield [f"{ind}{s}" for s in starts]

    def errors() -> Iterator[list[str]]:
        for kinds, starts, ends, _ in w.chunks():
            yield [f'{head}{s},\n{ind}  "bytes": "'
                   f'{_HEX[data[s]] if e - s == 1 else _hex(data, s, e)}{tails[k]}'
                   for k, s, e in zip(kinds, starts, ends, strict=True) if k != 0]

    write(f'{{\n  "input": "{data.hex()}",\n  "profile": {json.dumps(w.profile)},\n'
          f'  "policy": {json.dumps(policy)},\n')
    write('  "substitute": {\n')
    array("output", output())
    array("offsets", offsets())
    array("errors", errors(), last=True)
    write('  },\n  "skip": {\n')
    array("output", output(chars=True))
    array("offsets", offsets(chars=True))
    array("errors", errors(), last=True)
    write('  },\n  "stop": {\n')
    array("output", output(w.first))
    array("offsets", offsets(w.first))
    if w.first < w.n:
        kind, start, end, _ = w.token(w.first)
        write(f'    "error": {error(start, end, kind, "    ")}\n')
    else:
        write('    "error": null\n')
    write("  }\n}")
