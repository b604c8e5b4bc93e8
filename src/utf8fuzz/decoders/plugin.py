"""A user's own decoder: ``--decoder SPEC`` and the entry-point group ``utf8fuzz.decoders``.

The spec, every part of it said in words, never guessed from what the decoder
returns::

    module:attr[@profile[/policy]][+SHAPE][+MODE...][+STREAM...][+inprocess][+timeout=S]
        [+memory=MiB]

It is parsed by :mod:`.spec`, the grammar of every decoder spec. ``module:attr`` names
the object (``attr`` may be dotted; ``codec:NAME`` is a codec registered with
Python's :mod:`codecs`). ``@profile/policy`` is its claim: it is judged against
``ref:<profile>:<policy>``; default ``unicode`` (or the object's
``utf8fuzz_profile`` attribute) and ``maximal-subpart``. The claim and the ``+``
words come in any order (``m:f+codec@unicode+replace``).

SHAPE, at most one; the view each shows is the one it is judged at:

==============  =================================================  ==================
(none)          ``f(data) -> str``, raising UnicodeDecodeError      strict; on input
                (the CPython strict style)                          it accepts also
                                                                    replace, ignore,
                                                                    escape, spans
``codec``       ``f(data, errors) -> str`` or ``(str, consumed)``   per mode, below
                (a codec's decode function), once per error mode
``text``        ``f(data) -> str``, a replacing decoder; a U+FFFD   replace
                in its output is a replacement, never acceptance
``validator``   ``f(data) -> bool`` (or 0/1): well-formed or not    accept
``spans``       ``f(data) -> (str, [(start, end), ...])``: the      replace, spans,
                text with one U+FFFD per error, and every error     strict
``outcome``     ``f(data) -> Outcome``                              what it shows
``incremental`` a ``codecs.IncrementalDecoder`` subclass or         per mode, as
                factory ``C(errors)``, once per error mode: fed     ``codec``
                the chunks of :mod:`.chunks` with ``final=False``,
                then ``decode(b"", final=True)``
``stream-       a class or factory ``C()`` of a streaming           accept
validator``     validator: ``validate(chunk) -> bool`` fed the
                chunks of :mod:`.chunks`, then ``final() -> bool``
                (its method names and how it ends: STREAM words)
==============  =================================================  ==================

A return of another type is a ``crash`` outcome whose detail names the shape to
declare. A :class:`~utf8fuzz.decoders.base.Decoder` subclass or instance, and
``codec:NAME`` (a recording error handler gives its spans and replace output),
are shapes of their own and take no SHAPE word, except that ``codec:NAME+codec``
runs the codec's decode function in error modes like any ``codec`` shape. A claim
overrides a Decoder's own profile and policy.

*Incremental.* Each mode of an ``incremental`` spec is two decoders: the streaming
one, ``plugin:TARGET:MODE`` (``incremental = True``), and its one-shot sibling
``plugin:TARGET:MODE:oneshot``, a fresh instance fed the whole input at once with
``final=True``. Both are of one family (``plugin:TARGET:MODE``), so a streaming
difference the one-shot sibling does not share is classed ``incremental-differs``
(:mod:`utf8fuzz.engine.differ`); both are judged against the reference too. In
strict mode, a ``UnicodeDecodeError`` raised while chunks are fed has offsets into
the decoder's own buffer (the bytes it held back, ``getstate()[0]``, then the
chunk), made absolute by adding where that buffer starts. The chunks are a
function of the input's bytes, so a corpus entry replays them exactly.

*Stream validators.* A ``stream-validator`` spec is two decoders the same way: the
streaming one, ``plugin:TARGET`` (``incremental``), and ``plugin:TARGET:oneshot``,
both of family ``plugin:TARGET`` and both showing ``accept``. Each input gets a fresh
object, ``C()``. The streaming one feeds it the chunks of :mod:`.chunks` one by one,
then calls its end check; the one-shot sibling feeds it the whole input as one chunk
(none for an empty input), then the end check. The input is well-formed when every
call says so: the first that says no (False, or with ``raises`` a ValueError) ends
it, and no later call is made. Which methods, and how the end is said, are the
STREAM words of :mod:`.spec`: ``+feed=NAME`` (default ``validate``), ``+end=NAME``
(default ``final``) or ``+final=KEYWORD`` (``validate(chunk, KEYWORD=False)``, then
``validate(b"", KEYWORD=True)``), and ``+raises``. At load, one object is made and
fed ``A`` then ended: a method that is missing, a call its signature refuses, or an
answer that is not a bool (without ``raises``) is an
:class:`~utf8fuzz.decoders.UnknownDecoder` (one line); later, a non-bool answer is a
``crash`` outcome that says so, as is any exception but a ``raises`` ValueError.

MODE words, only with ``codec`` or ``incremental``: ``strict``, ``replace``, ``ignore``,
``surrogateescape``. None given: every one the function accepts; a mode it
rejects with LookupError or TypeError when called once on ``FF`` at load is left
out, and a note says so (one line on stderr for ``--decoder``; an unavailable
decoder in ``utf8fuzz decoders`` for an entry point). A mode named but rejected
is an error. Each mode is a decoder of its own, named ``plugin:TARGET:MODE`` and
the claim as written (``plugin:mypkg.codec:decode:replace@unicode/per-byte``),
showing: ``strict`` -> strict (and its text as replace/ignore/escape on input it
accepts), ``replace`` -> replace, ``ignore`` -> ignore, ``surrogateescape`` ->
escape. Every other shape is ``plugin:TARGET`` and the claim as written. A
decoder's ``spec`` loads exactly that decoder again (a codec mode's names its
one mode), which is what a corpus entry records.

Options. A user's decoder runs in a worker process by default
(:mod:`._subprocess`), one per spec, serving every mode of a ``codec`` (a mode
byte leads each request), so one that segfaults, calls ``os._exit`` or loops
forever gives a ``crash`` or ``timeout`` outcome and a fresh worker, never a dead
or hung harness; one that allocates without bound a ``crash`` whose feature is
``oom``; one that returns more than :func:`~utf8fuzz.outcome.output_bound` allows a
``bad-outcome`` (``oversized-output``), said by the worker without encoding it
(and an answer over :func:`answer_limit` is never read by the harness).
``inprocess``: no worker (faster; whatever it raises, ``SystemExit``
included, is still a crash outcome, but a dead process takes the harness with it,
and the fuzz loop's recovery re-runs the round in a fork). ``timeout=SECONDS`` per
call (default 10, or ``$UTF8FUZZ_DECODER_TIMEOUT``); with ``inprocess``, said
explicitly, it interrupts the call with SIGALRM (Python code anywhere; C code when
it returns to the interpreter), a ``timeout`` outcome. ``memory=MiB``: the worker's
address-space limit (default 2048, or ``$UTF8FUZZ_WORKER_MEMORY``; 0: none; not
with ``inprocess``). :meth:`IsolatedDecoder.decode_many` sends a batch in one request
(:func:`pack_batch`), answered in one frame; a failure is pinned on its own input
(:meth:`~._subprocess.Worker.request_batch`).

An unknown shape, mode, option, profile or policy is an
:class:`~utf8fuzz.decoders.UnknownDecoder`: one line (the CLI exits 2).

Entry points. Entry-point values must be ``module:attr``, so the claim goes in the
NAME (anything without ``=``)::

    [project.entry-points."utf8fuzz.decoders"]
    "mydecoder@unicode/per-byte+validator" = "mypkg.mod:valid"
    "mycodec+codec+replace" = "mypkg.mod:decode"

gives ``plugin:mydecoder`` (a validator claiming unicode/per-byte) and
``plugin:mycodec:replace``. Options (``+inprocess``, ``+timeout=``,
``+memory=``) are for the command line only. An entry point that cannot be
loaded, or whose name is a bad spec, is listed unavailable with the reason.
"""

