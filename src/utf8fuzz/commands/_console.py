"""The rich Console every command prints its tables with."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

#: The width off a terminal: wider than any row, so a table is as wide as its
#: widest row and nothing is folded (rich's default there is 80 columns).
UNBOUNDED = 100_000


def console(**kwargs: Any) -> Console:
    """``rich.console.Console(**kwargs)``; off a terminal (a pipe, a file, a CI log)
    without ``$COLUMNS``, as wide as its content, so a table is printed whole, one
    line per row, never wrapped mid-word."""
    c = Console(**kwargs)
    if c.is_terminal or os.environ.get("COLUMNS") or "width" in kwargs:
        return c
    return Console(**kwargs, width=UNBOUNDED)
