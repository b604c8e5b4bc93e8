"""A decoder in any language: ``--decoder exec:'CMD ARGS'[@profile[/policy]][+option...]``,
and the built-in peers (:func:`peer`) that run on the same protocol.

The command (split with :func:`shlex.split`, no shell) is started once and kept:
it reads requests on stdin and writes replies on stdout in the binary protocol of
docs/protocol.md, which is the contract and says every byte. In short, every
message is a frame (u32 little-endian length, then that many bytes); the client
speaks first, with a *hello* (magic ``U8FZ``, protocol version, flags saying
which modes it answers in, whether it names error reasons, whether its replace
mode gives text only; its name; free text); each request is ``u32 id, u8 mode,
input bytes``; each reply is ``u32 id, u8 status`` and then the decoded code
points and error records (``decoded``), a first error (``rejected``, strict
mode), nothing (validate mode: the status says well-formed or not), or a message
(``failed``).

Decoders. One per mode the client offers, sharing the one process:

=====================  ======================================================
``exec:NAME:strict``   ``strict`` (its text when it accepts the input)
``exec:NAME:replace``  ``replace``, ``spans``, ``strict``; only ``replace`` for
                       a text-only client (flag 16)
``exec:NAME:validate`` ``accept``
=====================  ======================================================

plus ``reason`` for strict and (not text-only) replace when the client names
reasons. A client that streams (hello flag 32) also gives ``exec:NAME:MODE:stream``
for each mode: the same views, its input sent as the chunks of
:mod:`utf8fuzz.decoders.chunks` in a stream request (the mode byte with bit 128
set, then the chunk lengths, then the bytes), which the client feeds to its
streaming decoder with ``final`` false, then ends. It is ``incremental``, and its
one-shot sibling (same ``family``, ``exec:NAME:MODE``) is the mode's plain decoder.
A client whose validator alone streams (flag 256) gives ``exec:NAME:validate:stream``
so (per-chunk validation, then the end check).

Calls, not bytes. A client with hello flag 64 answers history requests
(:meth:`ExecDecoder.run_after`: inputs decoded first by the same decoder object,
not reset, their answers dropped); one with flag 128 placed requests
(:meth:`ExecDecoder.run_placed`: the input decoded as a view into a larger buffer
of guard bytes). Either answers for the input alone, judged as a plain reply to it;
a client without the flag is never sent one (the methods return None).

``NAME`` is the name in the hello, reduced to ``[A-Za-z0-9._-]`` (two
clients compared side by side must say different names); the claim as written
(``@unicode/per-run``) is appended. The spec is parsed by
:mod:`utf8fuzz.decoders.spec`, the grammar of every decoder spec; the claim is the
profile (default unicode) and policy (default maximal-subpart) the decoder is
judged against.

Options after ``+``: ``timeout=SECONDS`` per reply (default 10, or
``$UTF8FUZZ_DECODER_TIMEOUT``), ``mode=strict|replace|validate`` (only that
decoder), ``memory=MiB`` (the process's address-space limit, as for plug-ins;
0: none). The claim and the options come in any order after the command: they
begin at the first ``+`` or ``@`` after the command's last space or quote from
which the rest of the spec is such words (``exec:node c.js lib+mode=replace@cesu8``
runs ``node c.js lib``), so a command whose own last argument ends in one quotes
it (:mod:`utf8fuzz.decoders.spec`).

Failures are outcomes, never errors of the harness: a client that exits is a
``crash`` with its exit status and the last line of its stderr (whose tail, at
most 64 KiB, is kept); one that sends no reply within the timeout a ``timeout``
(and the rest of the batch is not sent); one whose reply is not one this request
can have (bad frame, wrong id, lengths that do not add up, errors in a text-only
reply) a ``crash`` saying ``garbage reply``. Each time the process is killed and
started again for the next input (:class:`~utf8fuzz.decoders._subprocess.Worker`
restarts it, and pins a failure on one request by sending the unanswered ones
again one at a time). A reply that is no outcome of its input (longer than
:func:`reply_limit`, which is not read, more code points than
:func:`~utf8fuzz.outcome.output_bound`, a code point above
:data:`~utf8fuzz.outcome.MAX_CODE_POINT`, an error
span outside the input or out of order) is a ``bad-outcome`` whose detail starts
with its kind; the client goes on, unless its length prefix was over the limit.
A client that cannot start or whose hello is wrong is an
:class:`UnknownDecoder` when an ``exec:`` spec is loaded: one line saying why. A
:func:`peer` starts nothing until its first input; from then on a hello that does
not match what the peer declares makes every outcome a ``crash`` saying why.

Speed. :meth:`ExecDecoder.decode_many` pipelines a batch (``out_of_process``, the
screening protocol's bulk path); :meth:`ExecDecoder.run` is the same exchange
with one input.
"""

