"""The material every generator starts from: boundary code points and the byte
sequences where decoders go wrong.

One list, shared by the Hypothesis strategies (:mod:`utf8fuzz.strategies`), the
Atheris custom mutator (:mod:`utf8fuzz.loop.mutator`), the libFuzzer dictionary
(``fuzz/utf8.dict``) and the seeds (``corpus/seeds/``), so all engines know the same
edges:

* every boundary of Corrigendum #1's Table 3.1B (each row's first and last sequence),
  and of every other profile's table (RFC 2279's 5- and 6-byte rows, Corrected
  UTF-8's offset rows);
* the boundary code points (the ends of each length class, surrogates, U+FFFD,
  noncharacters, U+10FFFF and just above, Corrected UTF-8's offset edges);
* ill-formed sequences the specs name: non-shortest forms (RFC 2279 section 6's
  C0 AE for '.', Corrigendum #1's C0 80), encoded surrogates, values above
  U+10FFFF, 5- and 6-byte forms, FE/FF runs, lone continuation bytes, and
  truncations of each (both completable prefixes and impossible ones like E0 80).
"""

from __future__ import annotations

import contextlib
from functools import cache

from utf8fuzz.profiles import REGISTRY
from utf8fuzz.profiles.table import bits_encode
from utf8fuzz.profiles.walk import BLOCKS

BOUNDARY_CODEPOINTS: tuple[int, ...] = (
    0x00, 0x2F, 0x7F, 0x80, 0x9F, 0xA0, 0xFF, 0x7FF, 0x800, 0x89F, 0x8A0, 0xFFF, 0x1000,
    0xCFFF, 0xD000, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFDD0, 0xFDEF,
    0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x10000, 0x1109F, 0x110A0, 0x1FFFF, 0x3FFFF,
    0x40000, 0xFFFFF, 0x100000, 0x10FFFF, 0x110000, 0x1FFFFF, 0x200000, 0x21109F,
    0x2110A0, 0x3FFFFFF, 0x4000000, 0x421109F, 0x42110A0, 0x7FFFFFFF, 0x8421109F,
)

# Named by the specs: RFC 2279 section 6 (C0 AE, "/../" as 2F C0 AE 2E 2F),
# Corrigendum #1 (C0 80, non-shortest forms; surrogates, values above U+10FFFF).
ILL_FORMED: tuple[bytes, ...] = tuple(bytes.fromhex(h) for h in (
    "c080", "c0ae", "c1bf", "e08080", "e09fbf", "f0808080", "f08fbfbf", "f888808080",
    "f887bfbfbf", "fc8480808080", "fc83bfbfbfbf", "eda080", "edbfbf", "eda080edb080",
    "f4908080", "f5808080", "f7bfbfbf", "f888808080", "fbbfbfbfbf", "fdbfbfbfbfbf",
    "fe", "ff", "fefe", "feff", "fffe", "fefeffff", "80", "bf", "8080", "bfbfbf",
    "c2", "df", "e1", "e180", "e0a0", "e080", "eda0", "ef", "efbf", "f0", "f090",
    "f09080", "f08080", "f18080", "f4", "f48f", "f48fbf", "f490", "f8", "fc",
    "efbfbe", "efbfbf", "2fc0ae2e2f",
))


@cache
def table_boundaries() -> tuple[bytes, ...]:
    """Each row's first and last sequence, for every profile (Table 3.1B and the
    other profiles' tables), plus one past each end where that is still a byte."""
    out: set[bytes] = set()
    for prof in REGISTRY.values():
        for r in prof.rows:
            out.add(r.first)
            out.add(r.last)
            for seq, i in ((r.first, -1), (r.last, 1)):
                lead = seq[0] + i
                if 0 <= lead <= 0xFF:
                    out.add(bytes([lead]) + seq[1:])
                if len(seq) > 1:
                    b = seq[1] + i
                    if 0 <= b <= 0xFF:
                        out.add(seq[:1] + bytes([b]) + seq[2:])
    return tuple(sorted(out, key=lambda s: (len(s), s)))


@cache
def non_shortest_forms() -> tuple[bytes, ...]:
    """Boundary code points in every longer-than-needed bit layout (RFC 2279 section
    2 layout, 1 to 6 bytes): the overlongs Corrigendum #1 forbids."""
    out: set[bytes] = set()
    for cp in BOUNDARY_CODEPOINTS:
        forms = [f for n in range(1, 7) if (f := bits_encode(cp, n)) is not None]
        out.update(forms[1:])  # forms[0] is the shortest
    return tuple(sorted(out, key=lambda s: (len(s), s)))


