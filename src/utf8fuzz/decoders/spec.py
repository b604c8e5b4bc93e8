"""Every decoder spec a person writes, in one grammar: a plug-in, a registered codec,
a program. :func:`parse` is the one parser; :mod:`.plugin` and :mod:`.exec` load
what it returns.

::

    module:attr WORDS     a plug-in (attr may be dotted)
    codec:NAME WORDS      a codec registered with Python's codecs
    exec:COMMAND WORDS    a program in any language (docs/protocol.md)

WORDS come in any order, each at most once: ``@profile[/policy]``, the claim (the
decoder is judged against ``ref:<profile>:<policy>``; default ``unicode`` and
``maximal-subpart``), and ``+word`` or ``+key=value``:

- a plug-in or codec: one SHAPE (:data:`SHAPES`), MODE words (:data:`MODES`, with a
  shape of :data:`MODAL`), ``inprocess``, ``timeout=S``, ``memory=MiB``; with the
  ``stream-validator`` shape, its STREAM words (:data:`STREAM_WORDS`, below);
- ``exec:``: ``mode=M`` (M one of :data:`EXEC_MODES`), ``timeout=S``, ``memory=MiB``.

``timeout``: seconds, above 0 and below 10**6; ``memory``: whole MiB (0: no limit),
not with ``inprocess``.

STREAM words say how a ``stream-validator`` object is called (:class:`StreamMethods`;
each NAME a Python identifier): ``feed=NAME``, the method given each chunk (default
``validate``); ``end=NAME``, the end check, called with no argument (default
``final``); or ``final=NAME`` instead of ``end``: the feed method takes the keyword
NAME, false with each chunk, and the end check is that method given ``b""`` with NAME
true (``+final=final`` for ``validate(chunk, final=...)``); ``raises``: its calls say
"ill-formed" by raising ValueError (UnicodeDecodeError is one), and what they return
is not looked at (without it, each call returns a bool, or 0/1).

An entry point's spec (:func:`parse_entry_point`) takes no ``inprocess``, ``timeout``
or ``memory``: those are the command line's.

Where the target ends. A plug-in's or a codec's target ends at its first ``+`` or
``@``. A command is shell words (:func:`shlex.split`; no shell runs it), and may
hold ``+`` and ``@`` of its own: its WORDS begin at the first ``+`` or ``@`` after
the command's last unquoted space, quote or backslash from which the rest of the
spec is words written ``+NAME[=VALUE]`` (NAME letters; VALUE no space, quote,
backslash, ``+`` or ``@``) or ``@PROFILE[/POLICY]``. So ``exec:node c.js
lib+mode=replace@cesu8`` runs ``node c.js lib``, and a command whose own last
argument ends in such a word quotes it (``exec:'./a+b'``).

A bad spec is an :class:`~utf8fuzz.decoders.UnknownDecoder` in one line (the CLI
exits 2): an empty target, an unbalanced quote, an unknown or repeated word, a
value out of range, an unknown profile or policy. Nothing here imports, runs or
looks anything up: parsing a spec is safe on any text.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Literal

from utf8fuzz import safe
from utf8fuzz.decoders._subprocess import memory_limit_mib
from utf8fuzz.policies import POLICIES
from utf8fuzz.profiles import get_profile

Kind = Literal["plugin", "codec", "exec"]

EXEC_PREFIX = "exec:"
CODEC_PREFIX = "codec:"
#: A plug-in's SHAPE words (see :mod:`.plugin`); no word is the plain strict shape.
SHAPES: tuple[str, ...] = ("codec", "text", "validator", "spans", "outcome", "incremental",
                           "stream-validator")
#: The shapes that run once per error mode (MODE words).
MODAL: tuple[str, ...] = ("codec", "incremental")
#: A plug-in's MODE words: Python's error handlers it is run with.
MODES: tuple[str, ...] = ("strict", "replace", "ignore", "surrogateescape")
#: The words of the ``stream-validator`` shape (:class:`StreamMethods`), each ``=NAME``
#: but ``raises``.
STREAM_WORDS: tuple[str, ...] = ("feed", "end", "final", "raises")
#: The modes of an ``exec:`` client (``+mode=M``).
EXEC_MODES: tuple[str, ...] = ("strict", "replace", "validate")
#: A call's or reply's timeout where the spec says none (seconds).
DEFAULT_TIMEOUT = float(os.environ.get("UTF8FUZZ_DECODER_TIMEOUT", "10"))
#: The longest timeout a spec may ask for: a selector's wait takes no larger one.
MAX_TIMEOUT = 1e6

#: One WORD of a command's tail (the syntax only; the vocabulary is checked after).
_WORD = r"(?:\+[A-Za-z]+(?:=[^\s'\"\\+@]*)?|@[A-Za-z0-9_-]*(?:/[A-Za-z0-9_-]*)?)"
_WORDS = re.compile(f"{_WORD}+")
_TOKENS = re.compile(r"[+@][^+@]*")


@dataclass(frozen=True)
class Claim:
    """A parsed claim; None where the user said nothing."""

    profile: str | None = None
    policy: str | None = None

    def __str__(self) -> str:
        """The claim as written (``@unicode/per-byte``), or ``""`` when there is none;
        part of the decoder's name, so two claims of one decoder are two decoders."""
        if self.profile is None:
            return ""
        return f"@{self.profile}" + (f"/{self.policy}" if self.policy else "")


