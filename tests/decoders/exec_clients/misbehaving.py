"""An exec client (docs/protocol.md) that misbehaves on purpose, on inputs that ask.

Strict mode with reasons unless ``--flags=N`` says other hello flags, decoding
with CPython's codec (its strict span is the maximal subpart). In replace mode it
answers text only (CPython's ``errors="replace"``, no error records: pass flag 16
with flag 2); in validate mode, whether strict decoding succeeds. Inputs that
begin with a word make it fail in one way each:

``exit``    writes a line on stderr and exits with status 3 (mid-stream)
``hang``    sleeps until it is killed
``noise``   writes bytes that are no frame (a length prefix of gigabytes)
``badid``   replies with the wrong id
``badlen``  a decoded reply whose counts do not add up to its length
``badspan`` a rejection whose span ends past the input
``errors``  in replace mode, a decoded reply with one error record (well formed,
            but garbage from a text-only client)
``badvalid`` in validate mode, a reply of 17 bytes (a rejection's)
``badstat`` in validate mode, status 3

Run with ``--bad-hello`` it starts with a hello of the wrong protocol version;
with ``--surrogatepass`` it accepts encoded surrogates (ED A0 80 is U+D800), a
divergence from the unicode profile for the fuzzer to find; with ``--say-args`` its
hello's free text says its arguments (``"args"``, JSON), as it received them.
"""

from __future__ import annotations

import json
import struct
import sys
import time

ERRORS = "surrogatepass" if "--surrogatepass" in sys.argv else "strict"


def frame(payload: bytes) -> bytes:
    return struct.pack("<I", len(payload)) + payload


def reply(rid: int, mode: int, data: bytes) -> bytes:
    if mode == 2:
        cps = [ord(c) for c in data.decode("utf-8", "replace")]
        if data.startswith(b"errors"):
            return struct.pack(f"<IBII{len(cps)}IIII", rid, 0, len(cps), 1, *cps, 0, 1, 1)
        return struct.pack(f"<IBII{len(cps)}I", rid, 0, len(cps), 0, *cps)
    if mode == 3:
        if data.startswith(b"badvalid"):
            return struct.pack("<IBIII", rid, 1, 0, 1, 1)
        if data.startswith(b"badstat"):
            return struct.pack("<IB", rid, 3)
        try:
            data.decode("utf-8", ERRORS)
        except UnicodeDecodeError:
            return struct.pack("<IB", rid, 1)
        return struct.pack("<IB", rid, 0)
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
    flags = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--flags=")),
                 1 | 4)
    about = {"python": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    if "--say-args" in sys.argv:
        about["args"] = json.dumps(sys.argv[1:])
    out.write(frame(b"U8FZ" + struct.pack("<HHH", version, flags, len(name)) + name
                    + json.dumps(about).encode()))
    out.flush()
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        (n,) = struct.unpack("<I", head)
        req = inp.read(n)
        rid, mode, data = struct.unpack_from("<I", req)[0], req[4], req[5:]
        if data.startswith(b"exit"):
            sys.stderr.write("misbehaving: asked to exit\n")
            sys.stderr.flush()
            sys.exit(3)
        if data.startswith(b"hang"):
            time.sleep(3600)
        if data.startswith(b"noise"):
            out.write(b"\xff" * 64)
        elif data.startswith(b"badid"):
            out.write(frame(reply(rid + 1, mode, data)))
        elif data.startswith(b"badlen"):
            out.write(frame(struct.pack("<IBII", rid, 0, 5, 0) + b"\x41\x00\x00\x00"))
        elif data.startswith(b"badspan"):
            out.write(frame(struct.pack("<IBIII", rid, 1, 0, len(data) + 1, 1)))
        else:
            out.write(frame(reply(rid, mode, data)))
        out.flush()


if __name__ == "__main__":
    main()