@cache
def encoded_boundaries() -> tuple[bytes, ...]:
    """Boundary code points encoded by each profile that can encode them."""
    out: set[bytes] = set()
    for prof in REGISTRY.values():
        for cp in BOUNDARY_CODEPOINTS:
            with contextlib.suppress(ValueError):
                out.add(prof.encode_one(cp))
    return tuple(sorted(out, key=lambda s: (len(s), s)))


@cache
def all_snippets() -> tuple[bytes, ...]:
    """Everything above, deduplicated, in a stable order."""
    seen: dict[bytes, None] = {}
    for group in (table_boundaries(), encoded_boundaries(), non_shortest_forms(), ILL_FORMED):
        for s in group:
            seen.setdefault(s, None)
    return tuple(seen)


@cache
def bad_snippets() -> tuple[bytes, ...]:
    """Snippets that are ill-formed in the ``unicode`` profile (for block-boundary
    placement: a *bad* byte is what a fast path must notice at a block edge)."""
    from utf8fuzz.policies import decode_tokens

    uni = REGISTRY["unicode"]
    return tuple(
        s for s in all_snippets() if any(t.kind != "char" for t in decode_tokens(s, uni))
    )


def libfuzzer_dict() -> str:
    """The text of ``fuzz/utf8.dict`` (libFuzzer/AFL dictionary syntax)."""
    lines = [
        "# UTF-8 boundary sequences for libFuzzer (-dict=fuzz/utf8.dict).",
        "# Generated by utf8fuzz.engine.boundaries.libfuzzer_dict(); do not edit by hand.",
    ]
    for i, s in enumerate(all_snippets()):
        esc = "".join(f"\\x{b:02X}" for b in s)
        lines.append(f'kw{i:03d}="{esc}"')
    return "\n".join(lines) + "\n"


#: Inputs the specs print (RFC 2279 section 4 examples and section 6; Corrigendum #1's
#: C0 80 and "Mark"; Corrected UTF-8's C0 AF, E0 80 AF, ED A0 80, ED BF BF, magic).
SPEC_EXAMPLES: dict[str, str] = {
    "rfc2279-s4-a-not-identical-alpha": "41 E2 89 A2 CE 91 2E",
    "rfc2279-s4-hangugo": "ED 95 9C EA B5 AD EC 96 B4",
    "rfc2279-s4-nihongo": "E6 97 A5 E6 9C AC E8 AA 9E",
    "rfc2279-s6-dotdot": "2F C0 AE 2E 2F",
    "rfc2279-c080": "C0 80",
    "corrigendum1-mark": "4D 61 72 6B",
    "corrected-c0af": "C0 AF",
    "corrected-e080af": "E0 80 AF",
    "corrected-eda080": "ED A0 80",
    "corrected-edbfbf": "ED BF BF",
    "corrected-magic": "EF B7 9D ED B2 AE 00 0A",
}


def seed_files() -> dict[str, bytes]:
    """``corpus/seeds/``: file name -> bytes. Table boundaries, spec examples,
    non-shortest forms, surrogates, FE/FF runs, truncations, and each bad sequence
    placed across a 16/32/64-byte block boundary."""
    out: dict[str, bytes] = {}
    for name, h in SPEC_EXAMPLES.items():
        out[f"spec-{name}"] = bytes.fromhex(h)
    for s in table_boundaries():
        out[f"table-{s.hex()}"] = s
    for s in non_shortest_forms():
        out[f"overlong-{s.hex()}"] = s
    for s in ILL_FORMED:
        out[f"ill-{s.hex()}"] = s
    for s in encoded_boundaries():
        out[f"cp-{s.hex()}"] = s
    out["fefe-run"] = b"A\xfe\xfe\xff\xffA\xfe"
    for block in BLOCKS:
        for s in (b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"\x80"):
            for shift in (-len(s), -1, 0):
                at = block + shift
                out[f"block{block}{shift:+d}-{s.hex()}"] = b"A" * at + s + b"A"
    return out


def write_seeds(directory: str) -> int:
    """Write :func:`seed_files` into ``directory`` (atomic per file); returns the count."""
    from pathlib import Path

    from utf8fuzz.engine.corpus import atomic_write

    d = Path(directory)
    files = seed_files()
    for name, data in files.items():
        atomic_write(d / name, data)
    return len(files)


if __name__ == "__main__":  # python -m utf8fuzz.engine.boundaries: regenerate both
    import sys

    root = sys.argv[1] if len(sys.argv) > 1 else "."
    print(write_seeds(f"{root}/corpus/seeds"), "seeds")
    with open(f"{root}/fuzz/utf8.dict", "w", encoding="ascii") as f:
        f.write(libfuzzer_dict())
