"""The clause of the spec that decides what an input means at an offset, and a
plain explanation of what it says there: what a verdict quotes.

The clause comes from the reference's token at that offset:

* a character: the row of the profile's table it matches (``Row.clause``);
* an error: why no row matches, worked out from the rows themselves (which row
  the lead byte belongs to and which byte range the next byte violates, or that
  no row begins with the lead) and then, for the well-known cases, the rule the
  spec gives: non-shortest forms (Corrigendum #1 C12 / Table 3.1B's narrowed
  second-byte ranges; RFC 2279 section 2 NOTE and section 6; Kuhn's shortest-form
  rule), surrogates (Corrigendum #1 Appendix C.3; Kuhn), values beyond the
  profile's range, truncation;
* a reserved unit: Corrected UTF-8's reserved FE/FF rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import utf8fuzz
from utf8fuzz import safe
from utf8fuzz.outcome import Token
from utf8fuzz.profiles import get_profile
from utf8fuzz.profiles.table import CONT, Profile, bits_value, structural_length


@dataclass(frozen=True)
class Clause:
    """A reference to the spec and a plain explanation of what it says here."""

    ref: str
    explanation: str


def token_at(tokens: tuple[Token, ...], offset: int) -> Token | None:
    for t in tokens:
        if t.start <= offset < t.end:
            return t
    return None


def clause_at(data: bytes, profile: str | Profile, policy: str, offset: int) -> Clause:
    """The clause that decides what ``data`` means at ``offset`` under ``profile``."""
    prof = get_profile(profile)
    ref = utf8fuzz.decode(data, prof.name, policy)
    t = token_at(ref.tokens, offset)
    if t is None:
        return Clause(prof.spec, f"the input ends at byte {len(data)}; "
                      "the reference produces nothing more")
    seq = data[t.start:t.end]
    if t.kind == "char":
        r = prof.row_of(seq)
        ref_txt = r.clause if r is not None else prof.spec
        row_txt = r.describe() if r is not None else "?"
        return Clause(ref_txt, f"{safe.hexbytes(seq)} is well-formed: it matches the row "
                      f"{row_txt}, and decodes to {safe.cp(t.value or 0)}")
    if t.kind == "reserved":
        from utf8fuzz.profiles.corrected import RESERVED_CLAUSE

        return Clause(RESERVED_CLAUSE, f"{safe.hexbytes(seq)} begins with a reserved lead "
                      "byte (FE or FF) and extends until the next recognized lead byte: one "
                      "reserved unit, not an error")
    return explain_error(data, prof, t)


def _kind_of(lead: int) -> str:
    if lead < 0x80:
        return "an ASCII byte"
    if CONT[0] <= lead <= CONT[1]:
        return "a continuation byte"
    n = structural_length(lead)
    if n == 1:
        return "a byte RFC 2279 never uses"
    return f"whose high bits announce a {n}-byte sequence"


def explain_error(data: bytes, prof: Profile, t: Token) -> Clause:
    """Why the reference cut an error at ``t``: derived from the profile's rows,
    then named by the spec's rule."""
    i = t.start
    lead = data[i]
    rows = [r for r in prof.rows if r.ranges[0][0] <= lead <= r.ranges[0][1]]
    lead_hex = safe.hexbyte(lead)
    if not rows:
        why = f"no row of the table begins with {lead_hex} ({_kind_of(lead)})"
        return Clause(_rule_for_no_row(prof, data, i), why)
    # Walk the bytes against the rows that begin with this lead.
    k = 1
    cands = rows
    while True:
        if i + k >= len(data):
            need = min(r.length for r in cands)
            return Clause(_truncation_ref(prof),
                          f"{safe.hexbytes(data[i:i + k])} begins a sequence of row "
                          f"{cands[0].describe()} ({need} bytes), but the input ends after "
                          f"{k} byte{'s' if k > 1 else ''}: truncated")
        b = data[i + k]
        nxt = [r for r in cands if r.length > k and r.ranges[k][0] <= b <= r.ranges[k][1]]
        if not nxt:
            allowed = sorted({r.ranges[k] for r in cands if r.length > k})
            ranges = ", ".join(f"{lo:02X}..{hi:02X}" if lo != hi else f"{lo:02X}"
                               for lo, hi in allowed)
            row_txt = "; ".join(r.describe() for r in cands)
            why = (f"after {safe.hexbytes(data[i:i + k])}, the row{'s' if len(cands) > 1 else ''} "
                   f"{row_txt} allow{'' if len(cands) > 1 else 's'} {ranges} at byte {k + 1}, "
                   f"but the input has {safe.hexbyte(b)}")
            if not CONT[0] <= b <= CONT[1]:
                # Not a continuation byte at all: the sequence is incomplete, whatever
                # narrowed range the row has at this position.
                return Clause(_truncation_ref(prof), why + f"; {safe.hexbyte(b)} is not a "
                              "continuation byte, so the sequence is incomplete")
            rule, extra = _rule_for_range(prof, data, i)
            return Clause(rule or cands[0].clause, why + (f"; {extra}" if extra else ""))
        cands = nxt
        k += 1
        if k > prof.max_length:  # cannot happen for a tiling reference; stay finite
            return Clause(prof.spec, "ill-formed")


def _announced(data: bytes, i: int) -> tuple[bytes, int] | None:
    """The lead at ``i`` and the continuation bytes that follow it, up to the
    length its high bits announce (RFC 2279 section 2), and that length."""
    n = structural_length(data[i])
    if n < 2:
        return None
    j = i + 1
    while j < len(data) and j - i < n and CONT[0] <= data[j] <= CONT[1]:
        j += 1
    return data[i:j], n


