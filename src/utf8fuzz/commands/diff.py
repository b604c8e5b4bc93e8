"""``utf8fuzz diff``: every available decoder on one input, side by side.

Decoders whose outcomes are identical are shown as one group, so the eye goes
straight to where they part. Nothing decoded is ever printed as text: code
points appear as U+XXXX and bytes as hex (fuzz inputs hold terminal escapes,
bidi overrides and NULs).

Streaming decoders (``incremental``: ``cpython:incremental``, a plug-in's
``+incremental`` modes, ``exec:`` ``:stream`` decoders, ``node:textdecoder-stream``)
are fed the input in chunks cut by :mod:`utf8fuzz.decoders.chunks`, a function of
the input's bytes: the text output shows those chunks in hex (``F2 90 80 | 80``),
and ``--json`` gives each such decoder's ``chunks`` (hex strings).

An input over :data:`SUMMARY_ABOVE` bytes is summarized (:func:`run_large`): the
first :data:`ITEMS` of each view and counts, with the same grouping (by a digest
of each whole outcome); decoders run one at a time and each outcome is dropped
once summarized. Over :data:`SKIP_ABOVE` bytes, decoders that cannot give a whole
outcome without one Python object per character (out-of-process ones, those with
no whole screen) are skipped, in one line, unless named with ``--decoder``. Both
keep a megabyte within seconds and a couple of hundred MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from array import array
from dataclasses import dataclass
from itertools import chain
from typing import Any, cast

from utf8fuzz import safe
from utf8fuzz.commands._common import (
    add_decoder_arguments,
    add_input_arguments,
    read_input,
    select_decoders,
)
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.chunks import chunks, describe
from utf8fuzz.engine.result import Divergence
from utf8fuzz.outcome import (
    REPLACEMENT,
    TEXT_VIEWS,
    VIEWS,
    Outcome,
    checked,
    format_codepoint,
    hexbytes,
    pack_tokens,
    unpack_tokens,
)

HELP = "decode one input with every decoder and show where they differ"
#: Inputs over this many bytes are summarized; over SKIP_ABOVE, slow decoders skipped.
SUMMARY_ABOVE = 4096
SKIP_ABOVE = 64 << 10
#: How many tokens, code points or spans of each view a summary shows.
ITEMS = 32


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    add_decoder_arguments(p)
    p.add_argument("--json", action="store_true", help="print one stable JSON object")
    p.add_argument("--after", action="append", metavar="HEX", default=None,
                   help="also decode the input after earlier calls on these inputs, in hex "
                        "(repeat for several), and say which decoders answer otherwise "
                        "than fresh (history-dependent)")
    p.add_argument("--placed", type=int, metavar="OFFSET", default=None,
                   help="also hand the input over as a view at OFFSET in a larger buffer of "
                        "--guard bytes, and say which decoders answer otherwise than fresh")
    p.add_argument("--guard", default="80", metavar="HEX",
                   help="the guard byte around a --placed view (default 80)")
    p.epilog = (
        f"Inputs over {SUMMARY_ABOVE} bytes are summarized: the first {ITEMS} tokens, "
        f"code points and spans of each view, and their counts (in JSON too). Over "
        f"{SKIP_ABOVE} bytes, only decoders that give a whole outcome cheaply run (the "
        "references and those with a whole screen: ICU, iconv, CPython's and PyICU's "
        "handlers); the others (the fast path, node, plug-ins, recording handlers) are "
        "skipped, with a note, unless named with --decoder.")


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
    if "accept" in out.shows:
        obj["accept"] = out.view("accept")
    if toks is None:  # a partial outcome: every other view it shows, by its own name
        if "spans" in out.shows:
            obj["spans"] = [list(x) for x in out.view("spans")]
        for v in ("ignore", "escape"):
            if v in out.shows:
                obj[v] = list(out.view(v))
    if not out.ok:
        obj["detail"] = out.detail
    return obj


def with_chunks(d: Decoder, obj: dict[str, Any], data: bytes) -> dict[str, Any]:
    """``obj`` (``d``'s :func:`decoder_json`) with, for a streaming decoder, the
    chunks it was fed, in hex."""
    if d.incremental:
        obj["chunks"] = [c.hex() for c in chunks(data)]
    return obj


def with_references(decs: list[Decoder]) -> list[Decoder]:
    """``decs`` with, in front, the reference of each profile and policy they claim
    that is not among them: a decoder named alone is still shown beside what its
    spec says."""
    from utf8fuzz.decoders.reference import Reference, reference

    have = {(d.profile, d.policy) for d in decs if isinstance(d, Reference)}
    refs: list[Decoder] = []
    for d in decs:
        key = (d.profile, d.policy)
        if key in have:
            continue
        have.add(key)
        try:
            refs.append(reference(*key))
        except (KeyError, ValueError):  # a profile or policy with no reference here
            continue
    return [*refs, *decs]


def verdict_json(div: Divergence) -> dict[str, Any]:
    """One divergence of ``diff --json``: who differs from which reference, how."""
    return {"signature": str(div.signature), "class": div.signature.klass,
            "feature": div.signature.feature, "decoders": list(div.decoders),
            "reference": div.reference, "offset": div.offset, "view": div.view,
            "detail": div.detail}


def run(args: argparse.Namespace) -> int:
    from utf8fuzz.engine.differ import Differ

    data = read_input(args)
    if len(data) > SUMMARY_ABOVE:
        return run_large(args, data)
    decs = with_references(select_decoders(args))
    # One full comparison gives every outcome and the verdict on each decoder.
    result = Differ(decs).run(data, full=True)
    outcomes = result.outcomes
    # (a decoder the differ did not judge is held to the same bounds: outcome.checked)
    results = [(d, outcomes[d.name] if d.name in outcomes else checked(d.decode(data), len(data)))
               for d in decs]
    divergences = result.divergences
    asked = _calls(args, data, decs)
    if args.json:
        doc = {"input": data.hex(),
               "decoders": {d.name: with_chunks(d, decoder_json(d, o), data) for d, o in results},
               "divergences": [verdict_json(x) for x in divergences]}
        if asked is not None:
            doc["calls"] = asked
        print(json.dumps(doc, indent=2, sort_keys=True,
                         ensure_ascii=True))  # names, crash messages: hostile
        return 0
    _print_text(data, results)
    _print_verdict(divergences, [d for d in decs if not d.name.startswith("ref:")])
    _print_calls(asked)
    return 0


def _print_calls(asked: dict[str, dict[str, Any]] | None) -> None:
    """One line per decoder and call of :func:`_calls`, escaped."""
    for name, a in (asked or {}).items():
        for said in a.values():
            print(safe.text(f"{name}: {said['call']}: " + (
                "cannot be asked so" if said["answers"] is None else
                "answers as fresh" if said["class"] is None else
                f"{said['class']}: {said['detail']}")))


def _calls(args: argparse.Namespace, data: bytes, decs: list[Decoder]
           ) -> dict[str, dict[str, Any]] | None:
    """``--after`` and ``--placed``: each decoder asked so (:mod:`utf8fuzz.engine.calls`)
    against its fresh outcome; None when neither was given. Bad values exit 2."""
    from utf8fuzz.engine import calls

    if args.after is None and args.placed is None:
        return None
    asks: list[calls.Call] = []
    try:
        if args.after is not None:
            asks.append(calls.Call(tuple(bytes.fromhex(h) for h in args.after)))
        if args.placed is not None:
            guard = int(args.guard, 16)
            total = args.placed + len(data) + 8
            asks.append(calls.Call.from_json({"check": "placed", "offset": args.placed,
                                              "total": total, "guard": guard}, len(data)))
    except ValueError as e:
        from utf8fuzz.errors import UsageError

        raise UsageError(safe.text(f"{e}: --after takes hex, --placed a non-negative "
                                   "offset, --guard one byte in hex", 300)) from None
    out: dict[str, dict[str, Any]] = {}
    for d in decs:
        if d.name.startswith("ref:"):
            continue
        for call in asks:
            fresh = calls.settled(d, data)
            got = calls.ask_settled(d, call, data)
            hit = None if got is None else calls.compared(d, call, data, fresh, got)
            out.setdefault(d.name, {})[call.check] = {
                "call": call.describe(), "answers": None if got is None else got.to_json(),
                "class": hit.klass if hit else None, "detail": hit.detail if hit else None}
    return out


def _print_verdict(divergences: list[Divergence], judged: list[Decoder]) -> None:
    from rich.text import Text

    from utf8fuzz.commands._console import console as make_console

    console = make_console(highlight=False)
    if not divergences:
        if judged:
            console.print(Text("verdict: every decoder agrees with its reference "
                               "(ref:<profile>:<policy>)"))
        return
    console.print(Text("verdict (each against the reference of the profile and policy "
                       "it claims):"))
    for x in divergences:
        console.print(Text(safe.text(
            f"  {x.signature}: {x.view} view at offset {x.offset} differs from "
            f"{x.reference}: {x.detail}", None)))


def _token_text(out: Outcome) -> str:
    parts = []
    for t in out.tokens:
        if t.kind == "char" and t.value is not None:
            parts.append(f"{format_codepoint(t.value)}@{t.start}")
        elif t.kind == "reserved":
            parts.append(f"reserved[{t.start},{t.end})")
        else:
            parts.append(f"ERR[{t.start},{t.end}){'...' if t.reason == 'truncated' else ''}")
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
    elif "escape" in out.shows:
        rows.append(("escape", " ".join(format_codepoint(c) for c in out.view("escape"))))
    if "spans" in out.shows and "tokens" not in out.shows:
        rows.append(("spans", " ".join(f"[{s},{e})" for s, e in out.view("spans"))))
    if "strict" in out.shows:
        fe = out.view("strict")
        reason = f" ({out.view('reason')})" if fe and "reason" in out.shows else ""
        rows.append(("first error", "none (valid)" if fe is None else f"[{fe[0]},{fe[1]}){reason}"))
    elif "accept" in out.shows:  # a validator: yes or no, and nothing else
        rows.append(("accept", "well-formed" if out.view("accept") else "ill-formed"))
    return rows


def _print_text(data: bytes, results: list[tuple[Decoder, Outcome]]) -> None:
    from rich.table import Table
    from rich.text import Text

    from utf8fuzz.commands._console import console as make_console

    console = make_console(highlight=False)
    console.print(Text(f"input ({len(data)} bytes): {hexbytes(data) or '(empty)'}"))
    streaming = [d.name for d, _ in results if d.incremental]
    if streaming:
        # the split is a function of the bytes (decoders/chunks.py): shown, in hex
        console.print(Text(safe.text(
            f"chunks fed to the streaming decoders ({', '.join(streaming)}): "
            f"{describe(data)}", None)))
    console.print(Text("legend: U+XXXX@offset, ERR[start,end) (... = truncated by end of input)"))
    groups: dict[str, list[tuple[Decoder, Outcome]]] = {}
    for d, o in results:
        key = json.dumps([o.status, o.detail, sorted(o.shows), _summary(o)])
        groups.setdefault(key, []).append((d, o))
    table = Table(show_lines=True)
    table.add_column("decoders (same outcome)", overflow="fold")
    table.add_column("outcome", overflow="fold")
    for members in groups.values():
        # a plug-in's name and what it raised are the plug-in's words: escaped
        names = "\n".join(f"{safe.text(d.name)}  [{safe.text(d.profile)}]" for d, _ in members)
        body = "\n".join(f"{k}: {safe.text(v, None)}" for k, v in _summary(members[0][1]))
        table.add_row(Text(names), Text(body))
    console.print(table)


# -- inputs over SUMMARY_ABOVE bytes ---------------------------------------------------


@dataclass
class _Summary:
    """One decoder's outcome, summarized; ``key`` is a digest of all of it."""

    key: bytes
    rows: list[tuple[str, str]]
    json: dict[str, Any]


def run_large(args: argparse.Namespace, data: bytes) -> int:
    """``diff`` of a large input (module docstring): one decoder at a time."""
    decs = select_decoders(args)
    skipped: list[str] = []
    if len(data) > SKIP_ABOVE and not args.decoder:
        skipped = [d.name for d in decs if not _cheap(d)]
        decs = [d for d in decs if _cheap(d)]
    summaries = [(d, _summarize(d, _outcome(d, data), data)) for d in decs]
    asked = _calls(args, data, decs)  # a large input is asked so as any other
    note = (f"{len(skipped)} decoders skipped: over {SKIP_ABOVE} bytes only those that "
            f"give a whole outcome cheaply run (name others with --decoder): "
            f"{', '.join(skipped)}") if skipped else ""
    if args.json:
        obj: dict[str, Any] = {
            "input": data[:ITEMS].hex(), "length": len(data),
            "summarized": f"each list holds its first {ITEMS} items; 'counts' has them all",
            "decoders": {d.name: s.json for d, s in summaries},
        }
        if skipped:
            obj["skipped"] = skipped
        if asked is not None:
            obj["calls"] = asked
        print(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True))
        return 0
    _print_summaries(data, summaries, note)
    _print_calls(asked)
    return 0


