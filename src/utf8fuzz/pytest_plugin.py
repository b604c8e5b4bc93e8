"""pytest plugin: replay a utf8fuzz corpus as tests (entry point ``pytest11``).

Another project replays its own corpus with its own decoder::

    pytest --utf8fuzz-corpus=fuzz/corpus --utf8fuzz-decoder=mypkg.codec:decode@unicode

Items. Each corpus entry (``entries/<id>.json``) is collected as a file, with one test
item per decoder it checks (:func:`utf8fuzz.engine.replay.checks`: the reference,
each decoder recorded, each ``--utf8fuzz-decoder`` claiming its profile), named
``utf8fuzz[<profile>/<class>/<feature>/<decoder checked>]`` and escaped by
:func:`utf8fuzz.safe.text`. Node ids are real paths, so ``pytest
'DIR/entries/<id>.json::utf8fuzz[...]' --utf8fuzz-corpus=DIR`` re-runs exactly one
item, ``--co`` counts what runs, and ``--lf`` works. The corpus directories are added
to the paths pytest collects unless a path given already lies inside one (a
selection). A corrupt sidecar is one failing item, ``utf8fuzz[corrupt]``, named by
its path; the others still run. Without ``--utf8fuzz-corpus`` the plugin does nothing.

Outcomes, per :func:`utf8fuzz.engine.replay.check`. The decoders given with
``--utf8fuzz-decoder`` are the user's own, held to each entry's expectation, as are
this project's own decoders:

* an open finding (the decoder diverged when recorded, and the sidecar's ``fixed``
  does not name it) that still diverges is an **xfail** whose reason names the
  signature: CI stays green and shows the open bug (``--runxfail`` fails it);
* once the decoder meets the expectation the item **passes**. It is not a strict
  xfail, so this unexpected pass never fails the run; the terminal summary lists
  these items and says to run ``utf8fuzz corpus refresh``, which records them in
  the sidecars as fixed;
* a decoder recorded as fixed, or as meeting the expectation, that diverges now
  **fails**, saying "regressed".

Other recorded decoders must keep their recorded behaviour (a new version with the
same behaviour passes with a warning); a decoder not available here is skipped.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from utf8fuzz import safe

if TYPE_CHECKING:
    from _pytest._code.code import TracebackStyle  # pytest exports no name for it

    from utf8fuzz.decoders.base import Decoder
    from utf8fuzz.engine.corpus import Entry

_ROOTS = pytest.StashKey[tuple[Path, ...]]()
_EXTRA = pytest.StashKey[tuple["Decoder", ...]]()
_LEADING_OUT = pytest.StashKey[dict[Path, dict[Path, str]]]()
#: user_properties key of an item whose pass ends an open finding
FIXED = "utf8fuzz-fixed"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("utf8fuzz", "utf8fuzz corpus replay")
    g.addoption("--utf8fuzz-corpus", action="append", default=[], metavar="DIR",
                help="replay every entry of this utf8fuzz corpus (repeatable)")
    g.addoption("--utf8fuzz-decoder", action="append", default=[], metavar="SPEC",
                help="your decoder (a name, module:attr[@claim][+shape] or exec:CMD): held "
                     "to every entry's expectation, open findings xfail (repeatable)")


class ReplayFailure(AssertionError):
    pass


def pytest_configure(config: pytest.Config) -> None:
    dirs = config.getoption("--utf8fuzz-corpus")
    if not dirs:
        return
    here = config.invocation_params.dir
    roots = tuple(Path(os.path.abspath(here / d)) for d in dirs)
    for d, root in zip(dirs, roots, strict=True):
        if not (root / "entries").is_dir():
            raise pytest.UsageError(f"--utf8fuzz-corpus {safe.text(d)}: no entries/ "
                                    "directory there")
    config.stash[_ROOTS] = roots
    config.stash[_EXTRA] = _resolve_specs(config.getoption("--utf8fuzz-decoder"))
    # The entries are collected as files (node ids that re-run); a path given inside
    # a corpus is a selection, which adding the whole corpus would undo.
    given = [Path(os.path.abspath(here / a.partition("[")[0].split("::")[0]))
             for a in config.args]
    for root in roots:
        if not any(g == root or root in g.parents for g in given):
            config.args.append(str(root))


def _resolve_specs(specs: list[str]) -> tuple[Decoder, ...]:
    from utf8fuzz import decoders

    out: list[Decoder] = []
    for s in specs:
        try:
            found = decoders.resolve(s)
        except ValueError as e:  # UnknownDecoder: one line, no traceback
            raise pytest.UsageError(f"--utf8fuzz-decoder {safe.text(s)}: "
                                    f"{safe.text(e)}") from None
        out += [d for d in found if d.name not in {o.name for o in out}]
    return tuple(out)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CorpusFile | None:
    config = parent.config
    roots = config.stash.get(_ROOTS, ())
    if not (file_path.suffix == ".json" and file_path.parent.name == "entries"
            and file_path.parent.parent in roots):
        return None
    nodeid = None
    if not file_path.is_relative_to(config.rootpath):
        # pytest would name it from the argument's directory (entries/<id>.json), a
        # path that does not lead back to it: name it from where pytest runs
        nodeid = os.path.relpath(file_path, config.invocation_params.dir)
    return CorpusFile.from_parent(parent, path=file_path, nodeid=nodeid)


def label(entry: Entry, decoder: str) -> str:
    """``<profile>/<class>/<feature>/<decoder>``: the entry's finding as the decoder
    checked would be named in it, as printable ASCII (sidecars are untrusted)."""
    side = entry.sidecar
    return safe.text(f"{side['profile']}/{side['class']}/{side['feature']}/{decoder}", 300)


class CorpusFile(pytest.File):
    """One sidecar: an item per decoder its entry checks, or one for a corrupt one."""

    def collect(self) -> Iterator[CorpusItem]:
        from utf8fuzz.engine.corpus import load_entry, sidecar_files
        from utf8fuzz.engine.replay import checks

        # only what the corpus module reads as a sidecar (no symlink leading out),
        # listed once per corpus
        root = self.path.parent.parent
        leading_out = self.config.stash.setdefault(_LEADING_OUT, {})
        if root not in leading_out:
            leading_out[root] = {p.path: p.message for p in sidecar_files(root)[1]}
        try:
            if self.path in leading_out[root]:
                raise ValueError(leading_out[root][self.path])
            entry = load_entry(self.path)
        except ValueError as e:
            yield CorpusItem.from_parent(self, name="utf8fuzz[corrupt]",
                                         problem=f"corrupt corpus entry {self.path}: {e}")
            return
        extra = self.config.stash.get(_EXTRA, ())
        seen: set[str] = set()
        for dec in checks(entry, extra):
            name = f"utf8fuzz[{label(entry, dec)}]"
            n = 2
            while name in seen:  # escaping or cutting can make two names one
                name = f"utf8fuzz[{label(entry, dec)} #{n}]"
                n += 1
            seen.add(name)
            yield CorpusItem.from_parent(self, name=name, entry=entry, decoder=dec)


class CorpusItem(pytest.Item):
    """One decoder checked on one entry, or a corrupt sidecar (``problem``)."""

    def __init__(self, *, entry: Entry | None = None, decoder: str = "",
                 problem: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.entry, self.decoder, self.problem = entry, decoder, problem

    def runtest(self) -> None:
        if self.entry is None:
            raise ReplayFailure(safe.text(self.problem))
        if run_check(self.entry, self.decoder, self.config.stash.get(_EXTRA, ())):
            self.user_properties.append((FIXED, self.decoder))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str:
        if isinstance(excinfo.value, ReplayFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, self.name  # a line, so that a skip is reported here


def run_check(entry: Entry, decoder: str, extra: tuple[Decoder, ...] = ()) -> bool:
    """Check one decoder on one entry as a test: return on a pass (True when the pass
    ends an open finding), raise :class:`ReplayFailure` on a failure, ``pytest.xfail``
    on an open finding, ``pytest.skip`` when the decoder is not available here; warn
    for each note. Every message is escaped."""
    from utf8fuzz.engine.replay import check

    v = check(entry, decoder, extra)
    for note in v.notes:
        warnings.warn(safe.text(note), UserWarning, stacklevel=2)
    msg = safe.text(v.message)
    if v.status == "fail":
        raise ReplayFailure(f"{safe.text(entry.signature)} ({entry.path}):\n  {msg}")
    if v.status == "open":
        pytest.xfail(msg)
    if v.status == "skip":  # reported at the entry, not at this line
        raise pytest.skip.Exception(msg, _use_item_location=True)
    return v.status == "fixed"


def check_entry(entry: Entry, specs: tuple[str, ...] = ()) -> None:
    """Every check of one entry as one test (for a test of one's own that holds an
    entry): raise :class:`ReplayFailure` naming each failure; else ``pytest.xfail``
    when a finding is open; else ``pytest.skip`` when no decoder besides the
    reference could be judged here. ``specs`` are the caller's own decoders."""
    from utf8fuzz.engine.replay import replay_entry

    verdicts = replay_entry(entry, _resolve_specs(list(specs)))
    for v in verdicts:
        for note in v.notes:
            warnings.warn(safe.text(note), UserWarning, stacklevel=2)
    head = f"{safe.text(entry.signature)} ({entry.path}):\n"
    fails = [safe.text(v.message) for v in verdicts if v.status == "fail"]
    if fails:
        raise ReplayFailure(head + "\n".join(f"  {m}" for m in fails))
    if any(v.status == "open" for v in verdicts):
        pytest.xfail("; ".join(safe.text(v.message) for v in verdicts if v.status == "open"))
    others = verdicts[1:]
    if others and all(v.status == "skip" for v in others):
        pytest.skip("; ".join(safe.text(v.message) for v in others))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    fixed = [r for r in terminalreporter.stats.get("passed", [])
             if any(k == FIXED for k, _ in r.user_properties)]
    if not fixed:
        return
    tr = terminalreporter
    tr.section("utf8fuzz: open findings that pass now", sep="-")
    for r in fixed:
        tr.line(f"fixed: {r.nodeid}")
    tr.line("record them as fixed (the bug coming back then fails as regressed):")
    specs = "".join(f" --decoder {s}" for s in config.getoption("--utf8fuzz-decoder"))
    for d in config.getoption("--utf8fuzz-corpus"):
        tr.line(safe.text(f"  utf8fuzz corpus refresh {d}{specs}"))