from __future__ import annotations

import json
import operator
import os
import re
import shlex
import struct
import sys
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from utf8fuzz import safe
from utf8fuzz.decoders._subprocess import (
    Failure,
    Worker,
    WorkerUnavailable,
    send_outcomes,
)
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.decoders.chunks import cuts
from utf8fuzz.decoders.spec import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT  # callers' default
from utf8fuzz.decoders.spec import EXEC_MODES, parse
from utf8fuzz.outcome import MAX_CODE_POINT, Outcome, output_bound
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import get_profile

PREFIX = "exec:"
MAGIC = b"U8FZ"
VERSION = 1
#: Request modes (the u8 after the id).
MODE_STRICT, MODE_REPLACE, MODE_VALIDATE = 1, 2, 3
MODES = dict(zip(EXEC_MODES, (MODE_STRICT, MODE_REPLACE, MODE_VALIDATE), strict=True))
#: Hello flags (u16): the modes the client answers in; whether its error records
#: carry a reason (1 illegal, 2 truncated) rather than 0; whether its replace-mode
#: replies carry text only (no error records: E is always 0).
FLAG_STRICT, FLAG_REPLACE, FLAG_REASONS, FLAG_VALIDATE, FLAG_TEXT_ONLY = 1, 2, 4, 8, 16
#: Hello flag: the client answers stream requests (docs/protocol.md, "Stream mode").
FLAG_STREAM = 32
#: Hello flags: the client answers history requests, placed requests, and stream
#: requests in validate mode (its validator streams; implied by FLAG_STREAM).
FLAG_HISTORY, FLAG_PLACED, FLAG_STREAM_VALIDATE = 64, 128, 256
#: Or'ed into a request's mode byte (at most one of them), each sent only to a
#: client whose hello has its flag: a stream request (u32 K, K u32 chunk lengths,
#: then the input bytes); a history request (u32 K, K u32 lengths, the K history
#: inputs, then the input); a placed request (u32 offset, u32 total, u8 guard,
#: then the input).
STREAM, HISTORY, PLACED = 0x80, 0x40, 0x20
#: The mode in a request's mode byte.
MODE_MASK = 0x1F
#: A placed request's buffer is at most this much larger than its input.
PLACED_SLACK = 1 << 20
MODE_FLAGS = {"strict": FLAG_STRICT, "replace": FLAG_REPLACE, "validate": FLAG_VALIDATE}
#: Reply statuses (the u8 after the id). A validate-mode reply says WELL_FORMED
#: (0) or ILL_FORMED (1) with nothing after it.
DECODED, REJECTED, FAILED = 0, 1, 2
WELL_FORMED, ILL_FORMED = 0, 1
REASONS: dict[int, str | None] = {0: None, 1: "illegal", 2: "truncated"}
#: The hello is small; anything longer is not one.
HELLO_MAX = 64 << 10
#: A reply to an input of n bytes longer than :func:`reply_limit` (this slack, for
#: a failure's message, and the longest decoded reply the output bound allows) is
#: an ``oversized-output``, found from its length prefix alone, so a client writing
#: noise or a flood never makes the harness buffer it.
REPLY_SLACK = 64 << 10
#: A hello's free text that is a JSON object of strings gives this many
#: provenance entries at most (the rest is dropped).
INFO_KEYS = 16

_U32 = struct.Struct("<I")
_HELLO = struct.Struct("<4sHHH")  # magic, version, flags, name length
_REQ = struct.Struct("<IB")  # id, mode | id, status
_DECODED = struct.Struct("<IBII")  # id, status, code points, errors
_REJECTED = struct.Struct("<IBIII")  # id, status, start, end, reason
_PLACED = struct.Struct("<IIB")  # offset, total, guard


def _unknown(msg: str) -> Exception:
    from utf8fuzz.decoders import UnknownDecoder

    return UnknownDecoder(msg)


