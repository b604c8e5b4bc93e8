"""A decoder in any language: ``--decoder exec:'CMD ARGS'[@profile][+option...]``.

The command (split with :func:`shlex.split`, no shell) is started once and kept:
it reads requests on stdin and writes replies on stdout in the binary protocol of
docs/protocol.md, which is the contract and says every byte. In short, every
message is a frame (u32 little-endian length, then that many bytes); the client
speaks first, with a *hello* (magic ``U8FZ``, protocol version, flags saying
which modes it decodes in and whether it names error reasons, its name); each
request is ``u32 id, u8 mode, input bytes``; each reply is ``u32 id, u8 status``
and then the decoded code points and error records (``decoded``), a first error
(``rejected``, strict mode), or a message (``failed``).

Decoders. One per mode the client offers, sharing the one process:
``exec:NAME:strict`` shows ``strict`` (and ``reason`` if the client names
reasons), and its text when it accepts the input; ``exec:NAME:replace`` shows
``replace``, ``spans`` and ``strict`` (and ``reason``). ``NAME`` is the name in
the hello, reduced to ``[A-Za-z0-9._-]`` (two clients compared side by side
must say different names); ``@profile`` is the claimed profile (default unicode),
as for plug-ins, and is appended to the name.

Options after ``+``: ``timeout=SECONDS`` per reply (default 10, or
``$UTF8FUZZ_DECODER_TIMEOUT``), ``mode=strict`` or ``mode=replace`` (only that
decoder), ``memory=MiB`` (the process's address-space limit, as for plug-ins;
0: none). A trailing ``@word`` or ``+word`` of the spec is always a claim, so a
command whose own last argument ends in one must quote it.

Failures are outcomes, never errors of the harness: a client that exits is a
``crash`` with its exit status and the last line of its stderr (whose tail, at
most 64 KiB, is kept); one that sends no reply within the timeout a ``timeout``;
one whose reply is not one this request can have (bad frame, wrong id, lengths
that do not add up, spans outside the input) a ``crash`` saying ``garbage
reply``. Each time the process is killed and started again for the next input
(:class:`~utf8fuzz.decoders._subprocess.Worker` restarts it, and pins a failure
on one request by sending it again alone to the fresh process). A client that
cannot start or whose hello is wrong is an :class:`UnknownDecoder` when the spec
is loaded: one line saying why.

Speed. :meth:`ExecDecoder.decode_many` pipelines a batch (``out_of_process``, the
screening protocol's bulk path); :meth:`ExecDecoder.run` is the same exchange
with one input.
"""

from __future__ import annotations

import operator
import os
import re
import shlex
import struct
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from utf8fuzz import safe
from utf8fuzz.decoders._subprocess import (
    Failure,
    Worker,
    WorkerUnavailable,
    memory_limit_mib,
)
from utf8fuzz.decoders.base import Decoder
from utf8fuzz.outcome import Outcome
from utf8fuzz.profiles import get_profile

PREFIX = "exec:"
MAGIC = b"U8FZ"
VERSION = 1
#: Request modes (the u8 after the id).
MODE_STRICT, MODE_REPLACE = 1, 2
MODES = {"strict": MODE_STRICT, "replace": MODE_REPLACE}
#: Hello flags (u16): the modes the client decodes in, and whether its error
#: records carry a reason (1 illegal, 2 truncated) rather than 0.
FLAG_STRICT, FLAG_REPLACE, FLAG_REASONS = 1, 2, 4
#: Reply statuses (the u8 after the id).
DECODED, REJECTED, FAILED = 0, 1, 2
REASONS: dict[int, str | None] = {0: None, 1: "illegal", 2: "truncated"}
DEFAULT_TIMEOUT = float(os.environ.get("UTF8FUZZ_DECODER_TIMEOUT", "10"))
#: The hello is small; anything longer is not one.
HELLO_MAX = 64 << 10
#: A reply to an input of n bytes longer than this is garbage, found from its
#: length prefix alone, so a client writing noise never makes the harness buffer it.
REPLY_SLACK, REPLY_PER_BYTE = 64 << 10, 32

