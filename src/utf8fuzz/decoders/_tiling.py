"""Turning a library's output and its recorded error spans into tokens.

Recording adapters (CPython's error handlers, ICU's to-Unicode callback) learn
each error's absolute byte span, and get the decoded characters as text with
nothing in place of the errors. Between two errors the library decoded every
byte, so the characters there must re-encode to exactly those bytes: each
character's span is the length of its encoding. :func:`tile` walks both and
checks that they agree; when they do not - a library that drops or invents
characters - it raises :class:`TilingError`, which the caller's
``Decoder.decode`` turns into a ``crash`` outcome naming the byte. Nothing is
guessed: a token is only made when the library's own output accounts for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from utf8fuzz.decoders import _cpython
from utf8fuzz.outcome import Reason, Token


class TilingError(RuntimeError):
    """The library's output does not account for its input."""


def utf8_bytes(cp: int) -> bytes:
    """UTF-8 (surrogates allowed, as CPython's surrogatepass writes them)."""
    return chr(cp).encode("utf-8", "surrogatepass")


Event = tuple[int, int, Reason]


def tile(
    data: bytes,
    cps: Sequence[int],
    errors: Iterable[Event],
    *,
    encode: Callable[[int], bytes] = utf8_bytes,
    offset: int = 0,
) -> list[Token]:
    """Tokens for ``data[offset:]``, spans absolute (``offset`` added).

    ``cps`` are the decoded code points in order, errors contributing none;
    ``errors`` are ``(start, end, reason)`` with absolute offsets.
    """
    out: list[Token] = []
    append = out.append
    pos, ci, n, ncps = offset, 0, len(data), len(cps)
    bounds = [(s, e, r) for s, e, r in sorted(errors)]
    bounds.append((n, n, None))  # type: ignore[arg-type]  # sentinel: the end
    for start, end, reason in bounds:
        if start < pos or end > n or (reason is not None and end <= start):
            raise TilingError(f"error span [{start},{end}) overlaps or leaves the input")
        # Characters until the error: each must re-encode to the bytes it covers.
        while pos < start:
            if ci >= ncps:
                raise TilingError(f"output ends but input bytes {pos}..{start} were not reported")
            cp = cps[ci]
            if cp < 0x80:  # ASCII: one byte, itself
                if data[pos] != cp:
                    raise TilingError(f"output U+{cp:04X} does not encode the input at byte {pos}")
                append(Token("char", cp, pos, pos + 1))
                pos += 1
            else:
                enc = encode(cp)
                k = len(enc)
                if data[pos : pos + k] != enc:
                    raise TilingError(f"output U+{cp:04X} does not encode the input at byte {pos}")
                append(Token("char", cp, pos, pos + k))
                pos += k
            ci += 1
        if pos != start:
            raise TilingError(f"a character spans the error starting at byte {start}")
        if reason is not None:
            append(Token("error", None, start, end, reason))
            pos = end
    if ci != ncps:
        raise TilingError(f"{ncps - ci} output code point(s) left after the input ended")
    return out


_CONTINUATION = bytes(range(0x80, 0xC0))


def tile_text(
    data: bytes, text: str, errors: Iterable[Event], *, offset: int = 0
) -> Sequence[Token]:
    """:func:`tile_text_py` in C (``_cpython.tile_text``, the same walk as :func:`tile`)
    when ``data`` is ``bytes``: the same tokens, as a tuple, or the same
    :class:`TilingError`. The CPython adapters tile every sampled fuzz input, and in
    Python that cost about as much as the decode."""
    if type(data) is not bytes:
        return tile_text_py(data, text, errors, offset=offset)
    res = _cpython.tile_text(data, text, errors if type(errors) is list else list(errors),
                             offset)
    if isinstance(res, str):
        raise TilingError(res)
    return res


def tile_text_py(
    data: bytes, text: str, errors: Iterable[Event], *, offset: int = 0
) -> list[Token]:
    """:func:`tile` for a library that returns ``text`` (UTF-8, surrogates allowed),
    a run of characters at a time: between two errors the text must re-encode to
    exactly the bytes there, which one ``encode`` checks, and then each character's
    span follows from its code point. On any disagreement :func:`tile` itself
    names the byte (the same tokens or the same error, faster in the common case).
    """
    make = tuple.__new__  # Token._make without its Python-level call
    out: list[Token] = []
    append = out.append
    pos, ci, n = offset, 0, len(data)
    events = sorted(errors)
    for start, end, reason in [*events, (n, n, None)]:
        if start < pos or end > n or (reason is not None and end <= start):
            return tile(data, tuple(map(ord, text)), events, offset=offset)
        if pos < start:
            seg = data[pos:start]
            # one character per byte that is not a continuation byte, if it re-encodes
            k = len(seg.translate(None, _CONTINUATION))
            chars = text[ci : ci + k]
            if len(chars) != k or chars.encode("utf-8", "surrogatepass") != seg:
                return tile(data, tuple(map(ord, text)), events, offset=offset)
            if k == len(seg):  # ASCII
                out.extend([make(Token, ("char", b, p, p + 1, None))
                            for p, b in enumerate(seg, pos)])
            else:
                for ch in chars:
                    cp = ord(ch)
                    size = 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
                    append(make(Token, ("char", cp, pos, pos + size, None)))
                    pos += size
            pos, ci = start, ci + k
        if reason is not None:
            append(make(Token, ("error", None, start, end, reason)))
            pos = end
    if ci != len(text):
        return tile(data, tuple(map(ord, text)), events, offset=offset)
    return out


def utf16_codepoints(units: bytes) -> list[int]:
    """UTF-16LE code units to code points: pairs combined, lone surrogates kept."""
    return [ord(c) for c in units.decode("utf-16-le", "surrogatepass")]