@dataclass(frozen=True)
class StreamMethods:
    """How a ``stream-validator`` object is called (the STREAM words of the module
    docstring): ``feed``, the method given each chunk; ``end``, the end check called
    with no argument, or None when ``final`` names the feed method's keyword that
    ends the stream; ``raises``: a ValueError raised is its "ill-formed", and
    answers are not looked at."""

    feed: str = "validate"
    end: str | None = "final"
    final: str | None = None
    raises: bool = False


@dataclass(frozen=True)
class DecoderSpec:
    """A parsed spec. ``head``: the text before the words, as written (``m:f``,
    ``codec:utf-8``, ``exec:'./c' -q``); ``target``: ``module:attr`` or
    ``codec:NAME`` (for ``exec:``, the command as written); ``argv``: an
    ``exec:`` command, split; ``words``: the ``+`` words as written, in order
    (without the ``+``). ``timeout`` and ``memory_mib`` are None where not said;
    ``modes`` is () where none is named; ``stream``: how a ``stream-validator`` is
    called (None for every other shape)."""

    text: str
    kind: Kind
    head: str
    target: str
    argv: tuple[str, ...] = ()
    claim: Claim = Claim()
    shape: str | None = None
    modes: tuple[str, ...] = ()
    inprocess: bool = False
    timeout: float | None = None
    memory_mib: int | None = None
    words: tuple[str, ...] = ()
    stream: StreamMethods | None = None

    def name(self, base: str, mode: str | None = None) -> str:
        """A decoder's name: ``base``, ``:MODE`` for one mode of several, the claim."""
        return base + (f":{mode}" if mode else "") + str(self.claim)

    def render(self, words: tuple[str, ...] | None = None) -> str:
        """The spec written out again: the head, the claim, then ``words`` (default:
        its own) in order. A spec written in that order renders as written."""
        return self.head + str(self.claim) + "".join(f"+{w}" for w in (
            self.words if words is None else words))

    def for_mode(self, mode: str) -> str:
        """The plug-in spec that loads this spec's decoder of ``mode`` alone: its mode
        words replaced by ``mode``, right after the shape."""
        words = [w for w in self.words if w not in MODES]
        words.insert(words.index(str(self.shape)) + 1, mode)
        return self.render(tuple(words))


def _unknown(msg: str) -> Exception:
    from utf8fuzz.decoders import UnknownDecoder

    return UnknownDecoder(msg)