_U32 = struct.Struct("<I")
_HELLO = struct.Struct("<4sHHH")  # magic, version, flags, name length
_REQ = struct.Struct("<IB")  # id, mode | id, status
_DECODED = struct.Struct("<IBII")  # id, status, code points, errors
_REJECTED = struct.Struct("<IBIII")  # id, status, start, end, reason
_CLAIMS = re.compile(
    r"(?P<cmd>.*?)(?:@(?P<profile>[A-Za-z0-9_-]+))?(?P<opts>(?:\+[A-Za-z]+(?:=[^\s'\"+@]*)?)*)",
    re.DOTALL)


def _unknown(msg: str) -> Exception:
    from utf8fuzz.decoders import UnknownDecoder

    return UnknownDecoder(msg)


# -- the spec ------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """A parsed ``exec:`` spec: the command, the claimed profile, the options."""

    argv: tuple[str, ...]
    profile: str | None
    timeout: float
    mode: str | None
    memory_mib: int | None


def parse_spec(spec: str) -> Spec:
    """``"exec:'./client -q'@unicode+timeout=2"`` -> argv ``('./client', '-q')``,
    profile ``unicode``, timeout 2. UnknownDecoder, one line, for a bad spec."""
    if not spec.startswith(PREFIX):
        raise _unknown(f"not an exec decoder spec: {safe.text(spec, 200)!r}")
    m = _CLAIMS.fullmatch(spec[len(PREFIX):])
    assert m is not None  # every string matches: the claims are optional
    shown = safe.text(spec, 200)
    try:
        argv = tuple(shlex.split(m["cmd"]))
    except ValueError as e:
        raise _unknown(f"bad command in {shown!r}: {e}") from None
    if not argv:
        raise _unknown(f"bad decoder {shown!r}: expected exec:'COMMAND ARGS'[@profile]")
    profile = m["profile"]
    if profile:
        try:
            get_profile(profile)
        except ValueError as e:
            raise _unknown(str(e)) from None
    timeout, mode, memory = DEFAULT_TIMEOUT, None, None
    for o in filter(None, m["opts"].split("+")):
        k, _, v = o.partition("=")
        if k == "timeout":
            try:
                timeout = float(v)
                if not 0 < timeout < 1e6:  # and not nan, not inf (the selector's wait)
                    raise ValueError
            except ValueError:
                raise _unknown(f"bad timeout in {shown!r}: a positive number of seconds") \
                    from None
        elif k == "mode" and v in MODES:
            mode = v
        elif k == "memory":
            try:
                memory = memory_limit_mib(v)
            except ValueError as e:
                raise _unknown(f"{e} in {shown!r}") from None
        else:
            raise _unknown(f"bad decoder option {safe.text(o, 60)!r} in {shown!r}: use "
                           "+timeout=S, +mode=strict|replace or +memory=MiB")
    return Spec(argv, profile or None, timeout, mode, memory)


# -- the protocol --------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """The client's first frame."""

    version: int
    flags: int
    name: str
    about: str

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(m for m, f in (("strict", FLAG_STRICT), ("replace", FLAG_REPLACE))
                     if self.flags & f)

    @property
    def reasons(self) -> bool:
        return bool(self.flags & FLAG_REASONS)


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
    if not flags & (FLAG_STRICT | FLAG_REPLACE):
        raise WorkerUnavailable("its hello offers no mode (flag 1 strict, 2 replace)")
    raw = body[_HELLO.size : _HELLO.size + n].decode("utf-8", "replace")
    # a name is part of decoder names, signatures and file names: a safe subset
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-")[:64]
    about = safe.text(body[_HELLO.size + n :].decode("utf-8", "replace"), 200)
    return Hello(version, flags, name, about)


def reply_limit(n: int) -> int:
    """The longest reply a request with ``n`` input bytes may get."""
    return REPLY_SLACK + REPLY_PER_BYTE * n


#: What :func:`parse_reply` read from a reply: status, code points, error spans,
#: the first error's reason (None when not said or no error), the failure message.
Parsed = tuple[int, tuple[int, ...], tuple[tuple[int, int], ...], str | None, str]