from __future__ import annotations

import codecs
import importlib
import json
import os
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any

from utf8fuzz import safe
from utf8fuzz.decoders._subprocess import (
    FRAME_SLACK,
    Failure,
    Worker,
    WorkerUnavailable,
    frame,
    send_outcomes,
)
from utf8fuzz.decoders.base import (
    Decoder,
    Unavailable,
    describe,
    reraise_interrupt,
    time_limited,
)
from utf8fuzz.decoders.chunks import chunks, cuts
from utf8fuzz.decoders.spec import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT  # callers' default
from utf8fuzz.decoders.spec import (
    MODAL,
    MODES,
    Claim,
    DecoderSpec,
    StreamMethods,
    parse,
    parse_entry_point,
    split_name,
)
from utf8fuzz.outcome import Outcome, bad_outcome, output_bound

GROUP = "utf8fuzz.decoders"
REPLACE_HANDLER = "utf8fuzz.record-replace"

#: The view each MODE word's decoder shows.
MODE_VIEW: dict[str, str] = dict(zip(MODES, ("strict", "replace", "ignore", "escape"),
                                     strict=True))
#: What a codec is called on at load, in each mode, to see which it accepts: CPython
#: looks an error handler up only when there is an error to handle.
PROBE = b"\xff"
#: The request's first byte for a decoder that has no modes.
NO_MODE = 0xFF
#: Or'ed into a mode's request byte: that mode's one-shot sibling (``incremental``).
ONESHOT = 0x80
#: The request byte of the one-shot sibling of a decoder without modes
#: (``stream-validator``; the streaming one is :data:`NO_MODE`).
NO_MODE_ONESHOT = 0x7F
#: The shapes whose worker is started at load, to probe the function there.
PROBED: tuple[str, ...] = (*MODAL, "stream-validator")


def mode_word(i: int) -> str:
    """The MODE word of request byte ``i`` (one that :func:`modal` says has one)."""
    return MODES[i & ~ONESHOT]


def modal(i: int) -> bool:
    """Whether request byte ``i`` selects a MODE's decoder."""
    return (i & ~ONESHOT) < len(MODES)


def name_suffix(i: int) -> str:
    """What request byte ``i``'s decoder adds to its spec's base name: ``:MODE``, then
    ``:oneshot`` for a one-shot sibling."""
    oneshot = bool(i & ONESHOT) if modal(i) else i == NO_MODE_ONESHOT
    return (f":{mode_word(i)}" if modal(i) else "") + (":oneshot" if oneshot else "")


def _unknown(msg: str) -> Exception:
    from utf8fuzz.decoders import UnknownDecoder

    return UnknownDecoder(msg)