def _cheap(d: Decoder) -> bool:
    """Can ``d`` give its whole outcome on a large input without a Python object
    per character or error: a reference's walk, or a whole screen? (The fast
    path's ``whole_views`` holds a tuple per error span: 120 MB for a megabyte of
    stray continuation bytes.)"""
    from utf8fuzz.decoders.reference import Reference
    from utf8fuzz.engine import screening

    return isinstance(d, Reference) or (
        screening.screen_of(d) is not None and screening.screen_is_whole(d))


def _outcome(d: Decoder, data: bytes) -> Outcome | dict[str, Any]:
    """``d``'s outcome on ``data``, as views (tokens packed) where it can give them
    that way (:func:`_cheap`), else as :meth:`~Decoder.decode` gives it."""
    from utf8fuzz.decoders.reference import Reference
    from utf8fuzz.engine import screening

    if isinstance(d, Reference):
        w = d.walk(data)
        return {"tokens": w.packed, "strict": w.view("strict"), "reason": w.view("reason")}
    whole = screening.screen_of(d) if screening.screen_is_whole(d) else None
    for get in (whole, screening.whole_views_of(d)):
        if get is None:
            continue
        try:
            seen = get(data)
        except Exception:  # as a screen would: the full decode names the crash
            seen = None
        if seen is not None:
            return seen  # type: ignore[no-any-return]
    return checked(d.decode(data), len(data))


