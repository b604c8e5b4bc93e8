"""The smallest adapter: its attributes and ``run()``, nothing else.

What a newcomer writes to add a decoder. Its planted bug: it decodes with
CPython's ``surrogatepass`` handler while claiming the ``unicode`` profile, so an
encoded surrogate (``ED A0..BF 80..BF``, ill-formed by Table 3.1B) is accepted.
"""

from __future__ import annotations

import sys

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome


class PassesSurrogates(Decoder):
    name = "minimal:passes-surrogates"
    profile = "unicode"
    shows = frozenset({"strict"})

    def run(self, data: bytes) -> Outcome:
        try:
            data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as e:
            return Outcome.partial(len(data), strict=(e.start, e.end))
        return Outcome.partial(len(data), strict=None)

    def versions(self) -> dict[str, str]:
        return {"python": sys.version.split()[0]}
