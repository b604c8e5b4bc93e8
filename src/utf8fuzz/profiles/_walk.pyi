# The C reference walker (profiles/_walk.c): what profiles/walk.py uses of it.
from collections.abc import Callable
from typing import Any

class Walk:
    """One walk of one input; profiles.walk.Walk is its interface."""

class Walker:
    def __init__(self, *, trans: Any, accept: Any, live_after: Any, single: Any, start: int,
                 reserved_leads: Any, recognized_leads: Any, max_length: int,
                 rows: list[tuple[int, int, object]], policy: int) -> None: ...
    def __call__(self, data: bytes) -> Any: ...  # profiles.walk.Walk is its interface

def configure(token: type, make_outcome: Callable[..., Any]) -> None: ...

_C_API: object
