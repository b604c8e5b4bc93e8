"""One signature of a report: its corpus entry and what the report says about it.

Its own module because both :mod:`.analyze` (which makes sections) and
:mod:`.findings` (which groups them) need it, and neither imports the other's
way back.
"""

from __future__ import annotations

from dataclasses import dataclass

from utf8fuzz.report.hexview import Grid
from utf8fuzz.report.load import Entry
from utf8fuzz.report.verdict import EntryVerdict


@dataclass
class Section:
    """One signature: the entry and what the report says about it."""

    entry: Entry
    verdict: EntryVerdict
    grid: Grid
    command: str
    test: str
    new: bool
    #: why ``CORPUS/known.toml`` accepts this signature (as written; escape to show
    #: it), None when it is not a known difference
    known: str | None = None