def _classify(seq: bytes, prof: Profile) -> tuple[str, int]:
    v = bits_value(seq)
    shortest = 1 if v < 0x80 else 2 if v < 0x800 else 3 if v < 0x10000 else (
        4 if v < 0x200000 else 5 if v < 0x4000000 else 6)
    if shortest < len(seq):
        return "overlong", v
    if 0xD800 <= v <= 0xDFFF:
        return "surrogate", v
    if v in (0xFFFE, 0xFFFF):
        return "nonchar", v
    if v > prof.max_codepoint:
        return "range", v
    return "", v


def _what_it_would_be(data: bytes, i: int, prof: Profile) -> tuple[str, str] | None:
    """(kind, text) of what a naive decoder would make of the bytes at i: a
    non-shortest form, a surrogate, U+FFFE/FFFF, or a value beyond the profile.
    When the sequence is cut short, every completion of its prefix (the missing
    bytes anywhere in 80..BF) is tried: the prefix is classified only if all of
    them are the same kind (F4 90 ... is above U+10FFFF however it goes on)."""
    found = _announced(data, i)
    if found is None:
        return None
    prefix, n = found
    hx = safe.hexbytes(prefix)
    lo = prefix + bytes([CONT[0]] * (n - len(prefix)))
    hi = prefix + bytes([CONT[1]] * (n - len(prefix)))
    (k_lo, v_lo), (k_hi, v_hi) = _classify(lo, prof), _classify(hi, prof)
    if not k_lo or k_lo != k_hi:
        return None
    if len(prefix) == n:
        carries = f"{hx} would carry {safe.cp(v_lo)}"
    else:
        carries = (f"any {n}-byte sequence beginning {hx} would carry one of "
                   f"{safe.cp(v_lo)}..{safe.cp(v_hi)}")
    if k_lo == "overlong":
        return k_lo, f"{carries}, which has a shorter form: a non-shortest (overlong) form"
    if k_lo == "surrogate":
        return k_lo, f"{carries}: UTF-16 surrogates"
    if k_lo == "nonchar":
        return k_lo, carries
    return k_lo, (f"{carries}, above the profile's highest code point "
                  f"{safe.cp(prof.max_codepoint)}")


_UNI = "Corrigendum #1, Table 3.1B"
_K = "Kuhn, What is UTF-8?"


def _rule_for_range(prof: Profile, data: bytes, i: int) -> tuple[str | None, str]:
    w = _what_it_would_be(data, i, prof)
    if w is None:
        return None, ""
    kind, txt = w
    name = prof.name
    if name == "unicode":
        rule = {
            "overlong": f"{_UNI} and C12 (a conformant process shall not interpret "
                        "non-shortest forms)",
            "surrogate": f"{_UNI}, row ED 80..9F; Corrigendum #1 Appendix C.3 (ISO/IEC 10646 "
                         "does not allow mapping of unpaired surrogates)",
            "range": f"{_UNI}, row F4 80..8F; D36 (a) (UTF-8 ends at U+10FFFF)",
        }.get(kind)
    elif name == "rfc2279":
        rule = {"overlong": "RFC 2279 section 2 NOTE and section 6 (non-shortest forms such "
                            "as C0 80 are invalid)"}.get(kind)
    elif name == "kuhn":
        rule = {
            "overlong": f"{_K}: only the shortest form; overlong patterns refused",
            "surrogate": f"{_K}: U+D800..U+DFFF, U+FFFE, U+FFFF treated as malformed",
            "nonchar": f"{_K}: U+D800..U+DFFF, U+FFFE, U+FFFF treated as malformed",
        }.get(kind)
    else:
        rule = None
    return rule, txt


def _rule_for_no_row(prof: Profile, data: bytes, i: int) -> str:
    lead = data[i]
    name = prof.name
    if CONT[0] <= lead <= CONT[1]:
        if name == "corrected":
            return ("Corrected UTF-8, 'Putting it all together' table: a continuation byte "
                    "begins no sequence")
        return f"{prof.spec}: a continuation byte (80..BF) begins no sequence"
    if name == "unicode":
        if lead in (0xC0, 0xC1):
            return f"{_UNI} (C0 and C1 begin no row: they could only start non-shortest forms)"
        if lead >= 0xF5:
            return f"{_UNI} (F5..FF begin no row); D36 (a) (UTF-8 ends at U+10FFFF)"
        return _UNI
    if name == "rfc2279":
        if lead in (0xC0, 0xC1):
            return "RFC 2279 section 2 NOTE and section 6 (C0 80 and similar are invalid)"
        if lead >= 0xFE:
            return "RFC 2279 section 2 (FE and FF are never used)"
    if name == "kuhn":
        if lead in (0xC0, 0xC1):
            return f"{_K}: only the shortest form; overlong patterns refused (1100000x)"
        if lead >= 0xFE:
            return f"{_K}: FE and FF are never used"
    if name == "legacy" and lead >= 0xFE:
        return "RFC 2279 section 2 (FE and FF announce no sequence)"
    return prof.spec


def _truncation_ref(prof: Profile) -> str:
    """The clause for a sequence cut short (by the end of the input or by a byte
    that cannot continue it)."""
    if prof.name == "unicode":
        return f"{_UNI}; D36 (b) (an incomplete sequence matches no pattern)"
    if prof.name in ("rfc2279", "kuhn", "legacy"):
        return ("RFC 2279 section 2 (the table's layout: every octet after the initial one "
                "is 10xxxxxx)")
    return f"{prof.spec}: an incomplete sequence is ill-formed"


# -- per entry ----------------------------------------------------------------------


__all__ = ["Clause", "clause_at", "explain_error", "token_at"]
