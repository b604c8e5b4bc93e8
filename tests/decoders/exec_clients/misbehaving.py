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
``overlimit`` a length prefix one byte over the longest reply its input may get
            (docs/protocol.md), and nothing after it

It answers the requests its ``--flags`` say: a history request (64) decodes each
history input first (its answer dropped), a placed request (128) decodes the
input's view of the buffer it builds, a stream request (32, or 256 in validate
mode) decodes the chunks joined; a word is read from the input. Two bugs that live
in the call, not in the bytes: with ``--sticky`` its validator keeps a flag after a
rejection and says the next input, whatever it is, is well-formed (as a WebSocket
library's did); with ``--overread`` a placed input is read one byte past its view.

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
STICKY = "--sticky" in sys.argv
OVERREAD = "--overread" in sys.argv
rejected_last = False  # the sticky validator's flag


def frame(payload: bytes) -> bytes:
    return struct.pack("<I", len(payload)) + payload


def reply(rid: int, mode: int, data: bytes) -> bytes:
    global rejected_last
    if mode == 2:
        cps = [ord(c) for c in data.decode("utf-8", "replace")]
        if data.startswith(b"errors"):
            return struct.pack(f"<IBII{len(cps)}IIII", rid, 0, len(cps), 1, *cps, 0, 1, 1)
        return struct.pack(f"<IBII{len(cps)}I", rid, 0, len(cps), 0, *cps)
    if mode == 3:
        if STICKY and rejected_last:
            rejected_last = False
            return struct.pack("<IB", rid, 0)
        if data.startswith(b"badvalid"):
            return struct.pack("<IBIII", rid, 1, 0, 1, 1)
        if data.startswith(b"badstat"):
            return struct.pack("<IB", rid, 3)
        try:
            data.decode("utf-8", ERRORS)
        except UnicodeDecodeError:
            rejected_last = True
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
        rid, mode, data = struct.unpack_from("<I", req)[0], req[4] & 0x1F, req[5:]
        kind = req[4] & 0xE0
        if kind in (0x80, 0x40):  # u32 K, K u32 lengths, then the parts and the input
            (k,) = struct.unpack_from("<I", data)
            lengths, at = struct.unpack_from(f"<{k}I", data, 4), 4 + 4 * k
            parts = []
            for n_ in lengths:
                parts.append(data[at : at + n_])
                at += n_
            if kind == 0x80:
                data = b"".join(parts)
            else:
                for h in parts:
                    reply(0, mode, h)
                data = data[at:]
        elif kind == 0x20:  # u32 offset, u32 total, u8 guard, then the input
            offset, total, guard = struct.unpack_from("<IIB", data)
            data = data[9:]
            buf = bytearray([guard]) * total
            buf[offset : offset + len(data)] = data
            data = bytes(buf[offset : offset + len(data) + (1 if OVERREAD else 0)])
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
        elif data.startswith(b"overlimit"):
            n = len(data)
            out.write(struct.pack("<I", (64 << 10) + 4 * (8 * n + 64) + 12 * n + 1))
        elif data.startswith(b"badspan"):
            out.write(frame(struct.pack("<IBIII", rid, 1, 0, len(data) + 1, 1)))
        else:
            out.write(frame(reply(rid, mode, data)))
        out.flush()


if __name__ == "__main__":
    main()
