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

Both implementations fail most fuzz inputs in their own way: the C one passes
ill-formed bytes through as Latin-1, so its ``strict`` is None where the profile
has an error; the pure-Python one raises RuntimeError, which :meth:`decode` turns
into a crash outcome.

This is the whole of an adapter: attributes, :meth:`~Mutf8.run` and
:meth:`~Mutf8.versions`, and ``discover()``. It offers none of the fuzz loop's
optional speed-ups (:mod:`utf8fuzz.engine.screening`) but one declaration: the
pure-Python implementation is ``slow`` (its decoding loop runs in the interpreter,
and the exception it raises on most inputs is built and judged in Python), so the
loop gives it the slow decoders' share of the inputs; the C one is compared in
full on every input.
"""

from __future__ import annotations

from collections.abc import Callable

from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome


class Mutf8(Decoder):
    profile = "mutf8"
    shows = frozenset({"strict"})

    def __init__(self, name: str, fn: Callable[[bytes], str], impl: str, version: str,
                 *, slow: bool = False) -> None:
        self.name, self.fn, self.impl, self.version = name, fn, impl, version
        self.slow = slow

    def versions(self) -> dict[str, str]:
        return {"mutf8": self.version, "implementation": self.impl}

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        try:
            text = self.fn(data)
        except UnicodeDecodeError as e:
            return Outcome.partial(n, strict=(e.start, e.end))
        # accepted: its text is every substitution view, and there are no spans
        cps = tuple(map(ord, text))
        return Outcome.partial(n, strict=None, spans=(), replace=cps, ignore=cps, escape=cps)


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
    out.append(Mutf8("mutf8:py", pure.decode_modified_utf8, "pure Python", mutf8.__version__,
                     slow=True))
    return out
