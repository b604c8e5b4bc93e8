"""The corpus: one entry per signature and cause, written atomically, loaded tolerantly.

The format is documented in ``docs/corpus.md`` (the report generator reads it too).
In short: ``entries/<sig-id>.json`` is the sidecar (``entries/<sig-id>_<finding-id>.json``
for another cause found under the same signature: :func:`entry_path`),
``inputs/<sha-id>.bin`` the minimized input, named by its content hash.

Concurrency. Fuzz workers (libFuzzer ``-jobs``/``-fork`` children, ``--jobs``
processes) write into one corpus at once:

* every file is written to a temporary name in the same directory and renamed into
  place (``os.replace`` is atomic on POSIX), so a reader sees the old file or the
  new one, never half of one; readers take no lock;
* inputs are content-addressed, hence immutable: two writers of one name write
  identical bytes;
* :func:`save` compares with the existing sidecar and writes under an exclusive
  ``flock`` on ``<corpus>/.lock`` (:func:`locked`), so a sidecar is replaced only
  by one with a strictly shorter input, however the writers interleave: concurrent
  finds of one signature converge on the smallest. The input is renamed into place
  before its sidecar, so a sidecar never names a missing input;
* a writer killed mid-write leaves ``.<name>.<pid>.<n>.tmp``; :func:`sweep_temporaries`
  (run by :func:`check` and by a process's first :func:`save`) removes those whose
  writer is gone and that are older than :data:`STALE_TEMP_SECONDS`.

Untrusted sidecars. A sidecar is data from disk, possibly damaged or hostile. It
is read by :func:`read_sidecar` alone (a regular file of at most
:data:`MAX_SIDECAR_BYTES`, UTF-8 JSON of bounded depth, an object whose known keys
have the types :func:`validate` states), and the one path it names, ``file``, is
followed only through :func:`input_path`, which confines it to ``<corpus>/inputs/``
after resolving symlinks. Every reader (this module, the report, replay, prune,
the pytest plugin) goes through them, so a bad sidecar is one named problem and
every other entry still loads (and replays).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import itertools
import json
import os
import platform
import posixpath
import re
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from utf8fuzz import __version__, safe
from utf8fuzz.decoders.chunks import cuts
from utf8fuzz.engine.signature import SEVERITIES, Signature, signature_id
from utf8fuzz.outcome import VIEWS, Outcome, Status

#: The sidecar format written. 2: a signature names one decoder, and the sidecar
#: records its ``finding``; 1: a signature may name several (still read; converted by
#: :func:`migrate`).
FORMAT = 2
REQUIRED = ("format", "signature", "profile", "class", "feature", "decoders", "reference",
            "input", "file", "sha256", "outcomes")

#: Largest sidecar read. A real one is a few KiB per input byte of a minimized input.
MAX_SIDECAR_BYTES = 8 << 20
#: Largest input (``inputs/``, ``seeds/``) read; seeds and minimized inputs are tiny,
#: so a larger file is a mistake or an attack and is skipped with a note.
MAX_INPUT_BYTES = 1 << 20
#: Longest name (signature, profile, decoder, file, ...) a sidecar may give.
MAX_NAME_CHARS = 1000
#: Deepest nesting of arrays and objects a sidecar may have. The format's deepest
#: path is 6 (outcomes, a decoder, outcome, tokens, a token); the margin is for keys
#: later formats add. A bound of its own, so that no reader (nor a rewrite by
#: ``json.dumps``) ever meets Python's recursion limit, wherever its stack stands.
MAX_JSON_DEPTH = 32
#: Age after which the temporary file of a writer that is gone is removed. A write
#: takes milliseconds; the age also protects writers this host cannot see (another
#: container or machine on a shared file system), whose pids look gone.
STALE_TEMP_SECONDS = 600
#: The lock :func:`save` and prune hold, in the corpus root (not in ``inputs/``,
#: which libFuzzer reads as a corpus directory).
LOCK_NAME = ".lock"

_counter = itertools.count()
_swept: set[str] = set()


class CorpusError(ValueError):
    """A corpus file refused, and why, in one line that is safe to print."""


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
        return safe.text(f"{self.path}: {self.message}")


def content_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def entries_dir(corpus: Path) -> Path:
    return Path(corpus) / "entries"


def inputs_dir(corpus: Path) -> Path:
    return Path(corpus) / "inputs"


def is_corpus(corpus: Path) -> bool:
    """A directory with ``entries/`` or ``inputs/`` (``seeds/`` alone is not one)."""
    return entries_dir(corpus).is_dir() or inputs_dir(corpus).is_dir()


def require_corpus(corpus: Path) -> None:
    """Raise :class:`CorpusError` (one printable line) unless ``corpus`` is a corpus."""
    if not Path(corpus).is_dir():
        raise CorpusError(f"no corpus directory at {safe.text(corpus)}")
    if not is_corpus(corpus):
        raise CorpusError(f"{safe.text(corpus)} is not a corpus (no entries/ and no inputs/)")


# -- reading untrusted files ---------------------------------------------------------


def quoted(v: object, limit: int = 200) -> str:
    """A value from a sidecar, quoted for a message: printable ASCII (``safe.text``),
    cut at ``limit``."""
    return f"'{safe.text(v, limit)}'"


def _size(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path`` if it holds at most ``limit``; else
    :class:`CorpusError`. Opened non-blocking and checked with ``fstat`` before any
    read, so a FIFO, device or directory is refused rather than read or waited on,
    and a large file is never read into memory."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise CorpusError(f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CorpusError("not a regular file")
        if st.st_size > limit:
            raise CorpusError(f"{_size(st.st_size)}, over the {_size(limit)} limit")
        # One read of what fstat said plus a byte, so the usual file costs one
        # buffer; more reads only for a file that grows meanwhile.
        chunks, total, want = [], 0, st.st_size + 1
        while chunk := os.read(fd, min(want, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise CorpusError(f"over the {_size(limit)} limit")
            want = 1 << 16
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as e:
        raise CorpusError(f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def read_sidecar(path: Path) -> dict[str, Any]:
    """Parse one sidecar file and :func:`validate` it; :class:`CorpusError` says why
    not. Which keys must be present is each reader's business."""
    raw = read_regular(path, MAX_SIDECAR_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError("not valid JSON: not UTF-8 text") from None
    try:
        side = json.loads(text)
    except RecursionError:
        raise CorpusError("not valid JSON: nested too deeply") from None
    except ValueError as e:
        raise CorpusError(f"not valid JSON: {safe.text(e, 200)}") from None
    if not isinstance(side, dict):
        raise CorpusError("not a JSON object")
    if json_depth(side) > MAX_JSON_DEPTH:
        raise CorpusError(f"not valid JSON: nested too deeply (over {MAX_JSON_DEPTH} levels)")
    validate(side)
    return side


def json_depth(doc: object) -> int:
    """How deeply arrays and objects nest in ``doc`` (a scalar: 0), found without
    recursion (a document's depth is what is being bounded)."""
    deepest, todo = 0, [(doc, 1)]
    while todo:
        v, d = todo.pop()
        kids = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if kids is None:
            continue
        deepest = max(deepest, d)
        todo.extend((k, d + 1) for k in kids if isinstance(k, (dict, list)))
    return deepest


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _name(v: object) -> bool:
    return isinstance(v, str) and len(v) <= MAX_NAME_CHARS


def _names(v: object) -> bool:
    return isinstance(v, list) and all(_name(x) for x in v)


def _span(v: object) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_int(x) for x in v)