def _summarize(d: Decoder, got: Outcome | dict[str, Any], data: bytes) -> _Summary:
    """Rows and JSON as :func:`_summary` and :func:`decoder_json` make them, of the
    first :data:`ITEMS` of each view, with counts; the key digests every view."""
    if isinstance(got, Outcome) and not got.ok:
        key = hashlib.sha256(json.dumps([got.status, got.detail]).encode()).digest()
        return _Summary(key, _summary(got), decoder_json(d, got))
    views: dict[str, Any]
    if isinstance(got, Outcome):
        views = {"tokens": pack_tokens(got.tokens_)} if got.tokens_ is not None else got.views
        shows = got.shows
    else:
        views, shows = got, frozenset(VIEWS if "tokens" in got else got)
    # sha256: the key must not collide, and it is the fastest here (SHA extensions)
    h = hashlib.sha256(json.dumps(sorted(shows)).encode())
    counts: dict[str, int] = {}
    cut: dict[str, Any] = {}
    if "tokens" in views:  # every view follows from the tokens: they alone are digested
        packed = cast(bytes, views["tokens"])
        h.update(packed)
        head = unpack_tokens(packed[: 32 * ITEMS])
        first = (views["strict"], views["reason"]) if "strict" in views else _first_error(packed)
        counts["tokens"] = counts["replace"] = len(packed) // 32
        cut = {"tokens": head, "strict": first[0], "reason": first[1],
               "replace": [t.value if t.kind == "char" and t.value is not None else REPLACEMENT
                           for t in head]}
    else:
        for name, v in sorted(views.items()):
            c = _canonical(name, v)
            h.update(f"{name}:{len(c)}:".encode() + c)
            if name in TEXT_VIEWS or name == "spans":
                counts[name] = len(v)
                v = v[:ITEMS]
            cut[name] = v
    out = Outcome.partial(len(data), **cut)
    rows = [(k, v + (f" ... (+{counts[k] - ITEMS} more)" if counts.get(k, 0) > ITEMS else ""))
            for k, v in _summary(out)]
    obj = decoder_json(d, out)
    obj.update(shows=sorted(shows), counts=counts)
    return _Summary(h.digest(), rows, obj)


