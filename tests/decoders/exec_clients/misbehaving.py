"""An exec client (docs/protocol.md) that misbehaves on purpose, on inputs that ask.

Strict mode only, decoding with CPython's codec (its strict span is the maximal
subpart). Inputs that begin with a word make it fail in one way each:

``exit``    writes a line on stderr and exits with status 3 (mid-stream)
``hang``    sleeps until it is killed
``noise``   writes bytes that are no frame (a length prefix of gigabytes)
``badid``   replies with the wrong id
``badlen``  a decoded reply whose counts do not add up to its length
``badspan`` a rejection whose span ends past the input

Run with ``--bad-hello`` it starts with a hello of the wrong protocol version;
with ``--surrogatepass`` it accepts encoded surrogates (ED A0 80 is U+D800), a
divergence from the unicode profile for the fuzzer to find.
"""

from __future__ import annotations

import struct
import sys
import time

ERRORS = "surrogatepass" if "--surrogatepass" in sys.argv else "strict"


def frame(payload: bytes) -> bytes:
    return struct.pack("<I", len(payload)) + payload


def reply(rid: int, data: bytes) -> bytes:
    try:
        text = data.decode("utf-8", ERRORS)
    except UnicodeDecodeError as e:
        reason = 2 if e.end == len(data) and e.reason == "unexpected end of data" else 1
        return struct.pack("<IBIII", rid, 1, e.start, e.end, reason)
    cps = [ord(c) for c in text]
    return struct.pack(f"<IBII{len(cps)}I", rid, 0, len(cps), 0, *cps)


def main() -> None:
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    version = 9 if "--bad-hello" in sys.argv else 1
    name = b"misbehaving"
    out.write(frame(b"U8FZ" + struct.pack("<HHH", version, 1 | 4, len(name)) + name))
    out.flush()
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        (n,) = struct.unpack("<I", head)
        req = inp.read(n)
        rid, data = struct.unpack_from("<I", req)[0], req[5:]
        if data.startswith(b"exit"):
            sys.stderr.write("misbehaving: asked to exit\n")
            sys.stderr.flush()
            sys.exit(3)
        if data.startswith(b"hang"):
            time.sleep(3600)
        if data.startswith(b"noise"):
            out.write(b"\xff" * 64)
        elif data.startswith(b"badid"):
            out.write(frame(reply(rid + 1, data)))
        elif data.startswith(b"badlen"):
            out.write(frame(struct.pack("<IBII", rid, 0, 5, 0) + b"\x41\x00\x00\x00"))
        elif data.startswith(b"badspan"):
            out.write(frame(struct.pack("<IBIII", rid, 1, 0, len(data) + 1, 1)))
        else:
            out.write(frame(reply(rid, data)))
        out.flush()


if __name__ == "__main__":
    main()
