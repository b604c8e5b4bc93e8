"""A difference in the call (:mod:`utf8fuzz.engine.calls`) as the corpus keeps it:
its finding and its sidecar, made by the finder (:meth:`.finder.Finder._record_call`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from utf8fuzz.decoders.base import Decoder, family
from utf8fuzz.engine.calls import TITLES, Call, ask_settled, differs, settled
from utf8fuzz.engine.corpus import build_sidecar
from utf8fuzz.engine.result import Result
from utf8fuzz.engine.signature import Signature
from utf8fuzz.triage.explain import RULES
from utf8fuzz.triage.group import finding_id


def finding(klass: str, fam: str, data: bytes) -> dict[str, Any]:
    """The finding of a call's difference: named by its class alone (one per decoder
    and class), explained plainly (:data:`.calls.TITLES`); its pattern is its bytes."""
    return {"id": finding_id(fam, klass), "family": fam, "rule": klass,
            "explanation": TITLES[klass], "severity": "non-conformance",
            "pattern": data.hex(" ").upper(), "checked": 0, "rules": RULES}


@dataclass(frozen=True)
class _Divergence:
    """What :func:`.corpus.build_sidecar` reads of a divergence."""

    signature: Signature
    reference: str
    offset: int | None
    view: str
    detail: str


def sidecar(result: Result, sig: Signature, d: Decoder, call: Call,
            decoders: dict[str, Decoder], *, engine: str, original_size: int
            ) -> dict[str, Any]:
    """The corpus sidecar of a call's difference: every decoder's fresh outcome of
    the (minimized) input, as for any entry (``result``: a full run of it), and
    ``call``: how it was handed over, with ``d``'s answer so."""
    data = result.data
    fresh = settled(d, data)
    got = ask_settled(d, call, data) or fresh
    div = _Divergence(sig, f"ref:{d.profile}:{d.policy}", None, "call",
                      differs(fresh, got) or "answers as fresh now")
    side = build_sidecar(result, div, decoders, engine=engine, original_size=original_size)
    side["call"] = {**call.to_json(), "outcome": got.to_json()}
    side["finding"] = finding(sig.klass, family(d.name), data)
    return side