# -- the protocol --------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """The client's first frame. ``info``: what its free text puts in provenance."""

    version: int
    flags: int
    name: str
    about: str
    info: dict[str, str] = field(default_factory=dict)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(m for m, f in MODE_FLAGS.items() if self.flags & f)

    @property
    def reasons(self) -> bool:
        return bool(self.flags & FLAG_REASONS)

    @property
    def text_only(self) -> bool:
        return bool(self.flags & FLAG_TEXT_ONLY)

    @property
    def streams(self) -> bool:
        return bool(self.flags & FLAG_STREAM)

    def streams_mode(self, mode: str) -> bool:
        """Whether ``mode`` answers stream requests: every mode with flag 32, validate
        mode also with flag 256 (a streaming validator)."""
        return self.streams or (mode == "validate" and bool(self.flags & FLAG_STREAM_VALIDATE))

    @property
    def history(self) -> bool:
        return bool(self.flags & FLAG_HISTORY)

    @property
    def placed(self) -> bool:
        return bool(self.flags & FLAG_PLACED)


def parse_hello(body: bytes) -> Hello:
    """The hello in ``body``; WorkerUnavailable saying what is wrong with it."""
    if len(body) < _HELLO.size or body[:4] != MAGIC:
        raise WorkerUnavailable(f"its first frame is not a hello (magic {MAGIC.decode()}): "
                                f"{safe.hexbytes(body[:16])}")
    _, version, flags, n = _HELLO.unpack_from(body)
    if version != VERSION:
        raise WorkerUnavailable(f"it speaks protocol version {version}; this harness "
                                f"speaks {VERSION}")
    if _HELLO.size + n > len(body):
        raise WorkerUnavailable(f"its hello names {n} bytes of name in a "
                                f"{len(body)}-byte frame")
    if not flags & (FLAG_STRICT | FLAG_REPLACE | FLAG_VALIDATE):
        raise WorkerUnavailable("its hello offers no mode (flag 1 strict, 2 replace, "
                                "8 validate)")
    if flags & FLAG_STREAM_VALIDATE and not flags & FLAG_VALIDATE:
        raise WorkerUnavailable("its hello says its validator streams (flag 256) but "
                                "offers no validate mode (flag 8)")
    raw = body[_HELLO.size : _HELLO.size + n].decode("utf-8", "replace")
    # a name is part of decoder names, signatures and file names: a safe subset
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-")[:64]
    text = body[_HELLO.size + n :].decode("utf-8", "replace")
    about = safe.text(text, 200)
    return Hello(version, flags, name, about, _info(text, about))


def _info(text: str, about: str) -> dict[str, str]:
    """The provenance a hello's free text gives: a JSON object's string values under
    their own keys (``{"node": "v20.1.0", "icu": "74.2"}``), else the text whole as
    ``about``; nothing for no text. Keys and values are escaped and bounded."""
    try:
        obj = json.loads(text) if text.lstrip().startswith("{") else None
    except (ValueError, RecursionError):  # not JSON (or nested past the parser): text
        obj = None
    if isinstance(obj, dict) and obj and all(isinstance(v, str) for v in obj.values()):
        return {safe.text(k, 40): safe.text(v, 200)
                for k, v in list(obj.items())[:INFO_KEYS] if v}
    return {"about": about} if about else {}


def input_length(request: bytes) -> int:
    """The length of the input a request payload carries: what follows its mode
    byte, less a stream request's chunk table, a history request's history (and its
    table), a placed request's placement."""
    code, n = request[4], len(request) - _REQ.size
    if not code & ~MODE_MASK:  # a plain request, nearly every one
        return n
    if code & (STREAM | HISTORY):
        k: int = _U32.unpack_from(request, _REQ.size)[0]
        n -= 4 + 4 * k
        if code & HISTORY:
            lengths: tuple[int, ...] = struct.unpack_from(f"<{k}I", request, _REQ.size + 4)
            n -= sum(lengths)
        return n
    if code & PLACED:
        return n - _PLACED.size
    return n


def reply_limit(n: int) -> int:
    """The longest reply a request with ``n`` input bytes may get: a decoded reply
    of :func:`~utf8fuzz.outcome.output_bound` code points and ``n`` errors, and
    :data:`REPLY_SLACK`."""
    return REPLY_SLACK + 4 * output_bound(n) + 12 * n


class BadOutcome(str):
    """What :func:`parse_reply` says of a well-framed reply that is no outcome of its
    input (too much output, a code point past :data:`MAX_CODE_POINT`, spans outside
    the input or out of order): a ``bad-outcome`` detail, its kind first. The stream
    is still in step: the client goes on."""


#: What :func:`parse_reply` read from a reply: status, code points, error spans,
#: the first error's reason (None when not said or no error), the failure message.
#: A validate-mode reply is its status alone (WELL_FORMED or ILL_FORMED).
Parsed = tuple[int, tuple[int, ...], tuple[tuple[int, int], ...], str | None, str]

