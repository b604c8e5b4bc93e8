"""pytest plugin: replay a utf8fuzz corpus as tests (entry point ``pytest11``).

Another project replays its own corpus with its own decoder::

    pytest --utf8fuzz-corpus=fuzz/corpus --utf8fuzz-decoder=mypkg.codec:decode@unicode

Items. Each corpus entry (``entries/<id>.json``) is collected as a file, with one test
item per decoder it checks (:func:`utf8fuzz.engine.replay.checks`: the reference,
each decoder recorded, each ``--utf8fuzz-decoder`` claiming its profile), named
``utf8fuzz[<profile>/<class>/<feature>/<decoder checked>]`` and escaped by
:func:`utf8fuzz.safe.text`. Node ids are real paths, so ``pytest
'DIR/entries/<id>.json::utf8fuzz[...]' --utf8fuzz-corpus=DIR`` re-runs exactly one
item, ``--co`` counts what runs, and ``--lf`` works. A file name that is not
printable ASCII (it comes from the corpus: an ESC would reach the terminal, a control
character would break ``--junitxml``) is shown escaped by :func:`utf8fuzz.safe.text`,
made unique with ``#2``, ``#3``... when escaping makes two names one
(:func:`display_names`); such an id re-runs too, as given. The corpus directories are added
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
same behaviour passes with a warning); a decoder not available here is skipped. A
corpus is data: a recorded decoder runs only when it is this project's, installed as
an entry point, or given with ``--utf8fuzz-decoder``
(:func:`utf8fuzz.decoders.trusted`); any other recorded name (a plug-in's
``module:attr``, an ``exec:`` command) is skipped as "not given here", never loaded.
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
_SHOWN = pytest.StashKey[dict[Path, dict[Path, str]]]()
#: the files (and item names, None: all) named by escaped ids, and their directories
_WANTED = pytest.StashKey[tuple[set[tuple[Path, str | None]], set[Path]]]()
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
    _select_escaped(config, here, roots)
    given = [Path(os.path.abspath(here / a.partition("[")[0].split("::")[0]))
             for a in config.args]
    for root in roots:
        if not any(g == root or root in g.parents for g in given):
            config.args.append(str(root))


def display_names(entries: Path) -> dict[Path, str]:
    """The name each ``*.json`` in ``entries`` is shown by in node ids: its own when it
    is printable ASCII without ``\\``, ``[`` or ``]`` (which pytest takes apart in a
    path), else escaped (:func:`utf8fuzz.safe.text`, brackets as ``\\x5b``
    ``\\x5d``) and, if another file already shows that name, followed by ``#2``,
    ``#3``...: printable, unique, and the same whenever the directory is listed
    (sorted, plain names first), so that an id shown maps back to its file."""
    try:
        names = sorted(p.name for p in entries.glob("*.json"))
    except OSError:
        return {}
    plain = [n for n in names if _escaped(n) == n and "\\" not in n]
    taken = set(plain)
    shown = {entries / n: n for n in plain}
    for n in names:
        if entries / n in shown:
            continue
        base = _escaped(n)
        name, k = base, 2
        while name in taken:
            name, k = f"{base}#{k}", k + 1
        taken.add(name)
        shown[entries / n] = name
    return shown


def _escaped(name: str) -> str:
    return safe.text(name, None).replace("[", "\\x5b").replace("]", "\\x5d")


def _select_escaped(config: pytest.Config, here: Path, roots: tuple[Path, ...]) -> None:
    """Make the ids shown with an escaped file name (:func:`display_names`) re-run:
    such an argument is replaced by its ``entries/`` directory (pytest refuses a path
    holding ``[``, which the real name may), and :func:`pytest_collection_modifyitems`
    keeps only the items it names there."""
    wanted: set[tuple[Path, str | None]] = set()
    dirs: set[Path] = set()
    args: list[str] = []
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        full = Path(os.path.abspath(here / path))
        real = None
        if not full.exists() and full.parent.name == "entries" and full.parent.parent in roots:
            real = next((p for p, shown in display_names(full.parent).items()
                         if shown == full.name), None)
        if real is None:
            args.append(arg)
            continue
        wanted.add((real, rest if sep else None))
        if real.parent not in dirs:
            dirs.add(real.parent)
            args.append(str(real.parent))
    config.args[:] = args
    config.stash[_WANTED] = (wanted, dirs)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted, dirs = config.stash.get(_WANTED, (set(), set()))
    if not dirs:
        return
    here = config.invocation_params.dir
    given = [Path(os.path.abspath(here / a.partition("[")[0].split("::")[0]))
             for a in config.args if Path(os.path.abspath(here / a)) not in dirs]

    def keep(item: pytest.Item) -> bool:
        p = item.path
        return (not isinstance(item, CorpusItem) or p.parent not in dirs
                or (p, None) in wanted or (p, item.name) in wanted
                or any(g == p or g in p.parents for g in given))

    chosen = [i for i in items if keep(i)]
    if len(chosen) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if not keep(i)])
        items[:] = chosen


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
    shown = config.stash.setdefault(_SHOWN, {})
    if file_path.parent not in shown:
        shown[file_path.parent] = display_names(file_path.parent)
    name = shown[file_path.parent].get(file_path, _escaped(file_path.name))
    if name != file_path.name:  # a corpus's file name, never raw in an id
        rel = nodeid or file_path.relative_to(config.rootpath).as_posix()
        nodeid = safe.text(rel.rpartition("/")[0], None) + "/" + name
    node = CorpusFile.from_parent(parent, path=file_path, nodeid=nodeid)
    node.shown = file_path.with_name(name)
    return node


def label(entry: Entry, decoder: str) -> str:
    """``<profile>/<class>/<feature>/<decoder>``: the entry's finding as the decoder
    checked would be named in it, as printable ASCII (sidecars are untrusted)."""
    side = entry.sidecar
    return safe.text(f"{side['profile']}/{side['class']}/{side['feature']}/{decoder}", 300)


class CorpusFile(pytest.File):
    """One sidecar: an item per decoder its entry checks, or one for a corrupt one."""

    #: the path as shown (its name escaped: :func:`display_names`)
    shown: Path | None = None

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
        # a line, so that a skip is reported here; the name as the node id shows it
        shown = getattr(self.parent, "shown", None)
        return shown or self.path, 0, self.name


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
        raise ReplayFailure(f"{safe.text(entry.signature)} ({safe.text(entry.path)}):\n  {msg}")
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
    head = f"{safe.text(entry.signature)} ({safe.text(entry.path)}):\n"
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
