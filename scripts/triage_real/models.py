"""The causes established by hand for the real decoders of the triage measurement
(docs/triage.md), each written as a model: the correct decoder of
``tests/triage/planted/spec.py`` changed by exactly those causes. A model that gives
what the library gives on thousands of random inputs is the evidence that the
causes are all there is (on these inputs); the measurement then compares the
findings ``utf8fuzz fuzz`` reports with the count of causes.

    NODE_PATH=/tmp/triage-npm/node_modules PYTHONPATH=/tmp/triage-py \\
        .venv/bin/python scripts/triage_real/models.py [N]

The npm packages are run in one node process (their TextDecoder-like class, Node's
global TextDecoder removed first, as ``textdecoder_client.js`` does); ujson and
python-rapidjson in this process, fed a JSON string literal holding the bytes.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.triage.planted import real  # noqa: E402
from tests.triage.planted.spec import decode  # noqa: E402


def fastest_model(d: bytes) -> list[int]:
    """fastestsmallesttextencoderdecoder 1.0.22 (replace only): (1) no surrogate check,
    so ED A0..BF 80..BF is a surrogate code unit (two in a row: the character of the
    pair, in a JS string); (2) an ill-formed sequence is one U+FFFD for its lead and
    the bytes after it are read again (errors per byte): ``real.fastest``."""
    return [ord(c) for c in real.fastest(d)]


def mutf8_model(d: bytes) -> list[int]:
    """mutf-8 1.2.4 (npm), claiming Java's modified UTF-8: (1) no shortest-form check
    (C0 81..BF, C1 xx and E0 80..9F xx decode, not only C0 80); (2) errors per byte:
    ``real.mutf8``. Its third cause is in stream mode: :func:`mutf8_stream_model`."""
    return [ord(c) for c in real.mutf8(d)]


def mutf8_stream_model(d: bytes) -> bool:
    """mutf-8 1.2.4's fatal decoder given ``d`` with ``{stream: true}``, whether it holds
    it (no throw): (3) a lead the input ends before its length is held whatever
    follows it, its continuation bytes checked only once the sequence is complete
    (E0 41 held, where a decoder that checks each byte rejects the 41):
    ``real.mutf8_stream_holds``. The exec client finds strict error records with
    the stream mode (examples/exec/js/client.js), so this shows in `utf8fuzz fuzz`."""
    return real.mutf8_stream_holds(d)


def latin1_model(d: bytes) -> list[int]:
    """@polkadot/x-textdecoder 14.0.3's fallback: (1) each byte is the Latin-1
    character of its value (String.fromCharCode per byte): no UTF-8 at all."""
    return [ord(c) for c in real.latin1(d)]


def whatwg_model(d: bytes) -> list[int]:
    """text-encoding 0.7.0: the WHATWG decoder, which is Unicode's maximal subparts:
    no cause."""
    return [ord(c) for c in decode(d, "replace")]


def fast_text_encoding_model(d: bytes) -> list[int]:
    """fast-text-encoding 1.0.6, in Node: its TextDecoder hands the bytes to Node's
    ``Buffer.toString('utf-8')`` (its naive fallback loop, which checks nothing, runs
    only where there is no ``Buffer``): Unicode's maximal subparts, no cause (a BOM is
    kept, as ``ignoreBOM`` would)."""
    return [ord(c) for c in decode(d, "replace")]


def ujson_model(d: bytes) -> bool:
    """ujson 6.1.0 as a validator (a JSON string literal of the bytes): (1) no
    surrogate check in its 3-byte case: ED A0..BF 80..BF accepted."""
    try:
        decode(d, "strict", real.surrogates)
    except UnicodeDecodeError:
        return False
    return True


def rapidjson_model(d: bytes) -> bool:
    """python-rapidjson 1.25: the bytes go through CPython's codec: no cause."""
    try:
        decode(d)
    except UnicodeDecodeError:
        return False
    return True


def json_literal(d: bytes) -> bytes:
    """``d`` as the content of a JSON string literal: quote, backslash and the C0
    controls escaped, as JSON requires; every other byte as it is."""
    out = bytearray(b'"')
    for b in d:
        out += b"\\u%04x" % b if b < 0x20 or b in (0x22, 0x5C) else bytes([b])
    return bytes(out + b'"')