_NAMES = {v: k for k, v in MODES.items()}


class Reply(bytes):
    """A reply frame that passed :func:`parse_reply`, carrying what it read (so
    that the fuzz loop reads each reply once), or the :class:`BadOutcome` it is
    (the client stays in step and goes on)."""

    parsed: Parsed | BadOutcome


def parse_reply(body: bytes, request: bytes, reasons: bool,
                text_only: bool = False, n: int | None = None) -> Parsed | str:
    """What ``body`` says as the reply to ``request`` (id, mode, input), or why it
    cannot be that reply (a ``str``; a :class:`BadOutcome` when it is a reply, but
    no outcome of this input): every rule of docs/protocol.md, "Replies".
    ``reasons`` and ``text_only``: the client's hello flags 4 and 16; ``n``: the
    request's :func:`input_length`, when the caller has it."""
    if len(body) < _REQ.size:
        return f"{len(body)} bytes, less than an id and a status"
    rid, mode = _REQ.unpack_from(request)
    got, status = _REQ.unpack_from(body)
    if got != rid:
        return f"id {got}, expected {rid}"
    # a reply is its input's alone: not the chunk table's, the history's, the buffer's
    if n is None:
        n = input_length(request)
    mode &= MODE_MASK
    if status == FAILED:
        return status, (), (), None, body[_REQ.size:].decode("utf-8", "replace")
    if mode == MODE_VALIDATE:
        if status not in (WELL_FORMED, ILL_FORMED):
            return f"unknown status {status} in validate mode"
        if len(body) != _REQ.size:
            return f"a validate reply of {len(body)} bytes, not {_REQ.size}"
        return status, (), (), None, ""
    if status == REJECTED:
        if mode != MODE_STRICT:
            return f"status rejected in {_NAMES.get(mode, str(mode))} mode"
        if len(body) != _REJECTED.size:
            return f"a rejection of {len(body)} bytes, not {_REJECTED.size}"
        start, end, reason = errs = _REJECTED.unpack_from(body)[2:]
        why = _check_errors(errs, n, reasons)
        return why if why is not None else (status, (), ((start, end),), REASONS[reason], "")
    if status != DECODED:
        return f"unknown status {status}"
    if len(body) < _DECODED.size:
        return f"a decoded reply of {len(body)} bytes, less than its header"
    _, _, ncp, nerr = _DECODED.unpack_from(body)
    want = _DECODED.size + 4 * ncp + 12 * nerr
    if len(body) != want:
        return (f"{len(body)} bytes for {ncp} code points and {nerr} errors "
                f"(which take {want})")
    if ncp > output_bound(n):
        return BadOutcome(f"oversized-output: {ncp} code points for a {n}-byte input "
                          f"(at most {output_bound(n)})")
    if not nerr:
        cps = _u32s(body, _DECODED.size, ncp)
        return _out_of_range(cps) or (status, cps, (), None, "")
    if mode == MODE_STRICT:
        return "errors in a strict-mode decoded reply (a strict client rejects)"
    if text_only:
        return f"{nerr} errors in a text-only reply (hello flag 16: E is always 0)"
    words = _u32s(body, _DECODED.size, ncp + 3 * nerr)  # one pass: cheaper than two
    cps, errs = words[:ncp], words[ncp:]
    why = _check_errors(errs, n, reasons) or _out_of_range(cps)
    if why is not None:
        return why
    return status, cps, tuple(zip(errs[0::3], errs[1::3], strict=True)), REASONS[errs[2]], ""


def _out_of_range(cps: tuple[int, ...]) -> BadOutcome | None:
    if cps and max(cps) > MAX_CODE_POINT:
        i = next(i for i, c in enumerate(cps) if c > MAX_CODE_POINT)
        return BadOutcome(f"code-point-out-of-range: {cps[i]:#x} at index {i} "
                          f"(at most {MAX_CODE_POINT:#x})")
    return None