def load_object(spec: DecoderSpec) -> Any:
    """The object a plug-in spec names: ``module:attr`` imported (attr may be
    dotted), or the codec of ``codec:NAME``."""
    target = spec.target
    if spec.kind == "exec":  # a program, loaded by .exec; never imported
        raise _unknown(f"{safe.text(spec.text, 200)!r} is a program, not module:attr")
    mod, _, attr = target.partition(":")
    if spec.kind == "codec":
        try:
            return codecs.lookup(attr)
        except LookupError:
            raise _unknown(f"no codec named {safe.text(attr, 100)!r} is registered") from None
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: the user's own modules
    shown = safe.text(mod, 200)
    try:
        obj: Any = importlib.import_module(mod)
    except ImportError as e:
        raise _unknown(f"cannot import {shown!r} for decoder {safe.text(target, 200)!r}: "
                       f"{safe.text(describe(e).partition(': ')[2], 300)}") from None
    except BaseException as e:  # SystemExit at import too: the module's own failure
        reraise_interrupt(e)
        raise _unknown(f"importing {shown!r} failed: {safe.text(describe(e), 300)}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise _unknown(f"module {shown!r} has no attribute {safe.text(attr, 100)!r}") \
                from None
    return obj


# -- building the decoders of a spec ------------------------------------------------


@dataclass
class Built:
    """The in-process decoders of one spec, each with its request byte (its mode's
    index in :data:`MODES`, or :data:`NO_MODE`), and the modes left out, with why."""

    decoders: list[tuple[int, Decoder]]
    left_out: list[tuple[str, str]]


def build(obj: Any, spec: DecoderSpec, base: str, *, probe: bool = True) -> Built:
    """The decoders ``spec`` makes of ``obj`` (in this process), named from ``base``
    (``plugin:TARGET``). ``probe``: call a codec in each mode to see which it accepts
    (off where a worker does it instead)."""
    shown = safe.text(spec.text, 200)
    claim = spec.claim
    if isinstance(obj, type) and issubclass(obj, Decoder):
        obj = obj()
    if isinstance(obj, Decoder):
        if spec.shape is not None:
            raise _unknown(f"bad decoder {shown!r}: a Decoder is its own shape; "
                           f"+{spec.shape} is for a function")
        if claim.profile:
            obj.profile = claim.profile
        if claim.policy:
            obj.policy = claim.policy
        if not obj.name:
            obj.name = spec.name(base, None)
        return Built([(NO_MODE, obj)], [])
    profile = claim.profile or "unicode"
    policy = claim.policy or "maximal-subpart"
    if isinstance(obj, codecs.CodecInfo):
        if spec.shape not in (None, *MODAL):
            raise _unknown(f"bad decoder {shown!r}: a registered codec takes no "
                           f"+{spec.shape}; +codec runs it in error modes, +incremental "
                           "its incremental decoder")
        if spec.shape is None:
            return Built([(NO_MODE, CodecDecoder(obj, spec.name(base, None), profile,
                                                 policy))], [])
        fn: Any = obj.decode if spec.shape == "codec" else obj.incrementaldecoder
        if fn is None:
            raise _unknown(f"bad decoder {shown!r}: codec {safe.text(obj.name, 60)!r} has "
                           "no incremental decoder")
        versions = {"codec": obj.name, "python": sys.version.split()[0]}
    elif callable(obj):
        fn = obj
        profile = claim.profile or str(getattr(obj, "utf8fuzz_profile", "unicode"))
        versions = _versions_of(obj, spec.target)
    else:
        raise _unknown(f"{safe.text(base, 200)}: {type(obj).__name__} is not callable, "
                       "a Decoder or a codec")
    if spec.shape == "stream-validator":
        methods = spec.stream or StreamMethods()
        if probe and (why := _probe_stream(fn, methods)) is not None:
            raise _unknown(f"decoder {shown!r}: {why}")
        return Built([(i, StreamValidator(
            fn, spec.name(base, "oneshot" if oneshot else None), profile, policy, versions,
            methods, oneshot=oneshot, family=base))
            for i, oneshot in ((NO_MODE, False), (NO_MODE_ONESHOT, True))], [])
    if spec.shape not in MODAL:
        kind = _SHAPE_CLASSES[spec.shape]
        return Built([(NO_MODE, kind(fn, spec.name(base, None), profile, policy, versions))],
                     [])
    modes, left_out = list(spec.modes or MODES), []
    if probe:
        rejects = _rejects if spec.shape == "codec" else _rejects_incremental
        rejected = {m: why for m in modes if (why := rejects(fn, m)) is not None}
        for m, why in rejected.items():
            if spec.modes:
                raise _unknown(f"decoder {shown!r}: the function rejects errors={m!r}: {why}")
            left_out.append((m, why))
        modes = [m for m in modes if m not in rejected]
        if not modes:
            raise _unknown(f"decoder {shown!r}: the function accepts none of the error "
                           f"modes {', '.join(MODES)}: {left_out[0][1]}")
    if spec.shape == "incremental":
        return Built([pair for m in modes for pair in (
            (MODES.index(m), IncrementalModeDecoder(
                fn, spec.name(base, m), profile, policy, versions, m, oneshot=False,
                family=f"{base}:{m}")),
            (MODES.index(m) | ONESHOT, IncrementalModeDecoder(
                fn, spec.name(base, f"{m}:oneshot"), profile, policy, versions, m,
                oneshot=True, family=f"{base}:{m}")),
        )], left_out)
    return Built([(MODES.index(m), CodecModeDecoder(fn, spec.name(base, m), profile, policy,
                                                    versions, m)) for m in modes], left_out)


def _rejects(fn: Callable[..., Any], mode: str) -> str | None:
    """Why ``fn`` does not take ``errors=mode`` (None: it does), from one call."""
    try:
        fn(PROBE, mode)
    except (LookupError, TypeError) as e:
        return _rejection(e)
    except BaseException as e:
        reraise_interrupt(e)
        return None  # any other answer is the decoder's own, judged in the run
    return None


def _rejects_incremental(factory: Callable[..., Any], mode: str) -> str | None:
    """Why ``factory`` makes no decoder that takes ``errors=mode`` (None: it does),
    from one decode."""
    try:
        factory(mode).decode(PROBE, True)
    except (LookupError, TypeError) as e:
        return _rejection(e)
    except BaseException as e:
        reraise_interrupt(e)
        return None  # any other answer is the decoder's own, judged in the run
    return None


def _rejection(e: LookupError | TypeError) -> str | None:
    """What a probe's LookupError or TypeError says of the mode: a LookupError is an
    error handler it does not know; a TypeError the call's arguments refused, where
    it was raised (Python checks them before the function's first line runs). One
    raised inside the function's own code (a frame past the probe's) is the
    decoder's own answer: None, and the run shows it as the exception it is."""
    tb = e.__traceback__
    if isinstance(e, TypeError) and tb is not None and tb.tb_next is not None:
        return None
    return safe.text(describe(e), 300)


def _load_inprocess(spec: DecoderSpec, base: str, *, probe: bool = True) -> Built:
    return build(load_object(spec), spec, base, probe=probe)


def load_all(spec: str) -> list[Decoder]:
    """Every decoder a user named on the command line: one, or one per codec mode
    (isolated unless ``+inprocess``). A mode left out is noted on stderr."""
    parsed = parse(spec)
    base = "plugin:" + parsed.target
    if parsed.inprocess:
        built = _load_inprocess(parsed, base)
        decs = [d for _, d in built.decoders]
        if parsed.timeout is not None:
            for d in decs:  # its run(), as decode() and the fuzz loop's screen call it
                try:
                    setattr(d, "run", time_limited(d.run, parsed.timeout))  # noqa: B010
                except AttributeError:
                    raise _unknown(f"decoder {safe.text(spec, 200)!r}: +timeout cannot be "
                                   "set on this Decoder object (no instance attributes); "
                                   "leave out +inprocess") from None
    else:
        # described here, probed in the worker: the user's code runs isolated
        described = _load_inprocess(parsed, base, probe=False)
        worker = PluginWorker(parsed.text, base, timeout=parsed.timeout or DEFAULT_TIMEOUT,
                              memory_mib=parsed.memory_mib)
        modes: list[str] = []
        left: list[tuple[str, str]] = []
        if parsed.shape in PROBED:  # other shapes start their worker when first used
            try:
                modes, left = worker.probe()
            except WorkerUnavailable as e:
                worker.close()
                raise _unknown(f"decoder {safe.text(spec, 200)!r}: {safe.text(e, 300)}") \
                    from None
        if parsed.shape in MODAL and not modes:
            worker.close()
            raise _unknown(f"decoder {safe.text(spec, 200)!r}: the function accepts none of "
                           f"the error modes {', '.join(MODES)}: {left[0][1]}")
        if parsed.modes and left:
            worker.close()
            m, why = left[0]
            raise _unknown(f"decoder {safe.text(spec, 200)!r}: the function rejects "
                           f"errors={m!r}: {why}")
        built = Built([(i, d) for i, d in described.decoders
                       if not modal(i) or mode_word(i) in modes], left)
        decs = [IsolatedDecoder(parsed.text, None, d, worker=worker, mode=i)
                for i, d in built.decoders]
    for d in decs:
        d.spec = spec if parsed.shape not in MODAL else parsed.for_mode(_mode_of(d))
    for m, why in built.left_out:
        print(f"utf8fuzz: note: {safe.text(parsed.name(base, m), 300)} left out: the "
              f"function rejects errors={m!r}: {safe.text(why, 300)}", file=sys.stderr)
    return decs


def load(spec: str) -> Decoder:
    """The one decoder ``spec`` names (UnknownDecoder if it names several: a codec
    without a mode; :func:`load_all` gives them all)."""
    decs = load_all(spec)
    if len(decs) != 1:
        for d in decs:
            d.close()
        raise _unknown(f"decoder {safe.text(spec, 200)!r} names {len(decs)} decoders, one "
                       "per error mode; name one mode (+codec+replace)")
    return decs[0]


def _mode_of(d: Decoder) -> str:
    inner = d.inner if isinstance(d, IsolatedDecoder) else d
    assert isinstance(inner, CodecModeDecoder)
    return inner.mode


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


_DECLARE = ("declare the shape it has: +text for str, +spans for (str, spans), "
            "+outcome for an Outcome, +validator for a bool, +codec for f(data, errors), "
            "+incremental for a codecs.IncrementalDecoder, +stream-validator for an "
            "object fed chunks")


def _wrong(r: Any, shape: str, expected: str) -> TypeError:
    return TypeError(f"the {shape} shape returns {expected}, this returned "
                     f"{type(r).__name__}; {_DECLARE}")


class _Function(Decoder):
    """A function of one shape (the subclasses)."""

    def __init__(self, fn: Any, name: str, profile: str, policy: str,
                 versions: dict[str, str]) -> None:
        self.fn, self.name, self.profile, self.policy = fn, name, profile, policy
        self._versions = versions

    def versions(self) -> dict[str, str]:
        return dict(self._versions)


def _accepted(n: int, text: str) -> Outcome:
    """A strict decoder's outcome on input it accepted: nothing was replaced, so
    its text is also its replace, ignore and escape views."""
    if len(text) > output_bound(n):
        return _oversized(n, len(text))
    cps = tuple(map(ord, text))
    return Outcome.partial(n, strict=None, spans=(), replace=cps, ignore=cps, escape=cps)


def _oversized(n: int, got: int) -> Outcome:
    """The ``bad-outcome`` of a text of ``got`` characters for ``n`` bytes: said
    before any view is made of it (a view is a tuple of the code points)."""
    return bad_outcome(n, "oversized-output", f"{got} characters of text for {n} bytes "
                       f"(at most {output_bound(n)})")


def _span(s: int, e: int, n: int) -> tuple[int, int]:
    """A reported span as offsets; whether it lies inside the input and in order is
    checked with the whole outcome (a ``bad-outcome``, :func:`utf8fuzz.outcome.check`)."""
    if not (type(s) is int and type(e) is int):
        raise TypeError(f"plug-in reported error span ({s!r}, {e!r}): not two integers")
    return s, e


class StrictFunction(_Function):
    """No shape word: ``bytes -> str`` raising UnicodeDecodeError."""

    shows = frozenset({"strict"})

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        try:
            r = self.fn(data)
        except UnicodeDecodeError as e:
            return Outcome.partial(n, strict=_span(e.start, e.end, n))
        if type(r) is not str:
            raise _wrong(r, "plain", "str or raises UnicodeDecodeError")
        return _accepted(n, r)


class TextFunction(_Function):
    """``+text``: a replacing ``bytes -> str``; its output is its replace view."""

    shows = frozenset({"replace"})

    def run(self, data: bytes) -> Outcome:
        r = self.fn(data)
        if type(r) is not str:
            raise _wrong(r, "text", "str")
        if len(r) > output_bound(len(data)):
            return _oversized(len(data), len(r))
        return Outcome.partial(len(data), replace=r)


class ValidatorFunction(_Function):
    """``+validator``: ``bytes -> bool``; its answer is its accept view."""

    shows = frozenset({"accept"})

    def run(self, data: bytes) -> Outcome:
        r = self.fn(data)
        # 0/1 too: validators reached through ctypes or C bindings return an int
        if type(r) is not bool and not (type(r) is int and r in (0, 1)):
            raise _wrong(r, "validator", "bool")
        return Outcome.partial(len(data), accept=bool(r))


class SpansFunction(_Function):
    """``+spans``: ``bytes -> (text, [(start, end), ...])``."""

    shows = frozenset({"replace", "spans", "strict"})

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        r = self.fn(data)
        if not (isinstance(r, tuple) and len(r) == 2 and type(r[0]) is str):
            raise _wrong(r, "spans", "(str, spans)")
        bound = output_bound(n)
        if len(r[0]) > bound:
            return _oversized(n, len(r[0]))
        spans: list[tuple[int, int]] = []
        for s, e in r[1]:  # never more than the bound of them
            if len(spans) == bound:
                return bad_outcome(n, "oversized-output", f"over {bound} error spans for "
                                   f"{n} bytes")
            spans.append(_span(s, e, n))
        return Outcome.partial(n, replace=r[0], spans=spans, strict=spans[0] if spans else None)


class OutcomeFunction(_Function):
    """``+outcome``: ``bytes -> Outcome``, as it is."""

    shows = frozenset({"strict"})

    def run(self, data: bytes) -> Outcome:
        r = self.fn(data)
        if not isinstance(r, Outcome):
            raise _wrong(r, "outcome", "an Outcome")
        if r.length != len(data):
            raise ValueError(f"plug-in outcome covers {r.length} bytes, input has {len(data)}")
        return r


_SHAPE_CLASSES: dict[str | None, type[_Function]] = {
    None: StrictFunction, "text": TextFunction, "validator": ValidatorFunction,
    "spans": SpansFunction, "outcome": OutcomeFunction,
}


class CodecModeDecoder(_Function):
    """``+codec``: ``f(data, errors)`` in one error mode (see the module docstring)."""

    def __init__(self, fn: Any, name: str, profile: str, policy: str,
                 versions: dict[str, str], mode: str) -> None:
        super().__init__(fn, name, profile, policy, {**versions, "errors": mode})
        self.mode, self.view = mode, MODE_VIEW[mode]
        self.shows = frozenset({self.view})

    def run(self, data: bytes) -> Outcome:
        n = len(data)
        if self.mode == "strict":
            try:
                r = self.fn(data, "strict")
            except UnicodeDecodeError as e:
                return Outcome.partial(n, strict=_span(e.start, e.end, n))
            return _accepted(n, self._text(r, n))
        # an exception, UnicodeDecodeError too, is a crash: this mode must not raise
        text = self._text(self.fn(data, self.mode), n)
        if len(text) > output_bound(n):
            return _oversized(n, len(text))
        views: dict[str, Any] = {self.view: text}
        return Outcome.partial(n, **views)

    def _text(self, r: Any, n: int) -> str:
        if type(r) is str:
            return r
        if isinstance(r, tuple) and len(r) == 2 and type(r[0]) is str and type(r[1]) is int:
            if r[1] != n:
                # codecs.utf_8_decode without final=True holds back an incomplete tail
                raise ValueError(f"the codec consumed {r[1]} of {n} bytes; a codec shape "
                                 "must decode all its input (final=True)")
            return r[0]
        raise _wrong(r, "codec", "str or (str, consumed)")


class IncrementalModeDecoder(CodecModeDecoder):
    """``+incremental``: a ``codecs.IncrementalDecoder`` made by ``factory(mode)``, fed
    the chunks of :func:`~utf8fuzz.decoders.chunks.chunks` (``final=False``) then
    ``b""`` with ``final=True``; or, ``oneshot``, the whole input with ``final=True``
    (its one-shot sibling). A fresh decoder for every input: no state leaks between
    inputs. See the module docstring."""

    def __init__(self, factory: Any, name: str, profile: str, policy: str,
                 versions: dict[str, str], mode: str, *, oneshot: bool,
                 family: str) -> None:
        super().__init__(self._oneshot if oneshot else self._stream, name, profile,
                         policy, {**versions, "fed": "whole" if oneshot else "chunks"}, mode)
        self.factory, self.incremental, self.family = factory, not oneshot, family

    def _oneshot(self, data: bytes, errors: str) -> Any:
        return self.factory(errors).decode(data, True)

    def run(self, data: bytes) -> Outcome:
        try:
            return super().run(data)
        except _NoOffsets:
            # its error's offsets cannot be made absolute: it shows no strict view
            # here, so that a correct decoder is never judged by a guess
            return Outcome.partial(len(data))

    def _stream(self, data: bytes, errors: str) -> str:
        dec = self.factory(errors)
        parts: list[str] = []
        prev = 0
        for cut in [*cuts(data), None]:
            chunk, final = (data[prev:cut], False) if cut is not None else (b"", True)
            # where the decoder's buffer starts: the bytes it holds back, then the chunk
            held = _held(dec)
            try:
                r = dec.decode(chunk, final)
            except UnicodeDecodeError as e:
                if held is None:  # getstate() says nothing: the error's own object may
                    held = _held_by_object(e, data[:prev], chunk)
                if held is None and errors == "strict":
                    raise _NoOffsets from None
                held = held or 0  # (another mode's error is a crash: no offsets shown)
                e.start, e.end = prev - held + e.start, prev - held + e.end
                raise
            if type(r) is not str:
                raise _wrong(r, "incremental", "str from each decode()")
            parts.append(r)
            if cut is not None:
                prev = cut
        return "".join(parts)


class _NoOffsets(Exception):
    """A streaming decoder's error whose offsets in the input cannot be told."""


def _held(dec: Any) -> int | None:
    """How many input bytes ``dec`` holds back: ``getstate()[0]`` (the
    IncrementalDecoder contract: buffered input, then other state), or None when it
    says nothing usable (then 0 would be a guess, and a wrong one makes false
    findings)."""
    try:
        state = dec.getstate()
    except Exception:
        return None
    if isinstance(state, tuple) and state and isinstance(state[0], bytes | bytearray):
        return len(state[0])
    return None


def _held_by_object(e: UnicodeDecodeError, before: bytes, chunk: bytes) -> int | None:
    """The bytes held back before ``chunk``, read from the error: its offsets index
    its ``object``, which for a buffering decoder is what it held, then the chunk.
    None unless that object is exactly such a tail of the input fed so far."""
    obj = e.object
    if not isinstance(obj, bytes | bytearray) or len(obj) < len(chunk):
        return None
    held = len(obj) - len(chunk)
    if held > len(before) or obj[held:] != chunk or obj[:held] != before[len(before) - held:]:
        return None
    return held


class CodecDecoder(Decoder):
    """A registered codec, through a recording error handler: its spans and its
    replace output. Offsets are the codec's own (a codec that strips a prefix,
    like utf-8-sig, reports them after it)."""

    shows = frozenset({"strict", "spans", "replace"})

    def __init__(self, info: codecs.CodecInfo, name: str, profile: str,
                 policy: str = "maximal-subpart") -> None:
        self.info, self.name, self.profile, self.policy = info, name, profile, policy

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


class PluginWorker(Worker):
    """The one worker process of a spec, shared by its decoders (one per codec
    mode). Its ready frame says which modes the function accepts."""

    def __init__(self, spec: str, base: str, *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mib: int | None = None) -> None:
        argv = [sys.executable, "-c", "from utf8fuzz.decoders.plugin import worker_main; "
                "worker_main()", spec, base, json.dumps(sys.path)]
        super().__init__(argv, timeout=timeout, name=f"{base} worker",
                         on_ready=_check_ready, memory_mib=memory_mib,
                         answer_limit=answer_limit)

    def probe(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The codec modes the function accepts, and those it rejects with why."""
        info = json.loads(self.start())
        return list(info["modes"]), [(str(m), str(w)) for m, w in info["left_out"]]


#: Bytes of an answer's JSON per code point or token its outcome may hold (a token,
#: ``["reserved", 4294967295, 4294967295, null, "truncated"], ``, is the longest).
JSON_PER_ITEM = 128


_U32 = struct.Struct("<I")


def pack_batch(mode: int, inputs: Sequence[bytes]) -> bytes:
    """A worker's request: the mode byte, the ``u32`` count of inputs, each one's
    ``u32`` length, then the inputs one after the other."""
    return b"".join([bytes([mode]), _U32.pack(len(inputs)),
                     struct.pack(f"<{len(inputs)}I", *map(len, inputs)), *inputs])


def unpack_batch(request: bytes) -> tuple[int, list[bytes]]:
    """The mode byte and the inputs of :func:`pack_batch`'s request (ValueError if
    it is not one)."""
    if len(request) < 5:
        raise ValueError("a request shorter than its header")
    (count,) = _U32.unpack_from(request, 1)
    at = 5 + 4 * count
    if at > len(request):
        raise ValueError("a request shorter than its lengths")
    inputs = []
    for n in struct.unpack_from(f"<{count}I", request, 5):
        inputs.append(request[at : at + n])
        at += n
    if at != len(request):
        raise ValueError("a request whose lengths do not add up")
    return request[0], inputs


def answer_limit(request: bytes) -> int:
    """The longest answer frame a worker may send to ``request`` (:func:`pack_batch`):
    for each input, the JSON of an outcome within
    :func:`~utf8fuzz.outcome.output_bound`, and room for its provenance and detail."""
    (count,) = _U32.unpack_from(request, 1)
    return sum(FRAME_SLACK + JSON_PER_ITEM * output_bound(n)
               for n in struct.unpack_from(f"<{count}I", request, 5))


def _answers(answer: bytes, inputs: Sequence[bytes]) -> list[Any] | str:
    """A worker's answer to a batch: a JSON array, one outcome per input (each is
    checked as it is made into an Outcome); or why it is not one."""
    try:
        got = json.loads(answer)
    except (ValueError, RecursionError) as e:
        return safe.text(e, 200)
    return got if type(got) is list else "not a JSON array"


def oversized(o: Outcome, n: int) -> str | None:
    """Why ``o`` (an outcome of an ``n``-byte input) holds more than
    :func:`~utf8fuzz.outcome.output_bound` allows, as a ``bad-outcome`` detail; None
    when it does not."""
    most = output_bound(n)
    sizes = {k: len(v) for k, v in o.views.items() if isinstance(v, tuple | str)}
    if o.tokens_ is not None:
        sizes["tokens"] = len(o.tokens_)
    over = {k: v for k, v in sizes.items() if v > most}
    if not over:
        return None
    view, size = max(over.items(), key=lambda kv: kv[1])
    return (f"oversized-output: {size} items in view {view} for a {n}-byte input "
            f"(at most {most})")


class IsolatedDecoder(Decoder):
    """A plug-in decoding in a worker process (see the module docstring). An answer
    larger than :func:`answer_limit` is not read: a ``bad-outcome``
    (``oversized-output``), as is one whose outcome holds more than its input allows."""

    out_of_process = True  # a round trip per call: the fuzz loop sends batches

    def __init__(self, spec: str, profile: str | None, described: Decoder, *,
                 timeout: float = DEFAULT_TIMEOUT, name: str | None = None,
                 memory_mib: int | None = None, worker: PluginWorker | None = None,
                 mode: int = NO_MODE) -> None:
        """``spec``: what the worker loads (``module:attr`` and any claim and shape
        words); ``profile``: a claimed profile, when ``spec`` has none; ``described``:
        the same decoder in this process, for its attributes; ``worker``: the spec's
        worker when its decoders share one; ``mode``: the request byte that selects
        this decoder in the worker."""
        if profile and (parsed := parse(spec)).claim.profile is None:
            spec = replace(parsed, claim=Claim(profile)).render()
        self.name = name or described.name
        if worker is None:
            worker = PluginWorker(spec, self.name, timeout=timeout, memory_mib=memory_mib)
        self.inner, self.worker, self.mode = described, worker, mode
        self.spec = described.spec
        self.profile, self.policy = described.profile, described.policy
        self.shows, self.incremental = described.shows, described.incremental
        self.family = described.family
        self._versions = {**described.versions(), "isolated": "worker process"}

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def run(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode(self, data: bytes) -> Outcome:
        return self.decode_many([data])[0]

    def decode_many(self, inputs: Sequence[bytes]) -> list[Outcome]:
        """One outcome per input, in order, from requests of many inputs each
        (:meth:`~._subprocess.Worker.request_batch`: a failure is pinned on its own
        input); after a ``timeout`` the rest are not sent, and the list ends there."""
        return self.send_many(inputs)()

    def send_many(self, inputs: Sequence[bytes]) -> Callable[[], list[Outcome]]:
        """:meth:`decode_many` in two halves (:mod:`utf8fuzz.engine.screening`): the
        batch goes to the worker now; the call returned waits for its outcomes."""
        mode = self.mode

        def read(got: Sequence[Any]) -> list[Outcome]:
            return [self._outcome(d, a) for d, a in zip(inputs, got, strict=False)]

        return send_outcomes(
            inputs,
            lambda: self.worker.send_batch(inputs, lambda xs: pack_batch(mode, xs), _answers),
            read, name=self.name, provenance=self.versions)

    def _outcome(self, data: bytes, answer: Any) -> Outcome:
        if isinstance(answer, Failure):
            # a worker's death quotes its stderr: escaped, as every detail is
            return Outcome.failure(len(data), answer.status, safe.text(answer.detail, 300),
                                   self.versions())
        try:
            out = Outcome.from_json(answer)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as e:
            return Outcome.failure(len(data), "crash", f"garbage reply from {self.name} "
                                   f"worker: {safe.text(e, 200)}", self.versions())
        big = oversized(out, len(data))
        if big is not None:
            return Outcome.failure(len(data), "bad-outcome", big, self.versions())
        if out.tokens_ is not None:  # the escape view needs the input bytes
            out = Outcome.from_tokens(out.tokens_, out.length, out.provenance, data=data)
        # the worker leaves out the decoder's own provenance (the same on every answer)
        object.__setattr__(out, "provenance", {**out.provenance, "isolated": "worker process"}
                           if out.provenance else self._versions)
        return out

    def close(self) -> None:
        self.worker.close()  # shared by a codec's modes: the next use restarts it


def _check_ready(ready: bytes) -> None:
    info = json.loads(ready)
    if not info.get("ok"):
        raise WorkerUnavailable(f"the worker cannot load the plug-in: "
                                f"{safe.text(info.get('error'), 300)}")


def worker_main() -> None:
    """The worker: load the spec's decoders, say ready (with the codec modes the
    function accepts), then answer each request (:func:`pack_batch`: a mode byte and
    many inputs) with one frame, a JSON array of their outcomes, until stdin ends."""
    spec, base, path = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    sys.path[:] = path
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # whatever the plug-in prints must not corrupt the protocol
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    try:
        built = _load_inprocess(parse(spec), base)
    except Exception as e:
        out.write(frame(json.dumps({"ok": False, "error": str(e)}).encode()))
        return
    by_mode = dict(built.decoders)
    modes = list(dict.fromkeys(mode_word(i) for i in by_mode if modal(i)))
    out.write(frame(json.dumps({"ok": True, "modes": modes,
                                "left_out": built.left_out}).encode()))
    own = {i: d.provenance() for i, d in by_mode.items()}
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        mode, inputs = unpack_batch(inp.read(int.from_bytes(head, "little")))
        dec = by_mode.get(mode)
        answers = [_answer(dec, data, own.get(mode)) for data in inputs]
        out.write(frame(json.dumps(answers).encode()))


def _answer(dec: Decoder | None, data: bytes, own: dict[str, str] | None) -> dict[str, Any]:
    """The worker's answer for one input: its outcome as JSON, without the decoder's
    own provenance (``own``: the harness knows it)."""
    if dec is None:
        o = Outcome.failure(len(data), "crash", "the worker has no decoder for this mode")
    else:
        o = dec.decode(data)
    big = oversized(o, len(data))
    if big is not None:  # not encoded: its JSON could be larger than the harness reads
        o = Outcome.failure(len(data), "bad-outcome", big, o.provenance)
    if o.status == "crash" and (o.detail or "").startswith("MemoryError"):
        # its own feature, as the parent names a worker that died of it
        o = Outcome.failure(len(data), "crash",
                            f"oom: the plug-in ran out of memory; {o.detail}", o.provenance)
    if o.ok and o.tokens_ is None:
        # Outcome.to_json's form, its views as they are (json makes tuples arrays,
        # and a text view held as a str a string): the harness reads both alike
        answer: dict[str, Any] = {"status": "ok", "length": o.length, "views": o.views}
        if o.provenance:
            answer["provenance"] = o.provenance
    else:
        answer = o.to_json()
    if answer.get("provenance") == own:
        del answer["provenance"]
    return answer


# -- entry points ---------------------------------------------------------------------


def discover() -> list[Decoder | Unavailable]:
    found: list[Decoder | Unavailable] = []
    for ep in metadata.entry_points(group=GROUP):
        base = f"plugin:{split_name(ep.name)[0] or ep.name}"
        try:
            spec = parse_entry_point(ep.name, ep.value)[1]
            described = build(ep.load(), spec, base, probe=False)
            worker = PluginWorker(spec.text, base)
            modes, left = worker.probe() if spec.shape in PROBED else ([], [])
        except Exception as e:
            found.append(Unavailable(base, f"cannot load {ep.value}: {type(e).__name__}: "
                                     f"{e}"))
            continue
        for i, d in described.decoders:
            if modal(i) and mode_word(i) not in modes:
                continue
            d.name = base + name_suffix(i)  # its name alone (a one-shot sibling's too)
            found.append(IsolatedDecoder(spec.text, None, d, worker=worker, mode=i))
        for m, why in left:
            found.append(Unavailable(f"{base}:{m}", f"the function rejects errors={m!r}: "
                                     f"{why}"))
    return found


class StreamValidator(_Function):
    """``+stream-validator``: a fresh object ``factory()`` for every input, fed the
    chunks of :func:`~utf8fuzz.decoders.chunks.chunks` then ended, or, ``oneshot``,
    fed the whole input as one chunk then ended (its one-shot sibling); its answer is
    its accept view. See the module docstring."""

    shows = frozenset({"accept"})

    def __init__(self, factory: Any, name: str, profile: str, policy: str,
                 versions: dict[str, str], methods: StreamMethods, *, oneshot: bool,
                 family: str) -> None:
        super().__init__(factory, name, profile, policy,
                         {**versions, "fed": "whole" if oneshot else "chunks"})
        self.methods, self.incremental, self.family = methods, not oneshot, family

    def run(self, data: bytes) -> Outcome:
        pieces = chunks(data) if self.incremental else [data] if data else []
        return Outcome.partial(len(data), accept=stream_accepts(self.fn(), pieces,
                                                                self.methods))


def stream_accepts(obj: Any, pieces: Sequence[bytes], m: StreamMethods) -> bool:
    """Whether ``obj`` says ``pieces`` (fed in order, then the end) are well-formed;
    the first call that says no ends it. A non-bool answer (without ``raises``) is a
    TypeError, a missing method an AttributeError: the caller's crash."""
    feed = getattr(obj, m.feed)
    more = {m.final: False} if m.final else {}
    for c in pieces:
        if not _says_yes(m, feed, c, **more):
            return False
    if m.final:
        return _says_yes(m, feed, b"", **{m.final: True})
    return _says_yes(m, getattr(obj, str(m.end)))


