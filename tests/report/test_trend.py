"""trend: one point per earlier report date, then the current one."""

from __future__ import annotations

import json
from pathlib import Path

from utf8fuzz.report.trend import Point, read_trend


def summary(date: str, entries: int, found: int) -> dict:  # type: ignore[type-arg]
    return {"date": date, "corpus": {"entries": entries}, "divergences_found": found}


def write(out: Path, date: str, entries: int, found: int) -> None:
    (out / date).mkdir(parents=True)
    (out / date / "summary.json").write_text(json.dumps(summary(date, entries, found)))


def test_reads_earlier_dates_in_order(tmp_path: Path) -> None:
    write(tmp_path, "2026-01-03", 5, 2)
    write(tmp_path, "2026-01-01", 3, 3)
    write(tmp_path, "2026-01-09", 99, 99)  # after the current date: ignored
    write(tmp_path, "2026-01-05", 42, 42)  # the current date: replaced by the new summary
    (tmp_path / "2026-01-04").mkdir()
    (tmp_path / "2026-01-04" / "summary.json").write_text("{broken")
    (tmp_path / "notadate").mkdir()
    (tmp_path / "notadate" / "summary.json").write_text("{}")
    points, bad = read_trend(tmp_path, summary("2026-01-05", 6, 1))
    assert points == [Point("2026-01-01", 3, 3), Point("2026-01-03", 5, 2),
                      Point("2026-01-05", 6, 1)]
    assert len(bad) == 1 and "2026-01-04" in bad[0]


def test_no_history(tmp_path: Path) -> None:
    points, bad = read_trend(tmp_path / "missing", summary("2026-01-05", 0, 0))
    assert points == [Point("2026-01-05", 0, 0)] and bad == []