def _check_errors(errs: tuple[int, ...], n: int, reasons: bool) -> str | None:
    """``errs`` is (start, end, reason) after (start, end, reason), as sent."""
    starts, ends, why = errs[0::3], errs[1::3], errs[2::3]
    # each span inside the input, non-empty, each after the one before (map with
    # operator: noisy fuzz inputs bring some 30 errors each)
    spans = list(zip(starts, ends, strict=True))[:8]
    if max(ends) > n:
        return BadOutcome(f"span-outside-input: error spans {spans} of the input's "
                          f"{n} bytes")
    if not (all(map(operator.lt, starts, ends)) and all(map(operator.le, ends, starts[1:]))):
        return BadOutcome(f"spans-out-of-order: error spans {spans} are not each "
                          "non-empty and after the one before")
    bad = set(why) - ({1, 2} if reasons else {0, 1, 2})
    if bad:
        return f"error reason {min(bad)} (1 illegal, 2 truncated" + \
            ("" if reasons else ", 0 not said") + ")"
    return None


def _u32s(body: bytes, at: int, count: int) -> tuple[int, ...]:
    if _LITTLE:
        return tuple(memoryview(body)[at : at + 4 * count].cast("I"))
    a = array("I", body[at : at + 4 * count])
    a.byteswap()
    return tuple(a)


_LITTLE = sys.byteorder == "little" and array("I").itemsize == 4


class ExecWorker(Worker):
    """A :class:`Worker` that checks each reply frame as it arrives: its length
    from its prefix (no noise is buffered), then :func:`parse_reply`. A frame that
    fails is a ``crash`` for its request, and the end of the exchange (the
    process is restarted, as for a death).

    ``require`` sees each hello and says why it is not acceptable (None: it is);
    a refusal is final: :meth:`start` raises it again without starting anything."""

    def __init__(self, argv: Sequence[str], *, timeout: float, name: str,
                 memory_mib: int | None, env: dict[str, str] | None = None,
                 require: Callable[[Hello], str | None] | None = None) -> None:
        super().__init__(argv, timeout=timeout, name=name, on_ready=self._on_ready,
                         answers_each=False, memory_mib=memory_mib, env=env)
        self.hello: Hello | None = None
        self.require = require
        self.refused: str | None = None

    def start(self) -> bytes:
        if self.refused is not None:
            raise WorkerUnavailable(self.refused)
        return super().start()

    def _on_ready(self, body: bytes) -> None:
        hello = parse_hello(body)
        if self.hello is not None and hello.flags != self.hello.flags:
            raise WorkerUnavailable("its hello changed on restart")
        why = self.require(hello) if self.require is not None else None
        if why is not None:
            self.refused = why
            raise WorkerUnavailable(why)
        self.hello = hello

    def _take(self, answers: list[bytes | Failure], payloads: Sequence[bytes]) -> bool:
        """Worker._take, each frame checked; True when one was garbage (a Failure is
        then the last answer)."""
        buf, pos = self._buf, 0
        most = len(payloads) or 1  # no requests: the one frame wanted is the hello
        hello = self.hello
        reasons = hello is not None and hello.reasons
        text_only = hello is not None and hello.text_only
        try:
            while len(buf) - pos >= 4 and len(answers) < most:
                (n,) = _U32.unpack_from(buf, pos)
                request = payloads[len(answers)] if payloads else None
                size = 0 if request is None else input_length(request)
                limit = HELLO_MAX if request is None else reply_limit(size)
                if n > limit and request is None:
                    answers.append(self._garbage(f"a frame of {n} bytes (at most {limit})",
                                                 "hello"))
                    return True
                if n > limit:  # not read: the process is restarted
                    answers.append(Failure(
                        "bad-outcome", f"oversized-output: {self.name} began a reply of {n} "
                        f"bytes (at most {limit} for this input): not read", pinned=True))
                    return True
                if len(buf) - pos - 4 < n:
                    break
                body = Reply(buf[pos + 4 : pos + 4 + n])
                pos += 4 + n
                if request is not None:
                    parsed = parse_reply(body, request, reasons, text_only, size)
                    if isinstance(parsed, str) and not isinstance(parsed, BadOutcome):
                        answers.append(self._garbage(parsed))
                        return True
                    body.parsed = parsed
                answers.append(body)
            return False
        finally:
            del buf[:pos]

    def _garbage(self, why: str, what: str = "reply") -> Failure:
        return Failure("crash", f"garbage {what} from {self.name}: {safe.text(why, 200)}",
                       pinned=True)


# -- decoders --------------------------------------------------------------------------