def json_valid(loads: Callable[[bytes], object]) -> Callable[[bytes], bool]:
    def valid(d: bytes) -> bool:
        try:
            loads(json_literal(d))
        except ValueError:  # JSONDecodeError, UnicodeDecodeError
            return False
        return True
    valid.__name__ = getattr(loads, "__module__", "json") or "json"
    return valid


def ujson_valid(data: bytes) -> bool:
    """ujson.loads on a JSON string literal of the bytes: a validator plug-in."""
    import ujson

    return json_valid(ujson.loads)(data)


def rapidjson_valid(data: bytes) -> bool:
    """rapidjson.loads on a JSON string literal of the bytes: a validator plug-in."""
    import rapidjson

    return json_valid(rapidjson.loads)(data)


NODE = r"""
delete globalThis.TextDecoder; delete globalThis.TextEncoder;
const libs = {
  fastest: new (require(
    'fastestsmallesttextencoderdecoder/NodeJS/EncoderAndDecoderNodeJS.min.js').TextDecoder)(),
  mutf8: new (require('mutf-8').MUtf8Decoder)('mutf-8', {ignoreBOM: true}),
  latin1: new (require('@polkadot/x-textdecoder/fallback').TextDecoder)('utf-8'),
  whatwg: new (require('text-encoding').TextDecoder)('utf-8', {ignoreBOM: true}),
  fastenc: (require('fast-text-encoding'), new globalThis.TextDecoder('utf-8')),
};
const inputs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = {};
for (const [k, dec] of Object.entries(libs))
  out[k] = inputs.map(h => [...dec.decode(Uint8Array.from(Buffer.from(h, 'hex')))]
    .map(c => c.codePointAt(0)));
// mutf-8's fatal decoder in stream mode, a new one for each input: held or thrown
const MU = require('mutf-8').MUtf8Decoder;
out.mutf8_stream = inputs.map(h => {
  try {
    new MU('mutf-8', {fatal: true, ignoreBOM: true})
      .decode(Uint8Array.from(Buffer.from(h, 'hex')), {stream: true});
    return true;
  } catch (e) { return false; }
});
process.stdout.write(JSON.stringify(out));
"""

PARTS = [bytes([b]) for b in (0x00, 0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                              0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xF8, 0xFF)] \
    + [b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"\xed\xb0\x80",
       b"\xc0\x80", b"\xe0\x80\x80", b"\xef\xbb\xbf", b"\xef\xbf\xbd"]


def inputs(n: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        size = rng.randint(0, 12) if k % 10 else rng.randint(30, 200)  # some past 32 units
        out.append(b"".join(rng.choice(PARTS) for _ in range(size)))
    return out


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    xs = inputs(n)
    got = json.loads(subprocess.run(["node", "-e", NODE], input=json.dumps([x.hex() for x in xs]),
                                    capture_output=True, text=True, check=True).stdout)
    models = {"fastest": fastest_model, "mutf8": mutf8_model, "latin1": latin1_model,
              "whatwg": whatwg_model, "fastenc": fast_text_encoding_model}
    bad = 0
    for name, model in models.items():
        wrong = [x for x, g in zip(xs, got[name], strict=True) if model(x) != g]
        bad += bool(wrong)
        print(f"{name}: model == library on {n - len(wrong)} of {n} inputs"
              + (f"; first other: {wrong[0].hex(' ')}" if wrong else ""))
    wrong = [x for x, g in zip(xs, got["mutf8_stream"], strict=True)
             if mutf8_stream_model(x) != g]
    bad += bool(wrong)
    print(f"mutf8 in stream mode: model == library on {n - len(wrong)} of {n} inputs"
          + (f"; first other: {wrong[0].hex(' ')}" if wrong else ""))
    for name, lib, model2 in (("ujson", ujson_valid, ujson_model),
                              ("rapidjson", rapidjson_valid, rapidjson_model)):
        wrong = [x for x in xs if lib(x) != model2(x)]
        bad += bool(wrong)
        print(f"{name}: model == library on {n - len(wrong)} of {n} inputs"
              + (f"; first other: {wrong[0].hex(' ')}" if wrong else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