def _wrong(key: str, what: str) -> CorpusError:
    return CorpusError(f"{key} is not {what}")


_NAME = f"a string of at most {MAX_NAME_CHARS} characters"
_FINDING_ID = re.compile(r"[0-9a-f]{16}")
_NAMES = f"a list of strings of at most {MAX_NAME_CHARS} characters"
_OPTIONAL_FIELDS: dict[str, dict[str, tuple[Any, str]]] = {
    # key -> {field: (check, what it must be)}; each field is optional
    "found": {"at": (_name, _NAME), "engine": (_name, _NAME), "improved_at": (_name, _NAME),
              "original_size": (_int, "an integer"), "minimized_size": (_int, "an integer"),
              "minimizer": (lambda v: v is None or isinstance(v, dict), "an object"),
              "explain_seconds": (lambda v: isinstance(v, (int, float)), "a number")},
    "finding": {"id": (lambda v: isinstance(v, str) and _FINDING_ID.fullmatch(v) is not None,
                       "16 lower-case hex digits"),
                "family": (_name, _NAME), "rule": (lambda v: _name(v) and bool(v), _NAME),
                "explanation": (_name, _NAME),
                "severity": (lambda v: v in SEVERITIES, f"one of {', '.join(SEVERITIES)}"),
                "pattern": (lambda v: isinstance(v, str) and len(v) <= 4 * MAX_INPUT_BYTES,
                            "a string"),
                "checked": (lambda v: _int(v) and v >= 0, "a non-negative integer"),
                "rules": (lambda v: _int(v) and v >= 1, "a positive integer")},
    "first_difference": {"offset": (lambda v: v is None or _int(v), "an integer"),
                         "view": (_name, _NAME), "detail": (lambda v: isinstance(v, str),
                                                             "a string")},
}
_RECORD_FIELDS: dict[str, tuple[Any, str]] = {
    "profile": (_name, _NAME), "policy": (_name, _NAME), "spec": (_name, _NAME),
    "own": (lambda v: isinstance(v, bool), "true or false"),
    "incremental": (lambda v: isinstance(v, bool), "true or false"),
    "shows": (_names, _NAMES),
    "versions": (lambda v: isinstance(v, dict), "an object"),
    "chunks": (lambda v: isinstance(v, list) and len(v) <= MAX_INPUT_BYTES
               and all(_int(x) for x in v), "a list of integers"),
}