class ExecProcess:
    """The one process of an ``exec:`` spec (shared by its decoders) or of a peer.
    Nothing starts until :meth:`start` or the first request."""

    def __init__(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mib: int | None = None, env: dict[str, str] | None = None,
                 label: str | None = None,
                 require: Callable[[Hello], str | None] | None = None) -> None:
        self.argv = tuple(argv)
        label = label or "exec:" + os.path.basename(self.argv[0])
        self.worker = ExecWorker(self.argv, timeout=timeout, name=label,
                                 memory_mib=memory_mib, env=env, require=require)
        self._ids = 0

    def start(self) -> Hello:
        """Start the process if it is not running; its hello."""
        self.worker.start()
        assert self.worker.hello is not None  # set by on_ready, or start raised
        return self.worker.hello

    def _first_id(self, count: int) -> int:
        first = self._ids
        self._ids = (first + count) & 0xFFFFFFFF
        return first

    def requests(self, mode: int, inputs: Sequence[bytes]) -> list[bytes]:
        """One request payload per input, each with a fresh id; a stream request
        (``mode`` has :data:`STREAM`) carries the input's chunk table first."""
        first = self._first_id(len(inputs))
        pack = _REQ.pack
        if mode & STREAM:
            return [pack((first + k) & 0xFFFFFFFF, mode) + chunk_table(d) + d
                    for k, d in enumerate(inputs)]
        return [pack((first + k) & 0xFFFFFFFF, mode) + d for k, d in enumerate(inputs)]

    def history_request(self, mode: int, history: Sequence[bytes], data: bytes) -> bytes:
        """A history request: ``data`` decoded after each of ``history``, by one
        decoder object not reset between them (``mode``: a plain mode)."""
        return b"".join([_REQ.pack(self._first_id(1), mode | HISTORY),
                         struct.pack(f"<I{len(history)}I", len(history), *map(len, history)),
                         *history, data])

    def placed_request(self, mode: int, data: bytes, offset: int, total: int,
                       guard: int) -> bytes:
        """A placed request: ``data`` decoded as the view of its length at ``offset``
        in a buffer of ``total`` bytes whose other bytes are ``guard``."""
        return (_REQ.pack(self._first_id(1), mode | PLACED)
                + _PLACED.pack(offset, total, guard) + data)

    def close(self) -> None:
        self.worker.close()


def chunk_table(data: bytes) -> bytes:
    """A stream request's chunk table for ``data``: ``u32 K``, then the ``K`` chunk
    lengths (``u32`` each) of :func:`utf8fuzz.decoders.chunks.cuts`."""
    ends = cuts(data)
    lengths = [e - s for s, e in zip([0, *ends], ends, strict=False)]
    return struct.pack(f"<I{len(lengths)}I", len(lengths), *lengths)


def shows_of(mode: str, *, reasons: bool, text_only: bool) -> frozenset[str]:
    """The views a decoder of ``mode`` shows, from the hello's flags alone."""
    if mode == "validate":
        return frozenset({"accept"})
    if mode == "replace" and text_only:
        return frozenset({"replace"})
    shows = {"strict"} if mode == "strict" else {"replace", "spans", "strict"}
    return frozenset(shows | ({"reason"} if reasons else set()))


