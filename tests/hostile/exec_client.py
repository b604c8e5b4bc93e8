"""A hostile exec client (docs/protocol.md) for tests/hostile/test_exec_*.py and
test_processes_*.py: strict mode with reasons, decoding with CPython's codec (the
reference's strict span) except on inputs holding the trigger byte FE, where it does
what ``--do=`` says:

``hang``     never answers (sleeps until killed)
``flood``    begins a reply of 40 MB (10 M code points, as a ``+text`` decoder
             returning 10 MB would) and writes it
``many``     a well-framed reply of ``output_bound(n) + 1`` code points
``bigcp``    a well-framed reply holding the code point 0x842110A0 (one past the largest)
``farspan``  a rejection whose span ends past the input
``exit``     exits with status 3 (its children, if any, keep its stdout open)
``none``     nothing: decodes as on any other input

``--batched``: answers the way fast clients do, every whole request the pipe holds
at once, so a request that hangs holds back the replies of those before it.
``--deaf``: after its hello it reads nothing and answers nothing.
``--leak=MARKER``: before its hello it starts a child that keeps its stdout open
and sleeps, and that child a grandchild that calls setsid and sleeps; both carry
MARKER in their argv, so a test finds them in /proc.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time

ARGS = dict(a[2:].partition("=")[::2] for a in sys.argv[1:] if a.startswith("--"))
TRIGGER = 0xFE
# Each says it is there (a byte on the fd in argv[2]) once it runs as it should, so
# the client's hello, and so every test, comes after both exist.
GRANDCHILD = ("import os, sys, time; os.setsid(); os.write(int(sys.argv[2]), b'g'); "
              "time.sleep(600)")
CHILD = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
         f"{GRANDCHILD!r}, sys.argv[1] + '-grandchild', sys.argv[2]], "
         "stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, "
         "pass_fds=[int(sys.argv[2])]); time.sleep(600)")


def frame(payload: bytes) -> bytes:
    return struct.pack("<I", len(payload)) + payload


def reply(rid: int, data: bytes) -> bytes:
    if TRIGGER in data:
        do = ARGS.get("do", "hang")
        if do == "hang":
            time.sleep(3600)
        if do == "exit":
            sys.exit(3)
        if do == "flood":
            n = 10_000_000
            return frame(struct.pack("<IBII", rid, 0, n, 0) + b"A\0\0\0" * n)
        if do == "many":
            n = 8 * len(data) + 64 + 1
            return frame(struct.pack(f"<IBII{n}I", rid, 0, n, 0, *[0x41] * n))
        if do == "bigcp":
            return frame(struct.pack("<IBIII", rid, 0, 1, 0, 0x842110A0))
        if do == "farspan":
            return frame(struct.pack("<IBIII", rid, 1, 0, len(data) + 7, 1))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        reason = 2 if e.end == len(data) and e.reason == "unexpected end of data" else 1
        return frame(struct.pack("<IBIII", rid, 1, e.start, e.end, reason))
    cps = [ord(c) for c in text]
    return frame(struct.pack(f"<IBII{len(cps)}I", rid, 0, len(cps), 0, *cps))


def main() -> None:
    if "leak" in ARGS:
        r, w = os.pipe()
        subprocess.Popen([sys.executable, "-c", CHILD, ARGS["leak"] + "-child", str(w)],
                         stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=[w])
        os.close(w)
        os.read(r, 1)  # the grandchild has called setsid
    name = b"hostile"
    os.write(1, frame(b"U8FZ" + struct.pack("<HHH", 1, 1 | 4, len(name)) + name))
    if "deaf" in ARGS:
        time.sleep(3600)
    buf = b""
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        buf += chunk
        out = []
        while len(buf) >= 4 and len(buf) - 4 >= struct.unpack_from("<I", buf)[0]:
            (n,) = struct.unpack_from("<I", buf)
            req, buf = buf[4 : 4 + n], buf[4 + n :]
            out.append(reply(struct.unpack_from("<I", req)[0], req[5:]))
            if "batched" not in ARGS:
                os.write(1, out.pop())
        if out:
            os.write(1, b"".join(out))


if __name__ == "__main__":
    main()
