"""Replaying corpus entries: what CI checks, forever, for each saved divergence.

An entry is checked one decoder at a time: :func:`checks` names the decoders it
checks, :func:`check` judges one (the pytest plugin makes one test item of each).

* The **reference** must still produce what it recorded (a change in a spec
  transcription shows up here first, plainly).
* An **owned** decoder is held to the entry's expectation. Owned are this project's
  decoders (``Decoder.own``: references, the fast path), any decoder the sidecar
  records as ``own``, and the caller's (``extra``: the pytest plugin's
  ``--utf8fuzz-decoder``, ``utf8fuzz corpus refresh --decoder``). What a divergence
  means depends on what the sidecar knows of the decoder:

  - it diverged when recorded, and the sidecar's ``fixed`` does not name it: an
    **open** finding, verdict ``open`` (the pytest plugin's xfail, naming the
    signature); meeting the expectation now is verdict ``fixed``, a pass that
    :func:`refresh` records in the sidecar;
  - ``fixed`` names it, or it met the expectation when recorded: diverging now
    fails, as **regressed**;
  - it is not recorded at all (a decoder of the caller's the fuzzer never ran on
    this entry): diverging fails, a new finding.

  So a fix never fails a test, and a bug once fixed cannot come back quietly.
* An **external** decoder (CPython, ICU, iconv, Node, a plug-in nobody claims) must
  still behave as recorded, at the views both the record and the decoder show. Same
  behaviour on a new version passes *with a note* naming both versions; changed
  behaviour fails and says whether it now agrees with the reference (a fix upstream:
  re-record) or not (a new bug).

A decoder not available here is skipped with the reason. A corpus is data: the
decoders it names are found only by :func:`utf8fuzz.decoders.trusted` (the caller's,
this project's, installed entry points; exact names), never loaded from a recorded
``spec`` or name, so a sidecar naming ``exec:...`` or ``module:attr`` runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from utf8fuzz import decoders as registry
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.chunks import cuts
from utf8fuzz.engine.calls import Call, holds
from utf8fuzz.engine.corpus import (
    CorpusError,
    Entry,
    atomic_write,
    environment_versions,
    load,
    locked,
    now,
    read_sidecar,
)
from utf8fuzz.engine.differ import Differ
from utf8fuzz.engine.expect import check_outcome, expectation
from utf8fuzz.outcome import VIEWS, Outcome, ViewUnavailable

#: ``open``: an owned decoder's known, unfixed finding; ``fixed``: a pass that ends
#: an open finding (not yet recorded in the sidecar).
Status = Literal["pass", "fail", "skip", "open", "fixed"]


@dataclass
class Verdict:
    decoder: str
    status: Status
    message: str = ""
    notes: list[str] = field(default_factory=list)


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
    if view == "accept":
        return "accepted" if v else "rejected"
    if view == "spans":
        return " ".join(f"[{s},{e})" for s, e in v[:12]) or "no errors"
    if isinstance(v, tuple) and v and isinstance(v[0], int):
        return " ".join(f"U+{c:04X}" for c in v[:12]) + (" ..." if len(v) > 12 else "")
    if isinstance(v, tuple) and v and hasattr(v[0], "kind"):
        return " ".join(f"{t.kind}[{t.start},{t.end})" for t in v[:8])
    return repr(v)[:120]


def _hex(data: bytes) -> str:
    return data.hex(" ").upper() or "(empty)"


def _claim(entry: Entry) -> tuple[str, str, str]:
    """The entry's reference name, profile and policy (``ref:<profile>:<policy>``,
    which loading checked)."""
    ref = str(entry.sidecar["reference"])
    _, profile, policy = ref.split(":")
    return ref, profile, policy


def checks(entry: Entry, extra: Sequence[Decoder] = ()) -> list[str]:
    """The decoders ``entry`` checks, by name, each once: its reference, every decoder
    it recorded, then each of ``extra`` claiming the entry's profile that it did not
    record (judged at that decoder's own policy)."""
    ref = _claim(entry)[0]
    names = [ref, *sorted(str(n) for n in entry.sidecar["outcomes"] if n != ref)]
    for d in extra:
        if d.profile == entry.sidecar.get("profile") and d.name not in names:
            names.append(d.name)
    return names


def _decoder(entry: Entry, name: str, extra: Sequence[Decoder]
             ) -> tuple[Decoder | str, dict[str, Any] | None, bool]:
    """The decoder ``name`` (or why it is not available), its record in the entry (or
    None), and whether it is owned (see the module docstring)."""
    rec = entry.sidecar["outcomes"].get(name)
    given = next((d for d in extra if d.name == name), None)
    if given is not None:
        return given, rec, True
    if rec is None:
        return "neither recorded in this entry nor given", None, False
    d = registry.trusted(name)  # never rec["spec"]: the corpus names, it does not load
    return d, rec, rec.get("own") is True or (not isinstance(d, str) and d.own)


def check(entry: Entry, name: str, extra: Sequence[Decoder] = ()) -> Verdict:
    """Judge decoder ``name`` (one of :func:`checks`) on ``entry``; ``extra`` are the
    caller's own decoders."""
    data = entry.data
    ref, profile, policy = _claim(entry)
    try:
        exp = expectation(data, profile, policy)
    except ValueError as e:
        return Verdict(name, "fail", f"reference {ref} unavailable: {e}")
    if name == ref:
        if entry.sidecar.get("expectation") not in (None, exp):
            return Verdict(ref, "fail",
                           "the reference's expectation for this input changed since it was "
                           "recorded (a spec transcription changed): re-record the entry")
        return Verdict(ref, "pass")
    d, rec, owned = _decoder(entry, name, extra)
    if isinstance(d, str):
        return Verdict(name, "skip", f"{name} is not available here: {d}")
    if rec is not None and "chunks" in rec and rec["chunks"] != cuts(data):
        # the decoder is fed today's split of the bytes, not the one recorded
        return Verdict(name, "fail", "the split rule (utf8fuzz.decoders.chunks) changed "
                       "since this entry was recorded: it would be fed other chunks; "
                       "re-record the entry")
    if "call" in entry.sidecar and name in entry.sidecar["decoders"]:
        return _check_call(entry, d, owned)
    if owned:
        if d.policy != policy:
            exp = expectation(data, d.profile, d.policy)
        return _check_owned(entry, d, rec, exp)
    if rec is None:  # unreachable: _decoder gives a reason for an unrecorded stranger
        return Verdict(name, "skip", f"{name} is not recorded in this entry")
    return _check_external(entry, d, rec, exp)


def _fixed_marks(entry: Entry) -> Mapping[str, Any] | str:
    marks = entry.sidecar.get("fixed", {})
    if not isinstance(marks, dict):
        return f"'fixed' in {entry.path.name} is not an object: re-run utf8fuzz corpus refresh"
    return marks


def _was_open(entry: Entry, name: str, rec: dict[str, Any] | None,
              exp: dict[str, Any]) -> bool:
    """Did ``name`` diverge from ``exp`` when the entry was recorded?"""
    if rec is None:
        return False
    try:
        return check_outcome(Outcome.from_json(rec["outcome"]), exp) is not None
    except (KeyError, TypeError, ValueError):  # no readable record: the signature says
        return name in entry.sidecar.get("decoders", ())


def _check_owned(entry: Entry, d: Decoder, rec: dict[str, Any] | None,
                 exp: dict[str, Any]) -> Verdict:
    name, sig = d.name, entry.signature
    marks = _fixed_marks(entry)
    if isinstance(marks, str):  # unreadable: a regression must not pass as open
        return Verdict(name, "fail", marks)
    why = check_outcome(d.decode(entry.data), exp)
    mark = marks.get(name)
    was_open = mark is None and _was_open(entry, name, rec, exp)
    if why is None:
        if was_open:
            return Verdict(name, "fixed",
                           f"{name} now meets the expectation of open finding {sig}: "
                           "utf8fuzz corpus refresh records it as fixed")
        return Verdict(name, "pass")
    on = f"on input {_hex(entry.data)}: {why}"
    if mark is not None:
        when = mark.get("at", "?") if isinstance(mark, dict) else mark
        return Verdict(name, "fail", f"regressed: {name} was recorded fixed ({when}) for "
                                     f"{sig} and diverges again {on}")
    if was_open:
        return Verdict(name, "open", f"open finding {sig}: {name} diverges {on}")
    if rec is not None:
        return Verdict(name, "fail", f"regressed: {name} met the expectation of {sig} when "
                                     f"it was recorded and now diverges {on}")
    return Verdict(name, "fail", f"{name} does not meet the expectation of {sig} {on}")


def _check_call(entry: Entry, d: Decoder, owned: bool) -> Verdict:
    """An entry of a difference in the call (:mod:`.calls`): its decoder asked again
    as recorded (after its history, or placed in its buffer) against its fresh
    outcome. Owned: still differing is the open finding, no longer differing fixed
    (a regression once marked fixed); external: the recorded behaviour must hold."""
    name, sig, klass = d.name, entry.signature, str(entry.sidecar["class"])
    call = Call.from_json(entry.sidecar["call"], len(entry.data))  # checked as loaded
    how = f"on input {_hex(entry.data)} {call.describe()}"
    still = holds(d, call, entry.data, klass)
    if still is None:
        return Verdict(name, "skip", f"{name} cannot be asked {call.describe()} here")
    marks = _fixed_marks(entry)
    if isinstance(marks, str):
        return Verdict(name, "fail", marks)
    if not owned:
        return (Verdict(name, "pass") if still else Verdict(
            name, "fail", f"behaviour of {name} changed: it no longer answers differently "
            f"{how} ({klass}): remove or re-record the entry"))
    if still:
        if name in marks:
            return Verdict(name, "fail", f"regressed: {name} was recorded fixed for {sig} "
                                         f"and answers differently again {how}")
        return Verdict(name, "open", f"open finding {sig}: {name} answers differently {how}")
    if name in marks:
        return Verdict(name, "pass")
    return Verdict(name, "fixed", f"{name} now answers as fresh {how}, open finding {sig}: "
                                  "utf8fuzz corpus refresh records it as fixed")


def _check_external(entry: Entry, d: Decoder, rec: dict[str, Any],
                    exp: dict[str, Any]) -> Verdict:
    name, data = d.name, entry.data
    try:
        recorded = Outcome.from_json(rec["outcome"])
    except (KeyError, TypeError, ValueError) as e:
        return Verdict(name, "fail", f"recorded outcome of {name} is unreadable: {e}")
    now = d.decode(data)
    v_then, v_now = _versions(rec.get("versions")), _versions(d.versions())
    changed = {k for k in set(v_then) | set(v_now) if v_then.get(k) != v_now.get(k)}
    vtext = "; ".join(f"{k}: {v_then.get(k, '-')} -> {v_now.get(k, '-')}"
                      for k in sorted(changed))
    diff = _differs(recorded, now)
    if diff is None:
        notes = ([f"{name}: version changed ({vtext}); the recorded behaviour still holds"]
                 if changed else [])
        return Verdict(name, "pass", notes=notes)
    agrees = check_outcome(now, exp) is None
    msg = (f"behaviour of {name} changed on input {_hex(data)}: "
           f"{diff}. " + (f"Versions changed ({vtext}). " if changed else
                          "Same library versions as recorded, so its adapter changed. ")
           + ("It now agrees with the reference: "
              + ("fixed upstream? " if changed else "")
              + "remove or re-record the entry."
              if agrees else "It still disagrees with the reference, differently."))
    return Verdict(name, "fail", msg)


def replay_entry(entry: Entry, extra: Sequence[Decoder] = ()) -> list[Verdict]:
    """Every check of ``entry``: :func:`check` for each of :func:`checks`."""
    return [check(entry, n, extra) for n in checks(entry, extra)]


# -- recording fixes --------------------------------------------------------------------


def refresh(corpus: Path, extra: Sequence[Decoder] = (), *, dry_run: bool = False
            ) -> list[tuple[Entry, list[str]]]:
    """Record in each sidecar, under ``"fixed"``, every owned decoder whose verdict is
    ``fixed`` (it meets the expectation of its open finding now): the date, its
    versions and the environment's. ``extra`` are the caller's own decoders.

    Each sidecar is rewritten atomically with every other key kept; one that a fuzz
    worker replaced meanwhile (a shorter input) is left alone. Returns the entries
    changed (with ``dry_run``: that would change; nothing is written) and the
    decoders recorded in each. Corrupt entries are skipped (``corpus check`` names
    them)."""
    changed: list[tuple[Entry, list[str]]] = []
    for e in load(corpus)[0]:
        fixed: dict[str, Any] = {}
        for name in checks(e, extra)[1:]:
            d, _, owned = _decoder(e, name, extra)
            if owned and not isinstance(d, str) and check(e, name, extra).status == "fixed":
                fixed[name] = {"at": now(), "versions": d.versions(),
                               "environment": environment_versions()}
        if fixed and (dry_run or _record_fixed(Path(corpus), e, fixed)):
            changed.append((e, sorted(fixed)))
    return changed


def _record_fixed(corpus: Path, entry: Entry, fixed: dict[str, Any]) -> bool:
    with locked(corpus):  # the lock corpus.save holds: no fuzz worker writes meanwhile
        try:
            side = read_sidecar(entry.path)
        except CorpusError:
            return False
        if side.get("input") != entry.sidecar.get("input"):
            return False
        marks = side.get("fixed")
        side["fixed"] = {**(marks if isinstance(marks, dict) else {}), **fixed}
        atomic_write(entry.path, (json.dumps(side, indent=2, sort_keys=True) + "\n").encode())
    return True


def _protected(entry: Entry, extra: Sequence[Decoder] = ()) -> bool:
    """Is ``entry`` a regression test of someone's own decoder, which pruning must
    keep even when its signature no longer reproduces (that is what a fix does)? Yes
    when it records a fix, or one of the decoders its signature names is owned: this
    project's, recorded ``own``, or a plug-in loaded by its spec (``--decoder
    module:attr``: prune cannot tell whose code that is, and keeping an entry costs a
    file where removing one loses a regression test)."""
    if entry.sidecar.get("fixed"):
        return True
    for name in entry.sidecar["decoders"]:
        rec = entry.sidecar["outcomes"].get(name) or {}
        if rec.get("own") is True or rec.get("spec"):
            return True
        d = registry.trusted(str(name), extra)
        if not isinstance(d, str) and d.own:
            return True
    return False


# -- pruning ----------------------------------------------------------------------------


def reproduces(entry: Entry, extra: Sequence[Decoder] = ()) -> bool | None:
    """Does the current engine still give ``entry``'s signature on its input, with
    the decoders the signature names? None when one of them is not available here
    (nothing can be said, and nothing should be removed), which is always so for a
    decoder only a ``spec`` could load and ``extra`` (the caller's) does not hold
    (:func:`utf8fuzz.decoders.trusted`)."""
    chosen = []
    for name in entry.sidecar["decoders"]:
        d = registry.trusted(str(name), extra)
        if isinstance(d, str):
            return None
        chosen.append(d)
    if "call" in entry.sidecar:
        call = Call.from_json(entry.sidecar["call"], len(entry.data))
        return holds(chosen[0], call, entry.data, str(entry.sidecar["class"]))
    return entry.signature in Differ(chosen).signatures(entry.data)


def prune(corpus: Path, *, dry_run: bool = False, extra: Sequence[Decoder] = ()
          ) -> list[Entry]:
    """Remove the entries whose signature the current engine no longer gives.

    Signatures are names: when the engine learns to name a divergence better, or an
    external decoder's bug is fixed at the same version, an entry can stand under a
    name nothing produces any more, a duplicate of the entry under the better name.
    A regression test of an owned decoder (:func:`_protected`) is never removed. An
    input file is removed with the last sidecar, good or bad, that names it. Only
    good entries are judged (a bad sidecar is never removed), and what is removed is
    a sidecar in ``entries/`` and a file in ``inputs/`` (:func:`corpus.input_path`):
    nothing outside the corpus. The removal holds the writers' lock, so a concurrent
    ``save`` cannot lose its input; an entry rewritten since it was judged is kept."""
    import posixpath

    from utf8fuzz.engine import corpus as corpus_mod

    corpus = Path(corpus)
    entries, _ = load(corpus)
    stale = [e for e in entries if not _protected(e, extra) and reproduces(e, extra) is False]
    if dry_run or not stale:
        return stale
    with corpus_mod.locked(corpus):
        current = {e.path: e for e in load(corpus)[0]}
        removed = [e for e in stale if current.get(e.path) == e]
        keep = corpus_mod.named_inputs(corpus, besides=frozenset(e.path for e in removed))
        for e in removed:
            e.path.unlink(missing_ok=True)
            f = e.sidecar["file"]
            if posixpath.normpath(f) not in keep:
                corpus_mod.input_path(corpus, f).unlink(missing_ok=True)
    return removed