def validate(side: Mapping[str, Any]) -> None:
    """The sidecar schema: every key a reader uses has its type (and a bounded size)
    where present; unknown keys are allowed (later formats add keys). Raises
    :class:`CorpusError` naming the first key that does not."""
    if not (_int(side.get("format", 1)) and side.get("format", 1) >= 1):
        raise _wrong("'format'", "a positive integer")
    for k in ("signature", "profile", "class", "feature", "reference", "sha256", "file"):
        if k in side and not _name(side[k]):
            raise _wrong(repr(k), _NAME)
    if "input" in side and not (isinstance(side["input"], str)
                                and len(side["input"]) <= 2 * MAX_INPUT_BYTES):
        raise _wrong("'input'", f"a hex string of at most {_size(MAX_INPUT_BYTES)}")
    if "decoders" in side and not _names(side["decoders"]):
        raise _wrong("'decoders'", _NAMES)
    if "position_dependent" in side and not isinstance(side["position_dependent"], bool):
        raise _wrong("'position_dependent'", "true or false")
    if "call" in side and not (isinstance(side["call"], dict)
                               and side["call"].get("check") in ("history", "placed")):
        raise _wrong("'call'", "an object whose 'check' is 'history' or 'placed'")
    for k in ("first_difference", "versions", "expectation", "found", "outcomes", "finding"):
        if k in side and not isinstance(side[k], dict):
            raise _wrong(repr(k), "an object")
    for k, fields in _OPTIONAL_FIELDS.items():
        for f, (ok, what) in fields.items():
            if f in side.get(k, {}) and not ok(side[k][f]):
                raise _wrong(f"{k}.{f}", what)
    for name, rec in side.get("outcomes", {}).items():
        where = f"outcomes[{quoted(name, 80)}]"
        if not _name(name) or not isinstance(rec, dict):
            raise _wrong(where, f"an object under a name of at most {MAX_NAME_CHARS} "
                         "characters")
        for f, (ok, what) in _RECORD_FIELDS.items():
            if f in rec and not ok(rec[f]):
                raise _wrong(f"{where}.{f}", what)
        _check_outcome_json(where + ".outcome", rec.get("outcome"))


