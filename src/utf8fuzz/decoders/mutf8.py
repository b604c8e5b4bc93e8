"""The PyPI package ``mutf8`` (Java's modified UTF-8 for Python), both of its
implementations, judged against the ``mutf8`` profile it claims.

===============  =======  =================================================
name             profile  what
===============  =======  =================================================
``mutf8``        mutf8    ``mutf8.cmutf8.decode_modified_utf8`` (C)
``mutf8:py``     mutf8    ``mutf8.mutf8.decode_modified_utf8`` (pure Python)
===============  =======  =================================================

``decode_modified_utf8(bytes) -> str`` raises :class:`UnicodeDecodeError`, so
each shows ``strict`` (its ``start``/``end``), and on input it accepts its text
as every substitution view. It combines a six-byte surrogate pair into one
supplementary code point itself, as the profile reads it; a lone encoded
surrogate stays a surrogate code point. Its error reasons are free text, so no
reason view is claimed.

The screen (the fuzz loop's cheap tier) is the same single call without building an
outcome: its views, complete (``screen_complete``). Both implementations fail
most fuzz inputs in their own way (the C one passes ill-formed bytes through as
Latin-1, so its ``strict`` is None where the profile has an error; the pure-Python
one raises RuntimeError, a crash). The screen hands such a crash over as the
outcome :meth:`decode` would give, so the differ does not call the library again;
and the adapter keeps the last input's result (text or exception) for a full
outcome asked for right after a screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome

_Raised = tuple[type[Exception], tuple[Any, ...]]  # an exception's type and arguments


class Mutf8(Decoder):
    profile = "mutf8"
    shows = frozenset({"strict"})
    screen_complete = True

    def __init__(self, name: str, fn: Callable[[bytes], str], impl: str, version: str) -> None:
        self.name, self.fn, self.impl, self.version = name, fn, impl, version
        self._last: tuple[bytes, str | None, _Raised | None] | None = None

    def _call(self, data: bytes) -> str:
        """``fn(data)``, or what it raised, from the last call when ``data`` is the
        same (the library is a pure function of its input)."""
        last = self._last
        if last is None or last[0] != data:
            try:
                last = (data, self.fn(data), None)
            except Exception as e:
                # Kept as its type and arguments, raised afresh each time: a kept
                # exception object would keep its traceback, whose frames hold this
                # decoder, which holds the exception - a cycle only the GC frees.
                last = (data, None, (type(e), e.args))
            # bytes only: a mutable buffer could change under the kept result
            self._last = last if type(data) is bytes else None
        if last[2] is not None:
            kind, args = last[2]
            raise kind(*args)
        return last[1]  # type: ignore[return-value]

    def versions(self) -> dict[str, str]:
        return {"mutf8": self.version, "implementation": self.impl}

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        try:
            text = self._call(data)
        except UnicodeDecodeError as e:
            return Outcome.partial(n, strict=(e.start, e.end))
        cps = tuple(map(ord, text))
        # the views in their final shapes already: Outcome.partial's checks would
        # double the cost of nearly every fuzz input (see the module docstring)
        return Outcome(n, views={"strict": None, "spans": (), "replace": cps, "ignore": cps,
                                 "escape": cps})

    def screen(self, data: bytes) -> dict[str, Any] | Outcome | None:
        try:
            text = self._call(data)
        except UnicodeDecodeError as e:
            return {"strict": (e.start, e.end)}
        except Exception as e:
            return self.crash(data, e)  # what run() would raise: decode()'s outcome
        # accepted: its text is every text view
        return {"strict": None, "spans": (), "replace": text, "ignore": text, "escape": text}


def discover() -> list[Decoder | Unavailable]:
    try:
        import mutf8
        from mutf8 import mutf8 as pure
    except ImportError as e:
        return [Unavailable("mutf8", f"the mutf8 package is not installed (pip install mutf8): "
                                     f"{e}")]
    out: list[Decoder | Unavailable] = []
    try:
        from mutf8 import cmutf8

        out.append(Mutf8("mutf8", cmutf8.decode_modified_utf8, "C extension", mutf8.__version__))
    except ImportError as e:
        out.append(Unavailable("mutf8", f"mutf8's C extension did not build: {e}"))
    out.append(Mutf8("mutf8:py", pure.decode_modified_utf8, "pure Python", mutf8.__version__))
    return out
