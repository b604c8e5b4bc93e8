"""The trend over nightly runs, read from the ``summary.json`` of earlier reports.

Each report directory ``reports/<YYYY-MM-DD>/`` holds a ``summary.json``; the
trend is one point per date: the corpus size and the divergences found that day
(the run's new signatures when the report was written at the end of a run;
otherwise the corpus entries whose ``found.at`` falls on that date). Earlier
summaries that cannot be read are listed by path and skipped. Only dates before
the current report's are read from disk; the current point comes from the
summary being written, so rewriting today's report never counts today twice.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Point:
    date: str
    corpus: int
    found: int


def point_of(summary: dict[str, Any]) -> Point:
    return Point(str(summary["date"]), int(summary["corpus"]["entries"]),
                 int(summary["divergences_found"]))


def read_trend(out_dir: Path, current: dict[str, Any]) -> tuple[list[Point], list[str]]:
    """Points sorted by date (the current summary last) and unreadable paths."""
    points: list[Point] = []
    bad: list[str] = []
    date = str(current["date"])
    for d in sorted(Path(out_dir).glob("*/summary.json")):
        name = d.parent.name
        if not DATE.match(name) or name >= date:
            continue
        try:
            s = json.loads(d.read_text(encoding="utf-8"))
            p = point_of(s)
        except (OSError, ValueError, KeyError, TypeError) as e:
            bad.append(f"{d}: {type(e).__name__}")
            continue
        points.append(Point(name, p.corpus, p.found))
    points.append(point_of(current))
    return points, bad