def parse_claim(text: str, spec: str) -> Claim:
    """``"corrected/per-byte"`` (what follows the ``@``) as a Claim; UnknownDecoder,
    one line naming ``spec``, for an unknown profile or policy."""
    shown = safe.text(spec, 200)
    if not text:
        raise _unknown(f"bad decoder {shown!r}: a profile must follow '@'")
    profile, slash, policy = text.partition("/")
    try:
        get_profile(profile)
    except ValueError as e:
        raise _unknown(f"{safe.text(e, 200)} (in {shown!r})") from None
    if slash and policy not in POLICIES:
        raise _unknown(f"unknown policy {safe.text(policy, 60)!r} in {shown!r}; "
                       f"policies are {', '.join(POLICIES)}")
    return Claim(profile, policy or None)


def _command_end(body: str, shown: str) -> int:
    """Where an ``exec:`` command (``body``, after the prefix) ends and its words
    begin (``len(body)``: no words). UnknownDecoder for an unbalanced quote."""
    quote: str | None = None
    boundary = 0  # just past the last unquoted space, quote or escaped character
    i = 0
    while i < len(body):
        c = body[i]
        if quote is not None:
            if c == quote:
                quote, boundary = None, i + 1
            elif c == "\\" and quote == '"':
                i += 1
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
            boundary = i + 1
        elif c.isspace():
            boundary = i + 1
        i += 1
    if quote is not None:
        raise _unknown(f"bad command in {shown!r}: unbalanced quote ({quote})")
    for j in range(boundary, len(body)):
        if body[j] in "+@" and _WORDS.fullmatch(body, j):
            return j
    return len(body)


def _timeout(value: str, shown: str) -> float:
    try:
        t = float(value)
    except ValueError:
        t = -1.0
    if not 0 < t < MAX_TIMEOUT:  # and not nan
        raise _unknown(f"bad timeout in {shown!r}: a positive number of seconds "
                       f"(below {MAX_TIMEOUT:.0e})")
    return t


