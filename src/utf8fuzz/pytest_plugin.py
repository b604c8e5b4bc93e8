"""pytest plugin: replay a utf8fuzz corpus as tests (entry point ``pytest11``).

Another project replays its own corpus with its own decoder::

    pytest --utf8fuzz-corpus=fuzz/corpus --utf8fuzz-decoder=mypkg.codec:decode@unicode

Each corpus entry becomes one test item, ``utf8fuzz[<signature>]``. What a test
checks is :func:`utf8fuzz.engine.replay.replay_entry`: the reference is unchanged,
own decoders meet the expectation, external decoders keep their recorded
behaviour (a new version with the same behaviour passes with a warning), and every
``--utf8fuzz-decoder`` meets the expectation of each entry of its profile. A
corrupt sidecar is one failing item named by its path; the others still run.
Without ``--utf8fuzz-corpus`` the plugin does nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TracebackStyle  # pytest exports no name for it

    from utf8fuzz.decoders.base import Decoder
    from utf8fuzz.engine.corpus import Entry, Problem


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("utf8fuzz", "utf8fuzz corpus replay")
    g.addoption("--utf8fuzz-corpus", action="append", default=[], metavar="DIR",
                help="replay every entry of this utf8fuzz corpus (repeatable)")
    g.addoption("--utf8fuzz-decoder", action="append", default=[], metavar="SPEC",
                help="a decoder (name or module:attr[@profile]) that must meet every "
                     "entry's expectation (repeatable)")


class ReplayFailure(AssertionError):
    pass


class CorpusItem(pytest.Item):
    """One corpus entry, or one corrupt sidecar (``problem``): exactly one is given."""

    def __init__(self, *, entry: Entry | None = None, problem: Problem | None = None,
                 specs: tuple[str, ...] = (), **kw: Any) -> None:
        super().__init__(**kw)
        self.entry = entry
        self.problem = problem
        self.specs = specs

    def runtest(self) -> None:
        if self.problem is not None:
            raise ReplayFailure(f"corrupt corpus entry {self.problem}")
        if self.entry is None:
            raise TypeError("a CorpusItem has an entry or a problem")
        check_entry(self.entry, self.specs)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str:
        if isinstance(excinfo.value, ReplayFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        where = self.entry if self.entry is not None else self.problem
        if where is None:
            raise TypeError("a CorpusItem has an entry or a problem")
        return Path(where.path), None, self.name


def check_entry(entry: Entry, specs: tuple[str, ...] = ()) -> None:
    """Replay one entry; raise ReplayFailure on a failure, pytest.skip when every
    recorded decoder is unavailable, and warn for each note."""
    from utf8fuzz.engine.replay import replay_entry

    extra = _resolve_specs(specs)
    verdicts = replay_entry(entry, extra)
    for v in verdicts:
        for note in v.notes:
            warnings.warn(note, UserWarning, stacklevel=2)
    fails = [v for v in verdicts if v.status == "fail"]
    if fails:
        raise ReplayFailure(f"{entry.signature} ({entry.path}):\n"
                            + "\n".join(f"  {v.message}" for v in fails))
    judged = [v for v in verdicts[1:] if v.status == "pass"]
    skipped = [v for v in verdicts if v.status == "skip"]
    if skipped and not judged:
        pytest.skip("; ".join(v.message for v in skipped))


def _resolve_specs(specs: tuple[str, ...]) -> list[Decoder]:
    from utf8fuzz import decoders

    out: list[Decoder] = []
    for s in specs:
        out += decoders.resolve(s)
    return out


def collect(corpus: Path, parent: pytest.Collector, specs: tuple[str, ...] = ()
            ) -> Iterator[CorpusItem]:
    from utf8fuzz.engine.corpus import load

    entries, problems = load(corpus)
    for p in problems:
        yield CorpusItem.from_parent(parent, name=f"utf8fuzz[corrupt:{p.path.name}]",
                                     problem=p)
    for e in entries:
        yield CorpusItem.from_parent(parent, name=f"utf8fuzz[{e.signature}]", entry=e,
                                     specs=specs)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    dirs = config.getoption("--utf8fuzz-corpus")
    if not dirs:
        return
    specs = tuple(config.getoption("--utf8fuzz-decoder"))
    for d in dirs:
        if not (Path(d) / "entries").is_dir():
            raise pytest.UsageError(f"--utf8fuzz-corpus {d}: no entries/ directory there")
        items.extend(collect(Path(d), session, specs))
