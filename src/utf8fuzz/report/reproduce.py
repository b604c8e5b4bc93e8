"""How to reproduce a signature: a ``utf8fuzz diff`` command line and a plain
pytest test body.

The test pins the spec's answer as literals computed by this project's reference
(what the profile says the bytes are) and then checks each divergent decoder
against it at the views that decoder shows; it fails for as long as the
divergence is there. Everything in it is ASCII: hostile names are escaped by
:mod:`.safe` and quoted, so the body can be pasted as is.
"""

from __future__ import annotations

import shlex

import utf8fuzz
from utf8fuzz import safe
from utf8fuzz.outcome import VIEWS
from utf8fuzz.report.load import Entry


def decoder_spec(entry: Entry, name: str) -> str:
    """What to pass to ``--decoder`` / ``resolve`` for a decoder ``entry`` recorded:
    the spec a user's decoder was loaded from (its shape, modes and claim with
    it), else the name (built-in adapters, entry-point plug-ins); an entry that
    recorded no spec names a ``module:attr`` plug-in ``plugin:module:attr``."""
    rec = entry.records.get(name)
    if rec is not None and rec.spec:
        return rec.spec
    if name.startswith("plugin:") and name.count(":") >= 2:
        return name.removeprefix("plugin:")
    return name


def recorded_code(entry: Entry) -> list[str]:
    """The decoders the reproduction loads from what the corpus recorded rather than
    from this utf8fuzz: ``exec:`` programs and plug-in modules (a sidecar is hostile:
    a person reads these before running the command or the test)."""
    return sorted({decoder_spec(entry, n) for n in {*entry.decoders, entry.reference}
                   if decoder_spec(entry, n) != n or n.startswith(("plugin:", "exec:"))})


WARNING = ("loads decoders the corpus names (exec: programs, plug-in modules, from its "
           "sidecars): read them before you run it")


def diff_command(entry: Entry) -> str:
    names = sorted({*entry.decoders, entry.reference})
    parts = ["utf8fuzz", "diff", entry.data.hex() or "''"]
    for n in names:
        parts += ["--decoder", shlex.quote(safe.text(decoder_spec(entry, n), 200))]
    parts += ["--profile", shlex.quote(entry.profile)]
    return " ".join(parts)


def _hexlist(cps: list[int]) -> str:
    return "[" + ", ".join(f"0x{c:04X}" for c in cps) + "]"


def pytest_body(entry: Entry, clause: str = "") -> str:
    policy = entry.reference_policy
    ref = utf8fuzz.decode(entry.data, entry.profile, policy)
    lines = [
        f"def test_divergence_{entry.sig_id}():",
        f"    # {safe.text(entry.signature, 300)}",
    ]
    if clause:
        lines.append(f"    # {safe.text(clause, 300)}")
    if recorded_code(entry):
        lines.append(f"    # {WARNING}")
    lines += [
        "    import utf8fuzz",
        "    from utf8fuzz.decoders import resolve",
        "",
        f'    data = bytes.fromhex("{entry.data.hex()}")',
        f'    expected = utf8fuzz.decode(data, "{entry.profile}", "{policy}")',
        f"    assert expected.codepoints() == {_hexlist(ref.codepoints())}",
        f"    assert expected.error_spans == {ref.error_spans!r}",
    ]
    for name in entry.decoders:
        rec = entry.records.get(name)
        if rec is None:
            continue
        views = [v for v in VIEWS if v in rec.outcome.shows and v != "escape"] or ["replace"]
        lines += [
            f"    dec = resolve({safe.text(decoder_spec(entry, name), 200)!r})[0]",
            "    try:",
            "        out = dec.decode(data)",
            "    finally:",
            "        dec.close()",
            "    assert out.ok, out.detail",
        ]
        for v in views:
            lines.append(f"    assert out.view({v!r}) == expected.view({v!r}), {v!r}")
    return "\n".join(lines)
