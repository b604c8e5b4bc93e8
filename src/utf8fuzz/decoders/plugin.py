"""A user's own decoder: ``--decoder module:attr[@profile][+option...]`` and the
entry-point group ``utf8fuzz.decoders``.

What can be plugged in (the object ``module:attr`` names):

* a plain callable ``bytes -> str`` that raises :class:`UnicodeDecodeError` on
  ill-formed input, CPython codec style. Its outcome shows ``strict`` (the
  exception's ``start``/``end``); when it returns text there was nothing to
  replace, so the text is also its ``replace``/``ignore``/``escape`` view.
* a richer callable returning ``(text, spans)``: the text with one U+FFFD per
  error and every error's ``(start, end)``; it shows replace, spans and strict.
* a callable returning an :class:`~utf8fuzz.outcome.Outcome` (tokens, anything).
* a :class:`~utf8fuzz.decoders.base.Decoder` subclass or instance.
* ``codec:NAME``: a codec registered with Python's ``codecs``; a recording error
  handler gives its spans and replace output.

The claimed profile is ``unicode`` unless ``@profile`` says otherwise (or the
object has a ``utf8fuzz_profile`` attribute, or is a Decoder).

Isolation. A user's decoder runs in a worker process by default
(:mod:`._subprocess`), so one that segfaults, calls ``os._exit`` or loops
forever gives a ``crash`` or ``timeout`` outcome and a fresh worker, never a dead
or hung harness; one that allocates without bound a ``crash`` whose feature is
``oom``. Options after ``+``: ``inprocess`` (faster; an exception is still a crash
outcome, but a hang or a dead process takes the harness with it),
``timeout=SECONDS`` per call (default 10, or ``$UTF8FUZZ_DECODER_TIMEOUT``) and
``memory=MiB``, the worker's address-space limit (default 2048, or
``$UTF8FUZZ_WORKER_MEMORY``; 0: none; not with ``inprocess``, which has no worker).
:meth:`IsolatedDecoder.decode_many` pipelines a whole batch to the worker.

Entry points. An installed package declares::

    [project.entry-points."utf8fuzz.decoders"]
    mydecoder = "mypkg.codec:decode"

and ``utf8fuzz decoders`` lists it as ``plugin:mydecoder``.
"""

from __future__ import annotations

import codecs
import importlib
import json
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from utf8fuzz.decoders._subprocess import (
    Failure,
    Worker,
    WorkerUnavailable,
    frame,
    memory_limit_mib,
)
from utf8fuzz.decoders.base import Decoder, Unavailable
from utf8fuzz.outcome import Outcome
from utf8fuzz.profiles import get_profile

GROUP = "utf8fuzz.decoders"
DEFAULT_TIMEOUT = float(os.environ.get("UTF8FUZZ_DECODER_TIMEOUT", "10"))
REPLACE_HANDLER = "utf8fuzz.record-replace"


def _unknown(msg: str) -> Exception:
    from utf8fuzz.decoders import UnknownDecoder

    return UnknownDecoder(msg)


# -- parsing and loading --------------------------------------------------------------


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """``"m:f@corrected+timeout=2"`` -> ``("m:f", "corrected", {"timeout": "2"})``."""
    target, *opts = spec.split("+")
    target, _, profile = target.partition("@")
    options: dict[str, str] = {}
    for o in opts:
        k, _, v = o.partition("=")
        if k not in ("inprocess", "timeout", "memory") or (k != "inprocess" and not v):
            raise _unknown(f"bad decoder option {o!r} in {spec!r}: "
                           "use +inprocess, +timeout=S or +memory=MiB")
        options[k] = v
    if "timeout" in options:
        try:
            if float(options["timeout"]) <= 0:
                raise ValueError
        except ValueError:
            raise _unknown(f"bad timeout in {spec!r}: a positive number of seconds") from None
    if "memory" in options:
        if "inprocess" in options:
            raise _unknown(f"bad {spec!r}: +memory limits a worker, and +inprocess has none")
        try:
            memory_limit_mib(options["memory"])
        except ValueError as e:
            raise _unknown(f"{e} in {spec!r}") from None
    mod, _, attr = target.partition(":")
    if not mod or not attr:
        raise _unknown(f"bad decoder {spec!r}: expected module:attr[@profile]")
    if profile:
        try:
            get_profile(profile)
        except ValueError as e:
            raise _unknown(str(e)) from None
    return target, profile or None, options


