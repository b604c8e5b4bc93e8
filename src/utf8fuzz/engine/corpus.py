"""The corpus: one entry per signature, written atomically, loaded tolerantly.

The format is documented in ``docs/corpus.md`` (the report generator reads it too).
In short: ``entries/<sig-id>.json`` is the sidecar, ``inputs/<sha-id>.bin`` the
minimized input, named by its content hash.

Concurrency. Fuzz workers (libFuzzer ``-jobs``/``-fork`` children, ``--jobs``
processes) write into one corpus at once without locks:

* every file is written to a temporary name in the same directory and renamed into
  place (``os.replace`` is atomic on POSIX), so a reader sees the old file or the
  new one, never half of one;
* inputs are content-addressed, hence immutable: two writers of one name write
  identical bytes;
* a sidecar is replaced only by one with a strictly shorter input, so concurrent
  finds of one signature converge on the smallest, and a later, longer find never
  overwrites an earlier one. The input is renamed into place before its sidecar,
  so a sidecar never names a missing input.

Loading never stops at a bad entry: each problem is reported with its path, and
every other entry still loads (and replays).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utf8fuzz import __version__
from utf8fuzz.engine.signature import Signature, signature_id

FORMAT = 1
REQUIRED = ("format", "signature", "profile", "class", "feature", "decoders", "reference",
            "input", "file", "sha256", "outcomes")

_counter = itertools.count()


@dataclass(frozen=True)
class Entry:
    path: Path
    sidecar: dict[str, Any]
    data: bytes

    @property
    def signature(self) -> str:
        return str(self.sidecar["signature"])

    @property
    def id(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def content_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def entries_dir(corpus: Path) -> Path:
    return Path(corpus) / "entries"


def inputs_dir(corpus: Path) -> Path:
    return Path(corpus) / "inputs"


def atomic_write(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` via a temporary file in the same directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{next(_counter)}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def environment_versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "utf8fuzz": __version__,
        "platform": platform.platform(),
    }


def now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def save(corpus: Path, sidecar: Mapping[str, Any], data: bytes) -> tuple[Path, bool]:
    """Store one entry; returns its sidecar path and whether the corpus changed.

    An existing entry for the signature is kept unless ``data`` is strictly shorter
    than its input; then the input is replaced and the original ``found`` block kept
    (the signature was first found then), with the new minimizer figures.
    """
    sig = str(sidecar["signature"])
    path = entries_dir(corpus) / f"{signature_id(sig)}.json"
    side = dict(sidecar)
    old = _read_json(path)
    if old is not None:
        try:
            old_len = len(bytes.fromhex(old["input"]))
        except (KeyError, TypeError, ValueError):
            old_len = None  # a corrupt sidecar is replaced
        if old_len is not None and old_len <= len(data):
            return path, False
        if old_len is not None and isinstance(old.get("found"), dict):
            found = dict(old["found"])
            new_found = side.get("found") or {}
            found["minimized_size"] = len(data)
            found["minimizer"] = new_found.get("minimizer")
            found["improved_at"] = now()
            side["found"] = found
    cid = content_id(data)
    side["input"] = data.hex()
    side["sha256"] = hashlib.sha256(data).hexdigest()
    side["file"] = f"inputs/{cid}.bin"
    inp = inputs_dir(corpus) / f"{cid}.bin"
    if not inp.exists():
        atomic_write(inp, data)
    atomic_write(path, (json.dumps(side, indent=2, sort_keys=True) + "\n").encode())
    return path, True


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def signature_ids(corpus: Path) -> set[str]:
    """The signature ids present (cheap: file names only)."""
    d = entries_dir(corpus)
    if not d.is_dir():
        return set()
    return {p.stem for p in d.glob("*.json")}


def load_entry(path: Path) -> Entry:
    """Load and verify one sidecar and its input; raises ValueError saying why."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        side = json.loads(text)
    except ValueError as e:
        raise ValueError(f"not valid JSON: {e}") from None
    if not isinstance(side, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in REQUIRED if k not in side]
    if missing:
        raise ValueError(f"missing key(s): {', '.join(missing)}")
    if not isinstance(side["format"], int) or side["format"] > FORMAT:
        raise ValueError(f"unsupported format {side['format']!r} (this utf8fuzz reads {FORMAT})")
    try:
        sig = Signature.parse(side["signature"])
    except (ValueError, AttributeError) as e:
        raise ValueError(str(e)) from None
    if signature_id(str(sig)) != path.stem:
        raise ValueError(f"file name does not match its signature (expected {sig.id}.json)")
    if (sig.profile, sig.klass, sig.feature, list(sig.decoders)) != (
        side["profile"], side["class"], side["feature"], list(side["decoders"])
    ):
        raise ValueError("signature disagrees with profile/class/feature/decoders")
    try:
        data = bytes.fromhex(side["input"])
    except (TypeError, ValueError):
        raise ValueError("'input' is not hex") from None
    if hashlib.sha256(data).hexdigest() != side["sha256"]:
        raise ValueError("'sha256' does not match 'input'")
    root = path.parent.parent
    inp = root / str(side["file"])
    try:
        raw = inp.read_bytes()
    except OSError:
        raise ValueError(f"input file {side['file']} is missing") from None
    if raw != data:
        raise ValueError(f"input file {side['file']} does not match the sidecar's 'input'")
    if not isinstance(side["outcomes"], dict) or side["reference"] not in side["outcomes"]:
        raise ValueError("'outcomes' must hold the reference's outcome")
    return Entry(path, side, data)