class ExecDecoder(Decoder):
    """One mode of an exec-protocol client (see the module docstring). Its
    provenance is ``versions`` and what the hello's free text says."""

    out_of_process = True  # a round trip per call: the fuzz loop sends batches

    def __init__(self, proc: ExecProcess, mode: str, *, name: str, profile: str = "unicode",
                 policy: str = "maximal-subpart", reasons: bool, text_only: bool,
                 versions: dict[str, str] | None = None, stream: bool = False,
                 family: str | None = None) -> None:
        self.proc, self.mode, self.code = proc, mode, MODES[mode] | (STREAM if stream else 0)
        self.incremental, self.family = stream, family
        self.name, self.profile, self.policy = name, profile, policy
        self.reasons = reasons and mode != "validate"
        self.text_only = text_only and mode == "replace"
        self.shows = shows_of(mode, reasons=reasons, text_only=text_only)
        self._versions = dict(versions or {})

    def versions(self) -> dict[str, str]:
        """Never starts the process: the hello's part is there once it has run."""
        hello = self.proc.worker.hello
        # the caller's versions win over what the (untrusted) client says of itself
        return {**(hello.info if hello is not None else {}), **self._versions}

    def provenance(self) -> dict[str, str]:
        if self.proc.worker.hello is None:  # not cached: the hello adds to it
            return self.versions()
        return super().provenance()

    def run(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        """One outcome per input, in order; pipelined (see the module docstring)."""
        return self.send_many(inputs)()

    def run_after(self, history: Sequence[bytes], data: bytes) -> Outcome | None:
        """The outcome of ``data`` decoded after each of ``history`` by the same
        decoder object, nothing reset (a history request, hello flag 64); None when
        the client has no flag 64, cannot start, or this decoder streams."""
        if self.incremental or not self._offers(FLAG_HISTORY):
            return None
        return self._alone(data, self.proc.history_request(self.code, history, data))

    def run_placed(self, data: bytes, offset: int, total: int, guard: int) -> Outcome | None:
        """The outcome of ``data`` handed over as the view of its length at ``offset``
        in a buffer of ``total`` bytes whose other bytes are ``guard`` (a placed
        request, hello flag 128); None when the client has no flag 128, cannot
        start, or this decoder streams. ValueError unless ``offset + len(data) <=
        total <= len(data) + PLACED_SLACK`` and ``guard`` is a byte."""
        if not (offset >= 0 and offset + len(data) <= total <= len(data) + PLACED_SLACK
                and 0 <= guard <= 0xFF):
            raise ValueError(f"no placement of {len(data)} bytes at {offset} in {total} "
                             f"(at most {PLACED_SLACK} more) with guard {guard}")
        if self.incremental or not self._offers(FLAG_PLACED):
            return None
        return self._alone(data, self.proc.placed_request(self.code, data, offset, total,
                                                          guard))

    def _offers(self, flag: int) -> bool:
        """Whether the client's hello has ``flag``; starts it to read the hello."""
        hello = self.proc.worker.hello
        if hello is None:
            try:
                hello = self.proc.start()
            except WorkerUnavailable:
                return False
        return bool(hello.flags & flag)

    def _alone(self, data: bytes, payload: bytes) -> Outcome:
        """The outcome of one request ``payload`` that carries ``data``."""
        def read(got: Sequence[bytes | Failure]) -> list[Outcome]:
            return [self._outcome(data, a, self.provenance()) for a in got[:1]]

        outs = send_outcomes([data], lambda: self.proc.worker.send_many([payload]), read,
                             name=self.name, provenance=self.provenance)()
        return outs[0]

    def send_many(self, inputs: Sequence[bytes]) -> Callable[[], list[Outcome]]:
        """:meth:`decode_many` in two halves (:mod:`utf8fuzz.engine.screening`): the
        requests go to the client now; the call returned waits for the outcomes."""
        def read(got: Sequence[bytes | Failure]) -> list[Outcome]:
            prov = self.provenance()
            # after a timeout the client is sent no more: fewer answers than inputs
            return [self._outcome(d, a, prov) for d, a in zip(inputs, got, strict=False)]

        return send_outcomes(
            inputs, lambda: self.proc.worker.send_many(self.proc.requests(self.code, inputs)),
            read, name=self.name, provenance=self.provenance)

    def _outcome(self, data: bytes, a: bytes | Failure, prov: dict[str, str]) -> Outcome:
        n = len(data)
        if isinstance(a, Failure):
            return Outcome.failure(n, a.status, safe.text(a.detail, 300), prov)
        assert isinstance(a, Reply)  # every reply is parsed as it arrives (ExecWorker._take)
        if isinstance(a.parsed, BadOutcome):
            return Outcome.failure(n, "bad-outcome", safe.text(a.parsed, 300), prov)
        status, cps, spans, reason, msg = a.parsed
        if status == FAILED:
            return Outcome.failure(n, "crash", f"{self.name} failed: {safe.text(msg, 200)}",
                                   prov)
        if self.mode == "validate":
            return Outcome.partial(n, provenance=prov, accept=status == WELL_FORMED)
        if self.text_only:  # no error records: the text is all it says
            return Outcome.partial(n, provenance=prov, replace=cps)
        if not spans:  # accepted: the text is every text view
            if self.reasons:
                return Outcome.partial(n, provenance=prov, strict=None, spans=(), replace=cps,
                                       ignore=cps, escape=cps, reason=None)
            return Outcome.partial(n, provenance=prov, strict=None, spans=(), replace=cps,
                                   ignore=cps, escape=cps)
        if status == REJECTED:
            if self.reasons:
                return Outcome.partial(n, provenance=prov, strict=spans[0], reason=reason)
            return Outcome.partial(n, provenance=prov, strict=spans[0])
        if self.reasons:
            return Outcome.partial(n, provenance=prov, replace=cps, spans=spans,
                                   strict=spans[0], reason=reason)
        return Outcome.partial(n, provenance=prov, replace=cps, spans=spans, strict=spans[0])

    def close(self) -> None:
        self.proc.close()


def load(spec: str) -> list[Decoder]:
    """The decoders of an ``exec:`` spec, one per mode (see the module docstring);
    the process is started to read its hello. UnknownDecoder, one line, if it
    cannot be."""
    parsed = parse(spec)
    if parsed.kind != "exec":
        raise _unknown(f"not an exec decoder spec: {safe.text(spec, 200)!r}")
    proc = ExecProcess(parsed.argv, timeout=parsed.timeout or DEFAULT_TIMEOUT,
                       memory_mib=parsed.memory_mib)
    try:
        hello = proc.start()
    except WorkerUnavailable as e:
        proc.close()
        raise _unknown(f"decoder {safe.text(spec, 200)!r}: {safe.text(e, 300)}") from None
    modes = hello.modes
    if parsed.modes:
        (mode,) = parsed.modes
        if mode not in modes:
            proc.close()
            raise _unknown(f"decoder {safe.text(spec, 200)!r} offers "
                           f"{' and '.join(modes)} mode, not {mode}")
        modes = (mode,)
    name = hello.name or re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(parsed.argv[0]))
    versions = {"exec": shlex.join(parsed.argv)[:300], "protocol": str(VERSION)}
    decs: list[Decoder] = []
    for m in modes:
        # a streaming mode is two decoders: whole inputs, and chunks
        streams = hello.streams_mode(m)
        for stream in (False, True) if streams else (False,):
            d = ExecDecoder(proc, m, name=parsed.name(f"exec:{name}",
                                                      f"{m}:stream" if stream else m),
                            profile=parsed.claim.profile or "unicode",
                            policy=parsed.claim.policy or "maximal-subpart",
                            reasons=hello.reasons,
                            text_only=hello.text_only, versions=versions, stream=stream,
                            family=f"exec:{name}:{m}" if streams else None)
            # the spec that loads this decoder's mode alone (and its stream sibling,
            # told apart by name): a corpus entry names one decoder
            d.spec = spec if parsed.modes else f"{spec}+mode={m}"
            decs.append(d)
    return decs