_TOKEN_KINDS = ("char", "error", "reserved")
_STATUSES: tuple[str, ...] = get_args(Status)
_VIEW_CHECKS: dict[str, Any] = {
    "spans": lambda v: isinstance(v, list) and all(_span(x) for x in v),
    "strict": lambda v: v is None or _span(v),
    "reason": lambda v: v is None or _name(v),
    "accept": lambda v: isinstance(v, bool),
    **{k: lambda v: isinstance(v, list) and all(_int(x) for x in v)
       for k in ("replace", "ignore", "escape")},
}


def _token(t: object) -> bool:
    return (isinstance(t, list) and len(t) in (4, 5) and t[0] in _TOKEN_KINDS
            and (t[1] is None or _int(t[1])) and _int(t[2]) and _int(t[3])
            and (len(t) == 4 or t[4] is None or _name(t[4])))


def _check_outcome_json(where: str, o: object) -> None:
    """The shape :meth:`Outcome.to_json` writes, so that ``from_json`` and every view
    of the result work; whether the tokens tile is ``from_json``'s to say."""
    if not isinstance(o, dict):
        raise _wrong(where, "an object")
    if o.get("status") not in _STATUSES:
        raise _wrong(f"{where}.status", ", ".join(_STATUSES))
    if not (_int(o.get("length")) and o["length"] >= 0):
        raise _wrong(f"{where}.length", "a non-negative integer")
    if "detail" in o and not isinstance(o["detail"], str):
        raise _wrong(f"{where}.detail", "a string")
    if "provenance" in o and not isinstance(o["provenance"], dict):
        raise _wrong(f"{where}.provenance", "an object")
    if "tokens" in o and not (isinstance(o["tokens"], list) and all(map(_token, o["tokens"]))):
        raise _wrong(f"{where}.tokens", "a list of [kind, value, start, end, reason?]")
    views = o.get("views", {})
    if not isinstance(views, dict):
        raise _wrong(f"{where}.views", "an object")
    for k, v in views.items():
        check = _VIEW_CHECKS.get(k)
        if check is None:
            raise _wrong(f"{where}.views", f"an object of views ({', '.join(VIEWS[1:])})")
        if not check(v):
            raise _wrong(f"{where}.views.{k}", "in the form Outcome.to_json writes")


def outcomes_of(side: Mapping[str, Any], length: int) -> dict[str, Outcome]:
    """Every recorded outcome of a :func:`validate`\\ d sidecar, parsed, each for an
    input of ``length`` bytes; :class:`CorpusError` names the first that is not."""
    out: dict[str, Outcome] = {}
    for name, rec in sorted(side.get("outcomes", {}).items()):
        try:
            o = Outcome.from_json(rec["outcome"])
        except (ValueError, TypeError, LookupError) as e:  # validated: only ValueError expected
            raise CorpusError(f"outcome of {quoted(name, 80)} does not parse: "
                              f"{safe.text(e, 200)}") from None
        if o.length != length:
            raise CorpusError(f"outcome of {quoted(name, 80)} has length {o.length}, "
                              f"input {length}")
        out[name] = o
    return out


def _inside(path: Path, directory: Path) -> bool:
    """Does ``path``, symlinks resolved, lie in ``directory`` (resolved too)?"""
    try:
        return path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def input_path(corpus: Path, name: object) -> Path:
    """``corpus/<name>`` for a sidecar's ``file``: a relative ``inputs/<file>`` whose
    target, symlinks resolved, is in the corpus's ``inputs/``, itself in the corpus.
    Anything else (``..``, an absolute path, a symlink that leads out, another
    directory of the corpus) is :class:`CorpusError`: nothing a sidecar says can make
    a reader read, or prune delete, a file outside ``inputs/``."""
    if not _name(name) or not isinstance(name, str) or "\x00" in name:
        raise CorpusError("'file' is not a file name")
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts or len(parts) != 2 or parts[0] != "inputs":
        raise CorpusError(f"'file' {quoted(name, 200)} is not inputs/<name> "
                          "inside the corpus")
    root = Path(corpus)
    idir = inputs_dir(root)
    path = root / posixpath.normpath(name)
    if not (_inside(idir, root) and _inside(path, idir)):
        raise CorpusError(f"'file' {quoted(name, 200)} leads out of the corpus "
                          "through a symlink")
    return path