def _says_yes(m: StreamMethods, call: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
    if m.raises:
        try:
            call(*args, **kwargs)
        except ValueError:
            return False
        return True
    r = call(*args, **kwargs)
    # 0/1 too: validators reached through ctypes or C bindings return an int
    if type(r) is not bool and not (type(r) is int and r in (0, 1)):
        said = f"{m.feed}()" if args else f"{m.end}()"
        raise TypeError(f"the stream-validator shape's calls return a bool, {said} "
                        f"returned {type(r).__name__}; add +raises if it says ill-formed "
                        "by raising ValueError")
    return bool(r)


def _probe_stream(factory: Callable[..., Any], m: StreamMethods) -> str | None:
    """Why ``factory`` makes no stream validator called as ``m`` says (None: it does),
    from one object fed ``A`` and ended: making it fails, a method is missing, a call
    is refused where it is made (its arguments), an answer is not a bool. What it
    says of ``A`` is judged in the run."""
    try:
        obj = factory()
    except BaseException as e:
        reraise_interrupt(e)
        return f"making its object failed: {safe.text(describe(e), 300)}"
    for word, name in (("feed", m.feed), ("end", m.end)):
        if name is not None and not callable(getattr(obj, name, None)):
            return f"its object has no method {name!r} (name it with +{word}=NAME)"
    try:
        stream_accepts(obj, [b"A"], m)
    except TypeError as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            return safe.text(describe(e), 300)  # refused here, or a non-bool answer
        return None  # raised inside its own code: its answer, judged in the run
    except BaseException as e:
        reraise_interrupt(e)
        return None  # the decoder's own answer, judged in the run
    return None