class Reply(bytes):
    """A reply frame that passed :func:`parse_reply`, carrying what it read (so
    that the fuzz loop reads each reply once)."""

    parsed: Parsed


def parse_reply(body: bytes, request: bytes, reasons: bool) -> Parsed | str:
    """What ``body`` says as the reply to ``request`` (id, mode, input), or why it
    cannot be that reply (a ``str``): every rule of docs/protocol.md, "Replies"."""
    if len(body) < _REQ.size:
        return f"{len(body)} bytes, less than an id and a status"
    rid, mode = _REQ.unpack_from(request)
    got, status = _REQ.unpack_from(body)
    if got != rid:
        return f"id {got}, expected {rid}"
    n = len(request) - _REQ.size
    if status == FAILED:
        return status, (), (), None, body[_REQ.size:].decode("utf-8", "replace")
    if status == REJECTED:
        if mode != MODE_STRICT:
            return "status rejected in replace mode"
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
    if not nerr:
        return status, _u32s(body, _DECODED.size, ncp), (), None, ""
    if mode == MODE_STRICT:
        return "errors in a strict-mode decoded reply (a strict client rejects)"
    words = _u32s(body, _DECODED.size, ncp + 3 * nerr)  # one pass: cheaper than two
    cps, errs = words[:ncp], words[ncp:]
    why = _check_errors(errs, n, reasons)
    if why is not None:
        return why
    return status, cps, tuple(zip(errs[0::3], errs[1::3], strict=True)), REASONS[errs[2]], ""


def _check_errors(errs: tuple[int, ...], n: int, reasons: bool) -> str | None:
    """``errs`` is (start, end, reason) after (start, end, reason), as sent."""
    starts, ends, why = errs[0::3], errs[1::3], errs[2::3]
    # each span non-empty, each after the one before, the last inside the input
    # (map with operator: noisy fuzz inputs bring some 30 errors each)
    if not (all(map(operator.lt, starts, ends)) and all(map(operator.le, ends, starts[1:]))
            and ends[-1] <= n):
        return (f"error spans {list(zip(starts, ends, strict=True))[:8]} are not each "
                f"non-empty, in order and inside the input's {n} bytes")
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
    process is restarted, as for a death)."""

    def __init__(self, argv: Sequence[str], *, timeout: float, name: str,
                 memory_mib: int | None) -> None:
        super().__init__(argv, timeout=timeout, name=name, on_ready=self._on_ready,
                         answers_each=False, memory_mib=memory_mib)
        self.hello: Hello | None = None

    def _on_ready(self, body: bytes) -> None:
        hello = parse_hello(body)
        if self.hello is not None and hello.flags != self.hello.flags:
            raise WorkerUnavailable("its hello changed on restart")
        self.hello = hello

    def _take(self, answers: list[bytes | Failure], payloads: Sequence[bytes]) -> bool:
        """Worker._take, each frame checked; True when one was garbage (a Failure is
        then the last answer)."""
        buf, pos = self._buf, 0
        most = len(payloads) or 1  # no requests: the one frame wanted is the hello
        try:
            while len(buf) - pos >= 4 and len(answers) < most:
                (n,) = _U32.unpack_from(buf, pos)
                request = payloads[len(answers)] if payloads else None
                limit = HELLO_MAX if request is None else reply_limit(len(request) - _REQ.size)
                if n > limit:
                    what = "hello" if request is None else "reply"
                    answers.append(self._garbage(f"a frame of {n} bytes (at most {limit})",
                                                 what))
                    return True
                if len(buf) - pos - 4 < n:
                    break
                body = Reply(buf[pos + 4 : pos + 4 + n])
                pos += 4 + n
                if request is not None:
                    parsed = parse_reply(body, request, self.hello is not None
                                         and self.hello.reasons)
                    if isinstance(parsed, str):
                        answers.append(self._garbage(parsed))
                        return True
                    body.parsed = parsed
                answers.append(body)
            return False
        finally:
            del buf[:pos]

    def _garbage(self, why: str, what: str = "reply") -> Failure:
        return Failure("crash", f"garbage {what} from {self.name}: {safe.text(why, 200)}")


# -- decoders --------------------------------------------------------------------------


class ExecProcess:
    """The one process of an ``exec:`` spec, shared by its decoders."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        label = "exec:" + os.path.basename(spec.argv[0])
        self.worker = ExecWorker(spec.argv, timeout=spec.timeout, name=label,
                                 memory_mib=spec.memory_mib)
        self._ids = 0

    def start(self) -> Hello:
        """Start the process if it is not running; its hello."""
        self.worker.start()
        assert self.worker.hello is not None  # set by on_ready, or start raised
        return self.worker.hello

    def requests(self, mode: int, inputs: Sequence[bytes]) -> list[bytes]:
        """One request payload per input, each with a fresh id."""
        first = self._ids
        self._ids = (first + len(inputs)) & 0xFFFFFFFF
        pack = _REQ.pack
        return [pack((first + k) & 0xFFFFFFFF, mode) + d for k, d in enumerate(inputs)]

    def close(self) -> None:
        self.worker.close()