def read_input(corpus: Path, name: object) -> bytes:
    """The bytes of the input file a sidecar's ``file`` names (:func:`input_path`),
    at most :data:`MAX_INPUT_BYTES`; :class:`CorpusError` otherwise."""
    path = input_path(corpus, name)
    try:
        return read_regular(path, MAX_INPUT_BYTES)
    except CorpusError as e:
        raise CorpusError(f"input file {safe.text(name, 200)}: {e}") from None


def read_seed(path: Path) -> bytes:
    """A seed or corpus input (``seeds/``, ``inputs/``): at most
    :data:`MAX_INPUT_BYTES`, else :class:`CorpusError` (callers skip it with a note)."""
    return read_regular(path, MAX_INPUT_BYTES)


# -- writing ---------------------------------------------------------------------


@contextlib.contextmanager
def locked(corpus: Path) -> Iterator[None]:
    """Hold the corpus's writer lock (``flock`` on ``<corpus>/.lock``, released by
    the kernel if the holder dies). Readers need none: every file is renamed into
    place whole."""
    Path(corpus).mkdir(parents=True, exist_ok=True)
    fd = os.open(Path(corpus) / LOCK_NAME,
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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


def _temporaries(corpus: Path) -> Iterator[tuple[Path, int | None]]:
    """Each ``.<name>.<pid>.<n>.tmp`` of :func:`atomic_write`, with its writer's pid."""
    # the corpus root holds fingerprints.json (triage/policy_tally.py), written alike
    for sub in (entries_dir(corpus), inputs_dir(corpus), corpus):
        if sub.is_dir():
            for p in sorted(sub.glob(".*.tmp")):
                fields = p.name.rsplit(".", 3)
                yield p, int(fields[1]) if len(fields) == 4 and fields[1].isdigit() else None


def _alive(pid: int) -> bool:
    if pid <= 0:  # kill(0) would signal our own process group
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def sweep_temporaries(corpus: Path) -> list[Problem]:
    """Remove the temporary files of writers that died mid-write (pid gone, file
    older than :data:`STALE_TEMP_SECONDS`); notes for those removed and those left."""
    notes: list[Problem] = []
    for p, pid in _temporaries(Path(corpus)):
        try:
            age = time.time() - p.lstat().st_mtime
        except OSError:
            continue  # renamed into place meanwhile
        if age > STALE_TEMP_SECONDS and (pid is None or not _alive(pid)):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
            notes.append(Problem(p, "removed: temporary file of a writer that died mid-write"))
        else:
            notes.append(Problem(p, "temporary file of a write in progress, or of one that "
                                    f"died less than {STALE_TEMP_SECONDS} s ago"))
    return notes


def environment_versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "utf8fuzz": __version__,
        "platform": platform.platform(),
    }


def now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_FINDING_ID = re.compile(r"[0-9a-f]{16}")


def entry_path(corpus: Path, sidecar: Mapping[str, Any], *, cause: bool = False) -> Path:
    """Where the entry of ``sidecar`` lives: ``entries/<signature id>.json``, the
    first cause found under its signature; with ``cause``, another cause under the
    same signature, ``entries/<signature id>_<finding id>.json`` (the sidecar's
    ``finding``), so that each cause keeps its own evidence."""
    name = signature_id(str(sidecar["signature"]))
    if cause:
        fid = (sidecar.get("finding") or {}).get("id")
        if not isinstance(fid, str) or not _FINDING_ID.fullmatch(fid):
            raise ValueError("an entry of another cause needs its finding's id")
        name = f"{name}_{fid}"
    return entries_dir(Path(corpus)) / f"{name}.json"