def _first_error(packed: bytes) -> tuple[tuple[int, int] | None, str | None]:
    """The strict and reason views of packed tokens: the first error or reserved
    token's span and reason, or (None, None)."""
    m = memoryview(packed).cast("q")
    # Every byte of a first field (kind | reason << 8) is 0, 1 or 2, and 0 in a
    # char's: the first 1 or 2 (memchr) is in the first token that is not a char.
    kinds = m[0::4].tobytes()
    found = [i for i in (kinds.find(1), kinds.find(2)) if i >= 0]
    if not found:
        return None, None
    at = 4 * (min(found) // 8)
    k = m[at]
    why = "reserved" if k & 0xFF == 2 else ("illegal", "truncated")[(k >> 8) - 1]
    return (m[at + 1], m[at + 2]), why


def _canonical(name: str, v: Any) -> bytes:
    """View ``name`` as bytes; a text view the same whether a str or a tuple."""
    if name in TEXT_VIEWS:
        if isinstance(v, str):
            return v.encode("utf-8", "surrogatepass")
        try:
            return "".join(map(chr, v)).encode("utf-8", "surrogatepass")
        except (ValueError, OverflowError):  # past U+10FFFF, which no str holds
            return b"\xff" + array("q", v).tobytes()  # (never valid UTF-8)
    if name == "spans":
        return array("q", chain.from_iterable(v)).tobytes()
    return repr(v).encode()


def _print_summaries(data: bytes, summaries: list[tuple[Decoder, _Summary]], note: str) -> None:
    from rich.table import Table
    from rich.text import Text

    from utf8fuzz.commands._console import console as make_console

    console = make_console(highlight=False)
    console.print(Text(f"input ({len(data)} bytes): {hexbytes(data[:ITEMS])} "
                       f"... (+{len(data) - ITEMS} more bytes)"))
    console.print(Text("legend: U+XXXX@offset, ERR[start,end) (... = truncated by end of input)"))
    console.print(Text(f"summarized: the first {ITEMS} items of each view, and how many "
                       "there are (+N more)"))
    if note:
        console.print(Text(f"note: {safe.text(note, None)}"))
    groups: dict[bytes, list[tuple[Decoder, _Summary]]] = {}
    for d, s in summaries:
        groups.setdefault(s.key, []).append((d, s))
    table = Table(show_lines=True)
    table.add_column("decoders (same outcome)", overflow="fold")
    table.add_column("outcome", overflow="fold")
    for members in groups.values():
        # a plug-in's name and what it raised are the plug-in's words: escaped
        names = "\n".join(f"{safe.text(d.name)}  [{safe.text(d.profile)}]" for d, _ in members)
        body = "\n".join(f"{k}: {safe.text(v)}" for k, v in members[0][1].rows)
        table.add_row(Text(names), Text(body))
    console.print(table)