def load_object(target: str) -> Any:
    """Import ``module:attr`` (attr may be dotted); ``codec:NAME`` is a codec."""
    mod, _, attr = target.partition(":")
    if mod == "codec":
        try:
            return codecs.lookup(attr)
        except LookupError:
            raise _unknown(f"no codec named {attr!r} is registered") from None
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: the user's own modules
    try:
        obj: Any = importlib.import_module(mod)
    except ImportError as e:
        raise _unknown(f"cannot import {mod!r} for decoder {target!r}: {e}") from None
    except Exception as e:
        raise _unknown(f"importing {mod!r} failed: {type(e).__name__}: {e}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise _unknown(f"module {mod!r} has no attribute {attr!r}") from None
    return obj


def wrap(obj: Any, name: str, profile: str | None) -> Decoder:
    """A Decoder for any of the pluggable shapes (see the module docstring)."""
    if isinstance(obj, type) and issubclass(obj, Decoder):
        obj = obj()
    if isinstance(obj, Decoder):
        if profile:
            obj.profile = profile
        if not obj.name:
            obj.name = name
        return obj
    if isinstance(obj, codecs.CodecInfo):
        return CodecDecoder(obj, name, profile or "unicode")
    if callable(obj):
        if not profile:
            profile = getattr(obj, "utf8fuzz_profile", "unicode")
        return CallableDecoder(obj, name, profile)
    raise _unknown(f"{name}: {type(obj).__name__} is not callable, a Decoder or a codec")


def _inprocess(target: str, profile: str | None) -> Decoder:
    name = "plugin:" + target + (f"@{profile}" if profile else "")
    return wrap(load_object(target), name, profile)


def load(spec: str) -> Decoder:
    """The decoder a user named on the command line (isolated unless +inprocess)."""
    target, profile, options = parse_spec(spec)
    dec = _inprocess(target, profile)
    if "inprocess" not in options:
        timeout = float(options.get("timeout") or DEFAULT_TIMEOUT)
        memory = memory_limit_mib(options["memory"]) if "memory" in options else None
        dec = IsolatedDecoder(target, profile, dec, timeout=timeout, memory_mib=memory)
    dec.spec = spec
    return dec


# -- in-process shapes ----------------------------------------------------------------


def _versions_of(obj: Any, target: str) -> dict[str, str]:
    v = {"plugin": target}
    mod = sys.modules.get(getattr(obj, "__module__", "") or "")
    top = (getattr(obj, "__module__", "") or "").split(".")[0]
    version = getattr(mod, "__version__", None)
    if version is None and top:
        try:
            version = metadata.version(top)
        except metadata.PackageNotFoundError:
            version = None
    if version:
        v["version"] = str(version)
    return v


class CallableDecoder(Decoder):
    """A callable ``bytes -> str | (str, spans) | Outcome``."""

    shows = frozenset({"strict"})

    def __init__(self, fn: Any, name: str, profile: str) -> None:
        self.fn, self.name, self.profile = fn, name, profile
        self._versions = _versions_of(fn, name.removeprefix("plugin:"))

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        try:
            r = self.fn(data)
        except UnicodeDecodeError as e:
            return Outcome.partial(n, strict=_span(e.start, e.end, n))
        if isinstance(r, Outcome):
            if r.length != n:
                raise ValueError(f"plug-in outcome covers {r.length} bytes, input has {n}")
            return r
        if isinstance(r, str):
            cps = tuple(map(ord, r))
            return Outcome.partial(
                n, strict=None, spans=(), replace=cps, ignore=cps, escape=cps
            )
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str):
            spans = tuple(_span(s, e, n) for s, e in r[1])
            return Outcome.partial(
                n, replace=tuple(map(ord, r[0])), spans=spans,
                strict=spans[0] if spans else None,
            )
        raise TypeError(f"plug-in returned {type(r).__name__}; expected str, "
                        "(str, spans) or Outcome")


def _span(s: int, e: int, n: int) -> tuple[int, int]:
    if not (isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= n):
        raise ValueError(f"plug-in reported error span ({s!r}, {e!r}) outside 0..{n}")
    return s, e