# -- built-in peers ----------------------------------------------------------------------


def peer(argv: Sequence[str], *, name: str, mode: str, profile: str = "unicode",
         policy: str = "maximal-subpart", reasons: bool = False, text_only: bool = False,
         versions: dict[str, str] | None = None, env: dict[str, str] | None = None,
         timeout: float = DEFAULT_TIMEOUT, memory_mib: int | None = None,
         stream: bool = False, family: str | None = None) -> Decoder:
    """A decoder named ``name`` that runs ``argv`` as an exec-protocol client in
    ``mode`` (``strict``, ``replace`` or ``validate``), judged as ``profile`` and
    ``policy``.

    Nothing starts here: its ``shows`` follows from ``mode``, ``reasons`` and
    ``text_only`` alone, and :meth:`~Decoder.versions` is ``versions`` until the
    process has run (then the hello's free text is added: a JSON object's string
    values under their keys, other text as ``about``; ``versions`` wins where both
    name a key). The process starts on the
    first input, and is its own (two peers never share one). Its hello must offer
    ``mode``, and its flags 4 (reasons) and 16 (text only) must be exactly
    ``reasons`` and ``text_only``; otherwise every outcome is a ``crash`` saying
    so in one line, and the process is not started again. ValueError for an
    unknown mode, profile or policy (the caller's mistake, not the client's).

    ``stream``: it sends stream requests (the input's chunks), and the hello must
    say it streams (flag 32); it is ``incremental``, and ``family`` names whose
    one-shot decoders are its siblings."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    get_profile(profile)
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; policies are {', '.join(POLICIES)}")

    def require(hello: Hello) -> str | None:
        said = []
        if mode not in hello.modes:
            said.append(f"offers {' and '.join(hello.modes)} mode, not {mode}")
        for flag, want, what in ((FLAG_REASONS, reasons, "reasons (flag 4)"),
                                 (FLAG_TEXT_ONLY, text_only, "text only (flag 16)")):
            if bool(hello.flags & flag) != want:
                said.append(("does not say " if want else "says ") + what)
        if stream and not hello.streams_mode(mode):
            said.append("does not say it streams (flag 32" + (
                " or 256)" if mode == "validate" else ")"))
        return f"its hello {'; '.join(said)}" if said else None

    proc = ExecProcess(argv, timeout=timeout, memory_mib=memory_mib, env=env, label=name,
                       require=require)
    return ExecDecoder(proc, mode, name=name, profile=profile, policy=policy, reasons=reasons,
                       text_only=text_only, versions=versions, stream=stream, family=family)
