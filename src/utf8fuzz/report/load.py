"""Reading the corpus for a report: every sidecar that can be read, and a list of
those that cannot.

A report must never stop on one bad file. Each ``corpus/entries/*.json`` sidecar
(format in ``docs/corpus.md``) becomes an :class:`Entry`, or a :class:`Corrupt`
naming its path and why it was refused. Unknown keys are kept (``extra``) and
ignored, since later formats only add keys. Half-written files
(``.<name>.<pid>.<n>.tmp``) do not end in ``.json`` and are not read.

Checks made here, so that every later stage may trust an Entry: the sidecar
passes the engine's reader (:func:`utf8fuzz.engine.corpus.read_sidecar`: a regular
file of bounded size, JSON of bounded depth, an object whose keys have the types
of the format); ``file``, when given, names a file in the corpus's ``inputs/``
(:func:`~utf8fuzz.engine.corpus.input_path`); ``input`` is hex (or, if absent,
that input file is readable); the ``sha256`` (when present) matches the input;
``profile`` is known; every recorded outcome parses with
:meth:`Outcome.from_json` and has the input's length. An input file that is
missing or disagrees with the sidecar's ``input`` is a warning on the entry: the
sidecar is what was judged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from utf8fuzz import safe
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.outcome import Outcome
from utf8fuzz.profiles import REGISTRY

KNOWN_KEYS = frozenset({
    "format", "signature", "file", "profile", "class", "feature", "decoders", "reference",
    "input", "sha256", "position_dependent", "first_difference", "outcomes",
    "versions", "expectation", "found",
})


@dataclass(frozen=True)
class Record:
    """One decoder's recorded outcome in an entry, with what it claims."""

    name: str
    profile: str
    policy: str
    own: bool
    incremental: bool
    shows: tuple[str, ...]
    outcome: Outcome
    versions: dict[str, Any] = field(default_factory=dict)  # library, Unicode, CPU, ...
    #: how a user's decoder is loaded again (``--decoder`` takes it): a plug-in's or
    #: an ``exec:`` program's spec, None for a built-in decoder (named as recorded)
    spec: str | None = None
    #: a streaming decoder's chunks (end offsets; decoders/chunks.py's rule), as
    #: recorded; None for a one-shot decoder or an entry that did not record them
    chunks: tuple[int, ...] | None = None


@dataclass
class Entry:
    path: Path
    sig_id: str
    signature: str
    profile: str
    cls: str
    feature: str
    decoders: tuple[str, ...]
    reference: str
    data: bytes
    position_dependent: bool
    first_difference: dict[str, Any]
    records: dict[str, Record]
    versions: dict[str, Any]
    found: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def reference_policy(self) -> str:
        parts = self.reference.split(":")
        return parts[2] if len(parts) == 3 and parts[0] == "ref" else "maximal-subpart"

    @property
    def found_date(self) -> str:
        at = self.found.get("at") if isinstance(self.found, dict) else None
        return at[:10] if isinstance(at, str) else ""


@dataclass(frozen=True)
class Corrupt:
    path: Path
    reason: str


@dataclass
class Corpus:
    root: Path
    entries: list[Entry]
    corrupt: list[Corrupt]
    exists: bool = True


def load_corpus(root: Path) -> Corpus:
    """All entries under ``root/entries`` sorted by signature (then path), and the
    corrupt sidecars sorted by path. A missing ``root`` gives an empty corpus with
    ``exists=False``; the command turns that into an error, the engine never
    calls us without one."""
    root = Path(root)
    if not root.is_dir():
        return Corpus(root, [], [], exists=False)
    entries: list[Entry] = []
    paths, outside = corpus_mod.sidecar_files(root)
    corrupt = [Corrupt(x.path, x.message) for x in outside]
    for p in paths:
        try:
            entries.append(load_entry(p))
        except EntryError as e:
            corrupt.append(Corrupt(p, str(e)))
    entries.sort(key=lambda e: (e.signature, str(e.path)))
    corrupt.sort(key=lambda c: c.path)
    return Corpus(root, entries, corrupt)


class EntryError(ValueError):
    pass


_T = TypeVar("_T")


def _req(d: dict[str, Any], key: str, typ: type[_T]) -> _T:
    if key not in d:
        raise EntryError(f"missing key {key!r}")
    v = d[key]
    if not isinstance(v, typ):
        raise EntryError(f"key {key!r} has the wrong type ({type(v).__name__})")
    return v


