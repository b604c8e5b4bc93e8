"""Types of the differ's screening loop and judge in C (``_screen.c``);
utf8fuzz.engine.screening documents them."""

from collections.abc import Sequence
from typing import Any

def screen_many(inputs: tuple[bytes, ...], walks: tuple[tuple[Any, ...], ...],
                plans: tuple[tuple[Any, ...], ...],
                /) -> list[tuple[list[Any], list[int], list[Any]]]: ...
def judge(walk: Any, seen: dict[str, Any], order: tuple[str, ...], /) -> Any: ...
def align(data: bytes, errors: bytes, values: Sequence[int | None], starts: Sequence[int],
          ends: Sequence[int], theirs: Sequence[int], /) -> Any: ...