def parse(text: str, *, command_line: bool = True) -> DecoderSpec:
    """``text`` as a :class:`DecoderSpec` (the grammar of the module docstring);
    UnknownDecoder, one line, for a bad spec. ``command_line=False`` (an entry
    point's): no ``inprocess``, ``timeout`` or ``memory``."""
    shown = safe.text(text, 200)
    kind: Kind
    argv: tuple[str, ...] = ()
    if text.startswith(EXEC_PREFIX):
        kind = "exec"
        body = text[len(EXEC_PREFIX):]
        cut = len(EXEC_PREFIX) + _command_end(body, shown)
        head, tail = text[:cut], text[cut:]
        target = head[len(EXEC_PREFIX):]
        try:
            argv = tuple(shlex.split(target))
        except ValueError as e:  # a trailing backslash
            raise _unknown(f"bad command in {shown!r}: {safe.text(e, 100)}") from None
        if not argv or not argv[0]:
            raise _unknown(f"bad decoder {shown!r}: expected "
                           "exec:'COMMAND ARGS'[@profile[/policy]][+word...]")
    else:
        head, tail = split_name(text)
        target = head
        mod, _, attr = head.partition(":")
        kind = "codec" if mod == "codec" else "plugin"
        if not mod or not attr:
            raise _unknown(f"bad decoder {shown!r}: expected module:attr or codec:NAME, "
                           "then [@profile[/policy]][+word...]")
    claim: Claim | None = None
    shape: str | None = None
    modes: list[str] = []
    opts: dict[str, str] = {}
    stream: dict[str, str] = {}
    words: list[str] = []
    for token in _TOKENS.findall(tail):
        w = token[1:]
        if token[0] == "@":
            if claim is not None:
                raise _unknown(f"bad decoder {shown!r}: two claims, {claim} and "
                               f"@{safe.text(w, 60)}")
            claim = parse_claim(w, text)
            continue
        words.append(w)
        key, eq, value = w.partition("=")
        if kind != "exec" and w in SHAPES:
            if shape is not None:
                raise _unknown(f"bad decoder {shown!r}: two shapes, +{shape} and +{w}")
            shape = w
        elif kind != "exec" and w in MODES:
            if w in modes:
                raise _unknown(f"bad decoder {shown!r}: mode +{w} given twice")
            modes.append(w)
        elif kind != "exec" and key in STREAM_WORDS and bool(eq) == (key != "raises"):
            if key in stream:
                raise _unknown(f"bad decoder {shown!r}: +{key} given twice")
            if eq and not value.isidentifier():
                raise _unknown(f"bad decoder {shown!r}: +{key}= names a method or "
                               f"keyword, not {safe.text(value, 60)!r}")
            stream[key] = value
        elif key in _options(kind) and bool(eq) == (key != "inprocess") and (
                value or not eq) and (key != "mode" or value in EXEC_MODES):
            if key in opts:
                raise _unknown(f"bad decoder {shown!r}: +{key} given twice")
            if not command_line:
                raise _unknown(f"bad entry point {shown!r}: +{safe.text(key, 40)} is an "
                               "option of the command line only")
            opts[key] = value
        else:
            raise _unknown(f"bad decoder option +{safe.text(w, 60)} in {shown!r}: "
                           f"{_vocabulary(kind)}")
    if modes and shape not in MODAL:
        raise _unknown(f"bad decoder {shown!r}: error modes (+{modes[0]}) are for the codec "
                       f"shape (+codec+{modes[0]}) and the incremental one "
                       f"(+incremental+{modes[0]})")
    if stream and shape != "stream-validator":
        raise _unknown(f"bad decoder {shown!r}: +{next(iter(stream))} is a word of the "
                       "+stream-validator shape")
    if "end" in stream and "final" in stream:
        raise _unknown(f"bad decoder {shown!r}: +end= and +final= are two ends; say one")
    methods = None if shape != "stream-validator" else StreamMethods(
        stream.get("feed", "validate"), None if "final" in stream else stream.get(
            "end", "final"), stream.get("final"), "raises" in stream)
    if "mode" in opts:
        modes.append(opts["mode"])
    timeout = _timeout(opts["timeout"], shown) if "timeout" in opts else None
    memory: int | None = None
    if "memory" in opts:
        if "inprocess" in opts:
            raise _unknown(f"bad {shown!r}: +memory limits a worker, and +inprocess has none")
        try:
            memory = memory_limit_mib(opts["memory"])
        except ValueError as e:
            raise _unknown(f"{safe.text(e, 200)} in {shown!r}") from None
    return DecoderSpec(text, kind, head, target, argv, claim or Claim(), shape, tuple(modes),
                       "inprocess" in opts, timeout, memory, tuple(words), methods)


def _options(kind: Kind) -> tuple[str, ...]:
    return ("timeout", "mode", "memory") if kind == "exec" else ("inprocess", "timeout",
                                                                 "memory")


def _vocabulary(kind: Kind) -> str:
    if kind == "exec":
        return f"use +timeout=S, +mode={'|'.join(EXEC_MODES)} or +memory=MiB"
    return (f"shapes are {', '.join(SHAPES)}; modes (with +codec) {', '.join(MODES)}; "
            "options inprocess, timeout=S, memory=MiB; with +stream-validator feed=NAME, "
            "end=NAME, final=NAME, raises")


def split_name(text: str) -> tuple[str, str]:
    """A plug-in spec or an entry point's name split where its words begin (its first
    ``+`` or ``@``): ``"mydecoder@unicode+text"`` -> ``("mydecoder", "@unicode+text")``."""
    cut = min((i for i in (text.find("@"), text.find("+")) if i >= 0), default=len(text))
    return text[:cut], text[cut:]


def parse_entry_point(ep_name: str, ep_value: str) -> tuple[str, DecoderSpec]:
    """An entry point's short name and its spec: the words written after the name
    (``mydecoder@unicode/per-byte+validator``) applied to the value
    (``module:attr``)."""
    short, words = split_name(ep_name)
    if not short:
        raise _unknown(f"bad entry point {safe.text(ep_name, 200)!r}: a name must come "
                       "before the claim")
    return short, parse(ep_value.strip() + words, command_line=False)
