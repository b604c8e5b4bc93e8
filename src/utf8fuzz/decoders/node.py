"""Node's UTF-8 decoders, through one persistent ``node`` process.

============================  =======  ============================================
name                          profile  shows
============================  =======  ============================================
``node:textdecoder-fatal``    unicode  strict, reason (searched); the text when valid
``node:textdecoder``          unicode  replace (WHATWG Encoding's U+FFFD output)
``node:buffer``               unicode  replace (``Buffer.toString('utf8')``)
============================  =======  ============================================

All three share one worker (``node_worker.js``, started on first use), spoken to
in length-prefixed frames through :class:`~utf8fuzz.decoders._subprocess.Worker`:
``decode_many`` pipelines a batch, a dead node becomes a ``crash`` outcome and a
fresh process, and an answer later than the per-call timeout a ``timeout``. Both
TextDecoders use ``ignoreBOM: true``, so a BOM is U+FEFF as the unicode profile
says (by default WHATWG's decoder strips it).

``TextDecoder`` with ``fatal: true`` throws without saying where. The span of the
first error is *searched*, in node, with that fatal decoder (see the worker):
the longest prefix it accepts as a stream, then the last complete prefix before
it. Every view is still the decoder's own judgement; no offset is invented.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Sequence
from pathlib import Path

from utf8fuzz.decoders._subprocess import Failure, Worker, WorkerUnavailable
from utf8fuzz.decoders._tiling import utf16_codepoints
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome

SCRIPT = Path(__file__).with_name("node_worker.js")
OPS = {"textdecoder-fatal": 0, "textdecoder": 1, "buffer": 2}
DEFAULT_TIMEOUT = float(os.environ.get("UTF8FUZZ_DECODER_TIMEOUT", "10"))


class NodeProcess:
    """The shared worker; started lazily, restarted by :class:`Worker` as needed."""

    def __init__(self, node: str, *, timeout: float = DEFAULT_TIMEOUT,
                 env: dict[str, str] | None = None) -> None:
        self.worker = Worker([node, str(SCRIPT)], timeout=timeout, name="node", env=env,
                             answers_each=False)
        self._versions: dict[str, str] | None = None

    def versions(self) -> dict[str, str]:
        if self._versions is None:
            info = json.loads(self.worker.start())
            self._versions = {k: str(v) for k, v in info.items() if v}
        return dict(self._versions)

    def request_many(self, op: int, inputs: Sequence[bytes]) -> list[bytes | Failure]:
        prefix = bytes([op])
        return self.worker.request_many([prefix + d for d in inputs])

    def close(self) -> None:
        self.worker.close()


class NodeDecoder(Decoder):
    out_of_process = True  # a round trip per call: the fuzz loop sends batches

    def __init__(self, proc: NodeProcess, variant: str) -> None:
        self.proc, self.variant, self.op = proc, variant, OPS[variant]
        self.name = f"node:{variant}"
        self.shows = frozenset({"strict", "reason"} if self.op == 0 else {"replace"})

    @property
    def api(self) -> str:
        """The exact call, for docs and reports."""
        return _API[self.variant]

    def versions(self) -> dict[str, str]:
        try:
            return self.proc.versions()
        except WorkerUnavailable as e:
            return {"node": f"unavailable: {e}"}

    def run(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        prov = self.versions()
        try:
            answers = self.proc.request_many(self.op, list(inputs))
        except WorkerUnavailable as e:
            return [Outcome.failure(len(d), "crash", str(e), prov) for d in inputs]
        return [self._outcome(d, a, prov) for d, a in zip(inputs, answers, strict=True)]

    def _outcome(self, data: bytes, a: bytes | Failure, prov: dict[str, str]) -> Outcome:
        n = len(data)
        if isinstance(a, Failure):
            return Outcome.failure(n, a.status, a.detail, prov)
        status, body = a[0], a[1:]
        if status == 2:
            msg = body.decode("utf-8", "replace")[:300]
            return Outcome.failure(n, "crash", f"node threw: {msg}", prov)
        if status == 1:
            start, end, reason = struct.unpack("<IIB", body)
            return Outcome.partial(n, provenance=prov, strict=(start, end),
                                   reason="truncated" if reason else "illegal")
        cps = tuple(utf16_codepoints(body))
        if self.op == 0:
            return Outcome.partial(n, provenance=prov, strict=None, reason=None, spans=(),
                                   replace=cps, ignore=cps, escape=cps)
        return Outcome.partial(n, provenance=prov, replace=cps)

    def close(self) -> None:
        self.proc.close()


_API = {
    "textdecoder-fatal": "new TextDecoder('utf-8', {fatal: true, ignoreBOM: true})",
    "textdecoder": "new TextDecoder('utf-8', {ignoreBOM: true})",
    "buffer": "Buffer.toString('utf8')",
}


def discover() -> list[Decoder | Unavailable]:
    node = shutil.which("node")
    if node is None:
        return [Unavailable(f"node:{v}", "node is not on PATH (apt-get install nodejs)")
                for v in OPS]
    proc = NodeProcess(node)
    return [NodeDecoder(proc, v) for v in OPS]
