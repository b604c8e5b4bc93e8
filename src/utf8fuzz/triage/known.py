"""Known differences: the divergences a team has looked at and accepts.

``CORPUS/known.toml`` (format in ``docs/corpus.md``) lists them as *matchers*, not
as signature ids, so that the file keeps its meaning when the unit of a finding
changes (today a signature; later a finding per root cause):

.. code-block:: toml

    [[known]]
    decoder = "pyicu:ignore"          # required; a name or an fnmatch glob
    class = "different-replacement"   # optional glob (default "*")
    feature = "*"                     # optional glob
    profile = "unicode"               # optional glob
    rule = "ignore-substitutes"       # optional glob: the finding's explanation rule
    reason = "substitutes U+FFFD where errors are dropped: upstream behaviour"

Contract of :meth:`Known.match`: a signature is known when *each* of its decoders is
matched by some entry whose ``class``, ``feature`` and ``profile`` globs match the
signature too, and whose ``rule`` glob matches the explanation rule of the
signature's finding (an entry with a ``rule`` never matches a signature whose
finding is not given: it accepts a cause, whatever features it shows at). A
signature naming two decoders of which only one is accepted still
counts: the other decoder's divergence is news. Globs are case-sensitive
(:func:`fnmatch.fnmatchcase`), so a match does not depend on the platform.

The file is data a person wrote, possibly damaged: :func:`load` refuses anything but
a regular file of at most :data:`MAX_KNOWN_BYTES` holding exactly the keys above
with string values, and says why in one line naming the file (:class:`KnownError`,
a :class:`~utf8fuzz.errors.UsageError`: exit 2 from every command). A missing file
is an empty list. Reasons and globs are stored as written; whoever shows them to a
person passes them through :mod:`utf8fuzz.safe`.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from utf8fuzz import safe
from utf8fuzz.engine.signature import Signature
from utf8fuzz.errors import UsageError

FILE = "known.toml"
#: A list a team writes by hand is a few kilobytes; a larger file is a mistake or
#: hostile, and is refused unread.
MAX_KNOWN_BYTES = 1 << 20
_REQUIRED = ("decoder", "reason")
_OPTIONAL = ("class", "feature", "profile", "rule")
#: Longer strings are refused: a glob or a reason is a line, not a document.
MAX_FIELD_CHARS = 1000


class KnownError(UsageError):
    """``known.toml`` cannot be used; the message is one printable line naming it."""


@dataclass(frozen=True)
class Rule:
    """One ``[[known]]`` entry; each field but ``reason`` is an fnmatch glob."""

    decoder: str
    reason: str
    klass: str = "*"
    feature: str = "*"
    profile: str = "*"
    rule: str = "*"

    def covers(self, sig: Signature, decoder: str, rule: str | None = None) -> bool:
        """This entry accepts ``decoder``'s part in ``sig``, whose finding's rule is
        ``rule`` (None: not given)."""
        return (fnmatchcase(decoder, self.decoder) and fnmatchcase(sig.klass, self.klass)
                and fnmatchcase(sig.feature, self.feature)
                and fnmatchcase(sig.profile, self.profile)
                and (self.rule == "*" or (rule is not None and fnmatchcase(rule, self.rule))))


@dataclass(frozen=True)
class Known:
    """The accepted differences of one corpus (empty when it has no file)."""

    rules: tuple[Rule, ...] = ()

    def match(self, signature: Signature | str, rule: str | None = None) -> str | None:
        """The reason ``signature`` (whose finding's explanation rule is ``rule``) is
        known (the reasons of the entries that cover its decoders, first match per
        decoder, distinct ones joined by ``"; "``), or None when any of its decoders
        is not covered. A string that is not a signature is never known."""
        if not self.rules:
            return None
        if isinstance(signature, str):
            try:
                signature = Signature.parse(signature)
            except ValueError:
                return None
        reasons: list[str] = []
        for dec in signature.decoders:
            hit = next((r for r in self.rules if r.covers(signature, dec, rule)), None)
            if hit is None:
                return None
            if hit.reason not in reasons:
                reasons.append(hit.reason)
        return "; ".join(reasons) if reasons else None


def path_of(corpus: Path) -> Path:
    """Where ``corpus`` keeps its known differences (the file need not exist)."""
    return Path(corpus) / FILE


def load(corpus: Path) -> Known:
    """The known differences of ``corpus`` (``corpus/known.toml``); an empty
    :class:`Known` when there is no such file; :class:`KnownError` when it is not
    usable (a symlink, not a regular file, over :data:`MAX_KNOWN_BYTES`, not UTF-8
    TOML, nested too deeply to parse, a table or key this format does not have, a
    value of the wrong type, a missing ``decoder`` or ``reason``)."""
    path = path_of(corpus)
    shown = safe.text(path)

    def bad(problem: str) -> KnownError:
        return KnownError(f"{shown}: {safe.text(problem, 300)}")

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Known()
    except OSError as e:
        raise bad(f"cannot read it: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        # A symlink could point at any file the job can read (or at a FIFO that
        # blocks); the corpus is shared, so only its own files count.
        raise bad("is a symlink; known differences must be a regular file in the corpus")
    if not stat.S_ISREG(st.st_mode):
        raise bad("is not a regular file")
    if st.st_size > MAX_KNOWN_BYTES:
        raise bad(f"is larger than {MAX_KNOWN_BYTES} bytes")
    try:
        # O_NOFOLLOW: the file may have been swapped for a symlink since lstat.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            raw = f.read(MAX_KNOWN_BYTES + 1)
    except OSError as e:
        raise bad(f"cannot read it: {e.strerror or e}") from None
    if len(raw) > MAX_KNOWN_BYTES:
        raise bad(f"is larger than {MAX_KNOWN_BYTES} bytes")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise bad(f"is not UTF-8 (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise bad(f"is not TOML: {e}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise bad("is nested too deeply (arrays or inline tables inside one another)") from None
    return Known(tuple(_rules(doc, bad)))


def _rules(doc: dict[str, Any], bad: Callable[[str], KnownError]) -> list[Rule]:
    """The entries of a parsed file, each checked (:func:`load`'s contract)."""
    extra = sorted(k for k in doc if k != "known")
    if extra:
        raise bad(f"unknown key {extra[0]!r} (only [[known]] tables)")
    items = doc.get("known", [])
    if not isinstance(items, list):
        raise bad("'known' must be an array of tables ([[known]])")
    rules: list[Rule] = []
    for n, item in enumerate(items, 1):
        where = f"[[known]] number {n}"
        if not isinstance(item, dict):
            raise bad(f"{where} is not a table")
        unknown = sorted(k for k in item if k not in _REQUIRED + _OPTIONAL)
        if unknown:
            raise bad(f"{where}: unknown key {unknown[0]!r}")
        for key in _REQUIRED:
            if key not in item:
                raise bad(f"{where}: missing {key!r}")
        for key, value in item.items():
            if not isinstance(value, str):
                raise bad(f"{where}: {key!r} must be a string, not {type(value).__name__}")
            if not value.strip():
                raise bad(f"{where}: {key!r} is empty")
            if len(value) > MAX_FIELD_CHARS:
                raise bad(f"{where}: {key!r} is longer than {MAX_FIELD_CHARS} characters")
        rules.append(Rule(decoder=item["decoder"], reason=item["reason"],
                          klass=item.get("class", "*"), feature=item.get("feature", "*"),
                          profile=item.get("profile", "*"), rule=item.get("rule", "*")))
    return rules