class CodecDecoder(Decoder):
    """A registered codec, through a recording error handler: its spans and its
    replace output. Offsets are the codec's own (a codec that strips a prefix,
    like utf-8-sig, reports them after it)."""

    shows = frozenset({"strict", "spans", "replace"})

    def __init__(self, info: codecs.CodecInfo, name: str, profile: str) -> None:
        self.info, self.name, self.profile = info, name, profile

    def versions(self) -> dict[str, str]:
        return {"codec": self.info.name, "python": sys.version.split()[0]}

    def run(self, data: bytes) -> Outcome:
        spans: list[tuple[int, int]] = []
        _RECORD[:] = [spans]
        text, _ = self.info.decode(data, REPLACE_HANDLER)
        sp = tuple(spans)
        return Outcome.partial(len(data), replace=tuple(map(ord, text)), spans=sp,
                               strict=sp[0] if sp else None)


_RECORD: list[list[tuple[int, int]]] = [[]]


def _record_replace(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _RECORD[0].append((exc.start, exc.end))
    return "\ufffd", exc.end


codecs.register_error(REPLACE_HANDLER, _record_replace)


# -- isolation --------------------------------------------------------------------------


class IsolatedDecoder(Decoder):
    """A plug-in decoding in a worker process (see the module docstring)."""

    out_of_process = True  # a round trip per call: the fuzz loop sends batches

    def __init__(self, target: str, profile: str | None, described: Decoder,
                 *, timeout: float = DEFAULT_TIMEOUT, name: str | None = None,
                 memory_mib: int | None = None) -> None:
        self.target, self.claim = target, profile
        self.name = name or described.name
        self.profile, self.policy = described.profile, described.policy
        self.shows, self.incremental = described.shows, described.incremental
        self._versions = {**described.versions(), "isolated": "worker process"}
        argv = [sys.executable, "-c", "from utf8fuzz.decoders.plugin import worker_main; "
                "worker_main()", target, profile or "", json.dumps(sys.path)]
        self.worker = Worker(argv, timeout=timeout, name=f"{self.name} worker",
                             on_ready=_check_ready, memory_mib=memory_mib)

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def run(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        try:
            answers = self.worker.request_many(list(inputs))
        except WorkerUnavailable as e:
            return [Outcome.failure(len(d), "crash", str(e), self.versions()) for d in inputs]
        return [self._outcome(d, a) for d, a in zip(inputs, answers, strict=True)]

    def _outcome(self, data: bytes, answer: bytes | Failure) -> Outcome:
        if isinstance(answer, Failure):
            return Outcome.failure(len(data), answer.status, answer.detail, self.versions())
        out = Outcome.from_json(json.loads(answer))
        if out.tokens_ is not None:  # the escape view needs the input bytes
            out = Outcome.from_tokens(out.tokens_, out.length, out.provenance, data=data)
        object.__setattr__(out, "provenance", {**out.provenance, "isolated": "worker process"})
        return out

    def close(self) -> None:
        self.worker.close()


def _check_ready(ready: bytes) -> None:
    info = json.loads(ready)
    if not info.get("ok"):
        raise WorkerUnavailable(f"the worker cannot load the plug-in: {info.get('error')}")


def worker_main() -> None:
    """The worker: load the plug-in, say ready, answer frames until stdin ends."""
    target, profile, path = sys.argv[1], sys.argv[2] or None, json.loads(sys.argv[3])
    sys.path[:] = path
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # whatever the plug-in prints must not corrupt the protocol
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    try:
        dec = _inprocess(target, profile)
    except Exception as e:
        out.write(frame(json.dumps({"ok": False, "error": str(e)}).encode()))
        return
    out.write(frame(json.dumps({"ok": True, "name": dec.name}).encode()))
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        n = int.from_bytes(head, "little")
        data = inp.read(n)
        o = dec.decode(data)
        if o.status == "crash" and (o.detail or "").startswith("MemoryError"):
            # its own feature, as the parent names a worker that died of it
            o = Outcome.failure(n, "crash", f"oom: the plug-in ran out of memory; {o.detail}",
                                o.provenance)
        out.write(frame(json.dumps(o.to_json()).encode()))


# -- entry points ---------------------------------------------------------------------


def discover() -> list[Decoder | Unavailable]:
    found: list[Decoder | Unavailable] = []
    for ep in metadata.entry_points(group=GROUP):
        name = f"plugin:{ep.name}"
        try:
            dec = wrap(ep.load(), name, None)
        except Exception as e:
            found.append(Unavailable(name, f"cannot load {ep.value}: {type(e).__name__}: {e}"))
            continue
        dec.name = name
        found.append(IsolatedDecoder(ep.value, None, dec, name=name))
    return found
