"""Node's UTF-8 decoders, each an exec-protocol peer (docs/protocol.md).

============================  =======  ============================================
name                          profile  shows
============================  =======  ============================================
``node:textdecoder-fatal``    unicode  strict, reason (searched); the text when valid
``node:textdecoder``          unicode  replace (WHATWG Encoding's U+FFFD output)
``node:buffer``               unicode  replace (``Buffer.toString('utf8')``)
``node:textdecoder-stream``   unicode  replace: ``TextDecoder`` fed the chunks of
                                       :mod:`.chunks` with ``{stream: true}``, then
                                       ``decode()`` (incremental; its one-shot
                                       sibling is ``node:textdecoder``)
============================  =======  ============================================

Each runs ``node node_client.js VARIANT`` through :func:`utf8fuzz.decoders.exec.peer`,
the mechanism of every ``exec:`` client: started on first use, pipelined batches,
a dead node a ``crash`` outcome and a fresh process, an answer later than the
timeout a ``timeout``. Both TextDecoders use ``ignoreBOM: true``, so a BOM is
U+FEFF as the unicode profile says (by default WHATWG's decoder strips it). The
replacing two are text only: they say no positions.

``TextDecoder`` with ``fatal: true`` throws without saying where. The span of the
first error is *searched*, in node, with that fatal decoder (see the client):
the longest prefix it accepts as a stream, then the last complete prefix before
it. Every view is still the decoder's own judgement; no offset is invented.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from utf8fuzz.decoders import exec as exec_protocol
from utf8fuzz.decoders.base import Decoder, Unavailable

CLIENT = Path(__file__).with_name("node_client.js")
#: variant -> (mode, reasons, text only): what node_client.js says in its hello.
VARIANTS = {
    "textdecoder-fatal": ("strict", True, False),
    "textdecoder": ("replace", False, True),
    "buffer": ("replace", False, True),
    "textdecoder-stream": ("replace", False, True),
}
#: The variants fed in chunks (exec stream requests), each with its one-shot sibling.
STREAMING = {"textdecoder-stream": "node:textdecoder"}
API = {
    "textdecoder-fatal": "new TextDecoder('utf-8', {fatal: true, ignoreBOM: true})",
    "textdecoder": "new TextDecoder('utf-8', {ignoreBOM: true})",
    "buffer": "Buffer.toString('utf8')",
    "textdecoder-stream": "new TextDecoder('utf-8', {ignoreBOM: true}).decode(chunk, "
                          "{stream: true}), then decode()",
}


def decoder(node: str, variant: str, *, env: dict[str, str] | None = None,
            timeout: float = exec_protocol.DEFAULT_TIMEOUT) -> Decoder:
    """The decoder of one variant, run by the ``node`` executable; nothing starts."""
    mode, reasons, text_only = VARIANTS[variant]
    sibling = STREAMING.get(variant)
    # a streaming variant and its sibling are one family of their own (not all of node)
    family = sibling or (f"node:{variant}" if f"node:{variant}" in STREAMING.values()
                         else None)
    return exec_protocol.peer([node, str(CLIENT), variant], name=f"node:{variant}", mode=mode,
                              reasons=reasons, text_only=text_only, env=env, timeout=timeout,
                              stream=sibling is not None, family=family)


def discover() -> list[Decoder | Unavailable]:
    node = shutil.which("node")
    if node is None:
        return [Unavailable(f"node:{v}", "node is not on PATH (apt-get install nodejs)")
                for v in VARIANTS]
    return [decoder(node, v) for v in VARIANTS]