def is_cause_entry(path: Path) -> bool:
    """Is ``path`` the entry of another cause under a signature (:func:`entry_path`)?"""
    return "_" in path.stem


def save(corpus: Path, sidecar: Mapping[str, Any], data: bytes, *, cause: bool = False
         ) -> tuple[Path, bool]:
    """Store one entry; returns its sidecar path and whether the corpus changed.
    ``cause``: the entry is of another cause under a signature that has an entry
    (:func:`entry_path`).

    An existing entry at that path is kept unless ``data`` is strictly shorter
    than its input; then the input is replaced and the original ``found`` block kept
    (the signature was first found then), with the new minimizer figures. A sidecar
    that does not load (:func:`load_entry`) is replaced. The comparison and the
    writes happen under :func:`locked`, so concurrent savers cannot interleave them.
    """
    corpus = Path(corpus)
    path = entry_path(corpus, sidecar, cause=cause)
    side = dict(sidecar)
    cid = content_id(data)
    side["input"] = data.hex()
    side["sha256"] = hashlib.sha256(data).hexdigest()
    side["file"] = f"inputs/{cid}.bin"
    with locked(corpus):
        if str(corpus) not in _swept:  # once per process: dead writers' leftovers
            _swept.add(str(corpus))
            sweep_temporaries(corpus)
        try:
            old: Entry | None = load_entry(path)
        except CorpusError:
            old = None  # none yet, or one that does not load: replaced
        if old is not None:
            if len(old.data) <= len(data):
                return path, False
            if isinstance(old.sidecar.get("found"), dict):
                found = dict(old.sidecar["found"])
                new_found = side.get("found") or {}
                found["minimized_size"] = len(data)
                found["minimizer"] = new_found.get("minimizer")
                found["improved_at"] = now()
                side["found"] = found
        inp = inputs_dir(corpus) / f"{cid}.bin"
        if not inp.exists():
            atomic_write(inp, data)
        atomic_write(path, (json.dumps(side, indent=2, sort_keys=True) + "\n").encode())
    return path, True


# -- loading ---------------------------------------------------------------------


def signature_ids(corpus: Path) -> set[str]:
    """The signature ids present (cheap: file names only; an entry of another cause
    under a signature counts as its signature)."""
    d = entries_dir(corpus)
    if not d.is_dir():
        return set()
    return {p.stem.split("_", 1)[0] for p in d.glob("*.json")}


def entry_count(corpus: Path) -> int:
    """How many entries (sidecars) the corpus holds (cheap: file names only)."""
    d = entries_dir(corpus)
    return sum(1 for _ in d.glob("*.json")) if d.is_dir() else 0


