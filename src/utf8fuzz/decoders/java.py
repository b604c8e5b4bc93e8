"""The JDK's UTF-8 decoding, two calls, as real peers.

=========================  ==========================================  =======  =========
name                       call                                        mode     shows
=========================  ==========================================  =======  =========
``java:string``            ``new String(bytes, UTF_8)``                replace  replace
``java:charsetdecoder``    ``UTF_8.newDecoder()``, ``REPORT``          strict   strict,
                                                                                reason
``java:charsetdecoder-``   the same, fed the chunks of :mod:`.chunks`  strict   strict,
``stream``                 (``decode(in, out, false)`` per chunk,               reason
                           then ``true`` and ``flush``)
=========================  ==========================================  =======  =========

Both claim the ``unicode`` profile (``StandardCharsets.UTF_8`` is "Eight-bit UCS
Transformation Format", RFC 3629's) and the default policy, maximal subparts,
because the JDK documents none: ``String(byte[], Charset)`` "always replaces
malformed-input and unmappable-character sequences with this charset's default
replacement string", and ``CharsetDecoder`` reports each "malformed-input error"
as a ``CoderResult`` whose ``length()`` is "the length of the erroneous input",
without saying how much input one error is. The fuzzer judges them against
Unicode's recommended practice and reports where the JDK differs.

Known difference, the JDK's behaviour and not a harness bug: an encoded surrogate
``ED A0..BF xx`` is one malformed unit of three bytes (one U+FFFD from
``new String``; the strict span [0, 3)), where maximal subparts make ``ED``,
``A0`` and ``80`` three errors.

``java:charsetdecoder`` reports the first error: its start is the input buffer's
position and its end that plus ``CoderResult.length()``. Its reason: the decoder
runs first with ``endOfInput`` false; an error it reports then was proven by the
bytes (illegal); if it stops with ``UNDERFLOW`` and input left over it is asking
for more input, which is a truncation, and the span is what the same decoder
reports once told the input has ended.

The client is ``peers/java/Peer.java``, compiled by ``make setup``
(:mod:`.peers.build`) and run by the ``java`` of the same JDK with small
reservations (:data:`utf8fuzz.decoders.peers.JVM_OPTIONS`), so the JVM starts
under the harness's default address-space limit. Each decoder is its own
process, started on first use (about 0.1-0.2 s).
"""

from __future__ import annotations

from utf8fuzz.decoders import peers
from utf8fuzz.decoders.base import Decoder, Unavailable

#: variant -> (call, mode, policy, reasons, text only)
VARIANTS: dict[str, peers.Variant] = {
    "string": ("new String(bytes, StandardCharsets.UTF_8)", "replace", "maximal-subpart",
               False, True),
    "charsetdecoder": ("StandardCharsets.UTF_8.newDecoder(), CodingErrorAction.REPORT",
                       "strict", "maximal-subpart", True, False),
    "charsetdecoder-stream": ("StandardCharsets.UTF_8.newDecoder(), CodingErrorAction.REPORT, "
                              "decode(in, out, endOfInput) per chunk", "strict",
                              "maximal-subpart", True, False),
}
#: The streaming variant, and its one-shot sibling.
STREAMING = {"charsetdecoder-stream": "charsetdecoder"}


def discover() -> list[Decoder | Unavailable]:
    return peers.discover("java", VARIANTS, STREAMING)
