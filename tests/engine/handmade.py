"""Sidecars made without the fuzzer, for corpus tests that need many entries fast.

Not a test. Each sidecar has the documented format's required keys; its one
outcome is the reference's (``ref:unicode:maximal-subpart``), computed by running
the reference on the input, under a ``crash`` signature whose feature names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import utf8fuzz
from utf8fuzz.engine import corpus
from utf8fuzz.engine.signature import Signature

REFERENCE = "ref:unicode:maximal-subpart"


def sidecar(feature: str, data: bytes, *, decoder: str = "w", **extra: Any) -> dict[str, Any]:
    sig = Signature("unicode", "crash", feature, (decoder,))
    out = utf8fuzz.decode(data, profile="unicode", policy="maximal-subpart")
    return {"format": 1, "signature": str(sig), "profile": "unicode", "class": "crash",
            "feature": feature, "decoders": [decoder], "reference": REFERENCE,
            "outcomes": {REFERENCE: {"profile": "unicode", "policy": "maximal-subpart",
                                     "own": True, "outcome": out.to_json()}},
            "found": {"at": "2026-01-01T00:00:00Z", "engine": "manual",
                      "original_size": len(data), "minimized_size": len(data)},
            **extra}


def save(root: Path, feature: str, data: bytes, **extra: Any) -> Path:
    path, _ = corpus.save(root, sidecar(feature, data, **extra), data)
    return path
