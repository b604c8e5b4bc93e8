"""Replaying corpus entries: what CI checks, forever, for each saved divergence.

For each entry and each decoder it recorded:

* the **reference** must still produce what it recorded (a change in a spec
  transcription shows up here first, plainly);
* this project's **own** decoders (``Decoder.own``: references, the fast path) must
  now meet the entry's expectation at every view they show - a fixed bug stays fixed;
* **external** decoders (CPython, ICU, iconv, Node, plug-ins) must still behave as
  recorded, at the views both the record and the decoder show. Same behaviour on a
  new version passes *with a note* (the test emits a warning naming both versions);
  changed behaviour fails and says whether it now agrees with the reference (a fix
  upstream: re-record) or not (a new bug). A decoder not available here is skipped
  with the reason.

Decoders given explicitly (``extra``: the pytest plugin's ``--utf8fuzz-decoder``) are
treated as the caller's own: each must meet the expectation of every entry whose
profile and policy it claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from utf8fuzz import decoders as registry
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine.corpus import Entry, load
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.expect import check_outcome
from utf8fuzz.outcome import VIEWS, Outcome, ViewUnavailable

Status = Literal["pass", "fail", "skip"]


@dataclass
class Verdict:
    decoder: str
    status: Status
    message: str = ""
    notes: list[str] = field(default_factory=list)


@cache
def _resolve(name: str) -> Decoder | str:
    """The decoder named, or the reason it is not available here."""
    try:
        found = registry.resolve(name)
    except Exception as e:  # unknown, unavailable, a plug-in that fails to import
        return f"{type(e).__name__}: {e}" if not isinstance(e, ValueError) else str(e)
    exact = [d for d in found if d.name == name]
    return (exact or found)[0]


def _versions(v: Any) -> dict[str, str]:
    return {str(k): str(x) for k, x in (v or {}).items()} if isinstance(v, dict) else {}


def _differs(recorded: Outcome, now: Outcome) -> str | None:
    if recorded.status != now.status:
        return f"status {recorded.status} -> {now.status}"
    if not recorded.ok:
        return None
    for v in VIEWS:
        if v not in recorded.shows or v not in now.shows:
            continue
        try:
            a, b = recorded.view(v), now.view(v)
        except ViewUnavailable:
            continue
        if a != b:
            return f"{v} view: recorded {_short(v, a)}, now {_short(v, b)}"
    return None


def _short(view: str, v: Any) -> str:
    if view == "strict":  # an error span, not code points
        return "valid" if v is None else f"error [{v[0]},{v[1]})"
    if view == "spans":
        return " ".join(f"[{s},{e})" for s, e in v[:12]) or "no errors"
    if isinstance(v, tuple) and v and isinstance(v[0], int):
        return " ".join(f"U+{c:04X}" for c in v[:12]) + (" ..." if len(v) > 12 else "")
    if isinstance(v, tuple) and v and hasattr(v[0], "kind"):
        return " ".join(f"{t.kind}[{t.start},{t.end})" for t in v[:8])
    return repr(v)[:120]


def replay_entry(entry: Entry, extra: Sequence[Decoder] = ()) -> list[Verdict]:
    side = entry.sidecar
    data = entry.data
    exp = side.get("expectation")
    out: list[Verdict] = []
    ref_name = str(side["reference"])
    profile, policy = ref_name.split(":")[1], ref_name.split(":")[2]
    from utf8fuzz.engine.expect import expectation

    # 1. the reference itself
    try:
        now_exp = expectation(data, profile, policy)
    except ValueError as e:
        return [Verdict(ref_name, "fail", f"reference unavailable: {e}")]
    if exp is not None and now_exp != exp:
        out.append(Verdict(ref_name, "fail",
                           "the reference's expectation for this input changed since it was "
                           "recorded (a spec transcription changed): re-record the entry"))
    else:
        out.append(Verdict(ref_name, "pass"))
    exp = now_exp

    # 2. every decoder recorded
    for name, rec in sorted(side["outcomes"].items()):
        if name == ref_name:
            continue
        d = _resolve(rec.get("spec") or name)  # a plug-in is loaded by its spec
        if isinstance(d, str):
            out.append(Verdict(name, "skip", f"{name} is not available here: {d}"))
            continue
        now = d.decode(data)
        if d.own:
            why = check_outcome(now, exp if d.policy == policy else
                                expectation(data, d.profile, d.policy))
            out.append(Verdict(name, "fail" if why else "pass",
                               f"own decoder {name} disagrees with the reference: {why}"
                               if why else ""))
            continue
        try:
            recorded = Outcome.from_json(rec["outcome"])
        except (KeyError, TypeError, ValueError) as e:
            out.append(Verdict(name, "fail", f"recorded outcome of {name} is unreadable: {e}"))
            continue
        v_then, v_now = _versions(rec.get("versions")), _versions(d.versions())
        changed = {k for k in set(v_then) | set(v_now) if v_then.get(k) != v_now.get(k)}
        vtext = "; ".join(f"{k}: {v_then.get(k, '-')} -> {v_now.get(k, '-')}"
                          for k in sorted(changed))
        diff = _differs(recorded, now)
        if diff is None:
            notes = ([f"{name}: version changed ({vtext}); the recorded behaviour still holds"]
                     if changed else [])
            out.append(Verdict(name, "pass", notes=notes))
            continue
        agrees = check_outcome(now, exp) is None
        msg = (f"behaviour of {name} changed on input {data.hex(' ').upper() or '(empty)'}: "
               f"{diff}. " + (f"Versions changed ({vtext}). " if changed else
                              "Same library versions as recorded, so its adapter changed. ")
               + ("It now agrees with the reference: "
                  + ("fixed upstream? " if changed else "")
                  + "remove or re-record the entry."
                  if agrees else "It still disagrees with the reference, differently."))
        out.append(Verdict(name, "fail", msg))

    # 3. the caller's own decoders
    for d in extra:
        if (d.profile, d.policy) != (profile, policy):
            continue
        why = check_outcome(d.decode(data), exp)
        out.append(Verdict(d.name, "fail" if why else "pass",
                           f"{d.name} does not meet the expectation: {why}" if why else ""))
    return out


# -- pruning ----------------------------------------------------------------------------


def reproduces(entry: Entry) -> bool | None:
    """Does the current engine still give ``entry``'s signature on its input, with
    the decoders the signature names? None when one of them is not available here
    (nothing can be said, and nothing should be removed)."""
    chosen = []
    for name in entry.sidecar["decoders"]:
        rec = entry.sidecar["outcomes"].get(name) or {}
        try:
            found = registry.resolve(rec.get("spec") or name)
        except Exception:  # unknown, unavailable, a plug-in that fails to import
            return None
        chosen.append(next((d for d in found if d.name == name), found[0]))
    return entry.signature in Differ(chosen).signatures(entry.data)


def prune(corpus: Path, *, dry_run: bool = False) -> list[Entry]:
    """Remove the entries whose signature the current engine no longer gives.

    Signatures are names: when the engine learns to name a divergence better, or a
    decoder's bug is fixed at the same version, an entry can stand under a name
    nothing produces any more, a duplicate of the entry under the better name. An
    input file is removed with the last sidecar that refers to it."""
    entries, _ = load(corpus)
    stale = [e for e in entries if reproduces(e) is False]
    if dry_run:
        return stale
    keep = {e.sidecar.get("file") for e in entries if e not in stale}
    for e in stale:
        e.path.unlink(missing_ok=True)
        f = e.sidecar.get("file")
        if f and f not in keep:
            (corpus / str(f)).unlink(missing_ok=True)
    return stale