class ExecDecoder(Decoder):
    """One mode of an ``exec:`` client (see the module docstring)."""

    out_of_process = True  # a round trip per call: the fuzz loop sends batches

    def __init__(self, proc: ExecProcess, mode: str, hello: Hello) -> None:
        self.proc, self.mode, self.code = proc, mode, MODES[mode]
        profile = proc.spec.profile
        self.profile = profile or "unicode"
        self.reasons = hello.reasons
        name = hello.name or re.sub(r"[^A-Za-z0-9._-]+", "-",
                                    os.path.basename(proc.spec.argv[0]))
        self.name = f"exec:{name}:{mode}" + (f"@{profile}" if profile else "")
        shows = {"strict"} if mode == "strict" else {"replace", "spans", "strict"}
        self.shows = frozenset(shows | ({"reason"} if hello.reasons else set()))
        self._versions = {"exec": shlex.join(proc.spec.argv)[:300], "protocol": str(VERSION)}
        if hello.about:
            self._versions["about"] = hello.about

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def run(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        """One outcome per input, in order; pipelined (see the module docstring)."""
        prov = self.provenance()
        try:
            answers = self.proc.worker.request_many(self.proc.requests(self.code, inputs))
        except WorkerUnavailable as e:
            detail = safe.text(f"{self.name} cannot run: {e}", 300)
            return [Outcome.failure(len(d), "crash", detail, prov) for d in inputs]
        return [self._outcome(d, a, prov) for d, a in zip(inputs, answers, strict=True)]

    def _outcome(self, data: bytes, a: bytes | Failure, prov: dict[str, str]) -> Outcome:
        n = len(data)
        if isinstance(a, Failure):
            return Outcome.failure(n, a.status, safe.text(a.detail, 300), prov)
        assert isinstance(a, Reply)  # every reply is parsed as it arrives (_take_checked)
        status, cps, spans, reason, msg = a.parsed
        if status == FAILED:
            return Outcome.failure(n, "crash", f"{self.name} failed: {safe.text(msg, 200)}",
                                   prov)
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
    parsed = parse_spec(spec)
    proc = ExecProcess(parsed)
    try:
        hello = proc.start()
    except WorkerUnavailable as e:
        proc.close()
        raise _unknown(f"decoder {safe.text(spec, 200)!r}: {safe.text(e, 300)}") from None
    modes = hello.modes
    if parsed.mode is not None:
        if parsed.mode not in modes:
            proc.close()
            raise _unknown(f"decoder {safe.text(spec, 200)!r} offers "
                           f"{' and '.join(modes)} mode, not {parsed.mode}")
        modes = (parsed.mode,)
    decs: list[Decoder] = []
    for m in modes:
        d = ExecDecoder(proc, m, hello)
        # the spec that loads this decoder alone: a corpus entry names one decoder
        d.spec = spec if parsed.mode is not None else f"{spec}+mode={m}"
        decs.append(d)
    return decs