def load(corpus: Path) -> tuple[list[Entry], list[Problem]]:
    """Every good entry, sorted by signature id, and every problem by path."""
    entries: list[Entry] = []
    problems: list[Problem] = []
    d = entries_dir(corpus)
    if not d.is_dir():
        return entries, problems
    for p in sorted(d.glob("*.json")):
        try:
            entries.append(load_entry(p))
        except ValueError as e:
            problems.append(Problem(p, str(e)))
    return entries, problems


def check(corpus: Path) -> tuple[list[Entry], list[Problem], list[Problem]]:
    """Verify the whole corpus: (entries, problems, notes). Notes are harmless
    findings: inputs no sidecar names (left by a shorter replacement), leftover
    temporary files of an interrupted writer, unreadable seeds."""
    corpus = Path(corpus)
    if not corpus.is_dir():
        raise ValueError(f"no corpus directory at {corpus}")
    entries, problems = load(corpus)
    notes: list[Problem] = []
    named = {str(e.sidecar["file"]) for e in entries}
    idir = inputs_dir(corpus)
    if idir.is_dir():
        for p in sorted(idir.glob("*.bin")):
            if f"inputs/{p.name}" not in named:
                notes.append(Problem(p, "no entry names this input (superseded; safe to delete)"))
    for sub in (entries_dir(corpus), idir):
        if sub.is_dir():
            for p in sorted(sub.glob(".*.tmp")):
                notes.append(Problem(p, "temporary file of an interrupted write (safe to delete)"))
    return entries, problems, notes


def build_sidecar(
    result: Any,
    divergence: Any,
    decoders: Mapping[str, Any],
    *,
    engine: str,
    original_size: int,
    minimizer: Mapping[str, Any] | None = None,
    position_dependent: bool = False,
) -> dict[str, Any]:
    """The sidecar for ``divergence`` (a :class:`~utf8fuzz.engine.differ.Divergence`)
    found in ``result`` (the differ's :class:`~utf8fuzz.engine.result.Result` for the
    *minimized* input). ``decoders`` maps names to the decoders that ran."""
    from utf8fuzz.engine.expect import expectation

    sig = divergence.signature
    profile, policy = sig.profile, divergence.reference.rsplit(":", 1)[1]
    outcomes: dict[str, Any] = {}
    for name, out in sorted(result.outcomes.items()):
        d = decoders.get(name)
        if name == divergence.reference:
            outcomes[name] = {"profile": profile, "policy": policy, "own": True,
                              "incremental": False, "shows": sorted(out.shows),
                              "versions": dict(out.provenance), "outcome": out.to_json()}
        elif d is not None and d.profile == profile:
            outcomes[name] = {"profile": d.profile, "policy": d.policy, "own": bool(d.own),
                              "incremental": bool(d.incremental), "shows": sorted(d.shows),
                              "versions": d.versions(), "outcome": out.to_json()}
            if getattr(d, "spec", None):  # a plug-in: how to load it again
                outcomes[name]["spec"] = d.spec
    data = result.data
    return {
        "format": FORMAT,
        "signature": str(sig),
        "profile": sig.profile,
        "class": sig.klass,
        "feature": sig.feature,
        "decoders": list(sig.decoders),
        "reference": divergence.reference,
        "input": data.hex(),
        "file": f"inputs/{content_id(data)}.bin",
        "sha256": hashlib.sha256(data).hexdigest(),
        "position_dependent": position_dependent,
        "first_difference": {"offset": divergence.offset, "view": divergence.view,
                             "detail": divergence.detail},
        "outcomes": outcomes,
        "versions": environment_versions(),
        "expectation": expectation(data, profile, policy),
        "found": {"at": now(), "engine": engine, "original_size": original_size,
                  "minimized_size": len(data), "minimizer": dict(minimizer or {})},
    }