def load_entry(path: Path) -> Entry:
    """Load and verify one sidecar and its input; raises :class:`CorpusError`
    (a ValueError) saying why, in one printable line."""
    side = read_sidecar(path)
    missing = [k for k in REQUIRED if k not in side]
    if missing:
        raise CorpusError(f"missing key(s): {', '.join(missing)}")
    if side["format"] > FORMAT:
        raise CorpusError(f"unsupported format {side['format']} (this utf8fuzz reads {FORMAT})")
    try:
        sig = Signature.parse(side["signature"])
    except ValueError as e:
        raise CorpusError(safe.text(e, 300)) from None
    fid = side.get("finding", {}).get("id") if isinstance(side.get("finding"), dict) else None
    if path.stem not in (sig.id, f"{sig.id}_{fid}"):
        raise CorpusError(f"file name does not match its signature (expected {sig.id}.json"
                          + (f" or {sig.id}_<its finding id>.json)" if "_" in path.stem else ")"))
    if (sig.profile, sig.klass, sig.feature, list(sig.decoders)) != (
        side["profile"], side["class"], side["feature"], side["decoders"]
    ):
        raise CorpusError("signature disagrees with profile/class/feature/decoders")
    ref = side["reference"].split(":")
    if len(ref) != 3 or ref[:2] != ["ref", side["profile"]] or not ref[2]:
        raise CorpusError("'reference' is not ref:<the profile>:<policy>")
    try:
        data = bytes.fromhex(side["input"])
    except ValueError:
        raise CorpusError("'input' is not hex") from None
    if hashlib.sha256(data).hexdigest() != side["sha256"]:
        raise CorpusError("'sha256' does not match 'input'")
    root = path.parent.parent
    if read_input(root, side["file"]) != data:
        raise CorpusError(f"input file {safe.text(side['file'], 200)} does not match the "
                          "sidecar's 'input'")
    if side["reference"] not in side["outcomes"]:
        raise CorpusError("'outcomes' must hold the reference's outcome")
    if "call" in side:  # how the input was handed over (engine/calls.py)
        from utf8fuzz.engine.calls import Call

        try:
            Call.from_json(side["call"], len(data))
        except ValueError as e:
            raise CorpusError(safe.text(e, 300)) from None
    outcomes_of(side, len(data))
    return Entry(path, side, data)


def sidecar_files(corpus: Path) -> tuple[list[Path], list[Problem]]:
    """The sidecars in ``entries/``, sorted, and a problem for each that is a symlink
    leading out of it (they are not read)."""
    d = entries_dir(corpus)
    paths: list[Path] = []
    problems: list[Problem] = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        if _inside(p, d):
            paths.append(p)
        else:
            problems.append(Problem(p, "a symlink that leads out of entries/"))
    return paths, problems


def load(corpus: Path) -> tuple[list[Entry], list[Problem]]:
    """Every good entry, sorted by signature id, and every problem by path. Never
    raises for what is in the corpus: each bad sidecar is one :class:`Problem`."""
    entries: list[Entry] = []
    paths, problems = sidecar_files(corpus)
    for p in paths:
        try:
            entries.append(load_entry(p))
        except ValueError as e:
            problems.append(Problem(p, safe.text(e, 500)))
    problems.sort(key=lambda x: x.path)
    return entries, problems


def named_inputs(corpus: Path, *, besides: frozenset[Path] = frozenset()) -> set[str]:
    """The ``file`` (normalized) of every sidecar that names one, good or bad, except
    the sidecars in ``besides``: what removing those would leave unreferenced is
    everything else in ``inputs/``."""
    names: set[str] = set()
    d = entries_dir(corpus)
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        if p in besides:
            continue
        try:
            side = read_sidecar(p)
        except CorpusError:
            with contextlib.suppress(ValueError, RecursionError, OSError, UnicodeDecodeError):
                # a sidecar bad in some other way may still be repaired: keep its input
                side = json.loads(read_regular(p, MAX_SIDECAR_BYTES).decode("utf-8"))
                if isinstance(side, dict) and isinstance(side.get("file"), str):
                    names.add(posixpath.normpath(side["file"]))
            continue
        if isinstance(side.get("file"), str):
            names.add(posixpath.normpath(side["file"]))
    return names


def check(corpus: Path) -> tuple[list[Entry], list[Problem], list[Problem]]:
    """Verify the whole corpus: (entries, problems, notes). Notes are harmless
    findings: inputs no sidecar names (left by a shorter replacement), inputs over
    :data:`MAX_INPUT_BYTES` (skipped as seeds), temporary files of writers (those of
    dead writers are removed, :func:`sweep_temporaries`). A directory that is not a
    corpus is :class:`CorpusError`."""
    corpus = Path(corpus)
    require_corpus(corpus)
    entries, problems = load(corpus)
    notes: list[Problem] = []
    named = {posixpath.normpath(e.sidecar["file"]) for e in entries}
    idir = inputs_dir(corpus)
    for p in sorted(idir.iterdir()) if idir.is_dir() else []:
        if p.name.startswith("."):
            continue
        with contextlib.suppress(OSError):
            if p.is_file() and p.stat().st_size > MAX_INPUT_BYTES:
                notes.append(Problem(p, f"over the {_size(MAX_INPUT_BYTES)} limit: "
                                        "never read as a seed"))
        if p.suffix == ".bin" and f"inputs/{p.name}" not in named:
            notes.append(Problem(p, "no entry names this input (superseded; safe to delete)"))
    notes += sweep_temporaries(corpus)
    return entries, problems, notes


