"""From a disagreeing input to a saved corpus entry: the step every engine shares.

:class:`Finder` takes inputs from any generator (Hypothesis, Atheris, seeds), runs
the differ, and for each signature it has not seen - in this run or in the corpus -
minimizes the input, re-runs the differ on the minimized input (the sidecar records
outcomes of *that* input), and saves the entry atomically. Signatures already in the
corpus are not minimized again: that is what keeps a nightly run fast once the
known bugs are recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utf8fuzz.decoders.base import Decoder
from utf8fuzz.engine import corpus as corpus_mod
from utf8fuzz.engine.differ import Differ, Result
from utf8fuzz.engine.minimize import minimize


@dataclass
class Found:
    signature: str
    decoders: tuple[str, ...]
    klass: str
    feature: str
    input: bytes
    original_size: int
    path: Path | None
    position_dependent: bool
    sidecar: dict[str, Any] = field(repr=False, default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "decoders": list(self.decoders),
            "class": self.klass,
            "feature": self.feature,
            "input": self.input.hex(),
            "original_size": self.original_size,
            "position_dependent": self.position_dependent,
            "path": str(self.path) if self.path else None,
        }


class Finder:
    def __init__(
        self,
        decoders: Iterable[Decoder],
        corpus: Path | None,
        engine: str,
        *,
        views: Iterable[str] | None = None,
        minimize_seconds: float = 10.0,
    ) -> None:
        decs = list(decoders)
        self.differ = Differ(decs, views=views)
        self.by_name = {d.name: d for d in decs}
        self.corpus = Path(corpus) if corpus is not None else None
        self.engine = engine
        self.minimize_seconds = minimize_seconds
        self.known: set[str] = corpus_mod.signature_ids(self.corpus) if self.corpus else set()
        self.found: list[Found] = []
        self.executions = 0
        self.divergent_inputs = 0

    def consider(self, data: bytes) -> Result:
        res = self.differ.run(data)
        self.executions += 1
        if res.divergences:
            self.divergent_inputs += 1
            for div in res.divergences:
                if div.signature.id not in self.known:
                    self.known.add(div.signature.id)
                    self._record(data, str(div.signature))
        return res

    def _record(self, data: bytes, sig: str) -> None:
        m = minimize(data, lambda b: sig in self.differ.signatures(b),
                     seconds=self.minimize_seconds)
        res = self.differ.run(m.data)
        div = res.get(sig)
        if div is None:  # a flaky decoder: keep the original input
            res = self.differ.run(data)
            div = res.get(sig)
            if div is None:
                return
        side = corpus_mod.build_sidecar(
            res, div, self.by_name, engine=self.engine, original_size=len(data),
            minimizer=m.stats(), position_dependent=m.position_dependent,
        )
        path = None
        if self.corpus is not None:
            path, _ = corpus_mod.save(self.corpus, side, res.data)
        s = div.signature
        self.found.append(Found(str(s), s.decoders, s.klass, s.feature, res.data, len(data),
                                path, m.position_dependent, side))
