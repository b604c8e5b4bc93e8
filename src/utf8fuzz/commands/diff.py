"""``utf8fuzz diff``: every available decoder on one input, side by side.

Decoders whose outcomes are identical are shown as one group, so the eye goes
straight to where they part. Nothing decoded is ever printed as text: code
points appear as U+XXXX and bytes as hex (fuzz inputs hold terminal escapes,
bidi overrides and NULs).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from utf8fuzz.commands._common import (
    add_decoder_arguments,
    add_input_arguments,
    read_input,
    select_decoders,
)
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome, format_codepoint, hexbytes

HELP = "decode one input with every decoder and show where they differ"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    add_decoder_arguments(p)
    p.add_argument("--json", action="store_true", help="print one stable JSON object")


def decoder_json(d: Decoder, out: Outcome) -> dict[str, Any]:
    """The stable per-decoder object of ``diff --json``."""
    # a view is in ``shows`` exactly when ``view`` gives it (else ViewUnavailable)
    toks = out.view("tokens") if "tokens" in out.shows else None
    replace = out.view("replace") if "replace" in out.shows else None
    first = out.view("strict") if "strict" in out.shows else None
    obj: dict[str, Any] = {
        "profile": d.profile,
        "policy": d.policy,
        "status": out.status,
        "shows": sorted(out.shows),
        "tokens": None if toks is None else [t.as_list() for t in toks],
        "replace": None if replace is None else list(replace),
        "first_error": None if first is None else list(first),
    }
    if "reason" in out.shows:
        obj["reason"] = out.view("reason")
    if not out.ok:
        obj["detail"] = out.detail
    return obj


def run(args: argparse.Namespace) -> int:
    data = read_input(args)
    decs = select_decoders(args)
    results = [(d, d.decode(data)) for d in decs]
    if args.json:
        print(json.dumps(
            {"input": data.hex(), "decoders": {d.name: decoder_json(d, o) for d, o in results}},
            indent=2, sort_keys=True,
        ))
        return 0
    _print_text(data, results)
    return 0


def _token_text(out: Outcome) -> str:
    parts = []
    for t in out.tokens:
        if t.kind == "char" and t.value is not None:
            parts.append(f"{format_codepoint(t.value)}@{t.start}")
        elif t.kind == "reserved":
            parts.append(f"reserved[{t.start},{t.end})")
        else:
            parts.append(f"ERR[{t.start},{t.end}){'…' if t.reason == 'truncated' else ''}")
    return " ".join(parts)


def _summary(out: Outcome) -> list[tuple[str, str]]:
    if not out.ok:
        return [(out.status, out.detail or "")]
    rows: list[tuple[str, str]] = []
    if "tokens" in out.shows:
        rows.append(("tokens", _token_text(out)))
    if "replace" in out.shows:
        rows.append(("replace", " ".join(format_codepoint(c) for c in out.view("replace"))))
    elif "ignore" in out.shows:
        rows.append(("ignore", " ".join(format_codepoint(c) for c in out.view("ignore"))))
    if "spans" in out.shows and "tokens" not in out.shows:
        rows.append(("spans", " ".join(f"[{s},{e})" for s, e in out.view("spans"))))
    if "strict" in out.shows:
        fe = out.view("strict")
        reason = f" ({out.view('reason')})" if fe and "reason" in out.shows else ""
        rows.append(("first error", "none (valid)" if fe is None else f"[{fe[0]},{fe[1]}){reason}"))
    return rows


def _print_text(data: bytes, results: list[tuple[Decoder, Outcome]]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    console.print(Text(f"input ({len(data)} bytes): {hexbytes(data) or '(empty)'}"))
    console.print(Text("legend: U+XXXX@offset, ERR[start,end) (… = truncated by end of input)"))
    groups: dict[str, list[tuple[Decoder, Outcome]]] = {}
    for d, o in results:
        key = json.dumps([o.status, o.detail, sorted(o.shows), _summary(o)])
        groups.setdefault(key, []).append((d, o))
    table = Table(show_lines=True)
    table.add_column("decoders (same outcome)", overflow="fold")
    table.add_column("outcome", overflow="fold")
    for members in groups.values():
        names = "\n".join(f"{d.name}  [{d.profile}]" for d, _ in members)
        body = "\n".join(f"{k}: {v}" for k, v in _summary(members[0][1]))
        table.add_row(Text(names), Text(body))
    console.print(table)