# -- replacing an entry ---------------------------------------------------------


def replace_entry(corpus: Path, old: Entry, sidecars: list[dict[str, Any]]) -> list[Path]:
    """Replace ``old`` by ``sidecars`` (for its input), under :func:`locked`, judged
    on what is on disk then, not on what was read before (a fuzz worker may have
    saved meanwhile): each is written unless an entry of its signature with an input
    no longer than ``old``'s is already there, ``old`` itself excepted; ``old``'s
    sidecar is removed unless one of them took its place or it was rewritten since
    ``old`` was read. Shortest wins, as in :func:`save`. Returns the sidecars
    written."""
    written: list[Path] = []
    corpus = Path(corpus)
    with locked(corpus):
        for side in sidecars:
            try:
                path = entry_path(corpus, side, cause=is_cause_entry(old.path))
            except ValueError:  # another cause's entry whose finding lost its id
                path = entry_path(corpus, side)
            if _kept_over(path, old):
                continue
            atomic_write(path, (json.dumps(side, indent=2, sort_keys=True) + "\n").encode())
            written.append(path)
        if old.path not in written and _unchanged(old):
            old.path.unlink()
    return written


def unminimized(entry: Entry) -> bool:
    """Was ``entry`` saved before its minimizer finished (its run's time ran out:
    ``found.minimizer.complete`` false)? Hostile data: anything but a recorded
    false is not."""
    found = entry.sidecar.get("found")
    mini = found.get("minimizer") if isinstance(found, dict) else None
    return isinstance(mini, dict) and mini.get("complete") is False


def improve(corpus: Path, old: Entry, sidecar: Mapping[str, Any], data: bytes) -> list[Path]:
    """Replace ``old`` by ``sidecar`` for ``data``, its input minimized further
    (:func:`replace_entry`'s rules: atomic, under the lock, shortest wins): the
    ``found`` block is ``old``'s (when the signature was first found), with the new
    size and minimizer figures. Returns the sidecars written."""
    corpus = Path(corpus)
    side = dict(sidecar)
    cid = content_id(data)
    side.update(input=data.hex(), sha256=hashlib.sha256(data).hexdigest(),
                file=f"inputs/{cid}.bin")
    if isinstance(old.sidecar.get("found"), dict):
        found = dict(old.sidecar["found"])
        found.update(minimized_size=len(data),
                     minimizer=(side.get("found") or {}).get("minimizer"), improved_at=now())
        side["found"] = found
    inp = inputs_dir(corpus) / f"{cid}.bin"
    with locked(corpus):
        if not inp.exists():
            atomic_write(inp, data)
    return replace_entry(corpus, old, [side])


def _unchanged(entry: Entry) -> bool:
    """Does ``entry``'s sidecar still hold what was read (re-read now)?"""
    try:
        return load_entry(entry.path).sidecar == entry.sidecar
    except CorpusError:
        return False


def _kept_over(path: Path, old: Entry) -> bool:
    """Must the entry at ``path`` now (re-read; called under :func:`locked`) be kept
    rather than be replaced by one for ``old``'s input? Yes when it loads, is not
    ``old`` as read, and its input is no longer than ``old``'s."""
    try:
        now = load_entry(path)
    except CorpusError:
        return False  # none, or one that does not load: replaced
    return now.sidecar != old.sidecar and len(now.data) <= len(old.data)


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
            if d.incremental:  # the chunks it was fed (decoders/chunks.py's rule)
                outcomes[name]["chunks"] = cuts(result.data)
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
