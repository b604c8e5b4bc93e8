"""Integer settings read from the environment (``$UTF8FUZZ_*``): one parser, one message."""

from __future__ import annotations

import os


def env_int(name: str, default: int, *, least: int, expected: str) -> int:
    """``$name`` as an integer when set (blank: unset), else ``default``. A value that
    is not an integer of at least ``least`` raises ValueError saying ``expected``
    (the CLI makes it one line and exit 2)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = least - 1
    if n < least:
        raise ValueError(f"{name}={raw!r}: expected {expected}")
    return n