def load_entry(path: Path) -> Entry:
    """One sidecar, read and shape-checked by the engine's reader
    (:func:`utf8fuzz.engine.corpus.read_sidecar`: size, depth, types) with its
    ``file`` confined to the corpus's ``inputs/``; :class:`EntryError` says why not."""
    try:
        d = corpus_mod.read_sidecar(path)
    except corpus_mod.CorpusError as e:
        raise EntryError(str(e)) from None
    warnings: list[str] = []
    # The input file is ``inputs/<sha-id>.bin`` relative to the corpus root, named by
    # the sidecar's "file" key (docs/corpus.md); the sidecar's hex "input" is what
    # was judged, the file is a cross-check.
    root = path.parent.parent
    file_key = d.get("file")
    bin_data: bytes | None = None
    unreadable = ""
    if file_key is not None:
        try:
            bin_path = corpus_mod.input_path(root, file_key)  # confined, or refused
        except corpus_mod.CorpusError as e:
            raise EntryError(str(e)) from None
        try:
            bin_data = corpus_mod.read_regular(bin_path, corpus_mod.MAX_INPUT_BYTES)
        except corpus_mod.CorpusError as e:
            unreadable = str(e)
    shown = safe.text(file_key, 200)
    if "input" in d:
        try:
            data = bytes.fromhex(d["input"])
        except ValueError:
            raise EntryError("'input' is not hex") from None
        if bin_data is not None and bin_data != data:
            warnings.append(f"{shown} differs from the sidecar's input; "
                            "the sidecar's input is reported")
        elif file_key is not None and bin_data is None:
            warnings.append(f"{shown} is missing or unreadable ({unreadable}); "
                            "the sidecar's input is reported")
    elif bin_data is not None:
        data = bin_data
    else:
        raise EntryError("no 'input' and no readable input file")
    sha = d.get("sha256")
    if sha is not None and sha != hashlib.sha256(data).hexdigest():
        raise EntryError("sha256 does not match the input")
    signature = _req(d, "signature", str)
    profile = _req(d, "profile", str)
    if profile not in REGISTRY:
        raise EntryError(f"unknown profile {corpus_mod.quoted(profile, 200)}")
    outcomes = _req(d, "outcomes", dict)
    try:
        parsed = corpus_mod.outcomes_of(d, len(data))
    except corpus_mod.CorpusError as e:
        raise EntryError(str(e)) from None
    records: dict[str, Record] = {}
    for name, rec in sorted(outcomes.items()):
        out = parsed[name]
        rprof = rec.get("profile", profile)
        if rprof not in REGISTRY:
            raise EntryError(f"decoder {corpus_mod.quoted(name, 80)} claims unknown profile "
                             f"{corpus_mod.quoted(rprof, 200)}")
        shows = rec.get("shows")
        records[name] = Record(
            name=str(name),
            profile=str(rprof),
            policy=str(rec.get("policy", "maximal-subpart")),
            own=bool(rec.get("own", False)),
            incremental=bool(rec.get("incremental", False)),
            shows=tuple(sorted(shows)) if isinstance(shows, list) else tuple(sorted(out.shows)),
            outcome=out,
            versions=rec["versions"] if isinstance(rec.get("versions"), dict) else {},
            spec=str(rec["spec"]) if isinstance(rec.get("spec"), str) else None,
            chunks=tuple(int(c) for c in rec["chunks"])
            if isinstance(rec.get("chunks"), list) else None,
        )
    decs = d.get("decoders", [])
    if not isinstance(decs, list):
        raise EntryError("key 'decoders' has the wrong type")
    parts = signature.split("/")
    fd, vers, found = d.get("first_difference"), d.get("versions"), d.get("found")
    return Entry(
        path=path,
        sig_id=path.stem,
        signature=signature,
        profile=profile,
        cls=str(d.get("class", parts[1] if len(parts) > 1 else "")),
        feature=str(d.get("feature", parts[2] if len(parts) > 2 else "")),
        decoders=tuple(sorted(str(x) for x in decs)),
        reference=str(d.get("reference", f"ref:{profile}:maximal-subpart")),
        data=data,
        position_dependent=bool(d.get("position_dependent", False)),
        first_difference=fd if isinstance(fd, dict) else {},
        records=records,
        versions=vers if isinstance(vers, dict) else {},
        found=found if isinstance(found, dict) else {},
        warnings=warnings,
        extra={k: v for k, v in d.items() if k not in KNOWN_KEYS},
    )


def fed_chunks(e: Entry) -> list[tuple[str, str]]:
    """Each streaming decoder of ``e`` with the chunks it was fed, as recorded, in hex
    (``F2 90 80 | 80 | 42``; the first 16 chunks of a long input, then how many more),
    by decoder name."""
    out: list[tuple[str, str]] = []
    for name, rec in sorted(e.records.items()):
        if rec.chunks:
            prev, parts = 0, []
            for c in rec.chunks:
                parts.append(e.data[prev:c].hex(" ").upper())
                prev = c
            more = f" | ... {len(parts) - 16} more chunks" if len(parts) > 16 else ""
            out.append((name, " | ".join(parts[:16]) + more))
    return out
